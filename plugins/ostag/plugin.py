"""The ostag plugin's hook implementations: the `ostag` formalism and the `treegram ostag-grammar` command."""

from __future__ import annotations

import argparse
from pathlib import Path

from treegram.errors import InputError
from treegram.formalism import Formalism
from treegram.plugin_manager import hookimpl
from treegram.cli import argtypes


class OSTAGFormalism(Formalism):
    name = "ostag"
    description = "off-spine TAG (wrapping adjunction, context-free parsing via a reversible CFG reduction; EM)"
    trains_on = "trees"

    def configure_train_parser(self, parser: argparse.ArgumentParser) -> None:
        from treegram.formalisms.pcfg import add_treebank_arguments

        add_treebank_arguments(parser)
        src = parser.add_argument_group("elementary trees")
        src.add_argument("--from-tsg", type=Path, default=None, metavar="MODEL",
                         help="take the TSG elementary trees of a `treegram train tsg` model (its tree preparation, "
                              "unknown-word classes and coarse PCFG are reused); default: the built-in "
                              "deterministic source (complete fragments up to --max-depth)")
        src.add_argument("--no-cfg-rules", action="store_true",
                         help="with --from-tsg: do not add the treebank's depth-1 rules as initial trees (they give "
                              "coverage for sentences the TSG fragments cannot derive)")
        src.add_argument("--max-depth", type=argtypes.positive_int, default=2, help="built-in source: fragment depth (default 2)")
        src.add_argument("--min-count", type=argtypes.positive_int, default=2,
                         help="built-in source: keep fragments deeper than 1 seen at least this often (default 2)")
        src.add_argument("--bayesian", action="store_true",
                         help="Bayesian OSTAG induction: DP initial and auxiliary trees (wrapping allowed) with "
                              "geometric stacked off-spine adjunction, blocked Metropolis-Hastings over whole trees "
                              "(options in the 'bayesian' group)")
        bay = parser.add_argument_group("bayesian")
        bay.add_argument("--iterations", type=argtypes.nonnegative_int, default=10, help="--bayesian: blocked MH sweeps (default 10)")
        bay.add_argument("--tsg-init", type=argtypes.nonnegative_int, default=30, metavar="N",
                         help="--bayesian: start from the cuts of N TSG collapsed-Gibbs sweeps (0 = random cuts; "
                              "default 30)")
        bay.add_argument("--alpha", type=argtypes.positive_float, default=1.0, help="--bayesian: initial DP concentration (1.0)")
        bay.add_argument("--beta", type=argtypes.open_probability, default=0.5, help="--bayesian: initial frontier probability (0.5)")
        bay.add_argument("--foot", type=argtypes.open_probability, default=0.5,
                         help="--bayesian: initial foot probability on auxiliary spines (0.5)")
        bay.add_argument("--mu", type=argtypes.open_probability, default=0.05, help="--bayesian: initial adjunction probability (0.05)")
        bay.add_argument("--fixed-hyper", action="store_true", help="--bayesian: keep alpha, beta, foot, mu fixed")
        bay.add_argument("--anneal-start", type=argtypes.nonnegative_float, default=1.0, help="--bayesian: first sweep's temperature")
        bay.add_argument("--anneal-end", type=argtypes.nonnegative_float, default=1.0, help="--bayesian: last sweep's temperature")
        bay.add_argument("--adj-prior", type=argtypes.nonnegative_float, default=1.0,
                         help="--bayesian: pseudo-counts pulling each Goodman index's adjunction probability "
                              "towards the sampled per-label mu (default 1)")
        bay.add_argument("--checkpoint", type=Path, default=None,
                         help="--bayesian: checkpoint file (default OUT.ckpt); Ctrl-C leaves one, --resume continues")
        bay.add_argument("--checkpoint-every", type=argtypes.nonnegative_int, default=1)
        bay.add_argument("--resume", action="store_true", help="--bayesian: continue the run in the checkpoint")
        m = parser.add_argument_group("model")
        m.add_argument("--model", choices=("ostag1", "ostag2", "ostag3", "tsg"), default="ostag3",
                       help="adjunction parameters per symbol / symbol+leftmost child / Goodman index; "
                            "tsg = no auxiliary trees (the TSG' baseline) (default ostag3)")
        m.add_argument("--no-expand", action="store_true",
                       help="do not add the TSG rules left behind by the auxiliary-tree extraction")
        m.add_argument("--spine-levels", type=argtypes.nonnegative_int, default=0,
                       help="allow k nested levels of adjunction on spines below the root (section 4.2; "
                            "grammar size grows fast; default 0 = OSTAG)")
        m.add_argument("--em-iterations", type=argtypes.nonnegative_int, default=5, help="EM iterations (default 5)")
        m.add_argument("--adj-init", type=argtypes.open_probability, default=0.1, help="initial adjunction probability (default 0.1)")
        m.add_argument("--horizontal", type=argtypes.horizontal, default=0, help="built-in source: horizontal markovization (0)")
        m.add_argument("--vertical", type=argtypes.positive_int, default=1, help="built-in source: vertical markovization (1)")
        m.add_argument("--rare-threshold", type=argtypes.nonnegative_int, default=2)
        m.add_argument("--prune-threshold", type=argtypes.probability, default=1e-4,
                       help="coarse-to-fine PCFG posterior cutoff when parsing (0 = off; default 1e-4)")

    def train_from_args(self, args: argparse.Namespace, ui):
        from treegram.formalisms.pcfg import load_treebanks

        from treegram.plugins.ostag.model import OSTAGSettings, train_ostag

        if args.bayesian:
            from treegram.plugins.ostag.bayes_cli import train_bayesian_from_args

            return train_bayesian_from_args(args, ui)
        elementary = pcfg = None
        h = None if args.horizontal < 0 else args.horizontal
        v, mark_unary, rare = args.vertical, True, args.rare_threshold
        if args.from_tsg is not None:
            from treegram.formalism import load_model

            from treegram.plugins.ostag.extract import tsg_model_elementary_trees

            tsg = load_model(args.from_tsg)
            if getattr(tsg, "formalism", None) != "tsg" or not hasattr(tsg, "fragments"):
                raise InputError(f"{args.from_tsg} is a {tsg.formalism} model, not a TSG",
                                 hint="pass a model written by `treegram train tsg`")
            elementary = tsg_model_elementary_trees(tsg)
            pcfg = tsg.pcfg
            h, v, mark_unary = tsg.settings.horizontal, tsg.settings.vertical, False
            rare = tsg.settings.rare_threshold
            ui.note(f"{len(elementary)} elementary trees from {args.from_tsg}")
        settings = OSTAGSettings(kind=args.model, expand=not args.no_expand, spine_levels=args.spine_levels,
                                 horizontal=h, vertical=v, mark_unary=mark_unary, rare_threshold=rare,
                                 max_depth=args.max_depth, min_count=args.min_count,
                                 em_iterations=args.em_iterations, adj_init=args.adj_init,
                                 prune_threshold=args.prune_threshold, add_cfg_rules=not args.no_cfg_rules)
        from treegram.trees.tree import drop_oversized

        # EM keeps a span chart per training tree (quadratic in its length): huge trees are left out with a note
        trees = drop_oversized(load_treebanks(args, ui), 2000, what="OSTAG EM", note=ui.note)
        rows = []
        with ui.task("EM", total=args.em_iterations) as advance:
            def callback(rec):
                rows.append(rec)
                advance(1, info=f"LL {rec['log_likelihood']:.1f}  adjunctions {rec['expected_adjunctions']}  "
                                f"{rec['seconds']}s")

            model = train_ostag(trees, settings, elementary=elementary, pcfg=pcfg, callback=callback,
                                progress=lambda xs, d: ui.track(xs, description=d))
        if rows and not args.json:
            ui.table("EM (per iteration)", list(rows[0].keys()), [list(r.values()) for r in rows])
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
