"""Train time of `treegram train stsg` (the Gibbs default) and the dev quality it gives (issue 26 item 2).

Broadcast news as in `bench_compression.py` (train lines 1-1000, annotator 1; dev 1001-1170 against the three
annotators; sources parsed by the foundation PCFG, cached in --work).

1. Sweep budget: the annealed Gibbs run (T 5 -> 0 over the run) with S sweeps for each S of --budgets and each seed
   of --seeds, in process on the cached parses (`train_stsg`, i.e. the core sampling loop the CLI runs): training
   CPU seconds, CompR, token F1 and RelF1 on dev at the model's own length (mean ± sd over seeds), and approximate
   randomization of each budget against the largest (per-sentence counts averaged over the seeds).
2. End to end: `treegram train stsg --pairs LONG SHORT --parser pcfg.model --out M` as a user runs it (a fresh parse
   cache, so parsing the 1000 sources is included), once with `--iterations BEFORE` (the old default) and once with
   the shipped default: wall and CPU seconds of the process, and the dev figures of the model it wrote.

    nice -n 10 python benchmarks/bench_stsg_train_time.py --budgets 50,100,200,500 --seeds 0,1,2 --before 500
        [--no-cli] [--no-write]

Writes the section `stsg-train-time` of benchmarks/RESULTS.md.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import numpy as np  # noqa: E402
from _results import ROOT, machine_line, markdown_table, publish, require_shared  # noqa: E402

from treegram.compression.evaluate import DependencyScorer, compare_systems  # noqa: E402
from treegram.formalism import load_model  # noqa: E402
from treegram.io import atomic_write_text  # noqa: E402
from treegram.plugins.stsg import GIBBS_SWEEPS  # noqa: E402
from _stsg_experiment import load_experiment  # noqa: E402


def dev_keeps(model, ex) -> list[list[int]]:
    return [np.asarray(model.compress_tree(t, toks).keep, bool).astype(int).tolist()
            for t, toks in zip(ex.dev_src, ex.dev_tokens)]


def budget_run(ex, work: Path, sweeps: int, seed: int, average: int = 1) -> dict:
    """One in-process Gibbs run on the cached parses (cached as JSON in `work`); `average` > 1: the grammar of the
    posterior average over that many states of the chain (`--average`)."""
    from treegram.plugins.stsg.train import train_stsg

    cache = work / (f"time-gs-n{sweeps}-s{seed}.json" if average == 1 else f"time-gs-n{sweeps}-avg{average}-s{seed}.json")
    if cache.exists():
        return json.loads(cache.read_text(encoding="utf-8"))
    print(f"== {sweeps} sweeps, seed {seed}", file=sys.stderr)
    c0, w0 = time.process_time(), time.perf_counter()
    model = train_stsg(ex.train_pairs, ex.parser, method="gibbs", iterations=sweeps, seed=seed, corpus=ex.corpus(),
                       average=average)
    res = {"train_cpu_s": time.process_time() - c0, "train_wall_s": time.perf_counter() - w0,
           "log_joint": model.info["final_log_likelihood"], "rules": model.info["map_rules"],
           "keeps": dev_keeps(model, ex)}
    atomic_write_text(cache, json.dumps(res))
    return res


def cli_run(ex, work: Path, iterations: int | None, cold: bool) -> dict:
    """`treegram train stsg` in a fresh process: wall and CPU seconds, dev outputs (the model stays in `work`).
    The parse cache `work/cli-parses` is emptied first when `cold` (parsing the 1000 sources is then included)."""
    import shutil

    tag = ("default" if iterations is None else f"n{iterations}") + ("-cold" if cold else "-warm")
    cache = work / f"time-cli-{tag}-{GIBBS_SWEEPS if iterations is None else iterations}.json"
    if cache.exists():
        return json.loads(cache.read_text(encoding="utf-8"))
    parses = work / "cli-parses"
    if cold and parses.exists():
        shutil.rmtree(parses)
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        (tmp / "long.txt").write_text("".join(" ".join(p.source) + "\n" for p in ex.train_pairs), encoding="utf-8")
        (tmp / "short.txt").write_text("".join(" ".join(p.target) + "\n" for p in ex.train_pairs), encoding="utf-8")
        out = work / f"time-cli-{tag}.model"  # kept for the blind kit (`treegram compress --model`)
        cmd = [str(Path(sys.executable).parent / "treegram"), "-q", "train", "stsg", "--pairs", str(tmp / "long.txt"),
               str(tmp / "short.txt"), "--parser", str(ex.parser_path), "--out", str(out), "--parse-cache",
               str(parses)] + ([] if iterations is None else ["--iterations", str(iterations)])
        print("==", " ".join(cmd[1:]), file=sys.stderr)
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        w0 = time.perf_counter()
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
        wall = time.perf_counter() - w0
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        model = load_model(out)
        res = {"wall_s": wall, "cpu_s": (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime),
               "iterations": model.info["iterations"], "training_seconds": model.info["training_seconds"],
               "cold": cold, "keeps": dev_keeps(model, ex)}
    atomic_write_text(cache, json.dumps(res))
    return res


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--budgets", default="50,100,200,500")
    ap.add_argument("--seeds", default="0,1,2")
    ap.add_argument("--ref-seeds", default="", help="seeds of the largest budget (default: --seeds)")
    ap.add_argument("--average", type=int, default=1,
                    help="also rows of the smallest budget with the grammar averaged over this many samples")
    ap.add_argument("--before", type=int, default=500, help="--iterations of the old default (end-to-end row)")
    ap.add_argument("--no-cli", action="store_true", help="skip the end-to-end runs")
    ap.add_argument("--trials", type=int, default=10000)
    ap.add_argument("--work", type=Path, default=ROOT / "benchmarks" / "out" / "compression")
    ap.add_argument("--no-write", action="store_true")
    args = ap.parse_args()
    budgets = [int(s) for s in args.budgets.split(",") if s]
    seeds = [int(s) for s in args.seeds.split(",") if s]
    ex = load_experiment(require_shared(), args.work)
    ref_seeds = [int(s) for s in args.ref_seeds.split(",") if s] or seeds
    seeds_of = {s: ref_seeds if s == max(budgets) else seeds for s in budgets}
    runs = {s: [budget_run(ex, args.work, s, seed) for seed in seeds_of[s]] for s in budgets}
    averaged = ([budget_run(ex, args.work, min(budgets), seed, args.average) for seed in seeds]
                if args.average > 1 else [])
    cli = {} if args.no_cli else {"after, cold parse cache": cli_run(ex, args.work, None, True),
                                  "after": cli_run(ex, args.work, None, False),
                                  "before": cli_run(ex, args.work, args.before, False)}
    scorer = DependencyScorer()

    def ms(values) -> str:
        return f"{np.mean(values):.2f}" + (f" ± {np.std(values, ddof=1):.2f}" if len(values) > 1 else "")

    rows, items = [], {}
    for s in budgets:
        sums, items[s] = ex.score_runs([r["keeps"] for r in runs[s]], scorer)
        rows.append([s, ",".join(map(str, seeds_of[s])), ms([r["train_cpu_s"] for r in runs[s]]),
                     ms([x["compression_rate"] for x in sums]), ms([x["token_f1"] for x in sums]),
                     ms([x["rel_f1"] for x in sums]), ms([r["log_joint"] for r in runs[s]]),
                     ms([r["rules"] for r in runs[s]])])
    if averaged:
        sums, _ = ex.score_runs([r["keeps"] for r in averaged], scorer)
        rows.append([f"{min(budgets)}, --average {args.average}", ",".join(map(str, seeds)),
                     ms([r["train_cpu_s"] for r in averaged]), ms([x["compression_rate"] for x in sums]),
                     ms([x["token_f1"] for x in sums]), ms([x["rel_f1"] for x in sums]),
                     ms([r["log_joint"] for r in averaged]), ms([r["rules"] for r in averaged])])
    ref = max(budgets)
    sig = []
    for s in budgets:
        if s != ref:
            r = compare_systems(items[s], items[ref], trials=args.trials, seed=0)
            sig.append([f"{s} vs {ref} sweeps", r["token"]["difference"], f"{r['token']['p_value']:.4f}",
                        r["rel"]["difference"], f"{r['rel']['p_value']:.4f}"])
    gold_rate = ex.gold_rate()
    body = ["## stsg-train-time", "",
            f"Train time of `treegram train stsg` (Gibbs) on broadcast news (train lines 1-1000, annotator 1; dev "
            f"1001-1170 against the three annotators, gold rate {gold_rate:.2f}%; sources parsed by the foundation "
            f"PCFG; RelF1 spaCy dependency triples as in `compression`), at each model's own length. Shipped "
            f"default: {GIBBS_SWEEPS} sweeps. {machine_line()}; the machine was shared with other jobs, so wall "
            f"times are upper bounds and CPU seconds are the comparable figure.", "",
            f"Sweep budget (annealed T 5 -> 0 over the run, alpha 100, beta 0.1; seeds {args.seeds}; in process on "
            f"cached parses; mean ± sd over seeds):", "",
            markdown_table(["sweeps", "seeds", "train CPU s", "CompR %", "token F1", "RelF1", "log joint (MAP)",
                            "rules"], rows), "",
            *([f"`--average {args.average}`: the grammar of the mean counts of the chain's last {args.average} "
               f"snapshots over the second half of the run (T 2 -> 0 at 50 sweeps) instead of its final state; log "
               f"joint and rules are the final state's.", ""] if averaged else []),
            f"Approximate randomization against {ref} sweeps ({args.trials} trials; per-sentence counts averaged "
            f"over the seeds; difference = first - second):", "",
            markdown_table(["comparison", "token F1 diff", "p", "RelF1 diff", "p"], sig), ""]
    if cli:
        crow, citems = [], {}
        for label, r in cli.items():
            summary, it = ex.score(r["keeps"], scorer)
            citems[label] = it
            name = (f"before (`--iterations {args.before}`)" if label == "before"
                    else f"after (default, {r['iterations']} sweeps)")
            crow.append([name, "cold (parses the sources)" if r["cold"] else "warm", f"{r['wall_s']:.0f}", f"{r['cpu_s']:.0f}", f"{r['training_seconds']:.0f}",
                         summary["compression_rate"], summary["token_f1"], summary["rel_f1"]])
        parse_cpu = cli["after, cold parse cache"]["cpu_s"] - cli["after"]["cpu_s"]
        c = compare_systems(citems["after"], citems["before"], trials=args.trials, seed=0)
        body += ["End to end, as a user runs it (seed 0; cold: an empty --parse-cache, so parsing the 1000 sources "
                 "with the foundation PCFG is included; warm: the sources' parses cached by the run before): `treegram train stsg --pairs long.txt short.txt --parser pcfg.model --out stsg.model "
                 "--parse-cache DIR [--iterations N]`:", "",
                 markdown_table(["run", "parse cache", "wall s", "CPU s", "model training_seconds", "CompR %", "token F1",
                                 "RelF1"], crow), "",
                 f"After vs before (approximate randomization, {args.trials} trials): token F1 "
                 f"{c['token']['difference']:+.2f} (p {c['token']['p_value']:.4f}), RelF1 {c['rel']['difference']:+.2f} "
                 f"(p {c['rel']['p_value']:.4f}). Parsing the 1000 sources took {parse_cpu:.0f} CPU s (cold - warm "
                 f"run), so the old default with a cold cache comes to about {cli['before']['cpu_s'] + parse_cpu:.0f} "
                 f"CPU s (derived, not run) against {cli['after, cold parse cache']['cpu_s']:.0f} now.", ""]
    body += [f"Command: `nice -n 10 python benchmarks/bench_stsg_train_time.py --budgets {args.budgets} --seeds "
             f"{args.seeds}" + (f" --ref-seeds {args.ref_seeds}" if args.ref_seeds else "")
             + (f" --average {args.average}" if args.average > 1 else "") + f" --before {args.before}"
             + (" --no-cli" if args.no_cli else "") + "`"]
    text = "\n".join(body)
    publish("stsg-train-time", text, not args.no_write)


if __name__ == "__main__":
    main()
