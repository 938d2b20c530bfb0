"""Bit-for-bit equality check for refactorings of the samplers (issue 11): small deterministic runs whose
log-likelihood traces and model-file hashes must not change when code only moves.

    python benchmarks/check_sampler_equality.py --record before.json      # on the old code
    python benchmarks/check_sampler_equality.py --compare before.json     # on the new code: exit 1 on any change

Runs (first --train-limit ptb-sample train trees, seed 1): TSG collapsed Gibbs 3 sweeps, TSG blocked MH 1 sweep,
TIG blocked MH 1 sweep from a 2-sweep TSG Gibbs start, Bayesian OSTAG 1 sweep from a 2-sweep TSG Gibbs start.
Every run's model is saved, reloaded with `treegram.io.load_bundle` and hashed (timings removed), and the
log-likelihood trace compared exactly; seconds per sweep are printed next to the recorded ones.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _results import require_shared  # noqa: E402

from treegram.io import load_bundle  # noqa: E402
from treegram.trees import read_treebank  # noqa: E402

TIMING_KEYS = {"seconds", "train_seconds", "sites_per_second"}


def _strip(obj):
    if isinstance(obj, dict):
        return {k: _strip(v) for k, v in obj.items() if k not in TIMING_KEYS}
    if isinstance(obj, list):
        return [_strip(v) for v in obj]
    return obj


def model_hash(model) -> str:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "m.model"
        model.save(path)
        meta, arrays = load_bundle(path)
    h = hashlib.sha256(json.dumps(_strip(meta), sort_keys=True, default=str).encode())
    for k in sorted(arrays):
        h.update(k.encode())
        h.update(arrays[k].tobytes())
    return h.hexdigest()[:16]


def _record(name, trace, model, seconds):
    return {"loglik": [r["log_likelihood"] for r in trace], "hash": model_hash(model),
            "s_per_sweep": seconds / max(1, len(trace))}


def run_all(train) -> dict:
    from treegram.bayes import BlockedMH, GibbsSampler

    try:  # after issue 11: the elementary-tree layer and the PCFG library live in core
        from treegram.elementary import GibbsTSG, TSGSettings, prepare
        from treegram.grammar.pcfg import PCFGModel, PCFGSettings
    except ImportError:  # before
        from treegram.grammar.pcfg import PCFGModel, PCFGSettings
        from treegram.plugins.tsg.data import TSGSettings, prepare
        from treegram.plugins.tsg.state import GibbsTSG
    from treegram.plugins.tsg.state import BlockedTSG
    from treegram.plugins.tsg.train import RunOptions as TSGRun
    from treegram.plugins.tsg.train import extract_model as tsg_extract
    from treegram.plugins.tig.model import TIGSettings
    from treegram.plugins.tig.train import RunOptions as TIGRun, train_tig
    from treegram.plugins.ostag.bayes_model import BayesOSTAGSettings
    from treegram.plugins.ostag.bayes_sampler import BayesRunOptions, train_bayesian

    out = {}
    settings = TSGSettings()
    pcfg = PCFGModel.train(train, PCFGSettings(horizontal=1, vertical=2, rare_threshold=2))
    data, _ = prepare(train, settings, pcfg.mapper)
    st = GibbsTSG(data, settings, 1)
    t0 = time.perf_counter()
    trace = GibbsSampler(st, seed=1).run(3)
    secs = time.perf_counter() - t0
    out["tsg_gibbs"] = _record("tsg_gibbs", trace, tsg_extract(st, pcfg, settings, TSGRun(), trace, {}), secs)
    print("tsg_gibbs", out["tsg_gibbs"], flush=True)

    st = BlockedTSG(data, settings, 1)
    t0 = time.perf_counter()
    trace = BlockedMH(st, seed=1).run(1)
    secs = time.perf_counter() - t0
    out["tsg_blocked"] = _record("tsg_blocked", trace,
                                 tsg_extract(st, pcfg, settings, TSGRun(sampler="blocked"), trace, {}), secs)
    print("tsg_blocked", out["tsg_blocked"], flush=True)

    model = train_tig(train, TIGSettings(), TIGRun(iterations=1, seed=1, tsg_init=2))
    out["tig_blocked"] = _record("tig", model.trace, model, sum(r["seconds"] for r in model.trace))
    print("tig_blocked", out["tig_blocked"], flush=True)

    model, trace = train_bayesian(train, BayesOSTAGSettings(), BayesRunOptions(iterations=1, seed=1, tsg_init=2))
    out["ostag_bayes"] = _record("ostag", trace, model, sum(r["seconds"] for r in trace))
    print("ostag_bayes", out["ostag_bayes"], flush=True)
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    g = ap.add_mutually_exclusive_group(required=True)
    g.add_argument("--record", type=Path)
    g.add_argument("--compare", type=Path)
    ap.add_argument("--train-limit", type=int, default=200)
    args = ap.parse_args()
    shared = require_shared()
    train = list(read_treebank([shared / "ptb-sample" / "train"]))[: args.train_limit]
    run_all(train)  # warm-up: numba compilation / cache loading outside the timed run
    result = run_all(train)
    if args.record:
        args.record.write_text(json.dumps(result, indent=1))
        return 0
    before = json.loads(args.compare.read_text())
    bad = 0
    print(f"{'run':12} {'loglik':8} {'hash':8} {'s/sweep before':>15} {'after':>8}")
    for name, b in before.items():
        a = result[name]
        ll = "same" if a["loglik"] == b["loglik"] else "DIFF"
        hh = "same" if a["hash"] == b["hash"] else "DIFF"
        bad += (ll != "same") + (hh != "same")
        print(f"{name:12} {ll:8} {hh:8} {b['s_per_sweep']:15.3f} {a['s_per_sweep']:8.3f}")
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main())
