from __future__ import annotations

from pathlib import Path

import pytest

SHARED_DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """../shared/data beside the project; tests that need it skip with a clear reason when it is absent."""
    if not SHARED_DATA.is_dir():
        pytest.skip(f"needs the shared corpora at {SHARED_DATA} (absent on this machine)")
    return SHARED_DATA


@pytest.fixture(scope="session")
def demo_model_files(tmp_path_factory) -> dict[str, Path]:
    """Small PCFG, TSG and TIG models of the built-in demo treebank, trained once per session (decoders, views)."""
    from treegram.cli.app import main
    from treegram.corpora.demo import demo_trees

    d = tmp_path_factory.mktemp("demo_models")
    tb = d / "demo.mrg"
    tb.write_text("".join(t.to_bracket() + "\n" for t in demo_trees()), encoding="utf-8")
    out = {}
    for name, extra in (("pcfg", []), ("tsg", ["--iterations", "3"]),
                        ("tig", ["--iterations", "1", "--tsg-init", "2", "--phi", "0.3"])):
        path = d / f"demo.{name}"
        assert main(["-q", "train", name, "--treebank", str(tb), "--seed", "3", "--out", str(path), *extra]) == 0
        out[name] = path
    return out


def write_demo_pairs(d: Path, n: int | None = None) -> Path:
    """A PCFG parser trained on the demo treebank (`d/parser.model`) and (long, short) compression pairs from its
    sentences, each word kept with probability 0.7 (`d/src.txt`, `d/tgt.txt`): the training data of the
    compressors' command-line tests."""
    import numpy as np

    from treegram.corpora.demo import demo_trees
    from treegram.grammar.pcfg import PCFGModel

    trees = demo_trees()
    PCFGModel.train(trees).save(d / "parser.model")
    rng = np.random.default_rng(0)
    src, tgt = [], []
    for t in trees[:n]:
        words = t.leaves()
        keep = rng.random(len(words)) < 0.7
        src.append(" ".join(words))
        tgt.append(" ".join(w for w, k in zip(words, keep) if k))
    (d / "src.txt").write_text("\n".join(src) + "\n", encoding="utf-8")
    (d / "tgt.txt").write_text("\n".join(tgt) + "\n", encoding="utf-8")
    return d
