"""`treegram corrections` (the teacher tool) and `treegram eval-corrections` (FCE evaluation)."""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from treegram import argtypes
from treegram.cli.commands import Command, add_json_flag
from treegram.errors import InputError, ModelFileError


def load_typer(path: Path | None):
    from treegram.plugins.corrections.analysis import ModelTyper, RuleTyper

    if path is None:
        return RuleTyper(), "rules"
    from treegram.formalism import load_model
    from treegram.plugins.corrections.model import CorrectionsModel

    if not Path(path).is_file():
        raise InputError(f"{path}: model file not found",
                         hint="train one with `treegram train corrections --fce ...`, or leave out --model "
                              "for the rule-based typer")
    model = load_model(path)
    if not isinstance(model, CorrectionsModel):
        raise ModelFileError(f"{path}: a {model.formalism} model, not a corrections model",
                             hint="train one with `treegram train corrections --fce ...`")
    return ModelTyper(model), f"model {Path(path).name}"


# -- treegram corrections ------------------------------------------------------------------------------
def _configure_corrections(p: argparse.ArgumentParser) -> None:
    p.add_argument("original", type=Path, metavar="ORIGINAL",
                   help="the students' essays: a file (several students: '## NAME' header lines) or a directory "
                        "(one file per student)")
    p.add_argument("corrected", type=Path, metavar="CORRECTED", help="the teacher's corrected versions, same layout")
    p.add_argument("--by-student", action="store_true", help="show each student's sentences and a table per student")
    p.add_argument("--model", type=Path, default=None,
                   help="a model from `treegram train corrections` (default: the rule-based typer, no data needed)")
    p.add_argument("--align", choices=["auto", "lines", "text"], default="auto",
                   help="lines: one sentence per line on both sides; text: align sentences of whole texts; "
                        "auto (default): lines when the line counts agree, else text")
    p.add_argument("--heuristic", choices=["h0", "h1", "h2", "h3", "h4", "hinf"], default="h0",
                   help="how edits are grouped into corrections (section 4; default h0, the paper's best)")
    p.add_argument("--html", type=Path, default=None, metavar="OUT", help="also write an HTML report")
    p.add_argument("--out", type=Path, default=None, metavar="REPORT.json",
                   help="also write the JSON report (input of `treegram exercises --from-corrections`)")
    p.add_argument("--all", action="store_true", help="also show sentences without corrections")
    add_json_flag(p)


def _run_corrections(args: argparse.Namespace, ui) -> int:
    from treegram.plugins.corrections.analysis import find_corrections
    from treegram.plugins.corrections.essays import align_essay, read_essays
    from treegram.plugins.corrections.report import build_report, render_html, render_terminal
    from treegram.plugins.corrections.text import tokenize

    for out in (args.html, args.out):
        if out is not None and out.is_dir():
            raise InputError(f"{out}: is a directory", hint="name the file to write")
    essays = read_essays(args.original, args.corrected)
    aligned = [p for s, a, b in essays for p in align_essay(s, a, b, args.align)]
    typer, typer_name = load_typer(args.model)
    found = find_corrections([(tokenize(p.original), tokenize(p.corrected)) for p in aligned], typer,
                             heuristic=args.heuristic, ui=ui)
    report = build_report(aligned, found, typer=typer_name, heuristic=args.heuristic)
    from treegram.io import atomic_write_text, save_json

    if args.out is not None:
        save_json(args.out, report)
    if args.html is not None:
        atomic_write_text(args.html, render_html(report, title=f"Corrections: {args.original.name}"))
    if args.json:
        ui.emit_json(report)
    else:
        render_terminal(report, ui, by_student=args.by_student, show_all=args.all)
    for out, what in ((args.out, "JSON report"), (args.html, "HTML report")):
        if out is not None:
            ui.note(f"wrote the {what} to {out}")
    return 0


# -- treegram eval-corrections -------------------------------------------------------------------------
def _configure_eval(p: argparse.ArgumentParser) -> None:
    p.add_argument("--model", type=Path, default=None,
                   help="model from `treegram train corrections` (default: the rule-based typer)")
    p.add_argument("--fce", type=Path, nargs="+", required=True, metavar="FILE.json", help="FCE JSON-lines files")
    p.add_argument("--heuristics", default="h0,h1,h2,h3,h4,hinf",
                   help="isolation heuristics to evaluate (comma-separated; default all)")
    p.add_argument("--limit", type=argtypes.positive_int, default=None, help="only the first N essays' sentence pairs")
    add_json_flag(p)


def evaluate_files(paths, typer, *, heuristics, ui=None, limit=None) -> dict:
    from treegram.plugins.corrections.analysis import ModelTyper
    from treegram.plugins.corrections.evaluate import accuracy, isolation
    from treegram.plugins.corrections.fce import read_fce
    from treegram.plugins.corrections.pipeline import instance_features, tag_sentences
    from treegram.plugins.corrections.rules import rule_code
    from treegram.plugins.corrections.editpath import Span, edit_path, trim

    pairs, instances = read_fce(paths)
    if limit is not None:
        keep = list(dict.fromkeys(p.essay for p in pairs))[:limit]
        pairs = [p for p in pairs if p.essay in keep]
        instances = [i for i in instances if i.essay in keep]
    if not instances:
        raise InputError("no correction instances in the FCE file(s)", hint="pass fce-dev.json or similar")
    start = time.perf_counter()
    if isinstance(typer, ModelTyper):
        feats = instance_features(instances, lexical=typer.model.lexical, ui=ui)
        p75, p15 = typer.model.predict(feats)
    else:
        from treegram.plugins.corrections.labels import collapse

        ytags = tag_sentences([i.y for i in instances], ui)
        xtags = tag_sentences([i.x for i in instances], ui)
        p75 = []
        for i, xt, yt in zip(instances, xtags, ytags):
            path = [o for o in edit_path(list(i.x), list(i.y)) if o.op != "E"]
            x0 = min(o.i for o in path); x1 = max(o.i + (o.op != "I") for o in path)
            y0 = min(o.j for o in path); y1 = max(o.j + (o.op != "D") for o in path)
            sp = trim(list(i.x), list(i.y), Span(x0, x1, y0, y1))
            reorder = sorted(i.x) == sorted(i.y)
            p75.append(rule_code(list(i.x[sp.x0:sp.x1]), list(i.y[sp.y0:sp.y1]), list(xt[sp.x0:sp.x1]),
                                 list(yt[sp.y0:sp.y1]), reorder=reorder))
        p15 = [collapse(c) for c in p75]
    seconds = time.perf_counter() - start
    out = accuracy([i.code for i in instances], p75, p15)
    out["classify_seconds"] = round(seconds, 2)
    out["instances_per_second"] = round(len(instances) / seconds, 1) if seconds else None
    out["sentence_pairs"] = len(pairs)
    out["isolation"] = isolation(pairs, typer, heuristics=heuristics, ui=ui)
    return out


def _run_eval(args: argparse.Namespace, ui) -> int:
    from treegram.plugins.corrections.editpath import HEURISTICS

    heuristics = [h.strip() for h in args.heuristics.split(",") if h.strip()]
    bad = [h for h in heuristics if h not in HEURISTICS]
    if bad or not heuristics:
        raise InputError(f"--heuristics: unknown {bad or 'empty'}", hint=f"choose from {', '.join(HEURISTICS)}")
    typer, name = load_typer(args.model)
    res = evaluate_files(args.fce, typer, heuristics=heuristics, ui=ui, limit=args.limit)
    res["typer"] = name
    if args.json:
        ui.emit_json(res)
        return 0
    ui.table(f"correction typing ({name})", ["", "value"],
             [("instances", res["instances"]), ("accuracy, 15 classes", res["accuracy_15"]),
              ("accuracy, 75 codes", res["accuracy_75"]),
              ("majority baseline, 15", res["majority_15"]["accuracy"]),
              ("majority baseline, 75", res["majority_75"]["accuracy"]),
              ("instances / s", res["instances_per_second"])])
    ui.table("correction isolation (F1)", ["heuristic", "unlabelled", "labelled (15)", "labelled (75)",
                                           "predicted", "gold"],
             [(h, r["unlabelled"]["f1"], r["labelled_15"]["f1"], r["labelled_75"]["f1"], r["predicted"], r["gold"])
              for h, r in res["isolation"].items()])
    return 0


COMMANDS = [
    Command("corrections", "isolate and type a teacher's corrections of essays; per-student and class summary",
            _configure_corrections, _run_corrections),
    Command("eval-corrections", "evaluate correction typing and isolation on FCE (accuracy, F1 per heuristic)",
            _configure_eval, _run_eval),
]
