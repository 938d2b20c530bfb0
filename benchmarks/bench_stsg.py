"""STSG sentence compression on broadcast news (train lines 1-1000, dev 1001-1170): Gibbs-sampled Bayesian STSG (GS)
against MAP-EM and VB over a fixed extracted grammar and the keep-everything baseline, all decoded by the same
Viterbi decoder over PCFG parses; compression rate, token F1 and relational F1 (spaCy dependency triples) averaged
over the three annotators, approximate-randomization p-values, grammar sizes, training time, compression throughput,
and a convergence plot of the annealed sampler (benchmarks/stsg_convergence.svg).

    python benchmarks/bench_stsg.py [--iterations 5000] [--train-annotators 1] [--quick] [--work /tmp/stsg_bench]

The parser (PCFG h=2 v=2 on ptb-sample train + gum-const) and the source parses are cached in --work.
Writes the `stsg` section of benchmarks/RESULTS.md.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import numpy as np  # noqa: E402
from _results import ROOT, machine_line, markdown_table, require_shared, write_section  # noqa: E402

from treegram.formalism import load_model  # noqa: E402
from treegram.plugins.stsg.compressor import STSGModel
from treegram.plugins.stsg.train import train_stsg  # noqa: E402
from treegram.compression.evaluate import DependencyScorer, compare_systems, score_system  # noqa: E402
from _stsg_experiment import load_experiment  # noqa: E402


def svg_plot(trace: list[dict], path: Path) -> None:
    """Log joint and temperature per sweep, as a hand-written SVG line chart."""
    w, h, pad = 640, 300, 50
    xs = np.array([r["sweep"] for r in trace], dtype=float)
    ys = np.array([r["log_likelihood"] for r in trace], dtype=float)
    ts = np.array([r["temperature"] for r in trace], dtype=float)
    lo, hi = ys.min(), ys.max()

    def sx(x):
        return pad + (x - xs.min()) / max(1.0, xs.max() - xs.min()) * (w - 2 * pad)

    def sy(y, a, b):
        return h - pad - (y - a) / max(1e-9, b - a) * (h - 2 * pad)

    step = max(1, len(xs) // 600)
    ll = " ".join(f"{sx(x):.1f},{sy(y, lo, hi):.1f}" for x, y in zip(xs[::step], ys[::step]))
    tt = " ".join(f"{sx(x):.1f},{sy(t, 0, 5):.1f}" for x, t in zip(xs[::step], ts[::step]))
    svg = f"""<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" font-family="sans-serif" font-size="11">
<rect width="{w}" height="{h}" fill="white"/>
<line x1="{pad}" y1="{h - pad}" x2="{w - pad}" y2="{h - pad}" stroke="black"/>
<line x1="{pad}" y1="{pad}" x2="{pad}" y2="{h - pad}" stroke="black"/>
<polyline points="{ll}" fill="none" stroke="#1f77b4" stroke-width="1.5"/>
<polyline points="{tt}" fill="none" stroke="#d62728" stroke-width="1" stroke-dasharray="4,3"/>
<text x="{pad}" y="{pad - 10}">STSG Gibbs sampler on broadcast news train: log joint (blue, left) and temperature (red dashed, 0-5)</text>
<text x="{pad - 5}" y="{pad + 4}" text-anchor="end">{hi:.0f}</text>
<text x="{pad - 5}" y="{h - pad}" text-anchor="end">{lo:.0f}</text>
<text x="{w - pad}" y="{h - pad + 15}" text-anchor="end">sweep {int(xs.max())}</text>
<text x="{pad}" y="{h - pad + 15}">1</text>
</svg>
"""
    path.write_text(svg, encoding="utf-8")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--iterations", type=int, default=5000)
    ap.add_argument("--em-iterations", type=int, default=30)
    ap.add_argument("--train-annotators", default="1", help="annotators whose pairs train the models, e.g. 1 or 123")
    ap.add_argument("--alpha", type=float, default=100.0)
    ap.add_argument("--beta", type=float, default=0.1)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--quick", action="store_true", help="200 sweeps, 10 EM iterations; no RESULTS.md update")
    ap.add_argument("--work", type=Path, default=Path("/tmp/stsg_bench"))
    ap.add_argument("--reuse", action="store_true", help="load the models saved in --work by a previous run")
    args = ap.parse_args()
    if args.quick:
        args.iterations, args.em_iterations = 200, 10
    shared = require_shared()
    args.work.mkdir(parents=True, exist_ok=True)
    ex = load_experiment(shared, args.work, train_annotators=args.train_annotators)
    parser, every, parse_counts = ex.parser, ex.every, ex.parse_counts
    train_pairs = ex.train_pairs
    corpus = ex.corpus(beta=args.beta)
    dev_src, dev_tokens, gold = ex.dev_src, ex.dev_tokens, ex.gold

    systems: dict[str, dict] = {}
    trace_gs = None
    for method in ("gibbs", "em", "vb"):
        saved = args.work / f"{method}-{args.iterations}-{args.train_annotators}-{args.seed}.model"
        t0 = time.perf_counter()
        if args.reuse and saved.exists():
            model = load_model(saved)
        else:
            model = train_stsg(train_pairs, parser, method=method,
                           iterations=args.iterations if method == "gibbs" else args.em_iterations,
                           alpha=args.alpha, beta=args.beta, seed=args.seed, corpus=corpus,
                           callback=(lambda r: print(f"  sweep {r['sweep']} T={r['temperature']:.2f} "
                                                     f"logp={r['log_likelihood']:.0f} rules={r['rules']}",
                                                     file=sys.stderr) if r["sweep"] % 250 == 0 else None))
            model.save(saved)
        train_s = model.info.get("training_seconds", time.perf_counter() - t0)
        if method == "gibbs":
            trace_gs = model.info["trace"]
        t0 = time.perf_counter()
        outs = [model.compress_tree(t, toks) for t, toks in zip(dev_src, dev_tokens)]
        decode_s = time.perf_counter() - t0
        name = {"gibbs": "GS", "em": "EM", "vb": "VB"}[method]
        systems[name] = {"keeps": [o.keep for o in outs], "train_s": train_s, "decode_s": decode_s,
                         "rules": model.grammar.num_rules(), "model": model}
        print(f"{name}: trained in {train_s:.1f}s, {systems[name]['rules']} rules, decoded dev in {decode_s:.1f}s",
              file=sys.stderr)
    systems["keep-all"] = {"keeps": [np.ones(len(s), bool) for s in dev_tokens], "train_s": 0.0, "decode_s": 0.0,
                           "rules": 0}

    # throughput including parsing: re-parse the dev sentences (no cache) with the GS model's embedded parser
    gs_model: STSGModel = systems["GS"]["model"]
    t0 = time.perf_counter()
    for toks in dev_tokens:
        tree, _ = gs_model.source_tree(toks)
    parse_s = time.perf_counter() - t0

    scorer = DependencyScorer()
    results, items = {}, {}
    for name, s in systems.items():
        results[name], items[name] = score_system(dev_tokens, s["keeps"], gold, scorer)
    gold_rows = []
    for a in (1, 2, 3):
        others = [g for b, g in zip((1, 2, 3), gold) if b != a]
        gs, _ = score_system(dev_tokens, gold[a - 1], others, scorer)
        gold_rows.append(gs)
    # the length trade-off (cf. the paper's Figure 3): per-word reward lambda added to every kept word
    curve = []
    for name in ("GS", "EM", "VB"):
        m = systems[name]["model"]
        for reward in (-1.0, 0.0, 0.5, 1.0, 2.0):
            keeps = [m.compress_tree(t, toks, reward=reward).keep for t, toks in zip(dev_src, dev_tokens)]
            r, _ = score_system(dev_tokens, keeps, gold, scorer)
            curve.append([name, reward, r["compression_rate"], r["token_f1"], r["rel_precision"], r["rel_recall"],
                          r["rel_f1"]])
    def at_rate(name, rate):  # RelF1 of a system's lambda curve linearly interpolated at a compression rate
        pts = sorted((r[2], r[6]) for r in curve if r[0] == name)
        return float(np.interp(rate, [p[0] for p in pts], [p[1] for p in pts]))

    gs_rate = results["GS"]["compression_rate"]
    matched = {n: at_rate(n, gs_rate) for n in ("EM", "VB")}
    from treegram.compression.align import alignment_report, load_google_eval, load_google_slahan

    google = shared / "compression" / "google"
    corpora_rows = []
    for label, pairs in [(f"broadcast news, annotator {a}", every[a]) for a in (1, 2, 3)] + [
            ("google slahan-1000", load_google_slahan(google / "slahan-1000")),
            ("google eval-10k (re-aligned text)", load_google_eval(google / "eval-10k"))]:
        rep = alignment_report(pairs)
        corpora_rows.append([label, rep["pairs"], rep["pure_deletion"], rep["non_deletion"], rep["compression_rate"]])
    sig = {f"GS vs {n}": compare_systems(items["GS"], items[n], trials=10000, seed=0)
           for n in ("EM", "VB", "keep-all")}

    rows = []
    for name in ("GS", "EM", "VB", "keep-all"):
        r = results[name]
        s = systems[name]
        rows.append([name, r["compression_rate"], r["token_f1"], r["rel_precision"], r["rel_recall"], r["rel_f1"],
                     s["rules"] or "-", f"{s['train_s']:.0f}" if s["train_s"] else "-"])
    gold_rate = np.mean([100.0 * sum(int(np.sum(k)) for k in g) / sum(len(t) for t in dev_tokens) for g in gold])
    human = np.mean([g["rel_f1"] for g in gold_rows])
    body = [
        f"Broadcast news (Clarke & Lapata), train lines 1-1000 (annotator(s) {args.train_annotators}), dev lines "
        f"1001-1170 scored against all three annotators (mean of per-annotator scores). Sources parsed by the "
        f"foundation PCFG (h=2 v=2, ptb-sample train + gum-const; {parse_counts['ok']} parsed, "
        f"{parse_counts['failed'] + parse_counts['too_long']} flat fallback), target trees derived from the source "
        f"parse. GS: alpha={args.alpha:g}, beta={args.beta:g}, {args.iterations} sweeps annealed T 5 -> 0 "
        f"linearly, MAP state, Laplace smoothing, seed {args.seed}. EM: MAP-EM alpha=1.0001, delta=1.01, "
        f"{args.em_iterations} iterations over minimal + composed (count >= 2, <= 3 variables) rules. VB: digamma "
        f"update with the same DP prior (alpha={args.alpha:g}). RelF1: spaCy {scorer.versions['spacy']} "
        f"{scorer.versions['pipeline']} dependency triples without punctuation (proxy for Stanford GRs). "
        f"{machine_line()}.",
        "",
        markdown_table(["system", "CompR %", "token F1", "RelP", "RelR", "RelF1", "rules (count > 0)",
                        "train s"], rows),
        "",
        f"Gold compression rate {gold_rate:.2f}%; one annotator against the other two: RelF1 {human:.2f}.",
        "",
        "Approximate randomization (10,000 trials, counts pooled over the three annotators):",
        "",
        markdown_table(["comparison", "token F1 diff", "p", "RelF1 diff", "p"],
                       [[k, v["token"]["difference"], f"{v['token']['p_value']:.4f}", v["rel"]["difference"],
                         f"{v['rel']['p_value']:.4f}"] for k, v in sig.items()]),
        "",
        f"Speed: GS {args.iterations} sweeps over {len(corpus.sites)} sites in {systems['GS']['train_s']:.0f} s "
        f"({systems['GS']['train_s'] / args.iterations * 1000:.0f} ms/sweep, numba); compression of the "
        f"{len(dev_tokens)} dev sentences: {len(dev_tokens) / systems['GS']['decode_s']:.1f} sentences/s parse "
        f"excluded, {len(dev_tokens) / (systems['GS']['decode_s'] + parse_s):.1f} sentences/s parse included "
        f"(PCFG parsing {len(dev_tokens) / parse_s:.1f} sentences/s).",
        "",
        "Length trade-off on dev (per-word reward lambda, log scale; 0 = the table above):",
        "",
        markdown_table(["system", "lambda", "CompR %", "token F1", "RelP", "RelR", "RelF1"], curve),
        "",
        f"At GS's compression rate ({gs_rate:.2f}%), RelF1 interpolated on the lambda curves: EM "
        f"{matched['EM']:.2f}, VB {matched['VB']:.2f} (GS {results['GS']['rel_f1']:.2f}). The proxy RelF1 rewards "
        f"length on this corpus (keep-all scores highest), so part of GS's lead over EM at lambda = 0 comes from "
        f"compressing less.",
        "",
        "Deletion alignment of the pair corpora (LCS; eval-10k compressions re-aligned from differently tokenized "
        "text):",
        "",
        markdown_table(["corpus", "pairs", "pure deletions", "non-deletion", "gold CompR %"], corpora_rows),
        "",
        "Convergence of the annealed sampler: benchmarks/stsg_convergence.svg.",
        "",
        "Command: `python benchmarks/bench_stsg.py" + (f" --iterations {args.iterations}"
                                                       if args.iterations != 5000 else "") + "`",
    ]
    text = "\n".join(body)
    print(text)
    if trace_gs and not args.quick:
        svg_plot(trace_gs, ROOT / "benchmarks" / "stsg_convergence.svg")
        write_section("stsg", "## stsg\n\n" + text)


if __name__ == "__main__":
    main()
