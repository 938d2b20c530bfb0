"""`treegram mine-revisions`: sentence compressions/expansions mined from MediaWiki history dumps on Dask."""

from __future__ import annotations

import argparse
from pathlib import Path

from treegram import argtypes
from treegram.cli.commands import Command, add_json_flag
from treegram.errors import InputError


def _derived(args: argparse.Namespace) -> tuple[dict, dict]:
    from treegram.io import derived_path

    return {}, {"the chunk folder --out + .chunks": derived_path(args.out, ".chunks")}


def _configure(p: argparse.ArgumentParser) -> None:
    p.set_defaults(_derived=_derived)
    p.add_argument("dumps", type=Path, nargs="+", metavar="DUMP",
                   help="MediaWiki XML history dumps (.xml, .xml.gz, .xml.bz2), streamed")
    p.add_argument("--out", type=Path, required=True, metavar="PAIRS.tsv",
                   help="the mined pairs (TSV with a header; finished chunks are kept in PAIRS.tsv.chunks/ "
                        "until the run completes, and a re-run resumes from them)")
    where = p.add_mutually_exclusive_group()
    where.add_argument("--workers", type=argtypes.positive_int, default=None, metavar="N",
                       help="worker processes of a local Dask cluster (default: 1 per core)")
    where.add_argument("--scheduler", default=None, metavar="ADDRESS",
                       help="a running Dask scheduler (e.g. tcp://host:8786) instead of a local cluster; its workers "
                            "need treegram installed")
    p.add_argument("--chunk-revisions", type=argtypes.positive_int, default=500, metavar="N",
                   help="revisions per chunk (a task; whole pages, long pages split) (default 500)")
    p.add_argument("--min-words", type=argtypes.positive_int, default=5, help="shortest side, in words (default 5)")
    p.add_argument("--max-words", type=argtypes.positive_int, default=60, help="longest side, in words (default 60)")
    p.add_argument("--parser", type=Path, default=None, metavar="MODEL",
                   help="a treegram parsing model: keep pairs whose both sides have NLL below --max-nll "
                        "(the paper's parser filter); without it the filter is skipped")
    p.add_argument("--max-nll", type=argtypes.positive_float, default=200.0,
                   help="parser filter threshold, negative log-likelihood (default 200, as in the paper)")
    p.add_argument("--keep-chunks", action="store_true", help="keep PAIRS.tsv.chunks/ after the run")
    add_json_flag(p)


def _run(args: argparse.Namespace, ui) -> int:
    import os

    from treegram.plugins.revisions.dumps import check_dump
    from treegram.plugins.revisions.mine import FILTERS, Settings
    from treegram.plugins.revisions.run import mine

    dumps = [check_dump(p) for p in args.dumps]
    if args.min_words > args.max_words:
        raise InputError(f"--min-words {args.min_words} is above --max-words {args.max_words}",
                         hint="e.g. --min-words 5 --max-words 60")
    if args.out.is_dir():
        raise InputError(f"{args.out}: is a directory", hint="name the output TSV file")
    parser = None
    if args.parser is not None:
        from treegram.formalism import load_model

        model = load_model(args.parser)  # a clear error now rather than one per worker
        if not hasattr(model, "chart_input"):
            raise InputError(f"{args.parser}: a {getattr(model, 'formalism', '?')} model does not score sentences "
                             "through the core charts", hint="give a pcfg, tsg or tig model")
        parser = str(args.parser.resolve())
    else:
        ui.note("no --parser model: the paper's parser-score filter is skipped", label="note")
    settings = Settings(min_words=args.min_words, max_words=args.max_words, parser=parser, max_nll=args.max_nll)
    workers = args.workers or (None if args.scheduler else max(1, os.cpu_count() or 1))
    totals = {"revisions": 0, "pairs": 0}
    with ui.task("mining chunks", None) as advance:
        def progress(res):
            totals["revisions"] += res["stats"].get("revisions", 0)
            totals["pairs"] += res["stats"].get("pairs", 0)
            advance(1, f"{totals['revisions']} revisions, {totals['pairs']} pairs")

        summary = mine(dumps, args.out, settings=settings, workers=workers, scheduler=args.scheduler,
                       chunk_revisions=args.chunk_revisions, keep_chunks=args.keep_chunks, progress=progress)
    if args.json:
        ui.emit_json(summary)
        return 0
    if summary["chunks_resumed"]:
        ui.note(f"resumed: {summary['chunks_resumed']} of {summary['chunks']} chunks were already finished")
    ui.table("revision mining", ["", "value"], [
        ("dumps", len(summary["dumps"])), ("pages", summary["pages"]), ("revisions", summary["revisions"]),
        ("sentences", summary["sentences"]), ("revision pairs compared", summary["comparisons"]),
        ("one-sentence replacements", summary["replacements"]),
        ("word-deletion candidates", summary["candidates"]),
        ("pairs kept", summary["pairs"]), ("  compressions (newer is shorter)", summary["compressions"]),
        ("  expansions (newer is longer)", summary["expansions"]),
        ("pairs / 1,000 revisions", summary["pairs_per_1000_revisions"]),
        ("mean deleted words per pair", summary["mean_deleted_words"]),
        ("chunks (resumed)", f"{summary['chunks']} ({summary['chunks_resumed']})"),
        ("workers", summary["workers"]), ("seconds", summary["seconds"]),
        ("revisions / s", summary["revisions_per_second"])])
    ui.table("candidates filtered", ["filter", "pairs"],
             [(f, summary["filtered"].get(f, 0)) for f in FILTERS
              if f != "parser" or summary["parser_filter"]])
    ui.note(f"wrote {summary['pairs']} pairs to {args.out}")
    return 0


COMMANDS = [
    Command("mine-revisions", "mine sentence compressions/expansions from MediaWiki history dumps (Dask)",
            _configure, _run),
]
