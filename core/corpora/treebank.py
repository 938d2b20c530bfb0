"""Constituency treebanks: the bracketed-tree reader lives in `treegram.trees.bracket`; this is its corpora-side
entry point so that code reading corpora finds both kinds of treebank in one package, plus the shared
`--treebank DIR... --limit N --skip-bad-trees` options of tree-trained formalisms (`add_treebank_arguments`,
`load_treebanks`)."""

from __future__ import annotations

import argparse
from pathlib import Path

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
    parser.add_argument("--limit", type=int, default=None, help="use only the first N trees")
    parser.add_argument("--skip-bad-trees", action="store_true",
                        help="skip malformed trees (reported) instead of stopping")


def load_treebanks(args: argparse.Namespace, ui) -> list:
    """The trees named by `add_treebank_arguments`' options (malformed ones reported and skipped on request)."""
    from treegram.errors import TreeSyntaxError

    try:
        result = read_treebank(args.treebank, on_error="skip" if args.skip_bad_trees else "raise",
                               on_problem=lambda p: None)
    except TreeSyntaxError as exc:
        raise TreeSyntaxError(str(exc), hint="fix the brackets there, or pass --skip-bad-trees to drop "
                                             "malformed trees and keep the rest") from None
    problems, trees = [str(p) for p in result.problems], list(result)
    for p in problems[:10]:
        ui.note(f"[yellow]skipped:[/] {p}")
    if len(problems) > 10:
        ui.note(f"[yellow]... and {len(problems) - 10} more skipped[/]")
    if args.limit:
        trees = trees[: args.limit]
    if not trees:
        raise InputError(f"no trees found in {', '.join(map(str, args.treebank))}",
                         hint="pass directories or files of bracketed trees (*.mrg, *.ptb, *.tree)")
    ui.note(f"read {len(trees)} trees")
    return trees
