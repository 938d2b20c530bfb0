"""The ostag plugin's commands: `treegram ostag-grammar MODEL [--aux] [--wrapping]` (an alias of `treegram grammar`
for OSTAG models) and `treegram convert MODEL --to tsg --out OUT` (the TAG->TSG approximation, `tag2tsg`)."""

from __future__ import annotations

import argparse
from pathlib import Path

from treegram import argtypes
from treegram.errors import InputError


def configure_grammar(p: argparse.ArgumentParser) -> None:
    p.add_argument("model", type=Path, help="an OSTAG model file")
    p.add_argument("--top", type=argtypes.nonnegative_int, default=15, help="how many trees to list (default 15)")
    p.add_argument("--aux", action="store_true", help="list the most probable auxiliary trees")
    p.add_argument("--wrapping", action="store_true", help="list only wrapping auxiliary trees")
    p.add_argument("--draw", action="store_true", help="(kept for compatibility: the trees are always drawn)")
    p.add_argument("--json", action="store_true", help="machine-readable JSON on stdout")


def run_grammar(args: argparse.Namespace, ui) -> int:
    from treegram.formalism import load_model

    model = load_model(args.model)
    if getattr(model, "formalism", None) != "ostag":
        raise InputError(f"{args.model} is a {model.formalism} model, not an OSTAG",
                         hint="use `treegram grammar` for other formalisms")
    if args.json:
        ui.emit_json(model.grammar_json(args))
        return 0
    info = model.describe(top=0)
    ui.table(f"ostag model {args.model}", ["", "value"], [(k, v) for k, v in info.items()
                                                          if not isinstance(v, (list, dict))])
    model.render_grammar(ui, args)  # the same listing as `treegram grammar MODEL --aux --wrapping`
    return 0


def configure_convert(p: argparse.ArgumentParser) -> None:
    p.add_argument("model", type=Path, help="an OSTAG model (`treegram train ostag-bayes`; EM models with --min-prob)")
    p.add_argument("--to", choices=("tsg",), default="tsg",
                   help="the target formalism: tsg = the TAG->TSG approximation of Yamangil & Shieber (2013, sec. "
                        "5), parsed in cubic time by the TSG parser (`treegram parse --model OUT`)")
    p.add_argument("--out", type=Path, required=True, help="the model file to write")
    p.add_argument("--min-count", type=argtypes.nonnegative_float, default=0.0,
                   help="keep the (auxiliary tree, Goodman index) adjunctions seen at least this often in the "
                        "sample (mean over the averaged samples; default 0: every observed one)")
    p.add_argument("--min-prob", type=argtypes.open_probability, default=None, metavar="P",
                   help="also keep every adjunction the sample never used whose probability P_adj(node) P_aux(tree) "
                        "is at least P (more coverage, a larger grammar; the only way to convert an EM-trained OSTAG)")
    p.add_argument("--json", action="store_true", help="machine-readable JSON on stdout")


def run_convert(args: argparse.Namespace, ui) -> int:
    from treegram.formalism import load_model
    from treegram.plugins.ostag.tag2tsg import convert_model

    model = load_model(args.model)
    report = convert_model(model, args.out, min_count=args.min_count, min_prob=args.min_prob)
    report["model"] = str(args.out)
    if args.json:
        ui.emit_json(report)
    else:
        ui.table(f"TSG written to {args.out}", ["", "value"], list(report.items()))
    return 0
