"""`treegram tsg-trees`: draw the most frequent elementary trees of a TSG model."""

from __future__ import annotations

import argparse
from pathlib import Path

from treegram import argtypes


def configure_trees(p: argparse.ArgumentParser) -> None:
    p.add_argument("model", type=Path, help="a TSG model file from `treegram train tsg`")
    p.add_argument("--top", type=argtypes.nonnegative_int, default=10, help="how many elementary trees to draw (default 10)")
    p.add_argument("--json", action="store_true", help="machine-readable JSON on stdout")


def run_trees(args, ui) -> int:
    from treegram.errors import TreegramError
    from treegram.formalism import load_model

    model = load_model(args.model)
    if not hasattr(model, "render_grammar"):
        raise TreegramError(f"{args.model}: a {model.formalism} model has no elementary trees to draw",
                            hint="pass a model written by `treegram train tsg`")
    if args.json:
        ui.emit_json(model.fragments[: args.top])
        return 0
    model.render_grammar(ui, args)
    return 0
