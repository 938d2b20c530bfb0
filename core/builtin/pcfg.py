"""The PCFG baseline formalism (registered through the ``treegram`` entry-point group, exactly as a third-party
formalism would be).  The estimation itself is the core library `treegram.grammar.pcfg`."""

from __future__ import annotations

import attrs

from treegram.argtypes import horizontal, positive_int
from treegram.formalism import Formalism, option
from treegram.grammar.pcfg import PCFGModel, PCFGSettings
from treegram.plugin_manager import hookimpl


@attrs.frozen
class PCFGOptions:
    """`treegram train pcfg` options (the settings fields are the command-line options; see treegram.formalism)."""

    horizontal: int = option(2, help="horizontal markovization h (-1 = infinite)", type=horizontal)
    vertical: int = option(2, help="vertical markovization v (2 = parent annotation)", type=positive_int)
    rare_threshold: int = option(2, help="words seen fewer times are replaced by unknown-word classes (default 2)",
                                 type=positive_int)


class PCFGFormalism(Formalism):
    name = "pcfg"
    description = "treebank PCFG (markovized binarization, parent annotation, unknown-word classes)"
    trains_on = "trees"
    Settings = PCFGOptions

    def train(self, trees, options: PCFGOptions, ctx) -> PCFGModel:
        settings = PCFGSettings(horizontal=None if options.horizontal < 0 else options.horizontal,
                                vertical=options.vertical, rare_threshold=options.rare_threshold)
        return PCFGModel.train(trees, settings, progress=lambda xs: ctx.ui.track(xs, description="binarizing"))

    def model_schema(self, meta):
        from treegram.grammar.pcfg import pcfg_schema

        return pcfg_schema()

    def load_model(self, meta, arrays) -> PCFGModel:
        return PCFGModel.from_bundle(meta, arrays)


@hookimpl
def register_formalisms(register):
    register(PCFGFormalism())
