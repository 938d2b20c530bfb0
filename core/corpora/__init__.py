"""Corpora: constituency treebanks (re-exported from `treegram.trees`) and dependency corpora."""

from treegram.corpora.dependency import (
    DEPENDENCY_SUFFIXES,
    DepSentence,
    head_problem,
    read_conllu,
    read_dependency_dir,
    read_dependency_file,
    read_dp,
)
from treegram.corpora.treebank import (
    TREE_FILE_SUFFIXES,
    NormalizeOptions,
    ReadProblem,
    ReadResult,
    read_tree_file,
    read_treebank,
    tree_files,
    write_treebank,
)

__all__ = [
    "DEPENDENCY_SUFFIXES",
    "DepSentence",
    "NormalizeOptions",
    "ReadProblem",
    "ReadResult",
    "TREE_FILE_SUFFIXES",
    "head_problem",
    "read_conllu",
    "read_dependency_dir",
    "read_dependency_file",
    "read_dp",
    "read_tree_file",
    "read_treebank",
    "tree_files",
    "write_treebank",
]
