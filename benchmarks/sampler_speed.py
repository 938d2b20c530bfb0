"""Seconds per sweep of the TSG (Gibbs, blocked), TIG and Bayesian OSTAG samplers on the first --train-limit
ptb-sample train trees: the speed half of the issue 11 before/after comparison (`check_sampler_equality.py` is the
equality half).  It runs on the old code too (imports fall back), so the two can be alternated on a shared machine:

    python benchmarks/sampler_speed.py --label after
    (cd OLD_CHECKOUT && PYTHONPATH=DIR_WITH_treegram_LINK python benchmarks/sampler_speed.py --label before)

Each figure is the minimum over --repeat timed runs after one warm-up run (numba compilation / cache loading).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _results import require_shared  # noqa: E402


def best_of(repeat: int, make, sweeps: int, driver) -> float:
    driver(make(), seed=1).run(1)  # warm-up
    best = float("inf")
    for _ in range(repeat):
        state = make()
        t0 = time.perf_counter()
        driver(state, seed=1).run(sweeps)
        best = min(best, (time.perf_counter() - t0) / sweeps)
    return best


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--label", default="")
    ap.add_argument("--train-limit", type=int, default=300)
    ap.add_argument("--repeat", type=int, default=2)
    args = ap.parse_args()
    from treegram.bayes import BlockedMH, GibbsSampler
    from treegram.trees import read_treebank

    try:
        from treegram.elementary import GibbsTSG, TSGSettings, prepare
    except ImportError:  # before issue 11
        from treegram.plugins.tsg.data import TSGSettings, prepare
        from treegram.plugins.tsg.state import GibbsTSG
    from treegram.plugins.ostag.bayes_model import BayesOSTAGSettings
    from treegram.plugins.ostag.bayes_sampler import BlockedOSTAG, prepare_data
    from treegram.plugins.tig.sampler import BlockedTIG
    from treegram.plugins.tsg.state import BlockedTSG

    try:
        from treegram.plugins.tig.derivation import TIGSettings
    except ImportError:
        from treegram.plugins.tig.model import TIGSettings

    train = list(read_treebank([require_shared() / "ptb-sample" / "train"]))[: args.train_limit]
    s = TSGSettings()
    data, _ = prepare(train, s)
    _, odata = prepare_data(train, BayesOSTAGSettings())
    row = {
        "tsg_gibbs": best_of(args.repeat, lambda: GibbsTSG(data, s, 1), 5, GibbsSampler),
        "tsg_blocked": best_of(args.repeat, lambda: BlockedTSG(data, s, 1), 1, BlockedMH),
        "tig_blocked": best_of(args.repeat, lambda: BlockedTIG(data, TIGSettings(), 1), 1, BlockedMH),
        "ostag_bayes": best_of(args.repeat, lambda: BlockedOSTAG(odata, BayesOSTAGSettings(), 1), 1, BlockedMH),
    }
    print(args.label, " ".join(f"{k} {v:.3f}" for k, v in row.items()), "s/sweep", flush=True)


if __name__ == "__main__":
    main()
