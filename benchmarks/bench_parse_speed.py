"""Parsing speed of the shipped defaults before / after (issue 26 item 3): sentences per CPU second and bracket F1
of the PCFG default (`treegram train pcfg`, mpd) and the TSG default (`treegram train tsg --seed 1`: the 5-sample
average, maxrule) with a baseline commit's code and the current code, on the same models and sentences.

Each side is a fresh clone of its ref (`--baseline`, `--ref`) installed editable into a fresh venv (the same
dependencies, see bench_coldstart.py).  Each side parses in its own process exactly as `treegram
parse` does (`charts.decoders.parse_default` on the loaded model), after one warm-up sentence (numba compiling or
loading its cache); the CPU seconds (process_time) of the parse loop are taken, the two sides alternating,
`--repeats` times each; the median is reported.  F1 = EVALB (COLLINS.prm) labeled bracket F1, all lengths and
<= 40 words; "trees changed" counts sentences whose output differs between the sides.

    nice -n 10 python benchmarks/bench_parse_speed.py --baseline 50b6c02 --write

Models are trained once with the current code into benchmarks/out/parse-speed/ (`--pcfg` / `--tsg` name others).
Data: ptb-sample/dev (273 sentences; the pruning defaults were chosen on it) and, as a second split, the first
`--gum` trees of gum-const (another genre; automatic parses over gold POS), parsed once per side (`--gum-repeats`).
`--write` rewrites the `parse-speed-26` section of benchmarks/RESULTS.md.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _results import ROOT, machine_line, markdown_table, require_shared, write_section  # noqa: E402

SECTION = "parse-speed-26"
OUT = ROOT / "benchmarks" / "out" / "parse-speed"

DRIVER = r'''
import json, sys, time
from treegram.charts.decoders import parse_default
from treegram.errors import ParseFailure
from treegram.formalism import load_model

model_path, sentences_path = sys.argv[1], sys.argv[2]
sentences = [line.split() for line in open(sentences_path, encoding="utf-8").read().splitlines()]
parse = parse_default(load_model(model_path))


def one(tokens):
    try:
        return parse(tokens).to_bracket()
    except ParseFailure:
        return None


one(sentences[0])  # warm-up: numba compiles or loads its cache
t0 = time.process_time()
trees = [one(s) for s in sentences]
print(json.dumps({"cpu": time.process_time() - t0, "trees": trees}))
'''


def _git(*args: str) -> str:
    return subprocess.run(["git", "-C", str(ROOT), *args], check=True, capture_output=True, text=True).stdout.strip()


def train(name: str, args: list[str], shared: Path) -> Path:
    from treegram.cli.app import main as cli

    path = OUT / f"{name}.model"
    if not path.exists():
        OUT.mkdir(parents=True, exist_ok=True)
        code = cli(["-q", "train", name, "--treebank", str(shared / "ptb-sample" / "train"), "--out", str(path),
                    *args])
        if code != 0:
            sys.exit(f"treegram train {name} failed")
    return path


def side_run(python: str, model: Path, sentences: Path, env: dict) -> dict:
    res = subprocess.run([python, "-c", DRIVER, str(model), str(sentences)], capture_output=True, text=True, env=env)
    if res.returncode != 0:
        sys.exit(f"parse with {python} failed:\n{res.stderr[-2000:]}")
    return json.loads(res.stdout.strip().splitlines()[-1])


def f1s(gold, brackets) -> tuple[float, float]:
    from treegram.evaluation.parseval import ParsevalParams, score_corpus
    from treegram.trees import parse_brackets

    tests = [None if b is None else parse_brackets(b, source="parse")[0] for b in brackets]
    return (score_corpus(gold, tests, ParsevalParams()).f1, score_corpus(gold, tests, ParsevalParams(max_length=40)).f1)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--baseline", default="50b6c02", help="git ref of the 'before' side (default 50b6c02)")
    ap.add_argument("--ref", default="HEAD", help="git ref of the 'after' side (default HEAD)")
    ap.add_argument("--pcfg", type=Path, default=None, help="PCFG model (default: trained into benchmarks/out)")
    ap.add_argument("--tsg", type=Path, default=None, help="TSG model (default: trained into benchmarks/out)")
    ap.add_argument("--models", default="pcfg,tsg", help="which of pcfg,tsg to time")
    ap.add_argument("--repeats", type=int, default=3, help="timed runs per side on ptb-sample dev (median)")
    ap.add_argument("--gum", type=int, default=200, help="first N gum-const trees as the second split (0 = skip)")
    ap.add_argument("--gum-repeats", type=int, default=1)
    ap.add_argument("--write", action="store_true", help=f"rewrite the {SECTION} section of RESULTS.md")
    args = ap.parse_args()

    from bench_coldstart import _deps_folder, install_ref

    from treegram.trees import read_treebank

    shared = require_shared()
    chosen = args.models.split(",")
    models = {}
    if "pcfg" in chosen:
        models["pcfg"] = args.pcfg or train("pcfg", [], shared)
    if "tsg" in chosen:
        models["tsg"] = args.tsg or train("tsg", ["--seed", "1"], shared)
    splits = {"ptb-sample/dev": (read_treebank([shared / "ptb-sample" / "dev"]), args.repeats)}
    if args.gum:
        # GUM proper (not the GENTLE dictionary fragments), documents in name order, sentences of 5-40 words
        files = sorted((shared / "gum-const" / "const").glob("GUM_*.ptb"))
        gum = [t for t in read_treebank(files) if 5 <= len(t.leaves()) <= 40][: args.gum]
        splits[f"gum-const GUM_* (first {len(gum)} of 5-40 words)"] = (gum, args.gum_repeats)
    base_commit = _git("rev-parse", "--short", args.baseline)
    head = _git("rev-parse", "--short", args.ref)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        deps = _deps_folder(tmp)
        sides = {label: str(install_ref(ref, tmp, deps).parent / "python")
                 for label, ref in (("before", args.baseline), ("after", args.ref))}
        envs = {}
        for label in sides:  # each side its own numba cache (the baseline's shipped one stays valid for it)
            env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp / f"numba-{label}"))
            envs[label] = env
        for mname in chosen:
            for split, (gold, repeats) in splits.items():
                sents = tmp / "sentences.txt"
                sents.write_text("".join(" ".join(t.leaves()) + "\n" for t in gold), encoding="utf-8")
                cpu = {label: [] for label in sides}
                trees = {}
                for _ in range(repeats):
                    for label, python in sides.items():  # alternating: the machine's load drifts
                        res = side_run(python, models[mname], sents, envs[label])
                        cpu[label].append(res["cpu"])
                        trees[label] = res["trees"]
                med = {label: statistics.median(v) for label, v in cpu.items()}
                fb, fa = f1s(gold, trees["before"]), f1s(gold, trees["after"])
                changed = sum(a != b for a, b in zip(trees["before"], trees["after"]))
                row = [mname, split, len(gold), round(len(gold) / med["before"], 2), round(len(gold) / med["after"], 2),
                       round(med["before"] / med["after"], 2), f"{fb[0]:.2f}", f"{fa[0]:.2f}", f"{fb[1]:.2f}",
                       f"{fa[1]:.2f}", f"{changed}/{len(gold)}", repeats]
                print(row, flush=True)
                rows.append(row)
    if args.write:
        cmd = (f"nice -n 10 python benchmarks/bench_parse_speed.py --baseline {args.baseline} --ref {args.ref} "
               f"--models {args.models} "
               f"--repeats {args.repeats} --gum {args.gum} --gum-repeats {args.gum_repeats} --write")
        body = [f"## Parsing speed of the shipped defaults, before / after (issue 26 item 3)\n",
                f"Command: `{cmd}` — before = {args.baseline} ({base_commit}), after = {args.ref} ({head}); "
                f"{machine_line()}.\n",
                "Models: `treegram train pcfg --treebank ptb-sample/train` (mpd) and `treegram train tsg --seed 1 "
                "--treebank ptb-sample/train` (5-sample average, maxrule), trained once; each side parses the same "
                "sentences with the model's default decoder in its own process (`parse_default`, as `treegram parse`), "
                "after a warm-up sentence. sent/s = sentences per CPU second of the parse loop, median of the runs "
                "(sides alternating); F1 = labeled bracket F1 (EVALB COLLINS.prm), all lengths / <= 40 words; trees "
                "changed = outputs that differ between the sides. The pruning defaults were chosen on ptb-sample/dev; "
                "gum-const is the second split (another genre, automatic trees over gold POS). The machine was shared "
                "with other jobs (nice 10): absolute speeds are rough, the before/after ratio is within one run.\n",
                markdown_table(["model", "sentences", "n", "sent/s before", "sent/s after", "speed-up", "F1 before",
                                "F1 after", "F1<=40 before", "F1<=40 after", "trees changed", "runs"], rows)]
        write_section(SECTION, "\n".join(body))
        print(f"wrote the {SECTION} section of benchmarks/RESULTS.md")


if __name__ == "__main__":
    main()
