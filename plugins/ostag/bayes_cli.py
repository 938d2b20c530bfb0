"""`treegram train ostag --bayesian ...` (the branch of the ostag formalism's `train`)."""

from __future__ import annotations

import time

from treegram.errors import InputError
from treegram.formalism import Formalism, RunOptions, Sampling, default_checkpoint


def _progress(r: dict) -> str:
    return (f"LL {r['log_likelihood']:.1f}  initial {r.get('initial', '?')}  aux {r.get('auxiliary', '?')} "
            f"(wrap {r.get('wrapping', '?')})  adj {r.get('adjunctions', '?')}  acc {r.get('acceptance_rate', 0):.2f}  "
            f"{r['seconds']:.1f}s")


class BayesianOSTAG(Formalism):
    """The `--bayesian` branch of the ostag formalism, through the core contract and training loop: the treebank
    PCFG and prepared trees (`prepare`), the blocked state over (node, foot) items whose per-tree proposal is the
    OSTAG CFG transform (`make_state`, optionally started from TSG Gibbs cuts), and the parsing `OSTAGModel` of the
    final sample or the posterior average of several (`extract_model`, `--average`).  Not registered on its own:
    `treegram train ostag --bayesian` runs it."""

    name = "ostag"
    state_kinds = ("items",)
    sampling = Sampling(iterations=10, default_move="blocked", site_order=False, label="Bayesian OSTAG blocked MH",
                        progress=_progress,
                        columns=(("initial", "initial"), ("auxiliary", "auxiliary"), ("wrapping", "wrapping"),
                                 ("adjunctions", "adjunctions"), ("acceptance", "acceptance_rate")))

    def __init__(self, run):
        self.run = run  # BayesRunOptions: tsg_init, adj_prior, prune_threshold (the model side of the run)

    def prepare(self, trees, settings):
        from treegram.cli.ui import UI
        from treegram.plugins.ostag.bayes_sampler import MAX_TRAIN_NODES, prepare_data
        from treegram.trees.tree import drop_oversized

        trees = drop_oversized(trees, MAX_TRAIN_NODES, what="Bayesian OSTAG", note=UI().note)
        if not trees:
            raise InputError("no training trees", hint="check the --treebank paths")
        t0 = time.perf_counter()
        pcfg, data = prepare_data(trees, settings, None)
        return {"t0": t0, "trees": len(trees), "pcfg": pcfg, "data": data}

    def make_state(self, prepared, settings, kind, run, ctx=None):
        from treegram.plugins.ostag.bayes_sampler import BlockedOSTAG, tsg_initial_cuts

        init_sub = None
        if self.run.tsg_init and not run.resume:  # on resume the checkpointed state replaces the initial cuts
            init_sub = tsg_initial_cuts(prepared["data"], settings, self.run.tsg_init, run.seed)
        return BlockedOSTAG(prepared["data"], settings, run.seed, init_sub=init_sub)

    def averaging(self, settings):
        return self.run.averaging()

    def extract_model(self, state, prepared, settings, run, trace, *, samples=None, averaging_info=None):
        from treegram.plugins.ostag.bayes_sampler import extract_model

        info = {"training_trees": prepared["trees"], "labels": prepared["data"].num_labels, "sampler": "blocked-mh",
                "iterations": len(trace), "seed": run.seed, **(averaging_info or {"averaged_samples": 1})}
        model = extract_model(state, prepared["pcfg"], settings, self.run, info, trace, samples)
        model.info["train_seconds"] = round(time.perf_counter() - prepared["t0"], 1)
        return model


def train_bayesian_from_options(trees, options, ctx):
    """`treegram train ostag --bayesian ...`: blocked MH through the core loop, then the parsing model."""
    from treegram.training import run_sampler

    from treegram.plugins.ostag.bayes_model import BayesOSTAGSettings
    from treegram.plugins.ostag.bayes_sampler import BayesRunOptions

    if options.from_tsg is not None:
        raise InputError("--bayesian induces its own elementary trees", hint="drop --from-tsg")
    settings = BayesOSTAGSettings(horizontal=None if options.horizontal < 0 else options.horizontal,
                                  vertical=options.vertical, rare_threshold=options.rare_threshold,
                                  alpha=options.alpha, beta=options.beta, foot=options.foot, mu=options.mu,
                                  resample=not options.fixed_hyper)
    checkpoint = default_checkpoint(options.checkpoint, ctx.out, options.resume)
    model_run = BayesRunOptions(iterations=options.iterations, seed=ctx.seed, tsg_init=options.tsg_init,
                                checkpoint=checkpoint, checkpoint_every=options.checkpoint_every,
                                resume=options.resume, anneal_start=options.anneal_start,
                                anneal_end=options.anneal_end, adj_prior=options.adj_prior,
                                prune_threshold=1e-4 if options.prune_threshold is None else options.prune_threshold,
                                average=options.average, thin=options.thin)
    run = RunOptions(move="blocked", iterations=options.iterations, seed=ctx.seed, anneal_start=options.anneal_start,
                     anneal_end=options.anneal_end, checkpoint=checkpoint, checkpoint_every=options.checkpoint_every,
                     resume=options.resume)
    model = run_sampler(BayesianOSTAG(model_run), trees, settings, run, ctx)
    model.default_decoder = options.decoder
    return model
