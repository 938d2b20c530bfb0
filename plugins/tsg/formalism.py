"""`treegram train tsg`: options, progress display and model loading."""

from __future__ import annotations

import argparse
from pathlib import Path

from treegram.formalism import Formalism

from treegram.plugins.tsg.data import TSGSettings
from treegram.cli import argtypes


class TSGFormalism(Formalism):
    name = "tsg"
    description = "Bayesian tree-substitution grammar (DP prior; collapsed Gibbs or blocked MH sampling)"
    trains_on = "trees"

    def configure_train_parser(self, parser: argparse.ArgumentParser) -> None:
        from treegram.formalisms.pcfg import add_treebank_arguments

        add_treebank_arguments(parser)
        g = parser.add_argument_group("sampling")
        g.add_argument("--iterations", type=argtypes.nonnegative_int, default=100, help="sampler sweeps over the treebank (default 100)")
        g.add_argument("--sampler", choices=("gibbs", "blocked"), default="gibbs",
                       help="gibbs: collapsed node-flip Gibbs; blocked: whole-tree Metropolis-Hastings through a "
                            "CFG transform (default gibbs)")
        g.add_argument("--site-order", choices=("random", "fixed"), default="random")
        g.add_argument("--anneal-start", type=argtypes.nonnegative_float, default=1.0, help="temperature of the first sweep (default 1)")
        g.add_argument("--anneal-end", type=argtypes.nonnegative_float, default=1.0,
                       help="temperature of the last sweep; linear schedule in between (default 1)")
        g.add_argument("--checkpoint", type=Path, default=None,
                       help="checkpoint file (default: OUT.ckpt); written every --checkpoint-every sweeps and on "
                            "Ctrl-C or kill")
        g.add_argument("--checkpoint-every", type=argtypes.nonnegative_int, default=1)
        g.add_argument("--resume", action="store_true", help="continue the run saved in the checkpoint")
        m = parser.add_argument_group("model")
        m.add_argument("--horizontal", type=argtypes.horizontal, default=1, help="horizontal markovization h (-1 = infinite; default 1)")
        m.add_argument("--vertical", type=argtypes.positive_int, default=2, help="vertical markovization v (default 2: parent labels)")
        m.add_argument("--rare-threshold", type=argtypes.nonnegative_int, default=2,
                       help="words seen fewer times become unknown-word classes (default 2)")
        m.add_argument("--alpha", type=argtypes.positive_float, default=1.0, help="initial DP concentration per category")
        m.add_argument("--beta", type=argtypes.open_probability, default=0.5, help="initial stop probability per category")
        m.add_argument("--fixed-hyper", action="store_true", help="keep alpha and beta fixed (no slice sampling)")
        m.add_argument("--init", choices=("random", "minimal", "maximal"), default="random",
                       help="initial derivations: random cuts, every node a site (PCFG), or whole trees")
        p = parser.add_argument_group("parsing grammar")
        p.add_argument("--min-count", type=argtypes.positive_int, default=1, help="keep elementary trees seen at least this often")
        p.add_argument("--prune-threshold", type=argtypes.probability, default=1e-5,
                       help="coarse-to-fine posterior threshold of the PCFG pass (0 = no pruning)")
        p.add_argument("--mpp-samples", type=argtypes.nonnegative_int, default=0,
                       help="parse by the most frequent of N sampled derivations' trees instead of Viterbi")

    def train_from_args(self, args: argparse.Namespace, ui):
        from treegram.formalisms.pcfg import load_treebanks
        from treegram.plugins.tsg.train import RunOptions, train_tsg

        settings = TSGSettings(horizontal=None if args.horizontal < 0 else args.horizontal, vertical=args.vertical,
                               rare_threshold=args.rare_threshold, alpha=args.alpha, beta=args.beta,
                               resample_alpha=not args.fixed_hyper, resample_beta=not args.fixed_hyper,
                               init=args.init)
        checkpoint = args.checkpoint or Path(str(args.out) + ".ckpt")
        run = RunOptions(sampler=args.sampler, iterations=args.iterations, seed=args.seed,
                         anneal_start=args.anneal_start, anneal_end=args.anneal_end, site_order=args.site_order,
                         checkpoint=checkpoint, checkpoint_every=args.checkpoint_every, resume=args.resume,
                         min_count=args.min_count, prune_threshold=args.prune_threshold,
                         mpp_samples=args.mpp_samples)
        trees = load_treebanks(args, ui)
        rows = []
        with ui.task(f"{args.sampler} sampling", total=args.iterations) as advance:
            def callback(record):
                rows.append(record)
                advance(1, info=f"LL {record['log_likelihood']:.1f}  types {record.get('types', '?')}  "
                                f"T {record['temperature']:.2f}  {record['seconds']:.1f}s")

            model = train_tsg(trees, settings, run, callback=callback, note=ui.note)
        if rows and not args.json:
            ui.table("sampling (per iteration)", ["iteration", "T", "log-likelihood", "elementary trees",
                                                  "changed/accepted", "seconds"],
                     [(r["sweep"], r["temperature"], round(r["log_likelihood"], 1), r.get("types", ""),
                       r.get("changed", r.get("accepted", "")), r["seconds"]) for r in rows[-20:]])
        ui.note(f"checkpoint: {checkpoint} (continue with --resume --iterations N)")
        return model

    def load_model(self, meta, arrays):
        from treegram.plugins.tsg.grammar import TSGModel

        return TSGModel.from_bundle(meta, arrays)
