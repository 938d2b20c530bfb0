"""The ostag plugin's hook implementations: the `ostag` formalism and the `treegram ostag-grammar` command."""

from __future__ import annotations

import argparse
from pathlib import Path

import attrs

from treegram.cli.argtypes import nonnegative_float, nonnegative_int, open_probability, positive_float, positive_int
from treegram.bayes.averaging import average_option, thin_option
from treegram.errors import InputError
from treegram.formalism import Formalism, option
from treegram.options import (
    decoder_option, horizontal_option, markov_horizontal, prune_option, rare_threshold_option, vertical_option,
)
from treegram.plugin_manager import hookimpl
from treegram.cli import argtypes


@attrs.frozen
class OSTAGOptions:
    """`treegram train ostag` options: the elementary-tree source, the EM model, and (--bayesian) the sampler."""

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
    bayesian: bool = option(False, group="elementary trees",
                            help="Bayesian OSTAG induction: DP initial and auxiliary trees (wrapping allowed) with "
                                 "geometric stacked off-spine adjunction, blocked Metropolis-Hastings over whole "
                                 "trees (options in the 'bayesian' group)")
    iterations: int = option(10, help="--bayesian: blocked MH sweeps (default 10)", type=nonnegative_int,
                             group="bayesian")
    tsg_init: int = option(30, metavar="N", type=nonnegative_int, group="bayesian",
                           help="--bayesian: start from the cuts of N TSG collapsed-Gibbs sweeps (0 = random cuts; "
                                "default 30)")
    alpha: float = option(1.0, help="--bayesian: initial DP concentration (1.0)", type=positive_float,
                          group="bayesian")
    beta: float = option(0.5, help="--bayesian: initial frontier probability (0.5)", type=open_probability,
                         group="bayesian")
    foot: float = option(0.5, help="--bayesian: initial foot probability on auxiliary spines (0.5)",
                         type=open_probability, group="bayesian")
    mu: float = option(0.05, help="--bayesian: initial adjunction probability (0.05)", type=open_probability,
                       group="bayesian")
    fixed_hyper: bool = option(False, help="--bayesian: keep alpha, beta, foot, mu fixed", group="bayesian")
    anneal_start: float = option(1.0, help="--bayesian: first sweep's temperature", type=nonnegative_float,
                                 group="bayesian")
    anneal_end: float = option(1.0, help="--bayesian: last sweep's temperature", type=nonnegative_float,
                               group="bayesian")
    adj_prior: float = option(1.0, type=nonnegative_float, group="bayesian",
                              help="--bayesian: pseudo-counts pulling each Goodman index's adjunction probability "
                                   "towards the sampled per-label mu (default 1)")
    average: int = average_option(5, group="bayesian", prefix="--bayesian: ")
    thin: int = thin_option(group="bayesian", prefix="--bayesian: ")
    checkpoint: Path | None = option(None, type=Path, group="bayesian",
                                     help="--bayesian: checkpoint file (default OUT.ckpt); Ctrl-C leaves one, "
                                          "--resume continues")
    checkpoint_every: int = option(1, help="--bayesian: checkpoint every N sweeps (default 1)", type=nonnegative_int,
                                   group="bayesian")
    resume: bool = option(False, help="--bayesian: continue the run in the checkpoint", group="bayesian")
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
        from treegram.charts.decoders import get_decoder

        get_decoder(self.decoder)  # an unknown name is an error before training, not after


class OSTAGFormalism(Formalism):
    name = "ostag"
    description = "off-spine TAG (wrapping adjunction, context-free parsing via a reversible CFG reduction; EM)"
    trains_on = "trees"
    Settings = OSTAGOptions

    def train(self, trees, options: OSTAGOptions, ctx):
        from treegram.plugins.ostag.model import OSTAGSettings, train_ostag

        ui = ctx.ui
        if options.bayesian:
            from treegram.plugins.ostag.bayes_cli import train_bayesian_from_options

            return train_bayesian_from_options(trees, options, ctx)
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
        with ui.task("EM", total=em_iterations) as advance:
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

    def load_model(self, meta, arrays):
        from treegram.plugins.ostag.model import OSTAGModel

        return OSTAGModel.from_bundle(meta, arrays)


# -- treegram ostag-grammar MODEL [--aux] [--wrapping]: an alias of `treegram grammar` for OSTAG models -------------
def _configure_grammar(p: argparse.ArgumentParser) -> None:
    p.add_argument("model", type=Path, help="an OSTAG model file")
    p.add_argument("--top", type=argtypes.nonnegative_int, default=15, help="how many trees to list (default 15)")
    p.add_argument("--aux", action="store_true", help="list the most probable auxiliary trees")
    p.add_argument("--wrapping", action="store_true", help="list only wrapping auxiliary trees")
    p.add_argument("--draw", action="store_true", help="(kept for compatibility: the trees are always drawn)")
    p.add_argument("--json", action="store_true", help="machine-readable JSON on stdout")


def _run_grammar(args: argparse.Namespace, ui) -> int:
    from treegram.formalism import load_model

    model = load_model(args.model)
    if getattr(model, "formalism", None) != "ostag":
        raise InputError(f"{args.model} is a {model.formalism} model, not an OSTAG",
                         hint="use `treegram grammar` for other formalisms")
    if args.json:
        ui.emit_json(model.grammar_json(args))
        return 0
    info = model.describe(top=0)
    ui.table(f"ostag model {args.model}", ["", "value"], [(k, v) for k, v in info.items()
                                                          if not isinstance(v, (list, dict))])
    model.render_grammar(ui, args)  # the same listing as `treegram grammar MODEL --aux --wrapping`
    return 0


@hookimpl
def register_formalisms(register):
    register(OSTAGFormalism())


@hookimpl
def register_commands(register):
    from treegram.cli.commands import Command

    register(Command("ostag-grammar", "list an OSTAG model's initial, auxiliary or wrapping auxiliary trees",
                     _configure_grammar, _run_grammar))
