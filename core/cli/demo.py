"""`treegram demo`: train a PCFG on the built-in mini treebank and parse a few sentences, no extra data needed."""

from __future__ import annotations

import argparse
import time

from treegram.errors import ParseFailure

DEFAULT_SENTENCES = [
    "The hungry dog slept in the garden .",
    "She gave her brother a new book .",
    "The children walked to the lake with their teacher .",
    "My grandmother reads the newspaper in the morning .",
]


def run_demo(args: argparse.Namespace, ui) -> int:
    from treegram.grammar.pcfg import PCFGModel, PCFGSettings
    from treegram.formalism import flat_fallback
    from treegram.cli.ui import styled
    from treegram.trees import ascii_tree

    from treegram.corpora.demo import demo_trees

    trees = demo_trees()
    t0 = time.perf_counter()
    model = PCFGModel.train(trees, PCFGSettings(horizontal=1, vertical=1, rare_threshold=1))
    train_seconds = time.perf_counter() - t0
    sentences = [s.split() for s in (args.sentences or DEFAULT_SENTENCES)]
    results = []
    for tokens in ui.track(sentences, description="parsing"):
        try:
            tree, status = model.parse(tokens), "ok"
        except ParseFailure:
            tree, status = flat_fallback(tokens), "failed"
        results.append((tokens, tree, status))
    info = model.describe(top=0)
    if args.json:
        ui.emit_json({"model": info, "train_seconds": round(train_seconds, 3),
                      "parses": [{"text": " ".join(t), "tree": tr.to_bracket(), "status": st} for t, tr, st in results]})
        return 0
    ui.table(f"PCFG trained on the built-in mini treebank ({len(trees)} trees, {train_seconds:.2f}s)",
             ["", "value"], [(k, v) for k, v in info.items() if not isinstance(v, (list, dict))])
    for tokens, tree, status in results:
        ui.print(styled((" ".join(tokens), "bold"), ("" if status == "ok" else (" (no parse: flat fallback)", "red"))))
        ui.print(ascii_tree(tree), highlight=False, markup=False)
    ui.print(styled(("Train on real data: treegram train pcfg --treebank DIR --out model.npz; "
                     "then treegram parse --model model.npz --input FILE", "dim")))
    return 0
