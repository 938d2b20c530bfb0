"""The ostag plugin's two formalisms through the core contract (`treegram.formalism`), with their settings.

* ``ostag`` (`OSTAGFormalism`, options `OSTAGOptions`): off-spine TAG of Swanson et al. (2013) from heuristically
  extracted elementary trees (the built-in depth fragments or a TSG model's, ``--from-tsg``), EM on the CFG form
  (`model.train_ostag`).  ``train ostag --bayesian`` is a documented alias of ``train ostag-bayes``
  (`Formalism.aliases`: the core adds the Bayesian options to its parser in their own group and hands the run over).
* ``ostag-bayes`` (`BayesianOSTAG`, options `BayesOSTAGOptions`): Bayesian OSTAG (Yamangil & Shieber 2013,
  section 2, off-spine adjunction): DP initial and auxiliary trees, geometric stacked adjunction, blocked
  Metropolis-Hastings over whole trees on the core training loop (`treegram.training.run_sampler`: the
  core adds --iterations, annealing, checkpoints and --resume); `prepare` builds the treebank PCFG and the
  integer-coded trees, `make_state` the blocked state (optionally started from TSG Gibbs cuts), `extract_model`
  the parsing `OSTAGModel` of the final sample or the posterior average of several (`--average`).
"""

from __future__ import annotations

import time
from pathlib import Path

import attrs

from treegram.bayes.averaging import average_option, options_averaging, thin_option
from treegram.argtypes import nonnegative_float, nonnegative_int, open_probability, positive_float, positive_int
from treegram.errors import InputError
from treegram.formalism import Formalism, RunOptions, Sampling, option
from treegram.option_groups import (
    decoder_option, horizontal_option, markov_horizontal, prune_option, rare_threshold_option, vertical_option,
)


def _check_decoder(name: str) -> None:
    from treegram.charts.decoders import get_decoder

    get_decoder(name)  # an unknown name is an error before training, not after


# ================================================================================================================
# ostag-bayes: Bayesian OSTAG by blocked Metropolis-Hastings
# ================================================================================================================
@attrs.frozen
class BayesOSTAGOptions:
    """`treegram train ostag-bayes` options: the model (tree preparation, initial hyperparameters, the start) and
    the parsing grammar extracted from the sample; the sampler's run options (--iterations, annealing,
    checkpoints) are the core's."""

    tsg_init: int = option(30, metavar="N", type=nonnegative_int, group="model",
                           help="start from the cuts of N TSG collapsed-Gibbs sweeps (0 = random cuts; default 30)")
    alpha: float = option(1.0, help="initial DP concentration (1.0)", type=positive_float, group="model")
    beta: float = option(0.5, help="initial frontier probability (0.5)", type=open_probability, group="model")
    foot: float = option(0.5, help="initial foot probability on auxiliary spines (0.5)", type=open_probability,
                         group="model")
    mu: float = option(0.05, help="initial adjunction probability (0.05)", type=open_probability, group="model")
    fixed_hyper: bool = option(False, help="keep alpha, beta, foot, mu fixed", group="model")
    horizontal: int = horizontal_option(0)
    vertical: int = vertical_option(1)
    rare_threshold: int = rare_threshold_option(2)
    adj_prior: float = option(1.0, type=nonnegative_float, group="parsing grammar",
                              help="pseudo-counts pulling each Goodman index's adjunction probability towards the "
                                   "sampled per-label mu (default 1)")
    average: int = average_option(5)
    thin: int = thin_option()
    prune_threshold: float = prune_option(1e-4)
    decoder: str = decoder_option("maxrule")

    def __attrs_post_init__(self):
        _check_decoder(self.decoder)

    def model_settings(self):
        """The model definition (`bayes_model.BayesOSTAGSettings`) these options give."""
        from treegram.plugins.ostag.bayes_model import BayesOSTAGSettings

        return BayesOSTAGSettings(horizontal=markov_horizontal(self.horizontal),
                                  vertical=self.vertical, rare_threshold=self.rare_threshold, alpha=self.alpha,
                                  beta=self.beta, foot=self.foot, mu=self.mu, resample=not self.fixed_hyper)

    def averaging(self):
        return options_averaging(self)


def _progress(r: dict) -> str:
    return (f"LL {r['log_likelihood']:.1f}  initial {r.get('initial', '?')}  aux {r.get('auxiliary', '?')} "
            f"(wrap {r.get('wrapping', '?')})  adj {r.get('adjunctions', '?')}  acc {r.get('acceptance_rate', 0):.2f}  "
            f"{r['seconds']:.1f}s")


class BayesianOSTAG(Formalism):
    """Bayesian OSTAG through the core contract and training loop (see the module docstring)."""

    name = "ostag-bayes"
    description = ("Bayesian off-spine TAG (Yamangil & Shieber 2013): DP initial/auxiliary trees, blocked MH; "
                   "parsed as an OSTAG (or as a TSG after `treegram convert`)")
    trains_on = "trees"
    Settings = BayesOSTAGOptions
    state_kinds = ("items",)
    sampling = Sampling(iterations=10, default_move="blocked", site_order=False, label="Bayesian OSTAG blocked MH",
                        progress=_progress,
                        columns=(("initial", "initial"), ("auxiliary", "auxiliary"), ("wrapping", "wrapping"),
                                 ("adjunctions", "adjunctions"), ("acceptance", "acceptance_rate")))

    def prepare(self, trees, options: BayesOSTAGOptions):
        from treegram.cli.ui import UI
        from treegram.plugins.ostag.bayes_sampler import MAX_TRAIN_NODES, prepare_data
        from treegram.trees.tree import drop_oversized

        trees = drop_oversized(trees, MAX_TRAIN_NODES, what="Bayesian OSTAG", note=UI().note)
        if not trees:
            raise InputError("no training trees", hint="check the --treebank paths")
        t0 = time.perf_counter()
        pcfg, data = prepare_data(trees, options.model_settings(), None)
        return {"t0": t0, "trees": len(trees), "pcfg": pcfg, "data": data}

    def make_state(self, prepared, options: BayesOSTAGOptions, kind, run, ctx=None):
        from treegram.plugins.ostag.bayes_sampler import BlockedOSTAG, tsg_initial_cuts

        settings = options.model_settings()
        init_sub = None
        if options.tsg_init and not run.resume:  # on resume the checkpointed state replaces the initial cuts
            init_sub = tsg_initial_cuts(prepared["data"], settings, options.tsg_init, run.seed)
        return BlockedOSTAG(prepared["data"], settings, run.seed, init_sub=init_sub)

    def averaging(self, options: BayesOSTAGOptions):
        return options.averaging()

    def extract_model(self, state, prepared, options: BayesOSTAGOptions, run, trace, *, samples=None,
                      averaging_info=None):
        from treegram.plugins.ostag.bayes_sampler import extract_model

        info = {"training_trees": prepared["trees"], "labels": prepared["data"].num_labels, "sampler": "blocked-mh",
                "iterations": len(trace), "seed": run.seed, **(averaging_info or {"averaged_samples": 1})}
        model = extract_model(state, prepared["pcfg"], options.model_settings(), options, info, trace, samples)
        model.info["train_seconds"] = round(time.perf_counter() - prepared["t0"], 1)
        model.default_decoder = options.decoder
        return model
    # the model is an `OSTAGModel` (formalism "ostag"): `OSTAGFormalism.load_model` reads it


def train_bayesian(trees, options: BayesOSTAGOptions | None = None, run: RunOptions | None = None, *,
                   callback=None, note=None):
    """(`OSTAGModel`, trace) of `treegram train ostag-bayes` run from Python: `BayesOSTAGOptions` (None: the
    command line's defaults) and the core's `RunOptions` through `treegram.training.sample`."""
    from treegram.training import sample

    return sample(BayesianOSTAG(), trees, options or BayesOSTAGOptions(), run or RunOptions(), callback=callback,
                  note=note)


# ================================================================================================================
# ostag: EM on extracted elementary trees (and the --bayesian alias)
# ================================================================================================================
@attrs.frozen
class OSTAGOptions:
    """`treegram train ostag` options: the elementary-tree source and the EM model (`--bayesian`, the alias of
    `train ostag-bayes`, and that formalism's own options are added by the core: `Formalism.aliases`)."""

    from_tsg: Path | None = option(None, type=Path, metavar="MODEL", group="elementary trees",
                                   help="take the TSG elementary trees of a `treegram train tsg` model (its tree "
                                        "preparation, unknown-word classes and coarse PCFG are reused); default: the "
                                        "built-in deterministic source (complete fragments up to --max-depth)")
    no_cfg_rules: bool = option(False, group="elementary trees",
                                help="with --from-tsg: do not add the treebank's depth-1 rules as initial trees "
                                     "(they give coverage for sentences the TSG fragments cannot derive)")
    tsg_weights: str = option("base", choices=("counts", "posterior", "posterior-rules", "base"),
                              group="elementary trees",
                              help="with --from-tsg: the elementary trees' weights (EM's counts start): the TSG "
                                   "sample's fragment counts, depth-1 rules at their treebank counts; or the TSG "
                                   "model's posterior pseudo-counts n_e + alpha_c P0(e), depth-1 rules at "
                                   "alpha_c P0; posterior-rules: depth-1 rules at alpha_c times "
                                   "their PCFG probability; base: the fragment counts plus the TSG's own base route "
                                   "(c -> c~base and the base PCFG rules, with the TSG's weights) in the parsing "
                                   "grammar, no depth-1 rules, so that without auxiliary trees the grammar is the "
                                   "TSG's (default base: the only weighting not below the source TSG on dev, "
                                   "benchmarks/RESULTS.md parsing-defaults-ostag-full)")
    max_depth: int = option(2, help="built-in source: fragment depth (default 2)", type=positive_int,
                            group="elementary trees")
    min_count: int = option(2, type=nonnegative_int, group="elementary trees",
                            help="built-in source: keep fragments deeper than 1 seen at least this often (default 2)")
    model: str = option("ostag3", choices=("ostag1", "ostag2", "ostag3", "tsg"), group="model",
                        help="adjunction parameters per symbol / symbol+leftmost child / Goodman index; "
                             "tsg = no auxiliary trees (the TSG' baseline) (default ostag3)")
    no_expand: bool = option(False, help="do not add the TSG rules left behind by the auxiliary-tree extraction",
                             group="model")
    spine_levels: int = option(0, type=nonnegative_int, group="model",
                               help="allow k nested levels of adjunction on spines below the root (section 4.2; "
                                    "grammar size grows fast; default 0 = OSTAG)")
    # Defaults of the EM route and the decoder: the best of what benchmarks/bench_parsing_defaults_tag.py,
    # bench_ostag_tsg_weights.py and bench_ostag_base.py measured on ptb-sample dev (issue 16: --from-tsg with the
    # TSG's fragment counts and base route, no EM iteration, P_adj 0.01, the TSG's pruning; without --from-tsg 1
    # EM iteration from the counts; maxrule).
    em_iterations: int | None = option(None, type=nonnegative_int, group="model",
                                       help="EM iterations (default: 0 with --from-tsg and posterior or base "
                                            "weights, which are the TSG's own estimate and EM only moved away from "
                                            "it on dev; else 1)")
    em_initial: str = option("counts", choices=("counts", "uniform"), group="model",
                             help="EM's starting estimate: the elementary trees' counts (relative frequencies) or "
                                  "uniform per root label (default counts)")
    decoder: str = decoder_option("maxrule", group="model", note="; also for --bayesian")
    adj_init: float | None = option(None, type=open_probability, group="model",
                                    help="initial adjunction probability (default 0.01 with --from-tsg and "
                                         "--tsg-weights base, where it is the adjunction weight on top of the TSG: "
                                         "0.1 fell below the TSG on dev; else 0.1)")
    # h=0, v=1: the built-in source's tree preparation (`OSTAGSettings`); --from-tsg takes the source TSG's
    horizontal: int = horizontal_option(0, what="built-in source: ")
    vertical: int = vertical_option(1, what="built-in source: ")
    rare_threshold: int = rare_threshold_option(2)
    prune_threshold: float | None = prune_option(None, group="model",
                                                 note="coarse-to-fine PCFG posterior cutoff when parsing (0 = off; "
                                                      "default 1e-4; with --from-tsg and --tsg-weights base: the TSG "
                                                      "model's own)")

    def __attrs_post_init__(self):
        _check_decoder(self.decoder)


class OSTAGFormalism(Formalism):
    name = "ostag"
    description = "off-spine TAG (wrapping adjunction, context-free parsing via a reversible CFG reduction; EM)"
    trains_on = "trees"
    Settings = OSTAGOptions
    aliases = {"bayesian": "ostag-bayes"}  # `train ostag --bayesian` (README, older scripts) = `train ostag-bayes`

    def train(self, trees, options: OSTAGOptions, ctx):
        from treegram.plugins.ostag.model import OSTAGSettings, train_ostag

        ui = ctx.ui
        elementary = pcfg = extra_weight = base = None
        prune = 1e-4 if options.prune_threshold is None else options.prune_threshold
        h = markov_horizontal(options.horizontal)
        v, mark_unary, rare = options.vertical, True, options.rare_threshold
        if options.from_tsg is not None:
            from treegram.formalism import load_model

            from treegram.plugins.ostag.extract import TSGPosterior, tsg_model_elementary_trees

            tsg = load_model(options.from_tsg)
            if getattr(tsg, "formalism", None) != "tsg" or not hasattr(tsg, "fragments"):
                raise InputError(f"{options.from_tsg} is a {tsg.formalism} model, not a TSG",
                                 hint="pass a model written by `treegram train tsg`")
            if options.tsg_weights == "base":
                from treegram.elementary.base_route import read_base_route

                elementary = tsg_model_elementary_trees(tsg)  # relative counts: the TSG's (mean) fragment counts
                base = read_base_route(tsg.cfg)
                if options.prune_threshold is None:
                    prune = float(getattr(tsg, "prune_threshold", prune))
            elif options.tsg_weights != "counts":
                posterior = TSGPosterior(tsg)
                elementary = posterior.elementary_trees()
                extra_weight = posterior.weight if options.tsg_weights == "posterior" else posterior.rule_weight
            else:
                elementary = tsg_model_elementary_trees(tsg)
            pcfg = tsg.pcfg
            h, v, mark_unary = tsg.settings.horizontal, tsg.settings.vertical, False
            rare = tsg.settings.rare_threshold
            ui.note(f"{len(elementary)} elementary trees from {options.from_tsg}")
        em_iterations = options.em_iterations
        if em_iterations is None:
            em_iterations = 0 if options.from_tsg is not None and options.tsg_weights != "counts" else 1
        settings = OSTAGSettings(kind=options.model, expand=not options.no_expand,
                                 spine_levels=options.spine_levels, horizontal=h, vertical=v, mark_unary=mark_unary,
                                 rare_threshold=rare, max_depth=options.max_depth, min_count=options.min_count,
                                 em_iterations=em_iterations, em_initial=options.em_initial,
                                 adj_init=(options.adj_init if options.adj_init is not None else
                                           0.01 if base is not None else 0.1),
                                 prune_threshold=prune,
                                 add_cfg_rules=not options.no_cfg_rules and base is None,
                                 tsg_weights=options.tsg_weights if options.from_tsg is not None else "counts")
        from treegram.trees.tree import drop_oversized

        # EM keeps a span chart per training tree (quadratic in its length): huge trees are left out with a note
        trees = drop_oversized(trees, 2000, what="OSTAG EM", note=ui.note)
        rows = []
        # without EM iterations (the --from-tsg default) the bar stands for building the grammar: no count to show
        with ui.task("EM" if em_iterations else "building the grammar", total=em_iterations or None) as advance:
            def callback(rec):
                rows.append(rec)
                advance(1, info=f"LL {rec['log_likelihood']:.1f}  adjunctions {rec['expected_adjunctions']}  "
                                f"{rec['seconds']}s")

            model = train_ostag(trees, settings, elementary=elementary, pcfg=pcfg, callback=callback,
                                progress=lambda xs, d: ui.track(xs, description=d), extra_weight=extra_weight,
                                base=base)
        if rows and not ctx.json:
            ui.table("EM (per iteration)", list(rows[0].keys()), [list(r.values()) for r in rows])
        model.default_decoder = options.decoder
        return model

    def model_schema(self, meta):
        from treegram.plugins.ostag.model import ostag_schema

        return ostag_schema(meta)

    def load_model(self, meta, arrays):
        from treegram.plugins.ostag.model import OSTAGModel

        return OSTAGModel.from_bundle(meta, arrays)
