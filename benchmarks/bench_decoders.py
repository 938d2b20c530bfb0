"""Decoders (issue 11 item 2): TSG and TIG dev F1 with each core decoder on the same grammar, in one run.

    nice -n 10 python benchmarks/bench_decoders.py [--gibbs-iterations 30] [--mh-iterations 1] [--samples 100]
        [--tig-variant tig] [--dev-limit N] [--tig-dev-limit N] [--no-tig] [--no-write]

The TSG is the final sample of `--gibbs-iterations` collapsed Gibbs sweeps (seed 1) on ptb-sample/train; the TIG
starts from that sample and runs `--mh-iterations` blocked MH sweeps (as in bench_tig.py).  Every decoder
registered through `register_decoders` (mpd, mpp, maxrule, maxrule-sum) parses ptb-sample/dev with the same
grammar; F1 all / <= 40, sentences/s, samples drawn (mpp).  Writes the `decoders` section of RESULTS.md.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _results import machine_line, markdown_table, require_shared, write_section  # noqa: E402

from treegram.bayes import BlockedMH, GibbsSampler  # noqa: E402
from treegram.charts.decoders import get_decoder  # noqa: E402
from treegram.errors import ParseFailure  # noqa: E402
from treegram.evaluation.parseval import ParsevalParams, score_corpus  # noqa: E402
from treegram.evaluation.significance import (  # noqa: E402
    approximate_randomization, paired_parseval_counts, parseval_f1,
)
from treegram.formalism import flat_fallback  # noqa: E402
from treegram.grammar.pcfg import PCFGModel, PCFGSettings  # noqa: E402
from treegram.plugin_manager import decoders  # noqa: E402
from treegram.trees import read_treebank  # noqa: E402

from treegram.plugins.tig.derivation import TIGSettings  # noqa: E402
from treegram.plugins.tig.sampler import BlockedTIG  # noqa: E402
from treegram.plugins.tig.formalism import TIGOptions  # noqa: E402
from treegram.plugins.tig.train import extract_model as tig_extract  # noqa: E402
from treegram.elementary import GibbsTSG, TSGSettings, prepare  # noqa: E402
from treegram.formalism import RunOptions  # noqa: E402
from treegram.plugins.tsg.formalism import TSGOptions  # noqa: E402
from treegram.plugins.tsg.train import extract_model as tsg_extract  # noqa: E402


def parse_with(model, decoder, sentences, samples, clock=time.perf_counter):
    """(trees, parse failures given the flat fallback, seconds on `clock`) of `sentences` with `decoder`."""
    d = get_decoder(decoder)
    n = samples if d.uses_samples else None
    d.decode(model, sentences[0], samples=n)  # warm-up (numba compile / cache load) outside the timing
    trees, failed = [], 0
    start = clock()
    for tokens in sentences:
        try:
            trees.append(d.decode(model, tokens, samples=n))
        except ParseFailure:
            trees.append(flat_fallback(tokens))
            failed += 1
    return trees, failed, clock() - start


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--gibbs-iterations", type=int, default=30)
    ap.add_argument("--mh-iterations", type=int, default=1)
    ap.add_argument("--samples", type=int, default=100, help="derivations sampled per sentence by mpp")
    ap.add_argument("--tig-variant", default="tig", choices=["tig", "tig0"])
    ap.add_argument("--dev-limit", type=int, default=None)
    ap.add_argument("--tig-dev-limit", type=int, default=None, help="parse only the first N dev sentences with TIG")
    ap.add_argument("--no-tig", action="store_true")
    ap.add_argument("--decoders", default=None, help="comma-separated (default: every registered decoder)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--no-write", action="store_true")
    args = ap.parse_args()
    shared = require_shared()
    train = list(read_treebank([shared / "ptb-sample" / "train"]))
    dev = list(read_treebank([shared / "ptb-sample" / "dev"]))[: args.dev_limit]
    names = args.decoders.split(",") if args.decoders else sorted(decoders(), key=lambda k: (k != "mpd", k))
    print(f"train {len(train)} trees, dev {len(dev)} sentences; decoders {names}", flush=True)

    hv = {"horizontal": 1, "vertical": 2}
    tsg_settings = TSGSettings(**hv)
    pcfg = PCFGModel.train(train, PCFGSettings(**hv, rare_threshold=2))
    data, _ = prepare(train, tsg_settings, pcfg.mapper)
    t0 = time.perf_counter()
    gibbs = GibbsTSG(data, tsg_settings, args.seed)
    trace = GibbsSampler(gibbs, seed=args.seed).run(args.gibbs_iterations)
    gibbs_s = time.perf_counter() - t0
    print(f"TSG Gibbs {args.gibbs_iterations} sweeps: {gibbs_s:.1f}s", flush=True)
    # decoder "mpd": the model records no other default (every row names its decoder)
    models = [("TSG", tsg_extract(gibbs, pcfg, tsg_settings, TSGOptions(decoder="mpd"),
                                  RunOptions(move="gibbs", iterations=args.gibbs_iterations, seed=args.seed), trace,
                                  {}), dev)]
    tig_s = None
    if not args.no_tig:
        settings = TIGSettings(variant=args.tig_variant, **hv)
        st = BlockedTIG(data, settings, args.seed, init_sub=gibbs.state_dict()["flags"])
        st.hyper.beta[:] = gibbs.beta
        st.hyper.alpha[:] = gibbs.alpha[None, :]
        st.rebuild()
        t0 = time.perf_counter()
        tr = BlockedMH(st, seed=args.seed).run(args.mh_iterations)
        tig_s = time.perf_counter() - t0
        print(f"TIG {args.mh_iterations} MH sweeps: {tig_s:.1f}s", flush=True)
        models.append((args.tig_variant.upper(),
                       tig_extract(st, pcfg, settings, TIGOptions(), RunOptions(iterations=args.mh_iterations, seed=args.seed),
                                   tr, {}),
                       dev[: args.tig_dev_limit]))

    rows, signif = [], []
    for mname, model, gold in models:
        sentences = [t.leaves() for t in gold]
        results = {}
        for dname in names:
            trees, failed, secs = parse_with(model, dname, sentences, args.samples)
            res = score_corpus(gold, trees, ParsevalParams())
            results[dname] = res
            f1_40 = score_corpus(gold, trees, ParsevalParams(max_length=40)).f1
            used = args.samples if get_decoder(dname).uses_samples else "-"
            rows.append([mname, dname, len(gold), round(res.f1, 2), round(f1_40, 2), failed,
                         round(len(gold) / secs, 2), used])
            print(rows[-1], flush=True)
        for dname in names:
            if dname == "mpd":
                continue
            ca, cb = paired_parseval_counts(results[dname], results["mpd"])
            r = approximate_randomization(ca, cb, metric=parseval_f1, trials=10000, rng=args.seed)
            signif.append([mname, f"{dname} - mpd", round(r.difference, 2), f"{r.p_value:.4f}"])
            print("significance", signif[-1], flush=True)
    if args.no_write:
        return
    cmd = (f"nice -n 10 python benchmarks/bench_decoders.py --gibbs-iterations {args.gibbs_iterations} "
           f"--mh-iterations {args.mh_iterations} --samples {args.samples} --tig-variant {args.tig_variant}"
           + (f" --dev-limit {args.dev_limit}" if args.dev_limit else "")
           + (f" --tig-dev-limit {args.tig_dev_limit}" if args.tig_dev_limit else "")
           + (" --no-tig" if args.no_tig else ""))
    body = [
        "## Decoders (issue 11 item 2)\n",
        f"`{cmd}` — {machine_line()}.\n",
        f"Train: ptb-sample/train ({len(train):,} trees), binarized h=1 v=2, rare words (< 2) as signatures. TSG: "
        f"final sample of {args.gibbs_iterations} collapsed Gibbs sweeps (seed {args.seed}, {gibbs_s:.0f} s); "
        + ("" if args.no_tig else
           f"{args.tig_variant.upper()}: {args.mh_iterations} blocked MH sweep(s) of the TIG -> TSG -> CFG proposal "
           f"from that TSG sample ({tig_s:.0f} s). ")
        + "Each model parses ptb-sample/dev with every decoder registered through `register_decoders`, on the "
        "same grammar and the same PCFG coarse-to-fine pruning (posterior >= 1e-5): `mpd` = Viterbi most probable "
        f"derivation (today's default); `mpp` = the most frequent tree among {args.samples} derivations sampled "
        "exactly from the pruned chart (seeded by the sentence); `maxrule` / `maxrule-sum` = max-rule-product / "
        "max-rule-sum over anchored rule posteriors from inside-outside, on the back-transformed (category) "
        "labels. EVALB-compatible F1 (COLLINS.prm); sent/s on one core after warm-up, machine shared with other "
        "jobs.\n",
        markdown_table(["model", "decoder", "dev sentences", "F1 all", "F1 <=40", "failed", "sent/s",
                        "samples / sentence"], rows),
        "\nPaired approximate randomization against MPD on the same grammar (10,000 trials, two-sided, "
        "per-sentence bracket counts, all lengths):\n",
        markdown_table(["model", "comparison", "F1 difference", "p-value"], signif),
    ]
    if args.tig_dev_limit and not args.no_tig:
        body.append(f"\nReduced setting: the TIG rows parse only the first {args.tig_dev_limit} dev sentences "
                    "(TIG parsing is slow on the shared 2-core machine); TSG rows parse all of dev.\n")
    write_section("decoders", "\n".join(body))
    print("wrote benchmarks/RESULTS.md")


if __name__ == "__main__":
    main()
