"""Batch parsing on Dask (issue 14 items 2 and 4): `treegram parse --workers N` on sentences of the Google
compression pairs (compression/google/train-180k-lossy), with a PCFG trained on ptb-sample.

Measures, in one run: the same sentences parsed by the one-process `treegram parse` (the control), and by
`treegram parse --workers 1` and `--workers 2` (LocalCluster of worker processes, 1 thread each), alternated
`--repeats` times; sentences/s (wall, whole command: cluster start and model loading included), sentences per
worker CPU-second, the speed-up of 2 workers over 1; whether the three outputs are byte-identical; a 2-worker run
killed with SIGKILL (whole process group: driver, scheduler, nannies, workers) once some batches are on disk, then
re-run with --resume: batches resumed, lines lost or repeated, identical output; and extrapolations to all 180k pairs
and to the pairs of a 100 GB revision history (from the mining figures in RESULTS.md, section mining).

The pairs are taken every K-th line (the files are sorted by length), both sides of each pair (long, then short).

    nice -n 10 python benchmarks/bench_parse_scale.py --pairs 400
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import os
import signal
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _results import ROOT, kill9_when_done, markdown_table, publish, require_shared  # noqa: E402

TREEGRAM = [str(Path(sys.executable).parent / "treegram")]
OUT = ROOT / "benchmarks" / "out" / "parse-scale"
TOTAL_PAIRS = 180_000


def sh(cmd: list[str]) -> subprocess.CompletedProcess:
    res = subprocess.run(cmd, capture_output=True, text=True)
    if res.returncode != 0:
        sys.exit(f"failed: {' '.join(cmd)}\n{res.stderr[-3000:]}")
    return res


def parse_run(model: Path, inp: Path, out: Path, workers: int | None, batch: int, decoder: str | None,
              scheduler: str | None = None) -> dict:
    cmd = TREEGRAM + ["-q", "parse", "--model", str(model), "--input", str(inp), "--out", str(out)]
    if decoder:
        cmd += ["--decoder", decoder]
    if scheduler:
        cmd += ["--scheduler", scheduler, "--batch-size", str(batch), "--json"]
    elif workers:
        cmd += ["--workers", str(workers), "--batch-size", str(batch), "--json"]
    out.unlink(missing_ok=True)
    load = os.getloadavg()[0]
    t0, c0 = time.perf_counter(), os.times()
    res = sh(cmd)
    wall = time.perf_counter() - t0
    c1 = os.times()
    s = json.loads(res.stdout) if workers else {}
    s["wall"] = wall
    s["child_cpu"] = (c1.children_user - c0.children_user) + (c1.children_system - c0.children_system)
    s["sha"] = hashlib.sha256(out.read_bytes()).hexdigest()
    s["workers_arg"] = workers or 0
    s["load"] = load
    s["mode"] = "scheduler" if scheduler else "local"
    label = (f"{workers} worker(s)" + (" (own sessions, --scheduler)" if scheduler else "")) if workers \
        else "one process"
    print(f"  {label}: {wall:.1f} s wall" + (f", worker CPU {s['worker_cpu_seconds']:.1f} s" if workers else
                                              f", CPU {s['child_cpu']:.1f} s"), flush=True)
    return s


def start_session_cluster(n: int) -> tuple[str, list[subprocess.Popen]]:
    """A Dask scheduler and `n` single-threaded workers, each started in its own session (setsid).  On this Linux
    (sched_autogroup_enabled = 1) CPU time is shared between sessions, not processes: the workers of a LocalCluster
    share their driver's session and so one session's share of the machine, however many there are."""
    sfile = OUT / "scheduler.json"
    sfile.unlink(missing_ok=True)
    py = sys.executable
    quiet = {"stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL, "start_new_session": True}
    procs = [subprocess.Popen([py, "-m", "distributed.cli.dask_scheduler", "--scheduler-file", str(sfile),
                               "--port", "0", "--host", "127.0.0.1", "--no-dashboard"], **quiet)]
    for _ in range(600):
        if sfile.exists() and sfile.stat().st_size:
            break
        time.sleep(0.1)
    addr = json.loads(sfile.read_text())["address"]
    for _ in range(n):
        procs.append(subprocess.Popen([py, "-m", "distributed.cli.dask_worker", addr, "--nthreads", "1",
                                       "--nworkers", "1", "--no-dashboard", "--memory-limit", "0"], **quiet))
    from distributed import Client

    with Client(addr, timeout="60s") as c:
        c.wait_for_workers(n, timeout=120)
    return addr, procs


def stop_session_cluster(procs: list[subprocess.Popen]) -> None:
    for p in reversed(procs):
        try:
            os.killpg(p.pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
    for p in procs:
        try:
            p.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL)
            p.wait()


def kill_and_resume(model: Path, inp: Path, out: Path, ref: bytes, batch: int, min_batches: int,
                    decoder: str | None) -> dict:
    wdir = out.with_name(out.name + ".batches")
    out.unlink(missing_ok=True)
    cmd = TREEGRAM + ["-q", "parse", "--model", str(model), "--input", str(inp), "--out", str(out),
                      "--workers", "2", "--batch-size", str(batch)] + (["--decoder", decoder] if decoder else [])
    finished = kill9_when_done(cmd, wdir, min_batches)
    on_disk_lines = sum(len(json.loads(f.read_text())["trees"]) for f in wdir.glob("[0-9]*.json"))
    print(f"  killed with {len(finished)} finished batches ({on_disk_lines} lines) on disk; out exists: "
          f"{out.exists()}", flush=True)
    t0 = time.perf_counter()
    res = sh(cmd + ["--resume", "--json"])
    s = json.loads(res.stdout)
    got = out.read_bytes().split(b"\n")[:-1]
    want = ref.split(b"\n")[:-1]
    from collections import Counter

    lost = sum((Counter(want) - Counter(got)).values())
    repeated = sum((Counter(got) - Counter(want)).values())
    return {"finished_at_kill": len(finished), "lines_at_kill": on_disk_lines, "resumed": s["batches_resumed"],
            "batches": s["batches"], "lines": len(got), "expected": len(want), "lost": lost, "repeated": repeated,
            "identical": out.read_bytes() == ref, "seconds": round(time.perf_counter() - t0, 2)}


def tag_agreement(pairs, trees_file: Path) -> dict:
    """Agreement of the parser's POS tags with the file's POS column (both sides; the short side's tags are the kept
    tokens' tags), overall and on number-shaped tokens (``##``, ``#,###``)."""
    from treegram.corpora.google import _NUMBERISH
    from treegram.trees.bracket import parse_brackets

    lines = trees_file.read_text(encoding="utf-8").splitlines()
    gold = []
    for p in pairs:
        gold.append(list(zip(p.tokens, p.pos)))
        gold.append([(w, t) for w, t, k in zip(p.tokens, p.pos, p.keep) if k])
    c = {"all": 0, "all_ok": 0, "num": 0, "num_ok": 0, "num_tags": {}}
    for g, line in zip(gold, lines):
        tags = [t for _, t in parse_brackets(line)[0].pos()]
        for (w, gt), t in zip(g, tags):
            c["all"] += 1
            c["all_ok"] += gt == t
            if _NUMBERISH.match(w):
                c["num"] += 1
                c["num_ok"] += gt == t
                c["num_tags"][t] = c["num_tags"].get(t, 0) + 1
    return c


def mining_figures() -> dict:
    """Pairs per revision text from the mining section of RESULTS.md (PEP history row)."""
    text = (ROOT / "benchmarks" / "RESULTS.md").read_text(encoding="utf-8")
    import re

    m = re.search(r"\| PEP history, 1 worker[^|]*\| (\d+) \| (\d+) \| (\d+) \| (\d+) \|", text)
    chars = re.search(r"(\d+) M characters of prose", (ROOT.parent / "shared" / "data" / "README.md")
                      .read_text(encoding="utf-8"))
    if not m:
        return {}
    return {"revisions": int(m.group(2)), "pairs": int(m.group(4)),
            "chars": int(chars.group(1)) * 1_000_000 if chars else 336_000_000}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--pairs", type=int, default=400, help="pairs sampled evenly from train.tsv.gz (default 400)")
    ap.add_argument("--batch-size", type=int, default=40)
    ap.add_argument("--repeats", type=int, default=2, help="alternated runs of 1 and 2 workers (default 2)")
    ap.add_argument("--decoder", default=None, help="decoder for all runs (default: the model's own)")
    ap.add_argument("--no-sessions", action="store_true",
                    help="skip the runs on a --scheduler cluster whose workers have sessions of their own")
    ap.add_argument("--no-digits", action="store_true", help="skip the --digits zero tagging check")
    ap.add_argument("--no-write", action="store_true", help="do not rewrite RESULTS.md")
    args = ap.parse_args()
    shared = require_shared()
    OUT.mkdir(parents=True, exist_ok=True)
    load0 = os.getloadavg()

    from treegram.corpora.google import read_google_pairs, sentences

    src = shared / "compression" / "google" / "train-180k-lossy" / "train.tsv.gz"
    every = TOTAL_PAIRS // args.pairs
    pairs = list(read_google_pairs(src, every=every, limit=args.pairs))
    inp = OUT / f"google-{len(pairs)}.txt"
    inp.write_text("".join(s + "\n" for s in sentences(pairs, "both")), encoding="utf-8")
    n_sent = 2 * len(pairs)
    long_len = statistics.mean(len(p.long) for p in pairs)
    short_len = statistics.mean(len(p.short) for p in pairs)
    all_long = all_short = 0
    with gzip.open(src, "rt", encoding="utf-8") as fh:
        next(fh)
        for line in fh:
            cols = line.split("\t")
            all_long += cols[1].count(" ") + 1
            all_short += cols[1].count("1")
    pop_long, pop_short = all_long / TOTAL_PAIRS, all_short / TOTAL_PAIRS
    print(f"{len(pairs)} pairs (every {every}th), {n_sent} sentences; mean length long {long_len:.1f} "
          f"(all 180k: {pop_long:.1f}), short {short_len:.1f} (all: {pop_short:.1f})", flush=True)

    model = OUT / "ptb.pcfg"
    if not model.exists():
        sh(TREEGRAM + ["-q", "train", "pcfg", "--treebank", str(shared / "ptb-sample" / "train"), "--out", str(model)])

    runs = []
    print("control: one-process treegram parse", flush=True)
    control = parse_run(model, inp, OUT / "one.txt", None, args.batch_size, args.decoder)
    ref = (OUT / "one.txt").read_bytes()
    digits = {"keep": tag_agreement(pairs, OUT / "one.txt")}
    if not args.no_digits:  # the same sentences with number-shaped tokens as 0 (treegram.corpora.google)
        zin = OUT / f"google-{len(pairs)}-zero.txt"
        zin.write_text("".join(s + "\n" for s in sentences(pairs, "both", "zero")), encoding="utf-8")
        parse_run(model, zin, OUT / "zero.txt", 2, args.batch_size, args.decoder)
        digits["zero"] = tag_agreement(pairs, OUT / "zero.txt")
    for mode, c in digits.items():
        print(f"  digits {mode}: tags {c['all_ok']}/{c['all']}, number-shaped {c['num_ok']}/{c['num']} "
              f"{c['num_tags']}", flush=True)
    for r in range(args.repeats):
        for w in ((1, 2) if r % 2 == 0 else (2, 1)):
            s = parse_run(model, inp, OUT / f"w{w}.txt", w, args.batch_size, args.decoder)
            s["identical"] = (OUT / f"w{w}.txt").read_bytes() == ref
            runs.append(s)
        if args.no_sessions:
            continue
        for w in ((1, 2) if r % 2 == 0 else (2, 1)):
            addr, procs = start_session_cluster(w)
            try:
                s = parse_run(model, inp, OUT / f"s{w}.txt", w, args.batch_size, args.decoder, scheduler=addr)
            finally:
                stop_session_cluster(procs)
            s["identical"] = (OUT / f"s{w}.txt").read_bytes() == ref
            runs.append(s)
    print("kill -9 and --resume", flush=True)
    kr = kill_and_resume(model, inp, OUT / "killed.txt", ref, max(5, args.batch_size // 2),
                         min_batches=max(2, n_sent // args.batch_size // 3), decoder=args.decoder)
    print(f"  {kr}", flush=True)
    load1 = os.getloadavg()

    def med(w, key, mode="local"):
        return statistics.median(s[key] for s in runs if s["workers_arg"] == w and s["mode"] == mode)

    rows = [["one process (control)", n_sent, "-", round(control["load"], 1), round(control["wall"], 2),
             round(n_sent / control["wall"], 2), f"{control['child_cpu']:.2f} (whole process)", "-",
             round(control["child_cpu"] / control["wall"], 2), "(reference)"]]
    for s in runs:
        parse_cpu = s["worker_cpu_seconds"] - s["model_load_cpu_seconds"]
        label = (f"--workers {s['workers_arg']}" if s["mode"] == "local" else
                 f"--scheduler, {s['workers_arg']} worker(s) in own sessions")
        rows.append([label, s["lines"], s["batches"], round(s["load"], 1),
                     round(s["wall"], 2), round(n_sent / s["wall"], 2),
                     f"{s['worker_cpu_seconds']:.2f} ({s['model_load_cpu_seconds']:.2f})",
                     round(n_sent / parse_cpu, 2), round(s["worker_cpu_seconds"] / s["wall"], 2), s["identical"]])
    w1, w2 = med(1, "wall"), med(2, "wall")
    speedup = w1 / w2
    sessions = not args.no_sessions
    if sessions:
        sw1, sw2 = med(1, "wall", "scheduler"), med(2, "wall", "scheduler")
    cpu_rate = n_sent / statistics.median(s["worker_cpu_seconds"] - s["model_load_cpu_seconds"] for s in runs)
    ctl_rate = n_sent / control["wall"]
    total_sent = 2 * TOTAL_PAIRS
    hours_1 = total_sent / cpu_rate / 3600
    mf = mining_figures()
    mined_pairs_100gb = mf["pairs"] / mf["chars"] * 100e9 if mf else float("nan")
    hours_mined = 2 * mined_pairs_100gb / cpu_rate / 3600

    body = [
        "## Batch parsing on Dask (issue 14 items 2 and 4)",
        "",
        f"`nice -n 10 python benchmarks/bench_parse_scale.py --pairs {args.pairs} --batch-size {args.batch_size} "
        f"--repeats {args.repeats}` -- {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, a 2-core machine "
        f"**shared with 2-3 other helpers' jobs during the run** (1-minute load average {load0[0]:.1f} at the start, "
        f"{load1[0]:.1f} at the end; this benchmark at nice 10), so wall times and the speed-up are those of a busy "
        "machine; the CPU-second rates do not depend on the load (much).",
        "",
        f"Input: {len(pairs)} pairs of `compression/google/train-180k-lossy/train.tsv.gz`, every {every}th line "
        f"(the file is sorted by length), both sides: {n_sent} sentences (`treegram.corpora.google`; tokens as in the "
        f"file: lowercased, digits as `#`). Mean length long {long_len:.1f} / short {short_len:.1f} words (all 180k "
        f"pairs: {pop_long:.1f} / {pop_short:.1f}). Model: PCFG trained on ptb-sample/train with the default "
        f"settings; decoder: {args.decoder or 'the model default'}. `--workers N`: a LocalCluster of N worker "
        f"processes, 1 thread each, batches of {args.batch_size} lines; wall = the whole command (cluster start, "
        "model loading in the driver and in every worker included).",
        "",
        markdown_table(["run", "sentences", "batches", "load at start", "wall s", "sentences/s (wall)",
                        "worker CPU s (of it model loading)", "sentences / worker CPU-s (parsing only)",
                        "cores obtained (CPU s / wall s)", "output byte-identical to control"], rows),
        "",
        f"- Speed-up of 2 workers over 1 (median wall of {args.repeats} alternated runs each): **{speedup:.2f}x** "
        f"({w1:.1f} s vs {w2:.1f} s), LocalCluster (`--workers N`, wall includes starting the cluster). "
        f"One-process control: {control['wall']:.1f} s ({ctl_rate:.1f} sentences/s).",
        *([f"- Same on a running cluster whose scheduler and workers were each started in a session of their own "
           f"(`--scheduler`; wall excludes starting it): **{sw1 / sw2:.2f}x** ({sw1:.1f} s vs {sw2:.1f} s). On this "
           "Linux (`kernel.sched_autogroup_enabled = 1`) the CPU is shared between sessions, not processes, so "
           "the workers of a LocalCluster share one session's slice of the busy machine however many they are; "
           "workers in sessions of their own each get a slice, as workers on separate machines would get a "
           "machine."] if sessions else []),
        "- *cores obtained* = the workers' CPU seconds over the wall time: how much of the machine the run "
        "actually got. While it stays near the same value for 1 and 2 workers, the busy machine gave the run's "
        "session a fixed share of CPU however many processes asked for it, and a wall-time speed-up cannot show; "
        "the per-CPU-second rate is then the basis of the estimates below.",
        f"- Byte-identical outputs (every 1- and 2-worker run above vs the one-process parse): "
        f"**{all(s['identical'] for s in runs)}**.",
        f"- kill -9 of a 2-worker run (whole process group) once {kr['finished_at_kill']} batches "
        f"({kr['lines_at_kill']} lines) were on disk, then the same command with `--resume`: {kr['resumed']} of "
        f"{kr['batches']} batches resumed (not parsed again), {kr['lines']} lines written for {kr['expected']} "
        f"input lines, **{kr['lost']} lost, {kr['repeated']} repeated**, output identical to the control: "
        f"**{kr['identical']}** (resumed run {kr['seconds']} s).",
        "",
        "**Lowercasing and `#` digits with a PTB-trained parser.** Agreement of the parser's POS tags with the "
        "file's POS column (Google's own tagger, not gold) over the same sentences, tokens as in the file vs "
        "number-shaped tokens (`##`, `#,###.#`) written with `0` (`python -m treegram.corpora.google ... --digits "
        "zero`), which gives them the number signature (`UNK-NUM`) instead of a symbol's:",
        "",
        markdown_table(["tokens", "tag agreement, all tokens", "number-shaped tokens", "their tags (parser)"],
                       [[f"digits {m}", f"{100 * c['all_ok'] / c['all']:.1f}% ({c['all_ok']}/{c['all']})",
                         f"{100 * c['num_ok'] / max(1, c['num']):.1f}% ({c['num_ok']}/{c['num']})",
                         ", ".join(f"{k} {v}" for k, v in sorted(c["num_tags"].items(), key=lambda kv: -kv[1]))]
                        for m, c in digits.items()]),
        "",
        "Lowercasing is not undone (the data cannot say which words were capitalized): proper nouns get lowercase "
        "unknown-word signatures, not `-CAP`/`-INITC`, and the sentence-initial word is looked up as it is.",
        "",
        "**Extrapolation (estimates, not measured runs).** Parsing is CPU-bound in the workers and each batch is "
        "independent, so the time is about the worker CPU-seconds divided by the number of worker processes that "
        f"have a core of their own, plus a fixed start (cluster, one model load per worker: "
        f"~{statistics.median(s['model_load_cpu_seconds'] / max(1, s['workers']) for s in runs):.1f} CPU-s each). "
        f"Measured: {cpu_rate:.1f} sentences per worker CPU-second of parsing on this sample (median over the runs).",
        f"- All 180k Google pairs ({total_sent:,} sentences, long and short): {hours_1:.1f} worker CPU-hours at the "
        f"sample's rate, i.e. ~{hours_1:.1f} h with one worker and ~{hours_1 / 2:.1f} h with two workers on two "
        f"free cores (the driver only reads lines and writes batch files). This assumes the sample's "
        f"length distribution is the file's (mean lengths above: sample {long_len:.1f} / {short_len:.1f}, all "
        f"{pop_long:.1f} / {pop_short:.1f}); parse time grows about cubically with length, so a difference in the "
        "long tail moves the estimate.",
        f"- A 100 GB revision history: the PEP history gave {mf.get('pairs', '?')} pairs from "
        f"{mf.get('chars', 0) / 1e6:.0f} M characters (RESULTS.md, section mining), i.e. ~{mined_pairs_100gb:,.0f} "
        f"pairs per 100 GB of revision text at that density ({2 * mined_pairs_100gb:,.0f} sentences): "
        f"~{hours_mined:.1f} worker CPU-hours of parsing at this rate (the mined sides are 5-60 words, about like "
        "these), on top of the ~0.8 worker-hours of mining and ~0.9 driver-hours of reading estimated there. "
        "Wikipedia's density of pairs per character differs from the PEPs' (the enwiki sample row there has more "
        "pairs per revision) -- not measured at scale.",
    ]
    text = "\n".join(body)
    publish("parse-scale", text, not args.no_write)


if __name__ == "__main__":
    main()
