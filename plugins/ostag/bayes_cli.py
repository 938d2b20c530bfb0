"""`treegram train ostag --bayesian ...` (the branch of the ostag formalism's train_from_args)."""

from __future__ import annotations

import argparse
from pathlib import Path

from treegram.errors import InputError


def train_bayesian_from_args(args: argparse.Namespace, ui):
    """`treegram train ostag --bayesian ...`: blocked MH, then the parsing model of the final sample."""
    from treegram.corpora.treebank import load_treebanks

    from treegram.plugins.ostag.bayes_model import BayesOSTAGSettings
    from treegram.plugins.ostag.bayes_sampler import BayesRunOptions, train_bayesian

    if args.from_tsg is not None:
        raise InputError("--bayesian induces its own elementary trees", hint="drop --from-tsg")
    settings = BayesOSTAGSettings(horizontal=None if args.horizontal < 0 else args.horizontal,
                                  vertical=args.vertical, rare_threshold=args.rare_threshold, alpha=args.alpha,
                                  beta=args.beta, foot=args.foot, mu=args.mu, resample=not args.fixed_hyper)
    checkpoint = args.checkpoint or Path(str(args.out) + ".ckpt")
    run = BayesRunOptions(iterations=args.iterations, seed=args.seed, tsg_init=args.tsg_init, checkpoint=checkpoint,
                          checkpoint_every=args.checkpoint_every, resume=args.resume,
                          anneal_start=args.anneal_start, anneal_end=args.anneal_end, adj_prior=args.adj_prior,
                          prune_threshold=args.prune_threshold)
    trees = load_treebanks(args, ui)
    rows = []
    with ui.task("Bayesian OSTAG blocked MH", total=args.iterations) as advance:
        def callback(r):
            rows.append(r)
            advance(1, info=f"LL {r['log_likelihood']:.1f}  initial {r.get('initial', '?')}  "
                            f"aux {r.get('auxiliary', '?')} (wrap {r.get('wrapping', '?')})  "
                            f"adj {r.get('adjunctions', '?')}  acc {r.get('acceptance_rate', 0):.2f}  "
                            f"{r['seconds']:.1f}s")

        model, _trace = train_bayesian(trees, settings, run, callback=callback, note=ui.note)
    if rows and not args.json:
        ui.table("blocked MH (per iteration)", ["iteration", "log-likelihood", "initial", "auxiliary", "wrapping",
                                                "adjunctions", "acceptance", "seconds"],
                 [(r["sweep"], round(r["log_likelihood"], 1), r.get("initial", ""), r.get("auxiliary", ""),
                   r.get("wrapping", ""), r.get("adjunctions", ""), round(r.get("acceptance_rate", 0.0), 3),
                   round(r["seconds"], 2)) for r in rows[-20:]])
    ui.note(f"checkpoint: {checkpoint} (continue with --resume --iterations N)")
    return model
