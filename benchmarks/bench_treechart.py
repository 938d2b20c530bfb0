"""The core tree chart (treegram.charts.treechart) on STSG compression: where decoding time goes, what the rate
search and loss-augmented decoding cost, and the hash-table-backed samplers' speed.

On broadcast news (train lines 1-1000, annotator 1; dev 1001-1170), an EM model (MAP-EM, --em-iterations) is trained
on the chart's inside-outside and the dev sentences are decoded:

- chart build (rule matching, Python) vs one Viterbi pass (numba) per sentence;
- `compress` at lambda = 0 and with `--rate 0.7` (one stratified pass over the chart: the best compression of
  every length, `treegram.compression.compressor.rate_search`; before issue 24, 14 Viterbi passes);
- loss-augmented decoding for the large-margin STSG: the chart stratified by (true positives, false positives) of
  kept words against annotator 1, max over states of score + (1 - precision);
- the STSG Gibbs sampler (counts in the core hash table): ms per sweep.

    python benchmarks/bench_treechart.py [--em-iterations 10] [--sweeps 20] [--work /tmp/stsg_bench]

Uses (and creates) the parser and parse cache of bench_stsg.py in --work.  Writes the `treechart` section of
benchmarks/RESULTS.md.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import numpy as np  # noqa: E402
from _results import machine_line, markdown_table, publish, require_shared  # noqa: E402
from _stsg_experiment import foundation_parser as get_parser  # noqa: E402

from treegram.compression.align import load_broadcast_news  # noqa: E402
from treegram.plugins.stsg.train import train_stsg  # noqa: E402
from treegram.plugins.stsg.grammar import SentenceChart  # noqa: E402
from treegram.plugins.stsg.model import PairCorpus, STSGSampler  # noqa: E402
from treegram.compression.treeprep import derive_target, model_fingerprint, parse_sentences, wrap_root  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--em-iterations", type=int, default=10)
    ap.add_argument("--sweeps", type=int, default=20)
    ap.add_argument("--work", type=Path, default=Path("/tmp/stsg_bench"))
    ap.add_argument("--no-write", action="store_true", help="print only; leave RESULTS.md alone")
    args = ap.parse_args()
    shared = require_shared()
    args.work.mkdir(parents=True, exist_ok=True)
    parser, parser_path = get_parser(shared, args.work)
    pairs = load_broadcast_news(shared / "compression" / "broadcast-news", 1, "all")
    trees, _ = parse_sentences([p.source for p in pairs], parser, parser_id=model_fingerprint(parser_path),
                               cache_dir=args.work / "cache")
    sources = [wrap_root(t) for t in trees]
    train = pairs[:1000]
    corpus = PairCorpus(sources[:1000], [derive_target(s, p.keep) for s, p in zip(sources[:1000], train)],
                        [p.keep for p in train])
    dev, dev_pairs = sources[1000:], pairs[1000:]

    t0 = time.perf_counter()
    model = train_stsg(train, parser, method="em", iterations=args.em_iterations, corpus=corpus)
    em_s = time.perf_counter() - t0
    g = model.grammar
    g.chart(dev[0]).decode(0.0)  # compile

    build_s = vit_s = rate_s = strat_s = 0.0
    apps = words = 0
    max_states = 0
    agree = 0
    for tree, pair in zip(dev, dev_pairs):
        t0 = time.perf_counter()
        sc = SentenceChart(g, tree)
        t1 = time.perf_counter()
        _, keep, _ = sc.decode(0.0)
        t2 = time.perf_counter()
        g.compress(tree, pair.source, rate=0.7)
        t3 = time.perf_counter()
        n = sc.n_words
        gold = np.asarray(pair.keep, dtype=bool)
        strat = sc.chart.stratified_viterbi(sc.word_increments(gold), (n, n))
        root = sc.cats[tree.label]
        table = strat.root_scores(0, root)
        tp, fp = np.indices(table.shape)
        loss = 1.0 - np.where(tp + fp > 0, tp / np.maximum(tp + fp, 1), 0.0)
        state = np.unravel_index(int(np.argmax(table + loss)), table.shape)
        sc.output(strat.derivation(0, root, state))
        t4 = time.perf_counter()
        # without the loss the stratified chart's best is the plain Viterbi score
        agree += bool(np.isclose(np.max(table), sc.decode(0.0)[2]))
        build_s += t1 - t0
        vit_s += t2 - t1
        rate_s += t3 - t2
        strat_s += t4 - t3
        apps += len(sc.chart)
        words += n
        max_states = max(max_states, int(np.isfinite(table).sum()))
    m = len(dev)

    sampler = STSGSampler(corpus, seed=0)
    rng = np.random.default_rng(0)
    order = np.arange(sampler.num_sites())
    sampler.sweep(order, rng, 1.0)  # compile
    t0 = time.perf_counter()
    for _ in range(args.sweeps):
        rng.shuffle(order)
        sampler.sweep(order, rng, 1.0)
    sweep_ms = (time.perf_counter() - t0) / args.sweeps * 1000

    rows = [
        ["chart build (rule matching)", f"{build_s / m * 1000:.2f}", f"{m / build_s:.1f}"],
        ["one Viterbi pass + output", f"{vit_s / m * 1000:.2f}", f"{m / vit_s:.1f}"],
        ["compress, lambda = 0 (build + Viterbi)", f"{(build_s + vit_s) / m * 1000:.2f}",
         f"{m / (build_s + vit_s):.1f}"],
        ["compress --rate 0.7 (build + stratified length chart)", f"{rate_s / m * 1000:.2f}", f"{m / rate_s:.1f}"],
        ["loss-augmented (tp, fp)-stratified max (chart built)", f"{strat_s / m * 1000:.2f}", f"{m / strat_s:.1f}"],
    ]
    body = "\n".join([
        "## treechart",
        "",
        f"The core tree chart on STSG compression: broadcast news train 1-1000 (annotator 1), MAP-EM "
        f"{args.em_iterations} iterations on the chart's inside-outside ({em_s:.1f} s including rule extraction, "
        f"{model.grammar.num_rules()} rules), {m} dev sentences ({words / m:.1f} words, {apps / m:.0f} rule "
        f"applications per sentence on average). {machine_line()}.",
        "",
        markdown_table(["per dev sentence", "ms", "sentences/s"], rows),
        "",
        f"Loss-augmented decoding: items split by (true positives, false positives) of kept words against annotator 1; "
        f"at most {max_states} reachable root states; without the loss the stratified maximum equals the Viterbi "
        f"score on {agree}/{m} sentences. STSG Gibbs sampler (core hash table): {sweep_ms:.0f} ms per sweep over "
        f"{sampler.num_sites()} sites at T = 1 ({args.sweeps} sweeps).",
        "",
        f"Command: `python benchmarks/bench_treechart.py --em-iterations {args.em_iterations} --sweeps {args.sweeps}`",
    ])
    publish("treechart", body, not args.no_write)


if __name__ == "__main__":
    main()
