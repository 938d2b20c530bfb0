"""Constituency treebanks: the bracketed-tree reader lives in `treegram.trees.bracket`; this is its corpora-side
entry point so that code reading corpora finds both kinds of treebank in one package."""

from treegram.trees.bracket import (
    TREE_FILE_SUFFIXES,
    ReadProblem,
    ReadResult,
    read_tree_file,
    read_treebank,
    tree_files,
    write_treebank,
)
from treegram.trees.normalize import NormalizeOptions

__all__ = [
    "TREE_FILE_SUFFIXES",
    "NormalizeOptions",
    "ReadProblem",
    "ReadResult",
    "read_tree_file",
    "read_treebank",
    "tree_files",
    "write_treebank",
]
