"""`treegram train tig`: options, progress display and model loading."""

from __future__ import annotations

import argparse
from pathlib import Path

from treegram.formalism import Formalism

from treegram.plugins.tig.model import TIGSettings
from treegram.cli import argtypes


class TIGFormalism(Formalism):
    name = "tig"
    description = ("Bayesian tree-insertion grammar (DPs over initial and left/right auxiliary trees; blocked MH "
                   "through the TIG->TSG->CFG transform); --variant tig0 for Shindo et al.'s restricted TIG")
    trains_on = "trees"

    def configure_train_parser(self, parser: argparse.ArgumentParser) -> None:
        from treegram.formalisms.pcfg import add_treebank_arguments

        add_treebank_arguments(parser)
        m = parser.add_argument_group("model")
        m.add_argument("--variant", choices=("tig", "tig0"), default="tig",
                       help="tig: feet at any depth, stacked and spine insertions (Yamangil & Shieber 2012); "
                            "tig0: feet below the root, one insertion per node (Shindo et al. 2011)")
        m.add_argument("--horizontal", type=argtypes.horizontal, default=1, help="horizontal markovization h (-1 = infinite; default 1)")
        m.add_argument("--vertical", type=argtypes.positive_int, default=2, help="vertical markovization v (default 2)")
        m.add_argument("--rare-threshold", type=argtypes.nonnegative_int, default=2,
                       help="words seen fewer times become unknown-word classes (default 2)")
        m.add_argument("--alpha", type=argtypes.positive_float, default=1.0, help="initial DP concentration (all DPs)")
        m.add_argument("--beta", type=argtypes.open_probability, default=0.5, help="initial stop probability per label")
        m.add_argument("--phi", type=argtypes.open_probability, default=0.05, help="initial insertion probability per label and side")
        m.add_argument("--foot", type=argtypes.open_probability, default=0.5,
                       help="initial probability that an auxiliary tree's spine ends (foot) at the next level")
        m.add_argument("--fixed-hyper", action="store_true", help="keep alpha, beta, foot and phi fixed")
        g = parser.add_argument_group("sampling")
        g.add_argument("--iterations", type=argtypes.nonnegative_int, default=10, help="blocked MH sweeps over the treebank (default 10)")
        g.add_argument("--tsg-init", type=argtypes.nonnegative_int, default=0, metavar="N",
                       help="start from the cuts of N TSG collapsed-Gibbs sweeps (default 0: random cuts)")
        g.add_argument("--anneal-start", type=argtypes.nonnegative_float, default=1.0, help="temperature of the first sweep (default 1)")
        g.add_argument("--anneal-end", type=argtypes.nonnegative_float, default=1.0, help="temperature of the last sweep (default 1)")
        g.add_argument("--checkpoint", type=Path, default=None,
                       help="checkpoint file (default: OUT.ckpt); written every --checkpoint-every sweeps and on "
                            "Ctrl-C or kill")
        g.add_argument("--checkpoint-every", type=argtypes.nonnegative_int, default=1)
        g.add_argument("--resume", action="store_true", help="continue the run saved in the checkpoint")
        p = parser.add_argument_group("parsing grammar")
        p.add_argument("--min-count", type=argtypes.positive_int, default=1, help="keep elementary trees seen at least this often")
        p.add_argument("--prune-threshold", type=argtypes.probability, default=1e-5,
                       help="coarse-to-fine posterior threshold of the PCFG pass (0 = no pruning)")

    def train_from_args(self, args: argparse.Namespace, ui):
        from treegram.formalisms.pcfg import load_treebanks
        from treegram.plugins.tig.train import RunOptions, train_tig

        settings = TIGSettings(variant=args.variant, horizontal=None if args.horizontal < 0 else args.horizontal,
                               vertical=args.vertical, rare_threshold=args.rare_threshold, alpha=args.alpha,
                               beta=args.beta, foot=args.foot, phi=args.phi, resample=not args.fixed_hyper)
        checkpoint = args.checkpoint or Path(str(args.out) + ".ckpt")
        run = RunOptions(iterations=args.iterations, seed=args.seed, tsg_init=args.tsg_init,
                         anneal_start=args.anneal_start, anneal_end=args.anneal_end, checkpoint=checkpoint,
                         checkpoint_every=args.checkpoint_every, resume=args.resume, min_count=args.min_count,
                         prune_threshold=args.prune_threshold)
        trees = load_treebanks(args, ui)
        rows = []

        def callback(record, advance):
            rows.append(record)
            advance(1, info=f"LL {record['log_likelihood']:.1f}  initial {record.get('initial', '?')}  "
                            f"left {record.get('left', '?')}  right {record.get('right', '?')}  "
                            f"acc {record.get('acceptance_rate', 0):.2f}  {record['seconds']:.1f}s")

        def init_callback(record, advance):
            advance(1, info=f"TSG LL {record['log_likelihood']:.1f}  types {record.get('types', '?')}")

        model = train_tig(trees, settings, run, callback=callback, init_callback=init_callback, note=ui.note,
                          task=ui.task)
        if rows and not args.json:
            ui.table("blocked MH (per iteration)", ["iteration", "log-likelihood", "initial", "left aux",
                                                    "right aux", "insertions L/R", "acceptance", "seconds"],
                     [(r["sweep"], round(r["log_likelihood"], 1), r.get("initial", ""), r.get("left", ""),
                       r.get("right", ""), f"{r.get('ins_left', '')}/{r.get('ins_right', '')}",
                       round(r.get("acceptance_rate", 0.0), 3), round(r["seconds"], 2)) for r in rows[-20:]])
        ui.note(f"checkpoint: {checkpoint} (continue with --resume --iterations N)")
        return model

    def load_model(self, meta, arrays):
        from treegram.plugins.tig.train import TIGModel

        return TIGModel.from_bundle(meta, arrays)
