"""Corpus readers as plugin contributions: the core registers its own through `register_corpus_readers`."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import attrs

from treegram.errors import InputError


@attrs.frozen
class CorpusReader:
    name: str
    patterns: tuple[str, ...]
    #: what `read` yields: "trees", "dependencies", "sentences" or "pairs"
    yields: str
    read: Callable[[Path], Iterable[Any]]
    description: str = ""


def read_sentence_file(path: Path) -> list[list[str]]:
    """Plain text, one tokenized sentence per line; blank lines are skipped."""
    path = Path(path)
    if not path.exists():
        raise InputError(f"{path}: file not found", hint="give a text file with one sentence per line")
    with path.open(encoding="utf-8") as fh:
        return [line.split() for line in fh if line.strip()]


def _read_trees(path: Path):
    from treegram.trees import read_tree_file

    return read_tree_file(path)


def _read_conllu(path: Path):
    from treegram.corpora.dependency import read_conllu

    return read_conllu(path)


def _read_dp(path: Path):
    from treegram.corpora.dependency import read_dp

    return read_dp(path)


def _read_google_pairs(path: Path):
    from treegram.corpora.google import read_google_pairs_file

    return read_google_pairs_file(path)


def core_readers() -> tuple[CorpusReader, ...]:
    """The corpus formats the core reads (registered by treegram.corehooks)."""
    return (
        CorpusReader("ptb", ("*.mrg", "*.ptb", "*.tree"), "trees", _read_trees,
                     "Penn Treebank bracketed trees (normalized: traces, function tags, empty top removed)"),
        CorpusReader("conllu", ("*.conllu",), "dependencies", _read_conllu, "CoNLL-U dependency trees"),
        CorpusReader("dp", ("*.dp",), "dependencies", _read_dp, "NLTK .dp dependency files (word, tag, head)"),
        CorpusReader("text", ("*.txt",), "sentences", read_sentence_file, "one tokenized sentence per line"),
        CorpusReader("google-pairs", ("train.tsv.gz", "val.tsv.gz"), "pairs", _read_google_pairs,
                     "Google sentence-compression pairs, lossy copy (lowercased, digits as #): "
                     "tokens, keep labels, POS, deprel (treegram.corpora.google)"),
    )
