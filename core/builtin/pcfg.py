"""The PCFG baseline formalism (registered through the ``treegram`` entry-point group, exactly as a third-party
formalism would be).  The estimation itself is the core library `treegram.grammar.pcfg`."""

from __future__ import annotations

import argparse

from treegram.corpora.treebank import add_treebank_arguments, load_treebanks
from treegram.formalism import Formalism
from treegram.grammar.pcfg import PCFGModel, PCFGSettings
from treegram.plugin_manager import hookimpl


class PCFGFormalism(Formalism):
    name = "pcfg"
    description = "treebank PCFG (markovized binarization, parent annotation, unknown-word classes)"
    trains_on = "trees"

    def configure_train_parser(self, parser: argparse.ArgumentParser) -> None:
        add_treebank_arguments(parser)
        parser.add_argument("--horizontal", type=int, default=2, help="horizontal markovization h (-1 = infinite)")
        parser.add_argument("--vertical", type=int, default=2, help="vertical markovization v (2 = parent annotation)")
        parser.add_argument("--rare-threshold", type=int, default=2,
                            help="words seen fewer times are replaced by unknown-word classes (default 2)")

    def train_from_args(self, args: argparse.Namespace, ui) -> PCFGModel:
        trees = load_treebanks(args, ui)
        settings = PCFGSettings(horizontal=None if args.horizontal < 0 else args.horizontal,
                                vertical=args.vertical, rare_threshold=args.rare_threshold)
        return PCFGModel.train(trees, settings, progress=lambda xs: ui.track(xs, description="binarizing"))

    def load_model(self, meta, arrays) -> PCFGModel:
        return PCFGModel.from_bundle(meta, arrays)


@hookimpl
def register_formalisms(register):
    register(PCFGFormalism())
