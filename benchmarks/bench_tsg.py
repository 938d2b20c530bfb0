"""TSG (issue 3): accuracy of PCFG vs TSG (Gibbs, blocked) on ptb-sample dev, grammar size, sampler and parser
speed, log-likelihood per iteration (table + SVG plot), all measured in one run.

    python benchmarks/bench_tsg.py [--gibbs-iterations 100] [--blocked-iterations 20] [--quick] [--dev-limit N]

Writes the `tsg` section of benchmarks/RESULTS.md and benchmarks/tsg_loglik.svg.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _results import ROOT, machine_line, markdown_table, require_shared, write_section  # noqa: E402

import numpy as np  # noqa: E402

from treegram.errors import ParseFailure  # noqa: E402
from treegram.evaluation.parseval import ParsevalParams, score_corpus  # noqa: E402
from treegram.formalism import flat_fallback  # noqa: E402
from treegram.grammar.pcfg import PCFGModel, PCFGSettings  # noqa: E402
from treegram.io import atomic_write_text  # noqa: E402
from treegram.trees import read_treebank  # noqa: E402

from treegram.elementary.data import TSGSettings, prepare  # noqa: E402
from treegram.elementary.gibbs import GibbsTSG  # noqa: E402
from treegram.formalism import RunOptions  # noqa: E402
from treegram.plugins.tsg.formalism import TSGOptions  # noqa: E402
from treegram.plugins.tsg.formalism import train_tsg  # noqa: E402

SVG = ROOT / "benchmarks" / "tsg_loglik.svg"


def parse_all(model, sentences):
    trees, failed = [], 0
    model.parse(sentences[0])  # warm-up (numba compile / cache load) outside the timing
    start = time.perf_counter()
    for tokens in sentences:
        try:
            trees.append(model.parse(tokens))
        except ParseFailure:
            trees.append(flat_fallback(tokens))
            failed += 1
    return trees, failed, time.perf_counter() - start


def score(dev, trees):
    return score_corpus(dev, trees, ParsevalParams()).f1, score_corpus(dev, trees, ParsevalParams(max_length=40)).f1


def svg_plot(series: dict[str, list[float]], path: Path, title: str) -> None:
    """A plain polyline SVG: x = iteration, y = log-likelihood (one line per series)."""
    w, h, ml, mr, mt, mb = 720, 420, 90, 160, 40, 50
    xs_max = max(len(v) for v in series.values())
    ys = [y for v in series.values() for y in v]
    y_lo, y_hi = min(ys), max(ys)
    pad = 0.05 * (y_hi - y_lo or 1.0)
    y_lo, y_hi = y_lo - pad, y_hi + pad

    def px(i):
        return ml + (w - ml - mr) * (i / max(1, xs_max - 1))

    def py(y):
        return mt + (h - mt - mb) * (1 - (y - y_lo) / (y_hi - y_lo))

    colors = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd"]
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" font-family="sans-serif" '
           f'font-size="12">', f'<rect width="{w}" height="{h}" fill="white"/>',
           f'<text x="{w / 2}" y="22" text-anchor="middle" font-size="14">{title}</text>',
           f'<line x1="{ml}" y1="{h - mb}" x2="{w - mr}" y2="{h - mb}" stroke="black"/>',
           f'<line x1="{ml}" y1="{mt}" x2="{ml}" y2="{h - mb}" stroke="black"/>',
           f'<text x="{(ml + w - mr) / 2}" y="{h - 12}" text-anchor="middle">iteration</text>',
           f'<text x="18" y="{(mt + h - mb) / 2}" text-anchor="middle" transform="rotate(-90 18 '
           f'{(mt + h - mb) / 2})">log-likelihood</text>']
    for k in range(5):
        y = y_lo + (y_hi - y_lo) * k / 4
        out.append(f'<line x1="{ml - 4}" y1="{py(y):.1f}" x2="{ml}" y2="{py(y):.1f}" stroke="black"/>')
        out.append(f'<text x="{ml - 6}" y="{py(y) + 4:.1f}" text-anchor="end">{y:.0f}</text>')
    for k in range(6):
        i = round((xs_max - 1) * k / 5)
        out.append(f'<text x="{px(i):.1f}" y="{h - mb + 16}" text-anchor="middle">{i + 1}</text>')
    for n, (name, values) in enumerate(series.items()):
        c = colors[n % len(colors)]
        pts = " ".join(f"{px(i):.1f},{py(v):.1f}" for i, v in enumerate(values))
        out.append(f'<polyline fill="none" stroke="{c}" stroke-width="2" points="{pts}"/>')
        out.append(f'<line x1="{w - mr + 10}" y1="{mt + 20 * n + 6}" x2="{w - mr + 30}" y2="{mt + 20 * n + 6}" '
                   f'stroke="{c}" stroke-width="2"/>')
        out.append(f'<text x="{w - mr + 35}" y="{mt + 20 * n + 10}">{name}</text>')
    out.append("</svg>")
    atomic_write_text(path, "\n".join(out) + "\n")


def gibbs_kernel_speed(train, settings, sweeps=3):
    """Sites/s of the Gibbs kernel alone (fixed hyperparameters, table rebuild excluded), median of `sweeps`."""
    import attrs

    fixed = attrs.evolve(settings, resample_alpha=False, resample_beta=False)
    data, _ = prepare(train, fixed)
    state = GibbsTSG(data, fixed, 0)
    rng = np.random.default_rng(0)
    times = []
    for _ in range(sweeps + 1):
        order = rng.permutation(state.num_sites())
        state.rebuild()
        u = rng.random(len(order))
        t0 = time.perf_counter()
        state._kernel(data.sites[order], u, 1.0)
        times.append(time.perf_counter() - t0)
    t = float(np.median(times[1:]))
    return state.num_sites(), t


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--gibbs-iterations", type=int, default=100)
    ap.add_argument("--blocked-iterations", type=int, default=20)
    ap.add_argument("--horizontal", type=int, default=1)
    ap.add_argument("--vertical", type=int, default=2)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--quick", action="store_true", help="10 Gibbs and 3 blocked iterations")
    ap.add_argument("--dev-limit", type=int, default=None, help="parse only the first N dev sentences")
    args = ap.parse_args()
    if args.quick:
        args.gibbs_iterations, args.blocked_iterations = 10, 3
    shared = require_shared()
    train = list(read_treebank([shared / "ptb-sample" / "train"]))
    dev = list(read_treebank([shared / "ptb-sample" / "dev"]))[: args.dev_limit]
    sentences = [t.leaves() for t in dev]
    words = sum(map(len, sentences))
    print(f"train {len(train)} trees, dev {len(dev)} trees ({words} words)", flush=True)

    acc_rows, size_rows, speed_rows = [], [], []
    pcfg_best = None
    for name, ps in [("PCFG h=2 v=2", PCFGSettings(horizontal=2, vertical=2)),
                     ("PCFG h=1 v=2", PCFGSettings(horizontal=1, vertical=2))]:
        t0 = time.perf_counter()
        model = PCFGModel.train(train, ps)
        train_s = time.perf_counter() - t0
        trees, failed, parse_s = parse_all(model, sentences)
        f1, f1_40 = score(dev, trees)
        acc_rows.append([name, round(f1, 2), round(f1_40, 2), failed, round(train_s, 1), round(len(dev) / parse_s, 2)])
        pcfg_best = f1 if pcfg_best is None else max(pcfg_best, f1)
        print(acc_rows[-1], flush=True)

    settings = TSGSettings(horizontal=args.horizontal, vertical=args.vertical)
    # the final sample parsed with Viterbi MPD (this benchmark's setting, not the shipped averaging and maxrule)
    options = TSGOptions(horizontal=args.horizontal, vertical=args.vertical, average=1, decoder="mpd")
    traces = {}
    for sampler, iters in (("gibbs", args.gibbs_iterations), ("blocked", args.blocked_iterations)):
        t0 = time.perf_counter()
        model = train_tsg(train, options, RunOptions(move=sampler, iterations=iters, seed=args.seed),
                          callback=lambda r: print(sampler, r["sweep"], round(r["log_likelihood"], 1),
                                                   r.get("types"), round(r["seconds"], 2), flush=True))
        train_s = time.perf_counter() - t0
        trees, failed, parse_s = parse_all(model, sentences)
        f1, f1_40 = score(dev, trees)
        name = f"TSG {sampler} ({iters} it.)"
        acc_rows.append([name, round(f1, 2), round(f1_40, 2), failed, round(train_s, 1), round(len(dev) / parse_s, 2)])
        print(acc_rows[-1], flush=True)
        info = model.info
        size_rows.append([name, info["elementary_trees"], info["elementary_trees_count_gt1"],
                          info["frac_lexicalized_count_gt1"], info["frac_deeper_than_1_count_gt1"],
                          model.cfg.num_symbols, model.cfg.num_rules])
        secs = [r["seconds"] for r in model.trace]
        units = model.trace[0]["sites"] if sampler == "gibbs" else model.trace[0]["items"]
        med = float(np.median(secs))
        rate = f"{units / med:,.0f} sites/s" if sampler == "gibbs" else f"{units / med:,.1f} trees/s"
        extra = (f"changed {np.mean([r['changed_rate'] for r in model.trace]):.3f}/site" if sampler == "gibbs"
                 else f"acceptance {np.mean([r['acceptance_rate'] for r in model.trace]):.3f}")
        speed_rows.append([f"{sampler} sweep (incl. table rebuild + hyperparameter slice sampling)", units,
                           round(med, 2), rate, extra])
        traces[sampler] = model.trace

    n_sites, kernel_s = gibbs_kernel_speed(train, settings)
    speed_rows.insert(0, ["gibbs kernel only (fixed hyperparameters)", n_sites, round(kernel_s, 3),
                          f"{n_sites / kernel_s:,.0f} sites/s", ""])
    svg_plot({f"Gibbs": [r["log_likelihood"] for r in traces["gibbs"]],
              f"blocked MH": [r["log_likelihood"] for r in traces["blocked"]]}, SVG,
             "TSG collapsed log-likelihood on ptb-sample/train")
    ll_rows = []
    for i in range(max(len(t) for t in traces.values())):
        g = traces["gibbs"][i] if i < len(traces["gibbs"]) else None
        b = traces["blocked"][i] if i < len(traces["blocked"]) else None
        if i < 10 or (i + 1) % 10 == 0 or i == len(traces["gibbs"]) - 1:
            ll_rows.append([i + 1, round(g["log_likelihood"], 1) if g else "", g.get("types", "") if g else "",
                            round(b["log_likelihood"], 1) if b else "", b.get("types", "") if b else ""])

    best_tsg = max(r[1] for r in acc_rows if r[0].startswith("TSG"))
    body = [
        "## TSG (issue 3)\n",
        f"`python benchmarks/bench_tsg.py --gibbs-iterations {args.gibbs_iterations} --blocked-iterations "
        f"{args.blocked_iterations}` — {machine_line()}.\n",
        f"Train: ptb-sample/train ({len(train):,} trees); test: ptb-sample/dev ({len(dev)} sentences, all lengths); "
        "EVALB-compatible F1 (COLLINS.prm). TSG trees are binarized head-outward with "
        f"h={args.horizontal}, v={args.vertical} (parent annotation), rare words (< 2) as signatures; DP per label, "
        "base = treebank PCFG x per-label stop probabilities; alpha_c and beta_c slice-sampled every sweep; random "
        f"initial cuts (p=0.5); seed {args.seed}; final sample only. Parsing: Goodman transform of the final "
        "elementary trees (count >= 1) + base PCFG rules, Viterbi (most probable derivation) with PCFG "
        "coarse-to-fine pruning (posterior >= 1e-5). Parse speed = sentences/s on one core after warm-up.\n",
        markdown_table(["model", "F1 all", "F1 <=40", "failed", "train s", "sent/s"], acc_rows),
        f"\nBest TSG F1 - best PCFG F1 = **{best_tsg - pcfg_best:+.2f}** (acceptance: >= +4).\n",
        "**Grammar size** (final sample; depth counted in unbinarized CFG levels, `@` nodes add none):\n",
        markdown_table(["model", "elementary trees", "count > 1", "lexicalized (count > 1)",
                        "deeper than 1 (count > 1)", "CFG symbols", "CFG rules"], size_rows),
        "\n**Sampler speed** (median seconds per sweep over the run):\n",
        markdown_table(["what", "sites / trees", "seconds", "rate", ""], speed_rows),
        "\n**Log-likelihood per iteration** (exact collapsed joint after the sweep; plot: "
        "[`tsg_loglik.svg`](tsg_loglik.svg)):\n",
        markdown_table(["iteration", "Gibbs LL", "Gibbs types", "blocked LL", "blocked types"], ll_rows),
    ]
    write_section("tsg", "\n".join(body))
    print("wrote benchmarks/RESULTS.md and", SVG)


if __name__ == "__main__":
    main()
