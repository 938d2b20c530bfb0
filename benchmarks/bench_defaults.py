"""The shipped defaults, re-run through the command line exactly as a user runs them (issue 28 acceptance).

    nice -n 10 python benchmarks/bench_defaults.py [--parts pcfg,tsg,compress,sheet,tig,ostag,bayes] [--work DIR]
        [--no-write]

Each row is one default a fresh install gives, measured by the `treegram` commands themselves in subprocesses (no
library shortcuts), with the commit it was measured at:

- pcfg: `treegram train pcfg --treebank ptb-sample/train` (defaults), `treegram parse` of ptb-sample/dev with the
  model's own decoder, `treegram evalb` against the gold trees: F1 (all lengths), exact match, train and parse time.
- tsg: the same with `treegram train tsg --seed 1` (100 Gibbs sweeps, the 5-sample average, max-rule).
- tig: the same with `treegram train tig --seed 1` (tig0, --tsg-init 100, 10 blocked sweeps, 5-sample average).
- ostag: `treegram train ostag --from-tsg tsg.model --seed 1` (OSTAG3 on the tsg part's model; trained first if the
  work folder has none), then parse and evalb the same way.
- bayes: `treegram train ostag-bayes --seed 1` (Bayesian OSTAG, 10 sweeps, 5-sample average).
- compress: the shipped default compressor (`treegram compress --tokenized`) on broadcast-news dev (lines
  1001-1170), scored by `treegram eval-compression` against the three annotators: CompR, token F1, RelF1.
- sheet: the README's first command (`treegram exercises --vocab cefr:A1 --words school,book,family,water
  --per-word 3`), its items and wall time from a fresh process.

The figures are compared with the numbers the issue sections recorded (the `recorded` column names the RESULTS.md
section and its figure for the same seed), so a refactoring that changes a default's output shows as a changed F1
here.  The long parts run one at a time: with `--work DIR` every finished row is kept in DIR/rows.json (with its
commit) and each trained model beside it, so `--parts tig` today and `--parts bayes` tomorrow write one table, and
the ostag part reuses the tsg part's model.  Writes the `defaults` section (every row kept in the work folder, in
the order above).
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
from _results import ROOT, machine_line, markdown_table, require_shared, stamped_run, write_section  # noqa: E402

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


#: the figure each row was recorded at before issue 28 (same seed, same command): (RESULTS.md section, figure)
RECORDED = {
    "pcfg": ("parsing-defaults", "F1 75.21"),
    "tsg": ("parsing-defaults-ostag-full, source TSG seed 1", "F1 85.22"),
    "tig": ("parsing-defaults-avg, seed 1", "F1 84.13"),
    "ostag": ("parsing-defaults-ostag-full, seed 1", "F1 85.07"),
    "bayes": ("parsing-defaults-avg, seed 1", "F1 83.80"),
    "compress": ("defaults", "CompR 72.65, token F1 78.37, RelF1 69.80"),
    "sheet": ("defaults", "12 items"),
}
PARTS = list(RECORDED)


def train(name: str, model: Path, args: list[str]) -> float:
    """`treegram train ARGS --out MODEL`; its child CPU seconds (a model the same command already wrote into the
    work folder is reused with its recorded figures)."""
    def fresh() -> dict:
        _, wall, cpu = run(["-q", "train", name, *args, "--out", str(model)])
        print(f"trained {model}: {cpu:.0f} CPU-s, {wall:.0f} s wall", flush=True)
        return {"cpu": cpu, "wall": wall, "commit": commit()}

    return stamped_run(model, args, fresh)["cpu"]


def parsing_row(name: str, train_args: list[str], shared: Path, work: Path, *, shown: list[str] | None = None,
                tag: str | None = None) -> list:
    from treegram.trees import read_treebank

    gold = work / "dev.gold"
    dev = list(read_treebank([shared / "ptb-sample" / "dev"]))
    gold.write_text("".join(t.to_bracket() + "\n" for t in dev), encoding="utf-8")
    sents = work / "dev.txt"
    sents.write_text("".join(" ".join(t.leaves()) + "\n" for t in dev), encoding="utf-8")
    tag = tag or name
    model, parsed = work / f"{tag}.model", work / f"{tag}.parsed"
    train_cpu = train(name, model, ["--treebank", str(shared / "ptb-sample" / "train"), *train_args])
    _, _, parse_cpu = run(["-q", "parse", "--model", str(model), "--input", str(sents), "--out", str(parsed)])
    res, _, _ = run(["evalb", str(gold), str(parsed), "--json"])
    scores = json.loads(res.stdout)
    f1, exact = scores["f1"], scores["exact"]
    return [f"`treegram train {' '.join([name, *(shown if shown is not None else train_args)])}`, then `parse`",
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


def measure(part: str, shared: Path, work: Path) -> list:
    if part == "pcfg":
        return parsing_row("pcfg", [], shared, work)
    if part in ("tsg", "tig"):
        return parsing_row(part, ["--seed", "1"], shared, work)
    if part == "ostag":
        tsg = work / "tsg.model"
        train("tsg", tsg, ["--treebank", str(shared / "ptb-sample" / "train"), "--seed", "1"])
        return parsing_row("ostag", ["--from-tsg", str(tsg), "--seed", "1"], shared, work,
                           shown=["--from-tsg", "tsg.model", "--seed", "1"])
    if part == "bayes":
        return parsing_row("ostag-bayes", ["--seed", "1"], shared, work, tag="bayes")
    if part == "compress":
        return compress_row(shared)
    if part == "sheet":
        return sheet_row()
    sys.exit(f"unknown part {part!r} ({', '.join(PARTS)})")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--parts", default="pcfg,tsg,compress,sheet", help="comma-separated parts to run (of "
                    + ",".join(PARTS) + ")")
    ap.add_argument("--work", type=Path, help="keep models and finished rows here (rows.json) across runs; "
                    "default: a temporary folder")
    ap.add_argument("--no-write", action="store_true", help="print only; leave RESULTS.md alone")
    ap.add_argument("--note", default="", help="a paragraph under the table (what the commits are, the load, ...)")
    opts = ap.parse_args()
    shared = require_shared()
    parts = [p.strip() for p in opts.parts.split(",") if p.strip()]
    for part in parts:
        if part not in RECORDED:
            sys.exit(f"unknown part {part!r} ({', '.join(PARTS)})")
    with tempfile.TemporaryDirectory(prefix="treegram-defaults-") as tmp:
        work = opts.work or Path(tmp)
        work.mkdir(parents=True, exist_ok=True)
        store = work / "rows.json"
        done = json.loads(store.read_text(encoding="utf-8")) if store.exists() else {}
        for part in parts:
            print(f"running {part} ...", flush=True)
            row = measure(part, shared, work)
            done[part] = {"row": row, "commit": commit(), "date": time.strftime("%Y-%m-%d %H:%M"),
                          "command": f"nice -n 10 python benchmarks/bench_defaults.py --parts {part}"}
            store.write_text(json.dumps(done, indent=1), encoding="utf-8")
            print(" | ".join(map(str, row)), flush=True)
    rows = [[*done[p]["row"], "{1} (`{0}`)".format(*RECORDED[p]), done[p]["commit"]] for p in PARTS if p in done]
    body = "\n".join([
        "## The shipped defaults, re-run through the command line",
        "",
        f"`nice -n 10 python benchmarks/bench_defaults.py --parts {','.join(p for p in PARTS if p in done)}`"
        + (" (one part at a time, `--work DIR`)" if len(done) > len(parts) else "") + f" -- {machine_line()}. "
        "Each row names the commit it was measured at; train CPU-s is the training command's CPU time "
        "(user + system, its child processes included); speed is per CPU second of the `treegram parse` process "
        "(loading the model and the numba kernels included). The recorded column is the figure the same command "
        "with the same seed gave when its default was chosen (that section's row), to compare.",
        "",
        markdown_table(["default (as a user runs it)", "data", "figures", "train CPU-s", "speed", "recorded",
                        "commit"], rows),
        *(["", opts.note] if opts.note else []),
    ])
    print(body)
    if not opts.no_write:
        write_section("defaults", body)


if __name__ == "__main__":
    main()
