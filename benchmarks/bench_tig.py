"""TIG (issue 5): TSG vs TIG0 vs TIG on ptb-sample train -> dev in one run (the paper's Figure 5 comparison):
F1, number of initial / left / right auxiliary trees, insertions used in the dev derivations, sampler and parser
speed.

    python benchmarks/bench_tig.py [--gibbs-iterations 30] [--mh-iterations 2] [--train-limit N] [--dev-limit N]

All three models start from the same TSG collapsed-Gibbs sample (`--gibbs-iterations` sweeps); each then runs
`--mh-iterations` blocked Metropolis-Hastings sweeps (TSG: the TSG blocked sampler; TIG0/TIG: the TIG -> TSG -> CFG
transform proposal), so the TSG gets the same number of extra sweeps.  Writes the `tig` section of
benchmarks/RESULTS.md.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _results import machine_line, markdown_table, require_shared, write_section  # noqa: E402

import numpy as np  # noqa: E402

from treegram.bayes import BlockedMH, GibbsSampler  # noqa: E402
from treegram.errors import ParseFailure  # noqa: E402
from treegram.evaluation.parseval import ParsevalParams, score_corpus  # noqa: E402
from treegram.evaluation.significance import (  # noqa: E402
    approximate_randomization, paired_parseval_counts, parseval_f1,
)
from treegram.formalism import flat_fallback  # noqa: E402
from treegram.grammar.pcfg import PCFGModel, PCFGSettings  # noqa: E402
from treegram.trees import read_treebank  # noqa: E402

from treegram.plugins.tig.derivation import TIGSettings  # noqa: E402
from treegram.plugins.tig.sampler import BlockedTIG  # noqa: E402
from treegram.plugins.tig.formalism import TIGOptions  # noqa: E402
from treegram.plugins.tig.train import extract_model as tig_extract  # noqa: E402
from treegram.elementary.data import TSGSettings, prepare  # noqa: E402
from treegram.elementary.gibbs import GibbsTSG  # noqa: E402
from treegram.plugins.tsg.state import BlockedTSG  # noqa: E402
from treegram.formalism import RunOptions  # noqa: E402
from treegram.plugins.tsg.formalism import TSGOptions  # noqa: E402
from treegram.plugins.tsg.train import extract_model as tsg_extract  # noqa: E402


def parse_all(model, sentences):
    trees, failed, ins = [], 0, [0, 0]
    model.parse(sentences[0])  # warm-up (numba compile / cache load) outside the timing
    start = time.perf_counter()
    for tokens in sentences:
        try:
            trees.append(model.parse(tokens))
            if hasattr(model, "last_insertions"):
                ins[0] += model.last_insertions[0]
                ins[1] += model.last_insertions[1]
        except ParseFailure:
            trees.append(flat_fallback(tokens))
            failed += 1
    return trees, failed, time.perf_counter() - start, ins


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--gibbs-iterations", type=int, default=30)
    ap.add_argument("--mh-iterations", type=int, default=2)
    ap.add_argument("--train-limit", type=int, default=None)
    ap.add_argument("--dev-limit", type=int, default=None)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--horizontal", type=int, default=1, help="binarization: horizontal markovization (1)")
    ap.add_argument("--vertical", type=int, default=2, help="binarization: vertical markovization (2 = parent)")
    ap.add_argument("--no-write", action="store_true", help="do not write RESULTS.md (smoke runs)")
    args = ap.parse_args()
    shared = require_shared()
    train = list(read_treebank([shared / "ptb-sample" / "train"]))[: args.train_limit]
    dev = list(read_treebank([shared / "ptb-sample" / "dev"]))[: args.dev_limit]
    sentences = [t.leaves() for t in dev]
    print(f"train {len(train)} trees, dev {len(dev)} sentences", flush=True)

    hv = {"horizontal": args.horizontal, "vertical": args.vertical}
    tsg_settings = TSGSettings(**hv)
    pcfg = PCFGModel.train(train, PCFGSettings(**hv, rare_threshold=2))
    data, _ = prepare(train, tsg_settings, pcfg.mapper)
    t0 = time.perf_counter()
    gibbs = GibbsTSG(data, tsg_settings, args.seed)
    GibbsSampler(gibbs, seed=args.seed).run(args.gibbs_iterations)
    gibbs_s = time.perf_counter() - t0
    print(f"TSG Gibbs {args.gibbs_iterations} sweeps: {gibbs_s:.1f}s, LL {gibbs.log_likelihood():.1f}", flush=True)
    start_state = gibbs.state_dict()

    rows, speed, extra = [], [], []
    results = {}  # model name -> ParsevalResult (all lengths), for the significance tests

    def record(name, model, trace, unit_rate, ins_train=None):
        trees, failed, parse_s, ins = parse_all(model, sentences)
        result = score_corpus(dev, trees, ParsevalParams())
        results[name] = result
        f1 = result.f1
        f1_40 = score_corpus(dev, trees, ParsevalParams(max_length=40)).f1
        info = model.info
        if name == "TSG":
            n_init = f"{info['elementary_trees']:,} ({info['elementary_trees_count_gt1']:,})"
            n_left = n_right = "-"
            ins_s = "-"
        else:
            n_init, n_left, n_right = (f"{info[k + '_trees']:,} ({info[k + '_trees_count_gt1']:,})"
                                       for k in ("initial", "left", "right"))
            ins_s = f"{ins[0]} / {ins[1]}"
        rows.append([name, round(f1, 2), round(f1_40, 2), failed, n_init, n_left, n_right, ins_s])
        med = float(np.median([r["seconds"] for r in trace])) if trace else float("nan")
        acc = float(np.mean([r["acceptance_rate"] for r in trace])) if trace else float("nan")
        speed.append([name, round(med, 1), f"{len(train) / med:,.1f}" if trace else "", round(acc, 3),
                      round(len(dev) / parse_s, 2), model.cfg.num_symbols, model.cfg.num_rules])
        print(rows[-1], speed[-1], flush=True)

    # TSG: the same number of blocked sweeps from the Gibbs sample
    state = BlockedTSG(data, tsg_settings, args.seed)
    state.load_state_dict(start_state)
    trace = BlockedMH(state, seed=args.seed).run(args.mh_iterations)
    model = tsg_extract(state, pcfg, tsg_settings, TSGOptions(decoder="mpd"), RunOptions(move="blocked"), trace, {})
    record("TSG", model, trace, None)

    for variant in ("tig0", "tig"):
        settings = TIGSettings(variant=variant, **hv)
        st = BlockedTIG(data, settings, args.seed, init_sub=start_state["flags"])
        st.hyper.beta[:] = gibbs.beta
        st.hyper.alpha[:] = gibbs.alpha[None, :]
        st.rebuild()
        trace = BlockedMH(st, seed=args.seed, callback=lambda r: print(
            variant, r["sweep"], round(r["log_likelihood"], 1), r["initial"], r["left"], r["right"],
            r["ins_left"], r["ins_right"], round(r["acceptance_rate"], 3), round(r["seconds"], 1),
            flush=True)).run(args.mh_iterations)
        t1 = time.perf_counter()
        model = tig_extract(st, pcfg, settings, TIGOptions(), RunOptions(iterations=args.mh_iterations, seed=args.seed),
                            trace, {})
        print(f"{variant} grammar extraction {time.perf_counter() - t1:.1f}s", flush=True)
        record(variant.upper(), model, trace, None)
        extra.append([variant.upper(), trace[-1]["ins_left"], trace[-1]["ins_right"],
                      round(float(np.median(st.hyper.phi[1][st.phi_yes[1] + st.phi_no[1] > 0])), 4),
                      round(float(np.median(st.hyper.phi[2][st.phi_yes[2] + st.phi_no[2] > 0])), 4)])

    signif = []
    for a, b in (("TIG", "TSG"), ("TIG0", "TSG"), ("TIG", "TIG0")):
        ca, cb = paired_parseval_counts(results[a], results[b])
        res = approximate_randomization(ca, cb, metric=parseval_f1, trials=10000, rng=args.seed)
        signif.append([f"{a} - {b}", round(res.difference, 2), round(res.p_value, 4)])
        print("significance", signif[-1], flush=True)
    if args.no_write:
        return
    body = [
        "## TIG (issue 5)\n",
        f"`python benchmarks/bench_tig.py --gibbs-iterations {args.gibbs_iterations} --mh-iterations "
        f"{args.mh_iterations}" + (f" --train-limit {args.train_limit}" if args.train_limit else "")
        + (f" --horizontal {args.horizontal}" if args.horizontal != 1 else "")
        + (f" --vertical {args.vertical}" if args.vertical != 2 else "")
        + (f" --dev-limit {args.dev_limit}" if args.dev_limit else "") + f"` — {machine_line()}.\n",
        f"Train: ptb-sample/train ({len(train):,} trees); test: ptb-sample/dev ({len(dev)} sentences, all "
        f"lengths); EVALB-compatible F1 (COLLINS.prm). Trees binarized h={args.horizontal}, v={args.vertical}, rare "
        "words (< 2) as signatures. "
        f"All three models start from one TSG collapsed-Gibbs sample ({args.gibbs_iterations} sweeps, seed "
        f"{args.seed}); each then runs {args.mh_iterations} blocked MH sweeps (TSG: the TSG blocked sampler; "
        "TIG0 / TIG: the exact TIG -> TSG -> CFG transform proposal, TIG hyperparameters alpha, beta from the "
        "Gibbs sample, foot 0.5, phi 0.05 initially, all resampled every sweep). Parsing: Viterbi (most probable "
        "derivation path) over the Goodman-style transform of the final sample's elementary trees + base "
        "distributions, PCFG coarse-to-fine pruning (posterior >= 1e-5); TIG derived trees rebuilt from the CFG "
        "derivation. Insertions = auxiliary trees used in the 1-best dev derivations (left / right). The paper's "
        "Figure 5 counts only elementary trees with count > 1 (in parentheses here).\n",
        markdown_table(["model", "F1 all", "F1 <=40", "failed", "initial trees (count > 1)",
                        "left aux trees (count > 1)", "right aux trees (count > 1)", "dev insertions L / R"], rows),
        "\nPaired approximate randomization (10,000 trials, two-sided, per-sentence bracket counts, all "
        "lengths):\n",
        markdown_table(["comparison", "F1 difference", "p-value"], signif),
        f"\nCaveats: one seed, {args.mh_iterations} blocked MH sweep(s) after the shared TSG sample. Timings were "
        "taken on a machine shared with other jobs.\n",
        "\n**Speed** (median seconds per blocked sweep over the treebank; parse = sentences/s on one core after "
        "warm-up):\n",
        markdown_table(["model", "s / sweep", "trees / s", "acceptance", "parse sent/s", "CFG symbols",
                        "CFG rules"], speed),
        f"\nTSG Gibbs initialisation: {args.gibbs_iterations} sweeps in {gibbs_s:.1f} s.\n",
        "**Insertions in the final training sample** and median insertion probabilities phi over labels that "
        "had the choice:\n",
        markdown_table(["model", "training insertions L", "training insertions R", "median phi_L",
                        "median phi_R"], extra),
    ]
    write_section("tig", "\n".join(body))
    print("wrote benchmarks/RESULTS.md")


if __name__ == "__main__":
    main()
