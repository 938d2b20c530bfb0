"""Defaults of `treegram train stsg` (Gibbs) and `treegram train channel`, chosen on broadcast-news dev by the
quality measures (issue 24 item 4): train lines 1-1000 (annotator 1), dev 1001-1170 against all three annotators,
the parses, pairs and scorer of `bench_compression.py` (whose per-system cache this script shares).

- gibbs budget: the annealed Gibbs run (T 5 -> 0 linearly over the run) with S sweeps, several seeds per S: CompR,
  token F1, RelF1 at the model's own rate and at the matched gold rate (one global per-word reward), the MAP
  state's log joint and grammar size, training CPU seconds; paired approximate randomization of each budget against
  the longest one (per-sentence counts averaged over the seeds both share).
- gibbs grid: alpha x beta at one budget (seed list), the same measures.
- method: the other `--method`s' rows at their own settings, read from `bench_compression.py`'s cache.
- channel: `--levels 6` (lexicalized) against `--levels 4` (Knight & Marcu), through `bench_channel.py`'s cached
  runs.

    nice -n 10 python benchmarks/bench_compression_defaults.py --sweeps 500,1000,5000 --seeds 0,1,2
        [--grid-alpha 10,100,1000 --grid-beta 0.05,0.1,0.3 --grid-sweeps 500 --grid-seeds 0] [--no-write]

Runs missing from the cache are trained (a 5000-sweep seed takes ~25 CPU minutes); `--only-train` fills the cache
without scoring (one process per seed list, then a final call writes the section `compression-defaults`).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from types import SimpleNamespace

sys.path.insert(0, str(Path(__file__).resolve().parent))

import numpy as np  # noqa: E402
from _results import ROOT, machine_line, markdown_table, publish, require_shared  # noqa: E402

import bench_compression as bc  # noqa: E402
from treegram.compression.evaluate import DependencyScorer, compare_systems  # noqa: E402
from treegram.formalism import load_model  # noqa: E402
from _stsg_experiment import load_experiment  # noqa: E402


def gs_args(args, sweeps: int, alpha: float, beta: float) -> SimpleNamespace:
    return SimpleNamespace(work=args.work, refresh=False, gs_sweeps=sweeps, alpha=alpha, beta=beta, em_iterations=30,
                           mcdonald_epochs=10, mcdonald_update="mira", svm_c=0.01)


def gs_run(ex, args, sweeps: int, alpha: float, beta: float, seed: int, targets: dict) -> dict:
    """One Gibbs run (bench_compression's cache), with the MAP state's log joint and rules from its model file."""
    a = gs_args(args, sweeps, alpha, beta)
    res = bc.run_system("gs", seed, ex, a, targets)
    info = load_model(args.work / f"{bc.settings_tag('gs', seed, a)}-a{ex.train_annotators}.model").info
    res["log_joint"] = info.get("final_log_likelihood")
    res["map_rules"] = info.get("map_rules")
    return res


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sweeps", default="500,1000,5000")
    ap.add_argument("--seeds", default="0,1,2")
    ap.add_argument("--alpha", type=float, default=100.0)
    ap.add_argument("--beta", type=float, default=0.1)
    ap.add_argument("--grid-alpha", default="")
    ap.add_argument("--grid-beta", default="")
    ap.add_argument("--grid-sweeps", type=int, default=500)
    ap.add_argument("--grid-seeds", default="0")
    ap.add_argument("--channel", action="store_true", help="also the channel --levels rows (bench_channel cache)")
    ap.add_argument("--trials", type=int, default=10000)
    ap.add_argument("--work", type=Path, default=ROOT / "benchmarks" / "out" / "compression")
    ap.add_argument("--only-train", action="store_true", help="fill the cache, score nothing")
    ap.add_argument("--no-write", action="store_true")
    args = ap.parse_args()
    sweeps = [int(s) for s in args.sweeps.split(",") if s]
    seeds = [int(s) for s in args.seeds.split(",") if s]
    ex = load_experiment(require_shared(), args.work)
    gold_rate = round(ex.gold_rate(), 2)
    targets = {"gold": gold_rate}
    runs = {s: [gs_run(ex, args, s, args.alpha, args.beta, seed, targets) for seed in seeds]
            for s in sweeps}
    grid = {}
    for alpha in [float(x) for x in args.grid_alpha.split(",") if x]:
        for beta in [float(x) for x in args.grid_beta.split(",") if x]:
            grid[(alpha, beta)] = [gs_run(ex, args, args.grid_sweeps, alpha, beta, int(sd), targets)
                                   for sd in args.grid_seeds.split(",")]
    if args.only_train:
        return
    scorer = DependencyScorer()

    def ms(values) -> str:
        return f"{np.mean(values):.2f}" + (f" ± {np.std(values, ddof=1):.2f}" if len(values) > 1 else "")

    def block(rs: list[dict]):
        own, own_items = ex.score_runs([r["keeps"] for r in rs], scorer)
        gold, gold_items = ex.score_runs([r["matched"]["gold"]["keeps"] for r in rs], scorer)
        row = [ms([s["compression_rate"] for s in own]), ms([s["token_f1"] for s in own]),
               ms([s["rel_f1"] for s in own]), ms([s["token_f1"] for s in gold]), ms([s["rel_f1"] for s in gold]),
               ms([r["log_joint"] for r in rs]), ms([r["map_rules"] for r in rs]),
               ms([r["train_cpu_s"] for r in rs if r.get("train_cpu_s")] or [float("nan")])]
        return row, own_items, gold_items, own, gold

    budget_rows, items = [], {}
    for s in sweeps:
        row, oi, gi, own, gold = block(runs[s])
        items[s] = (oi, gi)
        budget_rows.append([s, len(seeds)] + row)
    ref = max(sweeps)
    sig = []
    for s in sweeps:
        if s == ref:
            continue
        for key, k in (("own rate", 0), ("gold rate", 1)):
            r = compare_systems(items[s][k], items[ref][k], trials=args.trials, seed=0)
            sig.append([f"{s} vs {ref} sweeps ({key})", r["token"]["difference"], f"{r['token']['p_value']:.4f}",
                        r["rel"]["difference"], f"{r['rel']['p_value']:.4f}"])
    per_seed = []
    for s in sweeps:
        for seed, r in zip(seeds, runs[s]):
            o, _ = ex.score(r["keeps"], scorer)
            g, _ = ex.score(r["matched"]["gold"]["keeps"], scorer)
            per_seed.append([s, seed, o["compression_rate"], o["token_f1"], o["rel_f1"], g["rel_f1"],
                             f"{r['log_joint']:.0f}", r["map_rules"], f"{r.get('train_cpu_s') or 0:.0f}"])
    cols = ["CompR %", "token F1", "RelF1", "token F1 @gold", "RelF1 @gold", "log joint (MAP)", "rules",
            "train CPU s"]
    body = ["## compression-defaults", "",
            f"Defaults of `treegram train stsg` and `train channel` on broadcast news (train lines 1-1000, annotator "
            f"1; dev 1001-1170 against the three annotators, gold rate {gold_rate}%; the parses, pairs and scorer of "
            f"`compression`). @gold: at the matched gold rate (one global per-word reward). Mean ± sd over seeds. "
            f"{machine_line()}.", "",
            f"Gibbs budget (annealed T 5 -> 0 linearly over the run; alpha {args.alpha:g}, beta {args.beta:g}; "
            f"seeds {args.seeds}):", "",
            markdown_table(["sweeps", "seeds"] + cols, budget_rows), "",
            f"Approximate randomization against {ref} sweeps ({args.trials} trials; per-sentence counts averaged "
            f"over the seeds; difference = first - second):", "",
            markdown_table(["comparison", "token F1 diff", "p", "RelF1 diff", "p"], sig), "",
            "Per seed:", "",
            markdown_table(["sweeps", "seed", "CompR %", "token F1", "RelF1", "RelF1 @gold", "log joint", "rules",
                            "train CPU s"], per_seed), ""]
    if grid:
        grid_rows = []
        for (alpha, beta), rs in grid.items():
            row, *_ = block(rs)
            grid_rows.append([f"{alpha:g}", f"{beta:g}"] + row)
        body += [f"alpha x beta at {args.grid_sweeps} sweeps (seeds {args.grid_seeds}):", "",
                 markdown_table(["alpha", "beta"] + cols, grid_rows), ""]
    if args.channel:
        import bench_channel as bch

        work = args.work.parent / "channel" / "bn"
        work.mkdir(parents=True, exist_ok=True)
        outs = {levels: bch.channel_outputs(f"channel-{levels}-bn", levels, ex.train_pairs, ex.train_src, ex.parser,
                                            ex.dev_src, ex.dev_tokens, targets, work, None, False)
                for levels in (6, 4)}
        crows, citems = [], {}
        for levels, r in outs.items():
            o, oi = ex.score(r["keeps"], scorer)
            g, gi = ex.score(r["matched"]["gold"]["keeps"], scorer)
            citems[levels] = (oi, gi)
            crows.append([f"--levels {levels}", o["compression_rate"], o["token_f1"], o["rel_f1"], g["token_f1"],
                          g["rel_f1"]])
        csig = []
        for key, k in (("own rate", 0), ("gold rate", 1)):
            r = compare_systems(citems[4][k], citems[6][k], trials=args.trials, seed=0)
            csig.append([f"--levels 4 vs 6 ({key})", r["token"]["difference"], f"{r['token']['p_value']:.4f}",
                         r["rel"]["difference"], f"{r['rel']['p_value']:.4f}"])
        body += ["`treegram train channel` (same pairs; bench_channel's runs):", "",
                 markdown_table(["levels", "CompR %", "token F1", "RelF1", "token F1 @gold", "RelF1 @gold"], crows), "",
                 markdown_table(["comparison", "token F1 diff", "p", "RelF1 diff", "p"], csig), ""]
    body += ["Command: `nice -n 10 python benchmarks/bench_compression_defaults.py --sweeps " + args.sweeps
             + f" --seeds {args.seeds}"
             + (f" --grid-alpha {args.grid_alpha} --grid-beta {args.grid_beta} --grid-sweeps {args.grid_sweeps} "
                f"--grid-seeds {args.grid_seeds}" if grid else "") + (" --channel" if args.channel else "") + "`"]
    text = "\n".join(body)
    publish("compression-defaults", text, not args.no_write)


if __name__ == "__main__":
    t0 = time.time()
    main()
    print(f"[{time.time() - t0:.0f} s]", file=sys.stderr)
