"""The shipped default compressor against the trained systems on broadcast-news dev (issue 24 acceptance).

    python benchmarks/bench_default_compressor.py [--system NAME=MODEL ...] [--kit DIR --kit-n 50 --kit-seed S]
        [--judged DIR] [--no-write]

- Every system compresses broadcast-news dev (lines 1001-1170 of compression/broadcast-news/input.txt, tokenized)
  with its own parser: the shipped default (`treegram.compression.default`) and each `--system` model file, at the
  model's own length (its default) and at the gold rate (one global per-word reward per system, bisection on dev
  CompR; the rate the annotators kept, averaged over the three).
- Token F1 and relational F1 (spaCy dependency triples, `treegram.compression.evaluate`) against the three
  annotators, approximate randomization (10,000 trials) of the default against every other system.
- Speed: the default model's load time in a fresh process (median of 3) and sentences per second with parsing.
- `--kit DIR`: writes a blind judging kit of `--kit-n` dev sources (../shared/judging/make_blind_compressions.py;
  every system's output and annotator 1's compression shuffled per source) with the key outside DIR (DIR.key.tsv)
  and each system's outputs (DIR.outputs/NAME.txt).
- `--judged DIR`: reads the judges' ratings (DIR/ratings-*.tsv, key DIR.key.tsv) and adds the grammaticality /
  importance table (per judge, mean, and the judges' agreement).

Writes the `compression-default` section of benchmarks/RESULTS.md.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import numpy as np  # noqa: E402
from _results import ROOT, machine_line, markdown_table, require_shared, write_section  # noqa: E402

from treegram.compression.align import load_broadcast_news  # noqa: E402
from treegram.compression.evaluate import DependencyScorer, compare_systems, score_system  # noqa: E402

DEV = slice(1000, 1170)
KIT_MAKER = ROOT.parent / "shared" / "judging" / "make_blind_compressions.py"


def load_system(spec: str):
    from treegram.compression.default import default_model, default_model_path
    from treegram.formalism import load_model

    if spec == "default":
        return default_model(), default_model_path()
    return load_model(spec), Path(spec)


def decode_all(model, sents, *, reward: float | None = None):
    """(keep masks, CPU seconds with parsing, CPU seconds decoding only)."""
    t0 = time.process_time()
    trees = [model.source_tree(s)[0] for s in sents]
    t1 = time.process_time()
    kw = {} if reward is None else {"reward": reward}
    keeps = [np.asarray(model.compress_tree(t, s, **kw).keep, bool) for t, s in zip(trees, sents)]
    t2 = time.process_time()
    return keeps, t2 - t0, t2 - t1, trees


def matched(model, trees, sents, target: float, steps: int = 13):
    """Keep masks at one global per-word reward (added to the model's default) with corpus CompR ~ target."""
    total = sum(len(s) for s in sents)
    lo, hi, best = -12.0, 12.0, None
    for _ in range(steps):
        mid = (lo + hi) / 2
        keeps = [np.asarray(model.compress_tree(t, s, reward=mid).keep, bool) for t, s in zip(trees, sents)]
        rate = 100.0 * sum(int(k.sum()) for k in keeps) / total
        if rate >= target:
            best, hi = (mid, keeps), mid
        else:
            lo = mid
    return best if best is not None else (hi, keeps)


def rate_rows(model, trees, sents, rates=(0.5, 0.6, 0.7, 0.8)) -> list[list]:
    """`--rate R` on the default, as shipped and with --strict-rate: among the sentences whose length allows R +-
    the tolerance, the share within it."""
    from treegram.compression.compressor import RATE_TOLERANCE, compress_tree, rate_window

    rows = []
    for rate in rates:
        possible, within = 0, {False: 0, True: 0}
        for t, s in zip(trees, sents):
            if not rate_window(len(s), rate, RATE_TOLERANCE):
                continue
            possible += 1
            for strict in (False, True):
                c = compress_tree(model, t, s, rate=rate, strict=strict)
                within[strict] += abs(c.rate - rate) <= RATE_TOLERANCE + 1e-9
        rows.append([rate, f"{possible}/{len(sents)}", *(f"{within[k]} ({100.0 * within[k] / max(possible, 1):.1f}%)"
                                                          for k in (False, True))])
    return rows


def load_seconds(runs: int = 3) -> float:
    code = ("import time; t=time.perf_counter(); from treegram.compression.default import default_model; "
            "default_model(); print(time.perf_counter()-t)")
    times = [float(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout)
             for _ in range(runs)]
    return statistics.median(times)


def judged_table(kit: Path) -> list[str]:
    import collections

    key = collections.defaultdict(list)
    for line in Path(str(kit) + ".key.tsv").read_text().splitlines():
        if line.strip():
            cid, lab, _src = line.split("\t")
            key[cid].append(lab)
    judges = sorted(kit.glob("ratings-*.tsv"))
    per = {}
    for f in judges:
        g, i = collections.defaultdict(list), collections.defaultdict(list)
        for line in f.read_text().splitlines():
            p = line.split("\t")
            if len(p) >= 3 and p[0] in key:
                for lab in key[p[0]]:
                    g[lab].append(float(p[1]))
                    i[lab].append(float(p[2]))
        per[f.stem.replace("ratings-", "")] = (g, i)
    labels = sorted({lab for labs in key.values() for lab in labs})
    rows = []
    for lab in labels:
        gs = [statistics.mean(per[j][0][lab]) for j in per if per[j][0][lab]]
        is_ = [statistics.mean(per[j][1][lab]) for j in per if per[j][1][lab]]
        rows.append([lab, round(statistics.mean(gs), 2), round(statistics.mean(is_), 2),
                     " / ".join(f"{x:.2f}" for x in gs), " / ".join(f"{x:.2f}" for x in is_),
                     len(per[next(iter(per))][0][lab])])
    rows.sort(key=lambda r: -r[1])
    # agreement: Pearson correlation of two judges' ratings over the same compressions
    names = list(per)
    agree = []
    if len(names) >= 2:
        ids = {}
        for j in names:
            for line in (kit / f"ratings-{j}.tsv").read_text().splitlines():
                p = line.split("\t")
                if len(p) >= 3:
                    ids.setdefault(p[0], {})[j] = (float(p[1]), float(p[2]))
        both = [v for v in ids.values() if names[0] in v and names[1] in v]
        for k, what in ((0, "grammaticality"), (1, "importance")):
            a = np.array([v[names[0]][k] for v in both])
            b = np.array([v[names[1]][k] for v in both])
            agree.append(f"{what}: r = {np.corrcoef(a, b)[0, 1]:.2f}, exact agreement {np.mean(a == b) * 100:.0f}%")
    out = [f"Blind judging, kit `{kit.name}` ({len(judges)} judges ({', '.join(names)}), {len(key)} compressions of {len({c[:-1] for c in key})} dev "
           f"sources; identical outputs shown once; 1-5 scales of Yamangil & Shieber 2010 Table 2):", "",
           markdown_table(["system", "grammaticality", "importance", "per judge G", "per judge I", "ratings per judge"],
                          rows), ""]
    if agree:
        out += [f"Agreement between {names[0]} and {names[1]} (Pearson r over the same compressions): "
                + "; ".join(agree) + ".", ""]
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--system", action="append", default=[], metavar="NAME=MODEL",
                    help="another compression model to compare (repeatable)")
    ap.add_argument("--output", action="append", default=[], metavar="NAME=FILE",
                    help="another system's dev compressions (one tokenized line per dev sentence), e.g. of a model "
                         "this checkout cannot load: scored at its own rate and put in the kit")
    ap.add_argument("--kit", type=Path, default=None, help="write a blind judging kit here")
    ap.add_argument("--kit-n", type=int, default=50)
    ap.add_argument("--kit-seed", type=int, default=2024)
    ap.add_argument("--judged", type=Path, action="append", default=[],
                    help="a judged kit to report (repeatable: e.g. a second kit with other systems and anchors)")
    ap.add_argument("--trials", type=int, default=10000)
    ap.add_argument("--no-write", action="store_true")
    args = ap.parse_args()
    shared = require_shared()
    bn = shared / "compression" / "broadcast-news"
    every = {a: load_broadcast_news(bn, a, "all") for a in (1, 2, 3)}
    sents = [p.source for p in every[1][DEV]]
    gold = [[p.keep for p in every[a][DEV]] for a in (1, 2, 3)]
    total = sum(len(s) for s in sents)
    gold_rate = float(np.mean([100.0 * sum(int(k.sum()) for k in g) / total for g in gold]))
    systems = {"default": "default"}
    for spec in args.system:
        name, _, path = spec.partition("=")
        systems[name] = path
    scorer = DependencyScorer()
    rows, matched_rows, items, mitems, outputs, speed = [], [], {}, {}, {}, {}
    for name, spec in systems.items():
        model, path = load_system(spec)
        keeps, cpu_parse, cpu_dec, trees = decode_all(model, sents)
        outputs[name] = keeps
        summ, its = score_system(sents, keeps, gold, scorer)
        items[name] = its
        speed[name] = (len(sents) / cpu_parse, len(sents) / cpu_dec)
        rows.append([name, summ["compression_rate"], summ["token_f1"], summ["rel_precision"], summ["rel_recall"],
                     summ["rel_f1"], round(speed[name][0], 1), round(Path(path).stat().st_size / 1e6, 2)])
        reward, mkeeps = matched(model, trees, sents, gold_rate)
        ms, mits = score_system(sents, mkeeps, gold, scorer)
        mitems[name] = mits
        matched_rows.append([name, round(reward, 3), ms["compression_rate"], ms["token_f1"], ms["rel_f1"]])
        print(name, rows[-1], matched_rows[-1], flush=True)
        if name == "default":
            rates = rate_rows(model, trees, sents)
    for spec in args.output:
        from treegram.compression.align import read_pairs

        name, _, path = spec.partition("=")
        with tempfile.TemporaryDirectory() as tmp:  # the dev sources beside it, without writing next to the user's file
            src_file = Path(tmp) / "source.txt"
            src_file.write_text("\n".join(" ".join(x) for x in sents) + "\n", encoding="utf-8")
            pairs = read_pairs(src_file, Path(path), text_alignment=True)
        keeps = [np.asarray(p.keep, bool) for p in pairs]
        outputs[name] = keeps
        summ, its = score_system(sents, keeps, gold, scorer)
        items[name] = its
        rows.append([name, summ["compression_rate"], summ["token_f1"], summ["rel_precision"], summ["rel_recall"],
                     summ["rel_f1"], "-", "-"])
        systems[name] = path
    sig = [[f"default vs {n}", *(f"{r[k]['difference']:+.2f} (p {r[k]['p_value']:.4f})" for k in ("token", "rel"))]
           for n in systems if n != "default" for r in [compare_systems(items["default"], items[n],
                                                                        trials=args.trials)]]
    msig = [[f"default vs {n}", *(f"{r[k]['difference']:+.2f} (p {r[k]['p_value']:.4f})" for k in ("token", "rel"))]
            for n in systems if n in mitems and n != "default"
            for r in [compare_systems(mitems["default"], mitems[n], trials=args.trials)]]
    load = load_seconds()
    if args.kit:
        args.kit.mkdir(parents=True, exist_ok=True)
        outdir = Path(str(args.kit) + ".outputs")
        outdir.mkdir(exist_ok=True)
        src = outdir / "source.txt"
        src.write_text("\n".join(" ".join(s) for s in sents) + "\n")
        files = []
        for name, keeps in list(outputs.items()) + [("human", gold[0])]:
            f = outdir / f"{name}.txt"
            f.write_text("\n".join(" ".join(w for w, k in zip(s, kk) if k) for s, kk in zip(sents, keeps)) + "\n")
            files.append(f"{name}={f}")
        subprocess.run([sys.executable, str(KIT_MAKER), str(args.kit), str(src), *files, "--n", str(args.kit_n),
                        "--seed", str(args.kit_seed)], check=True)
        (args.kit / "key.tsv").rename(Path(str(args.kit) + ".key.tsv"))
    body = ["## Compression: the shipped default against the trained systems (issue 24)", "",
            f"Broadcast-news dev (lines 1001-1170, {len(sents)} sentences, three annotators; gold rate "
            f"{gold_rate:.2f}%), every system parsing with its own parser.  RelF1: {scorer.versions}.  "
            f"{machine_line()}.", "",
            "At each system's own length (the default: its calibrated default length):", "",
            markdown_table(["system", "CompR %", "token F1", "RelP", "RelR", "RelF1", "sent/CPU-s (parse incl.)",
                            "model MB"], rows), "",
            f"At the gold rate ({gold_rate:.2f}%: one global per-word reward added to each model's default):", "",
            markdown_table(["system", "reward", "CompR %", "token F1", "RelF1"], matched_rows), "",
            f"Approximate randomization ({args.trials} trials, pooled over annotators; difference = default - other):",
            "", markdown_table(["comparison", "token F1, own rates", "RelF1, own rates"], sig), "",
            markdown_table(["comparison", "token F1, gold rate", "RelF1, gold rate"], msig), "",
            f"Default model load in a fresh process: {load:.2f} s (median of 3; spaCy's pipeline loads on the first "
            f"sentence); {speed['default'][0]:.1f} sentences per CPU-second with parsing, {speed['default'][1]:.1f} "
            "without.", "",
            "`--rate R` on the default: dev sentences within +-0.05 of R, among those whose length allows it; as "
            "shipped (the nearest length the deletion constraints allow, with a note) and with `--strict-rate` (the "
            "constraints as costs, fewest broken):", "",
            markdown_table(["rate", "possible", "within (shipped)", "within (--strict-rate)"], rates), ""]
    for kit in args.judged:
        body += judged_table(kit)
    body.append("Command: `python benchmarks/bench_default_compressor.py " + " ".join(sys.argv[1:]) + "`")
    if not args.no_write:
        write_section("compression-default", "\n".join(body))
    print("\n".join(body))
    print(json.dumps({"load_seconds": load}))


if __name__ == "__main__":
    main()
