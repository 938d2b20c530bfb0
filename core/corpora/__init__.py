"""Corpora: constituency treebanks (re-exported from `treegram.trees`) and dependency corpora."""

from treegram.corpora import treebank
from treegram.corpora.dependency import (
    DEPENDENCY_SUFFIXES,
    DepSentence,
    head_problem,
    read_conllu,
    read_dependency_dir,
    read_dependency_file,
    read_dp,
)
from treegram.corpora.treebank import *  # noqa: F403 -- the constituency side: its own __all__

__all__ = [
    "DEPENDENCY_SUFFIXES",
    "DepSentence",
    "head_problem",
    "read_conllu",
    "read_dependency_dir",
    "read_dependency_file",
    "read_dp",
    *treebank.__all__,
]
