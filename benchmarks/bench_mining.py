"""Revision mining on Dask (issue 14 items 1-2): `treegram mine-revisions` on both real dumps in
../shared/data/revisions.

Measures, in one run: wall time and revisions/s with a LocalCluster of 1 and of 2 worker processes (same dump,
same settings; the speed-up is their ratio), revisions per busy worker-second (the sum of the chunk tasks' own
times), pairs per 1,000 revisions and the filter counts; identical output for 1 and 2 workers; a run killed with
SIGKILL (the whole process group: driver, scheduler and workers) after some chunks finished, then re-run: the
finished chunks are resumed (not mined again) and the final file is identical to the uninterrupted run's; and the
precision of 100 mined pairs drawn at random (seed 14) from both dumps, judged by hand in
benchmarks/judged/mining-100.judged.tsv (`--draw FILE` writes a fresh unjudged sample instead).

    nice -n 10 python benchmarks/bench_mining.py
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _results import ROOT, kill9_when_done, markdown_table, require_shared, write_section  # noqa: E402

TREEGRAM = [str(Path(sys.executable).parent / "treegram")]
JUDGED = ROOT / "benchmarks" / "judged" / "mining-100.judged.tsv"


def run(dump: Path, out: Path, workers: int, extra=()) -> dict:
    cmd = TREEGRAM + ["-q", "mine-revisions", str(dump), "--out", str(out), "--workers", str(workers), "--json",
                      *extra]
    t0 = time.perf_counter()
    res = subprocess.run(cmd, capture_output=True, text=True)
    if res.returncode != 0:
        sys.exit(f"failed: {' '.join(cmd)}\n{res.stderr[-2000:]}")
    s = json.loads(res.stdout)
    s["wall"] = time.perf_counter() - t0
    print(f"{dump.name} workers={workers}: {s['revisions']} revisions, {s['pairs']} pairs, {s['seconds']:.1f} s "
          f"(process {s['wall']:.1f} s)", flush=True)
    return s


def kill_and_resume(dump: Path, out: Path, reference: Path, min_chunks: int) -> dict:
    """Start a 2-worker run in its own session, SIGKILL the whole group once `min_chunks` chunks are on disk,
    record them, re-run, check resume and output."""
    cdir = out.with_name(out.name + ".chunks")
    cmd = TREEGRAM + ["-q", "mine-revisions", str(dump), "--out", str(out), "--workers", "2", "--json"]
    finished = kill9_when_done(cmd, cdir, min_chunks, poll=0.2)
    print(f"killed with {len(finished)} finished chunks on disk", flush=True)
    s = run(dump, out, 2, ["--keep-chunks"])
    still = {f.name: hashlib.sha1(f.read_bytes()).hexdigest() for f in cdir.glob("[0-9]*.json")}
    kept = sum(1 for k, v in finished.items() if still.get(k) == v)
    return {"finished_at_kill": len(finished), "resumed": s["chunks_resumed"], "unchanged_after_resume": kept,
            "chunks": s["chunks"], "identical": out.read_bytes() == reference.read_bytes(), "seconds": s["seconds"]}


def read_pairs(path: Path) -> list[list[str]]:
    lines = path.read_text(encoding="utf-8").splitlines()
    return [ln.split("\t") for ln in lines[1:]]


def draw(pool: list[list[str]], n: int = 100, seed: int = 14) -> list[list[str]]:
    idx = sorted(random.Random(seed).sample(range(len(pool)), min(n, len(pool))))
    return [pool[i] for i in idx]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--work", type=Path, default=Path("/tmp/bench_mining"))
    ap.add_argument("--repeats", type=int, default=3, help="alternated 1- and 2-worker runs of the PEP dump")
    ap.add_argument("--draw", type=Path, default=None, help="write the 100-pair sample (unjudged) here and stop")
    args = ap.parse_args()
    data = require_shared() / "revisions"
    peps, wiki = data / "python-peps-history.xml.bz2", data / "enwiki-20140102-sample.xml.gz"
    args.work.mkdir(parents=True, exist_ok=True)
    w = args.work
    for f in w.glob("*.tsv.chunks"):
        for g in f.iterdir():
            g.unlink()
        f.rmdir()

    load_start = os.getloadavg()[0]
    sw = run(wiki, w / "wiki.tsv", 1)
    # 1 and 2 workers alternated (the machine is shared: its load changes from minute to minute)
    runs1, runs2 = [], []
    for _ in range(args.repeats):
        runs1.append(run(peps, w / "peps1.tsv", 1))
        runs2.append(run(peps, w / "peps2.tsv", 2))
    s1 = sorted(runs1, key=lambda s: s["seconds"])[len(runs1) // 2]
    s2 = sorted(runs2, key=lambda s: s["seconds"])[len(runs2) // 2]
    same = (w / "peps1.tsv").read_bytes() == (w / "peps2.tsv").read_bytes()
    pool = read_pairs(w / "peps1.tsv") + read_pairs(w / "wiki.tsv")
    sample = draw(pool)
    if args.draw:
        args.draw.write_text("judgement\tdirection\tpage\tlong\tshort\n" + "".join(
            f"?\t{r[4]}\t{r[1]}\t{r[7]}\t{r[8]}\n" for r in sample), encoding="utf-8")
        print(f"wrote {args.draw}")
        return
    kr = kill_and_resume(peps, w / "killed.tsv", w / "peps2.tsv", min_chunks=8)
    # the driver's reading alone (bz2 decompression + cutting into chunks, no Dask): how much of its CPU is reading
    from treegram.plugins.revisions.dumps import iter_chunks

    c0 = time.process_time()
    for _ in iter_chunks([peps], 500):
        pass
    read_cpu = time.process_time() - c0
    load_end = os.getloadavg()[0]
    print(f"reading alone: {read_cpu:.1f} CPU s", flush=True)

    rows = []
    for name, s in (("enwiki sample, 1 worker", sw), ("PEP history, 1 worker (median run)", s1),
                    ("PEP history, 2 workers (median run)", s2)):
        per_cpu = s["revisions"] / s["worker_cpu_seconds"] if s["worker_cpu_seconds"] else 0.0
        rows.append([name, s["pages"], s["revisions"], s["chunks"], s["pairs"], s["compressions"], s["expansions"],
                     s["pairs_per_1000_revisions"], s["seconds"], s["revisions_per_second"], s["worker_cpu_seconds"],
                     per_cpu, s["driver_cpu_seconds"]])
    filt = sorted(set(s1["filtered"]) | set(sw["filtered"]))
    frows = [[f, sw["filtered"].get(f, 0), s1["filtered"].get(f, 0)] for f in filt]
    frows = [["one-sentence replacements", sw["replacements"], s1["replacements"]],
             ["word-deletion candidates", sw["candidates"], s1["candidates"]]] + frows + \
            [["pairs kept", sw["pairs"], s1["pairs"]]]

    # precision of 100 random pairs, judged by hand
    judged = {}
    if JUDGED.exists():
        for ln in JUDGED.read_text(encoding="utf-8").splitlines()[1:]:
            j, _d, _p, long, short = ln.split("\t")[:5]
            judged[(long, short)] = j
    marks = [judged.get((r[7], r[8])) for r in sample]
    missing = sum(m is None for m in marks)
    ok = sum(m == "ok" for m in marks)
    noisy = sum(m == "noise" for m in marks)
    prec_c = [judged.get((r[7], r[8])) for r in sample if r[4] == "compression"]
    prec_e = [judged.get((r[7], r[8])) for r in sample if r[4] == "expansion"]

    speedup = s1["seconds"] / s2["seconds"]
    all1 = ", ".join(f"{r['seconds']:.1f}" for r in runs1)
    all2 = ", ".join(f"{r['seconds']:.1f}" for r in runs2)
    avg_chars = 336e6 / 16312  # SOURCE.txt: 336 M characters in 16,312 revisions
    cpu_rate = s1["revisions"] / s1["worker_cpu_seconds"]
    mb_worker = cpu_rate * avg_chars / 1e6
    mb_driver = s1["revisions"] / s1["driver_cpu_seconds"] * avg_chars / 1e6
    body = [
        "## Revision mining on Dask (issue 14 items 1-2)",
        "",
        f"`nice -n 10 python benchmarks/bench_mining.py` — {time.strftime('%Y-%m-%d')}, a 2-core machine **shared "
        "with other helpers' jobs during the run** (absolute times can vary ~2x; the 1- and 2-worker runs are in "
        "the same script, one after the other). LocalCluster of worker processes, 1 thread each; default settings "
        "(chunks of 500 revisions, 5-60 words a side); no `--parser` model (the parser-score filter was not "
        "applied). The driver streams the dump (bz2 decompression, cut at <page> elements) and scatters the raw XML chunks to the workers, which parse "
        "them with mwxml and mine them.",
        "",
        markdown_table(["run", "pages", "revisions", "chunks", "pairs", "compressions", "expansions",
                        "pairs / 1,000 rev.", "seconds (wall)", "revisions/s (wall)", "worker CPU s",
                        "revisions / worker CPU-s", "driver CPU s"], rows),
        "",
        f"- Speed-up, 2 workers vs 1 on the PEP history, medians of {args.repeats} alternated runs each: "
        f"**{speedup:.2f}x** ({s1['seconds']:.1f} s vs {s2['seconds']:.1f} s; all runs, 1 worker: "
        f"{all1} s; 2 workers: {all2} s). Output identical for 1 and 2 workers: "
        f"**{same}**.",
        f"- Restart after `kill -9` (SIGKILL to the whole process group: driver, scheduler, nannies, workers) once "
        f"{kr['finished_at_kill']} of {kr['chunks']} chunks were on disk: the re-run resumed {kr['resumed']} "
        f"chunks ({kr['unchanged_after_resume']} of the {kr['finished_at_kill']} chunk files byte-identical "
        f"afterwards, i.e. not mined again), finished in {kr['seconds']:.1f} s, final TSV identical to the "
        f"uninterrupted run's: **{kr['identical']}**.",
        "",
        "Candidates and filters (one-sentence replacements where one side is a word-deletion of the other, then "
        "the filters in order; a pair is counted under its first failing filter):",
        "",
        markdown_table(["", "enwiki sample", "PEP history"], frows),
        "",
        f"Precision: 100 pairs drawn at random (seed 14) from all pairs mined from both dumps "
        f"({len(pool)}), judged by hand by the helper who wrote the miner (not blind: the judge saw direction and "
        f"page), in `benchmarks/judged/mining-100.judged.tsv`. `ok` = the short side is a grammatical sentence that "
        f"keeps the long side's core meaning (a usable compression training pair); `noise` = ungrammatical, a "
        f"sentence-splitting or markup artefact, or meaning reversed/essential content lost. "
        f"**{ok} ok, {noisy} noise"
        + (f", {missing} not judged" if missing else "") + f"** -> precision {ok / max(1, ok + noisy):.2f} "
        f"(compressions {sum(m == 'ok' for m in prec_c)}/{len(prec_c)}, expansions "
        f"{sum(m == 'ok' for m in prec_e)}/{len(prec_e)}).",
        "",
        "CPU seconds are `time.process_time()` of the chunk tasks (summed over workers) and of the driver process "
        "(dump reading: bz2 + XML via mwxml, the Dask client and the LocalCluster's scheduler); unlike wall time "
        "they do not depend on what else the shared machine was running.",
        "",
        f"100 GB of history, from these rates: one worker mines ~{cpu_rate:.0f} revisions per CPU-second of PEP "
        f"history (average revision {avg_chars / 1e3:.0f} k characters), i.e. ~{mb_worker:.1f} MB of revision text "
        f"per worker-second (XML parsing included); the driver reads ~{mb_driver:.1f} MB/s (bz2 decompression, "
        f"cutting, shipping, in one process). 100 GB of uncompressed history text is then ~{100e3 / mb_worker / 3600:.1f} worker-hours of "
        f"mining and ~{100e3 / mb_driver / 3600:.1f} hours of reading for one driver: on N machines of c worker "
        f"processes, about max({100e3 / mb_worker / 3600:.1f} / (N c), {100e3 / mb_driver / 3600:.1f} / D) hours with D "
        f"drivers reading D disjoint sets of dump files (Wikipedia publishes its history in hundreds of files; one "
        f"`treegram mine-revisions` per file group against the same `--scheduler`). A single driver caps the "
        f"cluster at ~{mb_driver / mb_worker:.1f} workers' worth of mining. If \"100 GB\" means compressed dump files, "
        f"multiply by their compression ratio (the PEP history's bz2 is {336e6 / 17.3e6:.0f}:1; Wikipedia's "
        f"full-history dumps compress more, as consecutive revisions repeat each other) "
        f"-- not measured here.",
        "",
        f"**Where the time goes, and what it means for the 2-worker speed-up.** Mining proper is cheap once each "
        f"page's paragraphs are cached (consecutive revisions share almost all of them): {s1['worker_cpu_seconds']:.1f} "
        f"worker CPU-s for the whole PEP history, against {s1['driver_cpu_seconds']:.1f} CPU-s in the driver process; "
        f"reading the dump alone (bz2 decompression and cutting into chunks, no Dask), measured separately in "
        f"this script, took {read_cpu:.1f} CPU-s; the other ~{max(0.0, s1['driver_cpu_seconds'] - read_cpu):.0f} CPU-s are "
        f"the Dask client, the LocalCluster scheduler (in the driver process) and shipping 336 M characters to the "
        f"workers. "
        f"On one bz2 file the driver ({s1['driver_cpu_seconds']:.1f} CPU-s) is about as busy as all workers together "
        f"({s1['worker_cpu_seconds']:.1f}), so on a 2-core machine the driver plus one worker already fill both "
        f"cores: the 1-worker wall time is {s1['seconds'] / s1['driver_cpu_seconds']:.1f}x the driver's CPU time "
        f"(1-minute load average {load_start:.1f} at the start of this script, {load_end:.1f} at the end, the "
        f"benchmark at nice 10), and a second worker only competes for the same cores: that is why 2 workers are "
        f"no faster than 1 here "
        f"(earlier runs of this script while other helpers' jobs kept the load at ~4 took 70-90 s per PEP run, "
        f"with 1.05-1.1x, when the driver still parsed the XML itself; moving mwxml parsing to the workers cut the "
        f"driver's CPU from ~18 to ~11 s). What remains sequential is bz2 decompression of one file; what would fix "
        f"it (not done in this session): for real Wikipedia dumps that come as "
        f"hundreds of files, one reader per file.",
        "",
        f"Wikipedia revisions are longer and wikitext stripping (mwparserfromhell) costs more per character "
        f"than reST: the enwiki sample row above gives its own rate.",
    ]
    write_section("mining", "\n".join(body))
    print("\n".join(body))


if __name__ == "__main__":
    main()
