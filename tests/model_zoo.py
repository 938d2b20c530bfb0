"""One small saved model of every formalism and variant (the fault suites fuzz them; see test_fault_models.py)."""

from __future__ import annotations

import json
from pathlib import Path

from toy_data import PARK

ESSAY = "Dear Sam,\n\nI goed to the park yesterday. It were very nice and I like it. We see a dogs there."


def _fce(path: Path, n: int = 8) -> None:
    def edit(word, fix, code):
        start = ESSAY.index(word)
        return [start, start + len(word), fix, code]

    rows = []
    for k in range(n):
        edits = [edit("goed", "went", "IV"), edit("the ", "", "UD"), edit("were", "was", "AGV"),
                 edit("like", "liked", "TV"), edit("see", "saw", "TV"), edit("dogs", "dog", "AGN")]
        rows.append(json.dumps({"id": f"e{k}", "text": ESSAY, "edits": [[0, edits]]}))
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")


def build_zoo(d: Path, trees: int = 16) -> dict[str, Path]:
    """{kind: model file} for every formalism and variant, trained small and fast in `d` (on the first `trees`
    demo trees and as many compression pairs)."""
    from conftest import write_demo_pairs

    from treegram.corpora.demo import demo_trees
    from treegram.cli.app import main
    from treegram.plugins.vocabgen.model import VocabgenModel

    d = Path(d)
    tb = d / "demo.mrg"
    tb.write_text("".join(t.to_bracket() + "\n" for t in demo_trees()[:trees]), encoding="utf-8")
    write_demo_pairs(d, trees)
    pairs = [str(d / "src.txt"), str(d / "tgt.txt")]
    parser = str(d / "parser.model")
    out: dict[str, Path] = {"pcfg": d / "parser.model"}
    runs = {
        "tsg": ["train", "tsg", "--treebank", tb, "--iterations", "2"],
        "tig": ["train", "tig", "--treebank", tb, "--iterations", "1", "--tsg-init", "2", "--phi", "0.3"],
        "ostag": ["train", "ostag", "--treebank", tb, "--em-iterations", "1"],
        "ostag-bayes": ["train", "ostag", "--bayesian", "--iterations", "1", "--tsg-init", "2", "--treebank", tb],
        "stsg-gibbs": ["train", "stsg", "--iterations", "3", "--pairs", *pairs, "--parser", parser],
        "stsg-em": ["train", "stsg", "--method", "em", "--iterations", "2", "--pairs", *pairs, "--parser", parser],
        "stsg-mcdonald": ["train", "stsg", "--method", "mcdonald", "--epochs", "2", "--pairs", *pairs,
                          "--parser", parser],
        "stsg-svm": ["train", "stsg", "--method", "svm", "--C", "1", "--pairs", *pairs, "--parser", parser],
        "channel": ["train", "channel", "--pairs", *pairs, "--parser", parser, "--levels", "6"],
        "channel4": ["train", "channel", "--pairs", *pairs, "--parser", parser, "--levels", "4"],
    }
    for kind, argv in runs.items():
        path = d / f"{kind}.model"
        code = main(["-q", *map(str, argv), "--seed", "3", "--out", str(path), "--checkpoint", str(d / f"{kind}.ckpt")]
                    if "--iterations" in argv or "--C" in argv else ["-q", *map(str, argv), "--out", str(path)])
        assert code == 0, kind
        out[kind] = path
    _fce(d / "fce.json")
    assert main(["-q", "train", "corrections", "--fce", str(d / "fce.json"), "--out", str(d / "corrections.model"),
                 "--max-iter", "50"]) == 0
    out["corrections"] = d / "corrections.model"
    VocabgenModel.train(PARK * 2).save(d / "vocabgen.model")
    out["vocabgen"] = d / "vocabgen.model"
    return out
