"""Bit-for-bit equality check for refactorings of the samplers (issue 11): small deterministic runs whose
log-likelihood traces and model-file hashes must not change when code only moves.

    python benchmarks/check_sampler_equality.py --record before.json      # on the old code
    python benchmarks/check_sampler_equality.py --compare before.json     # on the new code: exit 1 on any change
    python benchmarks/check_sampler_equality.py --compare before.json --repeat 3 --write   # + RESULTS.md section

Runs (first --train-limit ptb-sample train trees, seed 1): TSG collapsed Gibbs 3 sweeps, TSG blocked MH 1 sweep,
TIG blocked MH 1 sweep from a 2-sweep TSG Gibbs start, Bayesian OSTAG 1 sweep from a 2-sweep TSG Gibbs start.
Every run's model is saved, reloaded with `treegram.io.load_bundle` and hashed (the formalism's own metadata and
the arrays; timings and the core's file header left out), and the
log-likelihood trace compared exactly; seconds per sweep (the minimum over --repeat timed runs, after one warm-up
run that compiles / loads the numba kernels) are printed next to the recorded ones.  The 2-core machine is shared:
record and compare close together, or alternate them, before reading anything into the speeds.
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

from _results import machine_line, markdown_table, require_shared, write_section  # noqa: E402

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
    # the formalism's own metadata: the model file's header (format, version, formalism, written_by) is the core's
    # and changed shape with the plugin-metadata namespace; what the sampler produced is the rest
    own = meta["plugin_meta"] if isinstance(meta.get("plugin_meta"), dict) else {
        k: v for k, v in meta.items() if k not in ("format", "version", "formalism", "written_by")}
    h = hashlib.sha256(json.dumps(_strip(own), sort_keys=True, default=str).encode())
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
        from treegram.formalisms.pcfg import PCFGModel, PCFGSettings  # (old name)
        from treegram.plugins.tsg.data import TSGSettings, prepare
        from treegram.plugins.tsg.state import GibbsTSG
    from treegram.formalism import RunOptions
    from treegram.plugins.tsg.formalism import TSGOptions
    from treegram.plugins.tsg.state import BlockedTSG
    from treegram.plugins.tsg.train import extract_model as tsg_extract
    from treegram.plugins.tig.formalism import TIGOptions
    from treegram.plugins.tig.formalism import train_tig
    from treegram.plugins.ostag.formalism import train_bayesian
    from treegram.plugins.ostag.formalism import BayesOSTAGOptions

    out = {}
    settings = TSGSettings()
    pcfg = PCFGModel.train(train, PCFGSettings(horizontal=1, vertical=2, rare_threshold=2))
    data, _ = prepare(train, settings, pcfg.mapper)
    st = GibbsTSG(data, settings, 1)
    t0 = time.perf_counter()
    trace = GibbsSampler(st, seed=1).run(3)
    secs = time.perf_counter() - t0
    # the library runs as they were before stop 32 (one RunOptions): final sample, the model names decoder mpd
    grammar = TSGOptions(decoder="mpd")
    out["tsg_gibbs"] = _record("tsg_gibbs", trace, tsg_extract(st, pcfg, settings, grammar, RunOptions(move="gibbs"),
                                                               trace, {}), secs)
    print("tsg_gibbs", out["tsg_gibbs"], flush=True)

    st = BlockedTSG(data, settings, 1)
    t0 = time.perf_counter()
    trace = BlockedMH(st, seed=1).run(1)
    secs = time.perf_counter() - t0
    out["tsg_blocked"] = _record("tsg_blocked", trace,
                                 tsg_extract(st, pcfg, settings, grammar, RunOptions(move="blocked"), trace, {}),
                                 secs)
    print("tsg_blocked", out["tsg_blocked"], flush=True)

    model = train_tig(train, TIGOptions(variant="tig", tsg_init=2, average=1), RunOptions(iterations=1, seed=1))
    out["tig_blocked"] = _record("tig", model.trace, model, sum(r["seconds"] for r in model.trace))
    print("tig_blocked", out["tig_blocked"], flush=True)

    model, trace = train_bayesian(train, BayesOSTAGOptions(tsg_init=2, average=1, decoder="mpd"),
                                  RunOptions(iterations=1, seed=1))
    out["ostag_bayes"] = _record("ostag", trace, model, sum(r["seconds"] for r in trace))
    print("ostag_bayes", out["ostag_bayes"], flush=True)
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    g = ap.add_mutually_exclusive_group(required=True)
    g.add_argument("--record", type=Path)
    g.add_argument("--compare", type=Path)
    ap.add_argument("--train-limit", type=int, default=200)
    ap.add_argument("--repeat", type=int, default=1, help="timed runs (the speed is the minimum over them)")
    ap.add_argument("--write", action="store_true", help="with --compare: write the RESULTS.md section")
    ap.add_argument("--speed-log", help="with --write: output lines of benchmarks/sampler_speed.py to include")
    args = ap.parse_args()
    shared = require_shared()
    train = list(read_treebank([shared / "ptb-sample" / "train"]))[: args.train_limit]
    run_all(train)  # warm-up: numba compilation / cache loading outside the timed run
    result = run_all(train)
    for _ in range(args.repeat - 1):
        again = run_all(train)
        for name, r in again.items():
            if r["loglik"] != result[name]["loglik"] or r["hash"] != result[name]["hash"]:
                sys.exit(f"{name}: two runs in one process differ (not deterministic)")
            result[name]["s_per_sweep"] = min(result[name]["s_per_sweep"], r["s_per_sweep"])
    if args.record:
        args.record.write_text(json.dumps(result, indent=1))
        return 0
    before = json.loads(args.compare.read_text())
    bad = 0
    rows = []
    print(f"{'run':12} {'loglik':8} {'hash':8} {'s/sweep before':>15} {'after':>8}")
    for name, b in before.items():
        a = result[name]
        ll = "same" if a["loglik"] == b["loglik"] else "DIFF"
        hh = "same" if a["hash"] == b["hash"] else "DIFF"
        bad += (ll != "same") + (hh != "same")
        print(f"{name:12} {ll:8} {hh:8} {b['s_per_sweep']:15.3f} {a['s_per_sweep']:8.3f}")
        rows.append([name, " ".join(f"{x:.6f}" for x in a["loglik"]), ll, a["hash"], hh,
                     round(b["s_per_sweep"], 3), round(a["s_per_sweep"], 3),
                     round(a["s_per_sweep"] / b["s_per_sweep"], 2)])
    if args.write:
        speed = Path(args.speed_log).read_text().splitlines() if args.speed_log else []
        speed_rows = []
        for line in speed:
            parts = line.split()
            if len(parts) >= 9:
                speed_rows.append([parts[0]] + [parts[i] for i in (2, 4, 6, 8)])
        write_section("sampler-equality", "\n".join([
            "## Sampler equality and speed across the issue 11 refactoring\n",
            f"`python benchmarks/check_sampler_equality.py --compare before.json --write` (before.json recorded by "
            f"the same script on the pre-refactoring commit ab1f5ce plus this change's one-line fix of the Bayesian "
            "OSTAG extraction memo, without which the old code's OSTAG model file differs from process to process); "
            f"first {len(train)} ptb-sample train trees, "
            "seed 1.  Runs: TSG collapsed Gibbs 3 sweeps, TSG blocked MH 1 sweep, TIG blocked MH 1 sweep from a "
            "2-sweep TSG Gibbs start, Bayesian OSTAG 1 sweep from a 2-sweep TSG Gibbs start.  Model hash: sha256 of "
            "the saved model file's arrays and the formalism's own metadata (timings and the core's file header left "
            "out).\n",
            markdown_table(["run", "log-likelihood trace (after)", "trace vs before", "model hash (after)",
                            "hash vs before"], [r[:5] for r in rows]),
            "",
            "Speed, s/sweep (`python benchmarks/sampler_speed.py`, first 300 train trees, minimum of 2 timed runs "
            "after a warm-up; before = the old commit, after = this tree, alternated on the shared 2-core machine, "
            "load average 7-15 from other jobs, so runs of the same code differ by up to ~40%):\n",
            markdown_table(["code", "TSG Gibbs", "TSG blocked", "TIG blocked", "Bayesian OSTAG"], speed_rows),
            "", machine_line(), ""]))
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main())
