"""Constituency treebanks: the bracketed-tree reader lives in `treegram.trees.bracket`; this is its corpora-side
entry point so that code reading corpora finds both kinds of treebank in one package, plus the shared
`--treebank DIR... --limit N --skip-bad-trees` options of tree-trained formalisms (`add_treebank_arguments`,
`load_treebanks`)."""

from __future__ import annotations

import argparse
from pathlib import Path

from treegram.argtypes import positive_int
from treegram.errors import InputError

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
    "add_treebank_arguments",
    "load_treebanks",
    "plugin_tree_reader",
    "NormalizeOptions",
    "ReadProblem",
    "ReadResult",
    "read_tree_file",
    "read_treebank",
    "tree_files",
    "write_treebank",
]


def add_treebank_arguments(parser: argparse.ArgumentParser) -> None:
    """The shared `--treebank DIR...` and `--limit N` options of tree-trained formalisms."""
    parser.add_argument("--treebank", nargs="+", required=True, type=Path,
                        help="treebank files or directories (*.mrg, *.ptb, *.tree)")
    parser.add_argument("--limit", type=positive_int, default=None, help="use only the first N trees")
    parser.add_argument("--skip-bad-trees", action="store_true",
                        help="skip malformed trees (reported) instead of stopping")


def plugin_tree_reader(path: Path):
    """The corpus reader a plugin contributed (`register_corpus_readers`, yielding trees) whose patterns claim
    this file, or None: the built-in bracketed-tree reader then reads it."""
    import fnmatch

    from treegram.plugin_manager import corpus_readers, is_core

    for c in corpus_readers().values():
        reader = c.obj
        if (reader.yields == "trees" and not is_core(c.plugin)
                and any(fnmatch.fnmatch(path.name, pat) for pat in reader.patterns)):
            return reader
    return None


def load_treebanks(args: argparse.Namespace, ui) -> list:
    """The trees named by `add_treebank_arguments`' options, in the order given: bracketed files and directories
    through the built-in reader (malformed trees reported and skipped with --skip-bad-trees), files a plugin's
    corpus reader claims (`register_corpus_readers`) through that reader."""
    paths = [Path(p) for p in args.treebank]
    readers = [plugin_tree_reader(p) if p.is_file() else None for p in paths]
    if not any(readers):
        problems, trees = _read_bracketed(paths, args)
    else:
        problems, trees = [], []
        for p, reader in zip(paths, readers):
            if reader is None:
                more_problems, more = _read_bracketed([p], args)
                problems += more_problems
                trees += more
            else:
                trees += list(reader.read(p))
    for p in problems[:10]:
        ui.note(str(p), label="skipped")
    if len(problems) > 10:
        ui.note(f"... and {len(problems) - 10} more", label="skipped")
    if args.limit:
        trees = trees[: args.limit]
    if not trees:
        raise InputError(f"no trees found in {', '.join(map(str, args.treebank))}",
                         hint="pass directories or files of bracketed trees (*.mrg, *.ptb, *.tree)")
    ui.note(f"read {len(trees)} trees")
    return trees


def _read_bracketed(paths: list[Path], args: argparse.Namespace) -> tuple[list[str], list]:
    from treegram.errors import TreeSyntaxError

    try:
        result = read_treebank(paths, on_error="skip" if args.skip_bad_trees else "raise", on_problem=lambda p: None)
    except TreeSyntaxError as exc:
        raise TreeSyntaxError(str(exc), hint="fix the brackets there, or pass --skip-bad-trees to drop "
                                             "malformed trees and keep the rest") from None
    return [str(p) for p in result.problems], list(result)
