"""`treegram train ostag --bayesian ...` (the branch of the ostag formalism's `train`)."""

from __future__ import annotations

from pathlib import Path

from treegram.errors import InputError


def train_bayesian_from_options(trees, options, ctx):
    """`treegram train ostag --bayesian ...`: blocked MH, then the parsing model of the final sample."""
    from treegram.plugins.ostag.bayes_model import BayesOSTAGSettings
    from treegram.plugins.ostag.bayes_sampler import BayesRunOptions, train_bayesian

    ui = ctx.ui
    if options.from_tsg is not None:
        raise InputError("--bayesian induces its own elementary trees", hint="drop --from-tsg")
    settings = BayesOSTAGSettings(horizontal=None if options.horizontal < 0 else options.horizontal,
                                  vertical=options.vertical, rare_threshold=options.rare_threshold,
                                  alpha=options.alpha, beta=options.beta, foot=options.foot, mu=options.mu,
                                  resample=not options.fixed_hyper)
    checkpoint = options.checkpoint or Path(str(ctx.out) + ".ckpt")
    run = BayesRunOptions(iterations=options.iterations, seed=ctx.seed, tsg_init=options.tsg_init,
                          checkpoint=checkpoint, checkpoint_every=options.checkpoint_every, resume=options.resume,
                          anneal_start=options.anneal_start, anneal_end=options.anneal_end,
                          adj_prior=options.adj_prior, prune_threshold=options.prune_threshold)
    rows = []
    with ui.task("Bayesian OSTAG blocked MH", total=options.iterations) as advance:
        def callback(r):
            rows.append(r)
            advance(1, info=f"LL {r['log_likelihood']:.1f}  initial {r.get('initial', '?')}  "
                            f"aux {r.get('auxiliary', '?')} (wrap {r.get('wrapping', '?')})  "
                            f"adj {r.get('adjunctions', '?')}  acc {r.get('acceptance_rate', 0):.2f}  "
                            f"{r['seconds']:.1f}s")

        model, _trace = train_bayesian(trees, settings, run, callback=callback, note=ui.note)
    if rows and not ctx.json:
        ui.table("blocked MH (per iteration)", ["iteration", "log-likelihood", "initial", "auxiliary", "wrapping",
                                                "adjunctions", "acceptance", "seconds"],
                 [(r["sweep"], round(r["log_likelihood"], 1), r.get("initial", ""), r.get("auxiliary", ""),
                   r.get("wrapping", ""), r.get("adjunctions", ""), round(r.get("acceptance_rate", 0.0), 3),
                   round(r["seconds"], 2)) for r in rows[-20:]])
    ui.note(f"checkpoint: {checkpoint} (continue with --resume --iterations N)")
    return model
