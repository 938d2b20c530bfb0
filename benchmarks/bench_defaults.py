"""The shipped defaults, re-run through the command line exactly as a user runs them (issue 28 acceptance).

    nice -n 10 python benchmarks/bench_defaults.py [--parts pcfg,tsg,compress,sheet] [--no-write]

Each row is one default a fresh install gives, measured by the `treegram` commands themselves in subprocesses (no
library shortcuts), with the commit it was measured at:

- pcfg: `treegram train pcfg --treebank ptb-sample/train` (defaults), `treegram parse` of ptb-sample/dev with the
  model's own decoder, `treegram evalb` against the gold trees: F1 (all lengths), exact match, train and parse time.
- tsg: the same with `treegram train tsg --seed 1` (100 Gibbs sweeps, the 5-sample average, max-rule).
- compress: the shipped default compressor (`treegram compress --tokenized`) on broadcast-news dev (lines
  1001-1170), scored by `treegram eval-compression` against the three annotators: CompR, token F1, RelF1.
- sheet: the README's first command (`treegram exercises --vocab cefr:A1 --words school,book,family,water
  --per-word 3`), its items and wall time from a fresh process.

The figures are compared with the numbers the issue sections recorded (RESULTS.md sections named in the table), so
a refactoring that changes a default's output shows as a changed figure here.  Writes the `defaults` section.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _results import ROOT, machine_line, markdown_table, require_shared, write_section  # noqa: E402

TREEGRAM = str(Path(sys.executable).parent / "treegram")
BN_DEV = (1001, 1170)


def run(args: list[str], *, stdin: str | None = None) -> tuple[subprocess.CompletedProcess, float, float]:
    """Run `treegram ARGS`; (result, wall seconds, child CPU seconds)."""
    c0, t0 = os.times(), time.perf_counter()
    res = subprocess.run([TREEGRAM, *args], capture_output=True, text=True, input=stdin)
    wall, c1 = time.perf_counter() - t0, os.times()
    if res.returncode != 0:
        sys.exit(f"failed: treegram {' '.join(args)}\n{res.stderr[-2000:]}")
    return res, wall, (c1.children_user - c0.children_user) + (c1.children_system - c0.children_system)


def commit() -> str:
    res = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True, text=True)
    dirty = subprocess.run(["git", "-C", str(ROOT), "status", "--porcelain", "--untracked-files=no"],
                           capture_output=True, text=True).stdout.strip()
    return res.stdout.strip() + ("+changes" if dirty else "")


def parsing_row(name: str, train_args: list[str], shared: Path, work: Path) -> list:
    from treegram.trees import read_treebank

    gold = work / "dev.gold"
    dev = list(read_treebank([shared / "ptb-sample" / "dev"]))
    gold.write_text("".join(t.to_bracket() + "\n" for t in dev), encoding="utf-8")
    sents = work / "dev.txt"
    sents.write_text("".join(" ".join(t.leaves()) + "\n" for t in dev), encoding="utf-8")
    model, parsed = work / f"{name}.model", work / f"{name}.parsed"
    _, _, train_cpu = run(["-q", "train", name, "--treebank", str(shared / "ptb-sample" / "train"),
                           "--out", str(model), *train_args])
    _, _, parse_cpu = run(["-q", "parse", "--model", str(model), "--input", str(sents), "--out", str(parsed)])
    res, _, _ = run(["evalb", str(gold), str(parsed), "--json"])
    scores = json.loads(res.stdout)
    f1, exact = scores["f1"], scores["exact"]
    return [f"`treegram train {' '.join([name, *train_args])}`, then `parse`",
            "ptb-sample/dev (273 sentences)", f"F1 {f1:.2f}, exact {exact:.2f}", f"{train_cpu:.0f}",
            f"{len(dev) / parse_cpu:.1f} sent / CPU-s"]


def compress_row(shared: Path) -> list:
    bn = shared / "compression" / "broadcast-news"
    first, last = BN_DEV
    # no --system / --model: eval-compression compresses the sources with the shipped default itself
    res, _, cpu = run(["-q", "eval-compression", "--source", str(bn / "input.txt"), "--gold",
                       *(str(bn / f"gold.{k}.comp") for k in (1, 2, 3)), "--lines", f"{first}-{last}", "--json"])
    row = json.loads(res.stdout)["systems"]["default"]
    n = last - first + 1
    return ["`treegram compress` (shipped default model)", f"broadcast-news dev ({n} sentences, 3 annotators)",
            f"CompR {row['compression_rate']:.2f}, token F1 {row['token_f1']:.2f}, RelF1 {row['rel_f1']:.2f}",
            "- (shipped)", f"{n / cpu:.1f} sent / CPU-s (parsing, compressing and scoring)"]


def sheet_row() -> list:
    res, wall, cpu = run(["exercises", "--vocab", "cefr:A1", "--words", "school,book,family,water", "--per-word", "3",
                          "--json"])
    data = json.loads(res.stdout)
    items = data["items"]
    return ["`treegram exercises --vocab cefr:A1 --words school,book,family,water --per-word 3` (README)",
            "shipped corpus and edits", f"{len(items)} items", "- (shipped)",
            f"{wall:.1f} s wall, {cpu:.1f} CPU-s (fresh process)"]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--parts", default="pcfg,tsg,compress,sheet", help="comma-separated parts to run")
    ap.add_argument("--no-write", action="store_true", help="print only; leave RESULTS.md alone")
    opts = ap.parse_args()
    shared = require_shared()
    parts = [p.strip() for p in opts.parts.split(",") if p.strip()]
    rows = []
    with tempfile.TemporaryDirectory(prefix="treegram-defaults-") as tmp:
        work = Path(tmp)
        for part in parts:
            print(f"running {part} ...", flush=True)
            if part == "pcfg":
                rows.append(parsing_row("pcfg", [], shared, work))
            elif part == "tsg":
                rows.append(parsing_row("tsg", ["--seed", "1"], shared, work))
            elif part == "compress":
                rows.append(compress_row(shared))
            elif part == "sheet":
                rows.append(sheet_row())
            else:
                sys.exit(f"unknown part {part!r} (pcfg, tsg, compress, sheet)")
            print(" | ".join(map(str, rows[-1])), flush=True)
    body = "\n".join([
        "## The shipped defaults, re-run through the command line",
        "",
        f"`nice -n 10 python benchmarks/bench_defaults.py --parts {','.join(parts)}` -- commit {commit()}, "
        f"{machine_line()}.",
        "",
        markdown_table(["default (as a user runs it)", "data", "figures", "train CPU-s", "speed"], rows),
    ])
    print(body)
    if not opts.no_write:
        write_section("defaults", body)


if __name__ == "__main__":
    main()
