"""The core commands (plugins, train, parse, evalb, show, grammar, demo), registered through the same hook as a
plugin's commands."""

from __future__ import annotations

import argparse
import itertools
import json
import sys
import time
from collections.abc import Callable
from pathlib import Path

import attrs

from treegram import argtypes
from treegram.cli.ui import UI
from treegram.errors import InputError, TreegramError


@attrs.frozen
class Command:
    name: str
    help: str
    configure: Callable[[argparse.ArgumentParser], None]
    run: Callable[[argparse.Namespace, UI], int]


def add_json_flag(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", action="store_true", help="machine-readable JSON on stdout")


# -- treegram plugins ------------------------------------------------------------------------------
def _configure_plugins(p: argparse.ArgumentParser) -> None:
    add_json_flag(p)


def _run_plugins(args: argparse.Namespace, ui: UI) -> int:
    from treegram.plugin_manager import formalisms, plugin_table, sampler_moves

    rows = plugin_table()
    if args.json:
        ui.emit_json({"plugins": rows, "formalisms": sorted(formalisms()), "sampler_moves": sorted(sampler_moves())})
        return 0
    ui.table("treegram plugins", ["plugin", "source", "provides"],
             [(r["name"], r["source"], ", ".join(r["provides"]) or "-") for r in rows if "error" not in r])
    failed = [r for r in rows if "error" in r]
    if failed:
        ui.table("plugins skipped (errors)", ["plugin", "source", "error"],
                 [(r["name"], r["source"], r["error"]) for r in failed])
        ui.note("skipped plugins are not used; fix or uninstall them, or choose which third-party plugins load "
                "with TREEGRAM_LOAD_PLUGINS=name1,name2 (empty: none)")
    return 0


# -- treegram train NAME ---------------------------------------------------------------------------
def _configure_train(p: argparse.ArgumentParser) -> None:
    from treegram.formalism import configure_train_parser
    from treegram.plugin_manager import formalisms, record_failure

    sub = p.add_subparsers(dest="formalism", metavar="FORMALISM", required=True)
    for name, contribution in sorted(formalisms().items()):
        formalism = contribution.obj
        fp = sub.add_parser(name, help=formalism.description, description=formalism.description)
        fp.add_argument("--out", required=True, type=Path, help="model file to write")
        fp.add_argument("--seed", type=argtypes.seed, default=0, help="random seed, any integer (same seed, same model)")
        fp.add_argument("--force", action="store_true",
                        help="with --resume: continue even if the checkpoint was written with another seed or settings")
        add_json_flag(fp)
        fp.set_defaults(_derived=_train_derived)
        try:
            configure_train_parser(formalism, fp)
        except Exception as exc:  # noqa: BLE001 - one plugin's broken options must not break every command
            record_failure(contribution.plugin, "configure_train_parser", exc)
            fp.set_defaults(_broken=(contribution.plugin, exc))


def _train_derived(args: argparse.Namespace) -> tuple[dict, dict]:
    """The default checkpoint OUT.ckpt of formalisms that checkpoint every N sweeps (they have --checkpoint-every)."""
    from treegram.io import derived_path

    if hasattr(args, "checkpoint_every") and getattr(args, "checkpoint", None) is None:
        return {"the checkpoint --out + .ckpt": derived_path(args.out, ".ckpt")}, {}
    return {}, {}


def add_batch_options(p: argparse.ArgumentParser, verb: str, *, default_batch: int) -> None:
    """`--workers N | --scheduler ADDRESS` and `--batch-size B` of `parse` and `compress` (`treegram.batchparse`),
    with the batch folder they write among the command's outputs."""
    where = p.add_mutually_exclusive_group()
    where.add_argument("--workers", type=argtypes.positive_int, default=None, metavar="N",
                       help=f"{verb} in batches on a local Dask cluster of N worker processes (needs --out FILE; "
                            "finished batches are kept in FILE.batches/ until the run completes, so a killed run "
                            "continues with --resume); the output is the same as without --workers, byte for byte")
    where.add_argument("--scheduler", default=None, metavar="ADDRESS",
                       help=f"{verb} in batches on a running Dask cluster (e.g. tcp://host:8786) instead of a local "
                            "one; its workers need treegram installed and the model at the same path")
    p.add_argument("--batch-size", type=argtypes.positive_int, default=None, metavar="B",
                   help=f"input lines per batch (one Dask task) with --workers/--scheduler (default {default_batch})")
    p.set_defaults(_derived=batch_derived)


def batch_derived(args: argparse.Namespace) -> tuple[dict, dict]:
    """OUT.batches/ of `parse`/`compress` with --workers or --scheduler."""
    from treegram.io import derived_path

    if getattr(args, "workers", None) or getattr(args, "scheduler", None):
        return {}, {"the batch folder --out + .batches": derived_path(args.out, ".batches") if args.out else None}
    return {}, {}


def _run_train(args: argparse.Namespace, ui: UI) -> int:
    from treegram.plugin_manager import get_formalism

    broken = getattr(args, "_broken", None)
    if broken is not None:
        plugin, exc = broken
        raise TreegramError(f"plugin {plugin!r} failed to set up `treegram train {args.formalism}`: "
                            f"{type(exc).__name__}: {exc}", hint=f"this is a bug in the {plugin!r} plugin; "
                                                                 "`treegram plugins` lists it with its error")
    from treegram.bayes.driver import resume_policy
    from treegram.formalism import train_from_args

    formalism = get_formalism(args.formalism)
    start = time.perf_counter()
    with resume_policy(force=bool(getattr(args, "force", False))):
        model = train_from_args(formalism, args, ui)
    model.save(args.out)
    summary = model.describe(top=0)
    summary["seconds"] = round(time.perf_counter() - start, 2)
    summary["model"] = str(args.out)
    if args.json:
        ui.emit_json(summary)
    else:
        ui.table(f"{args.formalism} model written to {args.out}", ["", "value"],
                 [(k, v) for k, v in summary.items() if not isinstance(v, (list, dict))])
    return 0


# -- treegram parse --------------------------------------------------------------------------------
def add_encoding_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--encoding", default=None, type=argtypes.encoding,
                        help="text encoding of the input files (default UTF-8)")


def _configure_parse(p: argparse.ArgumentParser) -> None:
    p.add_argument("--model", required=True, type=Path, help="model file from `treegram train`")
    p.add_argument("--input", default="-", help="one tokenized sentence per line (- = stdin)")
    p.add_argument("--text", action="store_true",
                   help="each input line is one sentence as typed: tokenize it the Penn Treebank way "
                        "(treegram.text: \"isn't\" -> is n't, \"$5\" -> $ 5, brackets as -LRB-)")
    p.add_argument("--out", default="-",
                   help="one bracketed tree per line, written as each sentence is parsed (- = stdout)")
    p.add_argument("--max-length", type=argtypes.positive_int, default=100,
                   help="longer sentences are not parsed; they get a flat fallback tree (default 100)")
    p.add_argument("--resume", action="store_true",
                   help="continue an interrupted run: keep the trees already in --out and parse the rest")
    add_encoding_option(p)
    p.add_argument("--decoder", default=None,
                   help="mpd (Viterbi), mpp (sampled most probable parse), maxrule, maxrule-sum, or a plugin's decoder "
                        "(`treegram plugins` lists them); default: the decoder the model was trained for "
                        "(`treegram grammar MODEL` shows it), else mpd")
    p.add_argument("--samples", type=argtypes.positive_int, default=None, help="derivations sampled per sentence by mpp (default 100)")
    from treegram.option_groups import CELL_BEAM

    p.add_argument("--cell-beam", type=argtypes.nonnegative_float, default=None, metavar="NATS",
                   help="cell beam of the exhaustive chart pass (a pcfg model's chart; the coarse PCFG pass of a tsg, "
                        "tig or ostag model): a cell's entries more than NATS below its best are dropped, a sentence "
                        f"left without a parse is parsed again without it (default {CELL_BEAM:g}; 0 = exhaustive; "
                        "`treegram grammar MODEL` says what a model prunes)")
    add_batch_options(p, "parse", default_batch=200)
    add_json_flag(p)


def _run_parse_batches(args: argparse.Namespace, ui: UI) -> int:
    """`treegram parse --workers N | --scheduler ADDRESS`: `treegram.batchparse` on a Dask cluster."""
    from treegram.batchparse import parse_batches
    from treegram.io import count_lines

    if args.out == "-":
        raise InputError("--workers/--scheduler need --out FILE",
                         hint="finished batches are kept beside the output file, so a killed run can resume")
    from rich.markup import escape

    from treegram.runstate import command_identity, run_record

    total = count_lines(args.input) if args.input != "-" else None
    out = Path(args.out)
    # the same run record as the one-process path (--workers is not part of it): --resume continues only the run
    # that wrote --out, with or without a cluster
    with run_record(out, command_identity(args), resume=args.resume, note=lambda m: ui.note(escape(m))), \
            ui.task("parsing (batches on Dask)", total) as advance:
        state = {"lines": 0, "failed": 0}

        def progress(res):  # called as each batch finishes on the cluster
            n = len(res["trees"])
            state["lines"] += n
            state["failed"] += res["counts"]["failed"] + res["counts"]["too_long"]
            advance(n, f"{state['lines']} lines, {state['failed']} flat fallbacks")

        summary = parse_batches(args.input, out, model=args.model, decoder=args.decoder, samples=args.samples,
                                cell_beam=args.cell_beam,
                                max_length=args.max_length, batch_size=args.batch_size or 200, workers=args.workers,
                                scheduler=args.scheduler, resume=args.resume, encoding=args.encoding,
                                progress=progress, text=args.text)
    if args.json:
        ui.emit_json(summary)
        return 0
    if summary["kept_lines"]:
        ui.note(f"resuming: {summary['kept_lines']} trees already in {args.out} kept")
    if summary["batches_resumed"]:
        ui.note(f"resumed: {summary['batches_resumed']} of {summary['batches']} batches were already finished")
    if summary["batches_redone"]:
        ui.note(f"{len(summary['batches_redone'])} finished batch file(s) were not what the run "
                f"wrote and were parsed again: {'; '.join(summary['batches_redone'][:3])}", label="note")
    if summary["lines"] < summary["kept_lines"]:
        ui.note(f"{args.out} already has {summary['kept_lines']} lines but the input has only "
                f"{summary['lines']}", label="note")
    c = summary["counts"]
    ui.note(f"parsed {c['ok']}/{summary['new_lines']} sentences on {summary['workers']} workers in "
            f"{summary['batches']} batches ({summary['sentences_per_second']:.1f} sentences/s); flat fallback: "
            f"{c['failed']} unparseable, {c['too_long']} longer than {args.max_length}; {c['empty']} empty lines "
            "left empty")
    return 0


def _run_parse(args: argparse.Namespace, ui: UI) -> int:
    from treegram.batchparse import parse_line
    from treegram.formalism import load_model
    from treegram.io import count_lines, iter_lines, open_output

    if args.resume and args.out == "-":
        raise InputError("--resume needs --out FILE", hint="resume continues the file an interrupted run wrote")
    if args.workers or args.scheduler:
        return _run_parse_batches(args, ui)
    if args.batch_size is not None:
        raise InputError("--batch-size is an option of batch parsing", hint="add --workers N or --scheduler ADDRESS")
    model = load_model(args.model)
    if not hasattr(model, "parse"):
        raise TreegramError(f"{args.model}: a {model.formalism} model cannot parse sentences",
                            hint="use a parsing model (pcfg, tsg, tig, ostag)")
    from treegram.charts.decoders import parse_default

    parse = parse_default(model, args.decoder, args.samples, cell_beam=args.cell_beam)
    lines = iter_lines(args.input, encoding=args.encoding, what="input")
    first = next(lines, None)  # an empty input is an error before the output is touched
    if first is None:
        raise InputError(f"{'stdin' if args.input == '-' else args.input}: no sentences (the input is empty)",
                         hint="give one tokenized sentence per line")
    total = count_lines(args.input)
    counts = {"ok": 0, "failed": 0, "too_long": 0, "empty": 0}
    start = time.perf_counter()
    parse_seconds = 0.0
    seen = 0
    json_out = args.json and args.out == "-"  # --json with --out FILE: trees to the file, JSON summary to stdout
    from rich.markup import escape

    from treegram.runstate import command_identity, run_record

    # the model (by content) and settings are recorded: --resume refuses to continue another run's output
    with run_record(args.out, command_identity(args), resume=args.resume, note=lambda m: ui.note(escape(m))), \
            open_output(args.out, resume=args.resume, encoding="utf-8") as sink:
        if args.json:
            sys.stdout.write('{"sentences": [')
        skip = sink.done
        if skip:
            ui.note(f"resuming: {skip} trees already in {args.out}")
        for lineno, line in enumerate(ui.track(itertools.chain([first], lines), total=total,
                                               description="parsing"), 1):
            seen = lineno
            if lineno <= skip:
                continue
            # the same per-line step as the cluster workers' (escaping, length cut-off, flat fallback)
            status, bracket, seconds = parse_line(parse, line, args.max_length, args.text)
            parse_seconds += seconds
            counts[status] += 1
            if not json_out:
                sink.write_line(bracket)
            if args.json:
                sep = "" if lineno == skip + 1 else ","
                sys.stdout.write(sep + "\n  " + json.dumps({"line": lineno, "status": status, "tree": bracket},
                                                            ensure_ascii=False))
        if args.json:
            elapsed = time.perf_counter() - start
            sys.stdout.write("\n], \"counts\": " + json.dumps(counts) + f', "seconds": {round(elapsed, 3)}}}\n')
            sys.stdout.flush()
    if skip and seen < skip:
        ui.note(f"{args.out} already has {skip} lines but the input has only {seen}", label="note")
    parsed = counts["ok"] + counts["failed"]
    rate = parsed / parse_seconds if parse_seconds > 0 else float("nan")
    ui.note(f"parsed {counts['ok']}/{seen - skip} sentences ({rate:.1f} sentences/s); "
            f"flat fallback: {counts['failed']} unparseable, {counts['too_long']} longer than {args.max_length}; "
            f"{counts['empty']} empty lines left empty")
    return 0


# -- treegram evalb --------------------------------------------------------------------------------
def _configure_evalb(p: argparse.ArgumentParser) -> None:
    p.add_argument("gold", type=Path, help="gold trees, one per line (or any bracketed file)")
    p.add_argument("test", type=Path, help="parser output, one tree per line, aligned with gold")
    p.add_argument("--max-length", type=argtypes.positive_int, default=None,
                   help="score only sentences up to this length")
    p.add_argument("--per-sentence", action="store_true", help="also list per-sentence scores")
    p.add_argument("--metric", default="parseval",
                   help="score with this registered metric (`treegram plugins` lists them); default parseval, "
                        "the EVALB report (the only one --max-length and --per-sentence apply to)")
    add_encoding_option(p)
    add_json_flag(p)


def _run_metric(args: argparse.Namespace, ui: UI) -> int:
    """`evalb --metric NAME`: a metric contributed through `register_metrics` over the two files' trees."""
    from treegram.evaluation.parseval import read_evalb_trees
    from treegram.plugin_manager import metrics

    found = metrics()
    if args.metric not in found:
        raise InputError(f"unknown metric {args.metric!r} (installed: {', '.join(sorted(found)) or 'none'})",
                         hint="run `treegram plugins` to see the registered metrics")
    if args.max_length or args.per_sentence:
        raise InputError("--max-length and --per-sentence are options of the parseval metric",
                         hint=f"leave them out with --metric {args.metric}")
    golds, tests, _unreadable = read_evalb_trees(args.gold, args.test, encoding=args.encoding)
    scores = dict(found[args.metric].obj(golds, tests))
    if args.json:
        ui.emit_json({"metric": args.metric, **scores})
    else:
        ui.table(args.metric, ["metric", "value"], list(scores.items()))
    return 0


def _run_evalb(args: argparse.Namespace, ui: UI) -> int:
    from treegram.evaluation.parseval import ParsevalParams, evalb_files

    if args.metric != "parseval":
        return _run_metric(args, ui)
    params = ParsevalParams(max_length=args.max_length) if args.max_length else ParsevalParams()
    result = evalb_files(args.gold, args.test, params, encoding=args.encoding)
    # the per-sentence scores are `result.sentences` (SentenceScore); to_dict lists them only when asked
    data = result.to_dict(per_sentence=args.per_sentence)
    if args.json:
        ui.emit_json(data)
        return 0
    if args.per_sentence:
        ui.table("per sentence", ["#", "length", "matched", "gold", "test", "F1", "status"],
                 [(i + 1, s.length, s.matched, s.gold_brackets, s.test_brackets, round(s.f1, 2),
                   s.status + (f": {s.error}" if s.error else ""))
                  for i, s in enumerate(result.sentences)])
    ui.table("PARSEVAL (EVALB, COLLINS.prm)", ["metric", "value"],
             [(k, v) for k, v in data.items() if not isinstance(v, (list, dict))])
    return 0


# -- treegram show ---------------------------------------------------------------------------------
def _configure_show(p: argparse.ArgumentParser) -> None:
    p.add_argument("file", type=Path, help="a file of bracketed trees")
    p.add_argument("--first", type=argtypes.positive_int, default=5, help="how many trees to draw (default 5)")
    p.add_argument("--raw", action="store_true", help="keep function tags, traces and the empty top bracket")
    add_encoding_option(p)
    add_json_flag(p)


def _run_show(args: argparse.Namespace, ui: UI) -> int:
    from treegram.trees import NormalizeOptions, ascii_tree, read_tree_file, unescape_word

    options = NormalizeOptions(remove_empty_top=not args.raw, remove_traces=not args.raw,
                               strip_function_tags=not args.raw, strip_indices=not args.raw)
    trees = read_tree_file(args.file, normalize=options, encoding=args.encoding)
    if not trees:
        raise InputError(f"{args.file}: no trees in the file", hint="give a file of bracketed trees")
    trees = trees[: args.first]
    if args.json:
        ui.emit_json([{"tree": t.to_bracket(), "words": [unescape_word(w) for w in t.leaves()]} for t in trees])
        return 0
    for t in trees:
        ui.print(ascii_tree(t), highlight=False, markup=False)
        ui.print()
    return 0


# -- treegram grammar MODEL ------------------------------------------------------------------------
def _configure_grammar(p: argparse.ArgumentParser) -> None:
    p.add_argument("model", type=Path, help="model file")
    p.add_argument("--top", type=argtypes.nonnegative_int, default=20, help="how many rules/elementary trees to list")
    p.add_argument("--aux", action="store_true", help="auxiliary trees (TIG/OSTAG models), foot marked")
    p.add_argument("--wrapping", action="store_true", help="only wrapping auxiliary trees (OSTAG models)")
    add_json_flag(p)


def _run_grammar(args: argparse.Namespace, ui: UI) -> int:
    from treegram.formalism import load_model

    model = load_model(args.model)
    if args.json:
        as_json = getattr(model, "grammar_json", None)  # models whose listing depends on --aux / --wrapping
        ui.emit_json(as_json(args) if as_json is not None else model.describe(top=args.top))
        return 0
    info = model.describe(top=args.top)
    ui.table(f"{model.formalism} model {args.model}", ["", "value"],
             [(k, v) for k, v in info.items() if not isinstance(v, (list, dict))])
    render = getattr(model, "render_grammar", None)
    if render is not None:  # formalisms that can draw their elementary structures do so themselves
        render(ui, args)
        return 0
    rules = info.get("top_rules") or []
    if rules:
        ui.table(f"top {len(rules)} rules", list(rules[0].keys()), [list(r.values()) for r in rules])
    return 0


# -- treegram demo (the README's main job until the exercise sheet lands) --------------------------
def _configure_demo(p: argparse.ArgumentParser) -> None:
    p.add_argument("sentences", nargs="*", help="sentences to parse (default: a few built-in ones)")
    add_json_flag(p)


def _run_demo(args: argparse.Namespace, ui: UI) -> int:
    from treegram.cli.demo import run_demo

    return run_demo(args, ui)


def core_commands() -> tuple[Command, ...]:
    """The core's commands (registered by treegram.corehooks)."""
    return (
        Command("plugins", "list installed plugins and what they provide", _configure_plugins, _run_plugins),
        Command("train", "train a model of a formalism (see `treegram train -h`)", _configure_train, _run_train),
        Command("parse", "parse tokenized sentences with a model", _configure_parse, _run_parse),
        Command("evalb", "PARSEVAL labeled bracket scores (EVALB, COLLINS.prm)", _configure_evalb, _run_evalb),
        Command("show", "draw bracketed trees in the terminal", _configure_show, _run_show),
        Command("grammar", "summarize a model and list its most frequent rules", _configure_grammar, _run_grammar),
        Command("demo", "train a PCFG on the built-in mini treebank and parse sentences", _configure_demo, _run_demo),
    )
