"""Streaming batches and crash safety (issue 17): kill -9 a 2,000-sentence `parse` and resume it; peak memory of
`parse`, `compress` and `generate` against the input size; time to the first lines of `generate -n 1000000 | head -3`.

    python benchmarks/bench_io.py                 # 2,000 sentences; writes the `io` section of RESULTS.md
    python benchmarks/bench_io.py --sentences 300 --no-write   # a quick look

Every command runs as a separate process (as a user runs it); peak memory is the child's maximum resident set size.
The parser is a PCFG trained on the ptb-sample train split; the sentences are the dev split's (up to 20 words),
repeated to the requested count.  The compression model is a small Gibbs STSG on demo-treebank pairs; the
generation model is a vocabgen model trained on the UD English EWT trees.
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _results import machine_line, markdown_table, publish, require_shared  # noqa: E402

CLI = [sys.executable, "-c", "import sys; from treegram.cli.app import main; sys.exit(main())"]


def run(args, **kw):
    """Run the CLI in a child; returns (seconds, process)."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(CLI + ["-q"] + [str(a) for a in args], stdout=kw.get("stdout", subprocess.DEVNULL),
                            stderr=subprocess.PIPE)
    _, err = proc.communicate()
    seconds = time.perf_counter() - t0
    if proc.returncode != 0:
        raise SystemExit(f"{args[0]} failed: {err.decode()[-500:]}")
    return seconds, proc


def peak_mb(args) -> tuple[float, float]:
    """(seconds, peak RSS in MB) of one CLI run in a child process."""
    t0 = time.perf_counter()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - child
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 1)
        os.dup2(devnull, 2)
        os.execv(sys.executable, CLI + ["-q"] + [str(a) for a in args])
    _, status, usage = os.wait4(pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"{args} failed with status {status}")
    return time.perf_counter() - t0, usage.ru_maxrss / 1024


def line_count(path: Path) -> int:
    try:
        return path.read_bytes().count(b"\n")
    except FileNotFoundError:
        return 0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sentences", type=int, default=2000)
    ap.add_argument("--kill-at", type=float, default=0.6, help="kill -9 once this share of the lines is written")
    ap.add_argument("--no-write", action="store_true")
    opts = ap.parse_args()
    shared = require_shared()
    d = Path(tempfile.mkdtemp(prefix="bench_io."))
    rows = []

    # -- parse: kill -9 and --resume ----------------------------------------------------------------------------
    from treegram.trees import read_treebank

    train = shared / "ptb-sample" / "train"
    model = d / "pcfg.model"
    run(["train", "pcfg", "--treebank", train, "--out", model])
    dev = [t.leaves() for t in read_treebank(shared / "ptb-sample" / "dev")]
    dev = [" ".join(w) for w in dev if len(w) <= 20]
    n = opts.sentences
    sents = d / "in.txt"
    sents.write_text("".join(dev[i % len(dev)] + "\n" for i in range(n)))
    full = d / "full.mrg"
    t_full, rss_full = peak_mb(["parse", "--model", model, "--input", sents, "--out", full])
    part = d / "part.mrg"
    proc = subprocess.Popen(CLI + ["-q", "parse", "--model", str(model), "--input", str(sents), "--out", str(part)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    target = int(n * opts.kill_at)
    while proc.poll() is None and line_count(part) < target:
        time.sleep(0.02)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    at_kill = line_count(part)
    half_line = not part.read_bytes().endswith(b"\n")
    t_resume, _ = peak_mb(["parse", "--model", model, "--input", sents, "--out", part, "--resume"])
    resumed, reference = part.read_text().split("\n"), full.read_text().split("\n")
    same = resumed == reference
    rows.append(["parse: kill -9 + --resume", f"{n} sentences; killed after {at_kill} complete lines"
                 f"{' + a half line' if half_line else ''}", f"{len(resumed) - 1} lines, identical to the "
                 f"uninterrupted run: {same}; lines lost: {max(0, len(reference) - len(resumed))}; "
                 f"repeated: {max(0, len(resumed) - len(reference))}", f"{t_full:.1f} s uninterrupted, "
                 f"{t_resume:.1f} s resume"])

    # -- peak memory against input size -------------------------------------------------------------------------
    mem = []
    small = d / "small.txt"
    small.write_text("".join(dev[i % len(dev)] + "\n" for i in range(n // 4)))
    t_small, rss_small = peak_mb(["parse", "--model", model, "--input", small, "--out", d / "s.mrg"])
    mem.append(["parse", f"{n // 4} / {n} lines", f"{rss_small:.0f} / {rss_full:.0f}"])

    from treegram.corpora.demo import demo_trees
    from treegram.grammar.pcfg import PCFGModel

    trees = demo_trees()
    PCFGModel.train(trees).save(d / "parser.model")
    words = [t.leaves() for t in trees]
    (d / "src.txt").write_text("".join(" ".join(w) + "\n" for w in words))
    (d / "tgt.txt").write_text("".join(" ".join(w[::2]) + "\n" for w in words))
    run(["train", "stsg", "--pairs", d / "src.txt", d / "tgt.txt", "--parser", d / "parser.model",
         "--iterations", "20", "--out", d / "stsg.model"])
    sizes = (n // 4, n * 2)
    rss = []
    for k in sizes:
        f = d / f"c{k}.txt"
        f.write_text("".join(" ".join(words[i % len(words)]) + "\n" for i in range(k)))
        rss.append(peak_mb(["compress", "--model", d / "stsg.model", "--input", f, "--out", d / f"c{k}.out"])[1])
    mem.append(["compress", f"{sizes[0]} / {sizes[1]} lines", f"{rss[0]:.0f} / {rss[1]:.0f}"])

    vg = d / "vg.model"
    run(["train", "vocabgen", "--trees", shared / "ud-english" / "EWT", "--out", vg])
    gens = (1_000, 100_000)
    rss = []
    gen_secs = []
    for k in gens:
        s, r = peak_mb(["generate", "--model", vg, "--vocab", "cefr:B1", "-n", k, "--out", d / f"g{k}.txt"])
        rss.append(r)
        gen_secs.append(s)
    mem.append(["generate", f"-n {gens[0]} / -n {gens[1]}", f"{rss[0]:.0f} / {rss[1]:.0f}"])
    t0 = time.perf_counter()
    head = subprocess.run(" ".join(CLI[:2]) + " '" + CLI[2] + f"' -q generate --model {vg} --vocab cefr:B1 "
                          f"-n 1000000 | head -3", shell=True, capture_output=True, text=True)
    t_head = time.perf_counter() - t0
    head_lines = head.stdout.count("\n")

    body = "\n".join([
        f"`python benchmarks/bench_io.py --sentences {n}` ({machine_line()}; the machine was shared with other "
        "jobs, so wall-clock times are upper bounds).",
        "",
        markdown_table(["case", "setting", "result", "time"], rows),
        "",
        "Peak resident memory (MB) of one process against the input size (streaming: flat):",
        "",
        markdown_table(["command", "input sizes", "peak RSS MB"], mem),
        "",
        f"`generate -n 1000000 | head -3`: {head_lines} lines after {t_head:.1f} s (the process stops when `head` "
        f"exits; before streaming it printed nothing until all 10^6 were drawn, 71 s in the audit).  Full runs: "
        f"-n {gens[0]} {gen_secs[0]:.1f} s, -n {gens[1]} {gen_secs[1]:.1f} s (including model loading).",
    ])
    publish("io", body, not opts.no_write)


if __name__ == "__main__":
    main()
