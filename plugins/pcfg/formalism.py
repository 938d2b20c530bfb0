"""The PCFG baseline formalism: `treegram train pcfg` settings and `PCFGFormalism`.

The model is the core library `treegram.grammar.pcfg` (the other formalisms build on the PCFG, and a plugin never
imports another plugin), so this plugin has no model.py."""

from __future__ import annotations

import attrs

from treegram.formalism import Formalism
from treegram.grammar.pcfg import PCFGModel, PCFGSettings
from treegram.option_groups import horizontal_option, markov_horizontal, rare_threshold_option, vertical_option


@attrs.frozen
class PCFGOptions:
    """`treegram train pcfg` options (the settings fields are the command-line options; see treegram.formalism)."""

    # h=2, v=2: Klein & Manning's (2003) markovization; the model is parsed with mpd (it saves no decoder)
    horizontal: int = horizontal_option(2, group=None)
    vertical: int = vertical_option(2, group=None)
    rare_threshold: int = rare_threshold_option(2, group=None)


class PCFGFormalism(Formalism):
    name = "pcfg"
    description = "treebank PCFG (markovized binarization, parent annotation, unknown-word classes)"
    trains_on = "trees"
    Settings = PCFGOptions

    def train(self, trees, options: PCFGOptions, ctx) -> PCFGModel:
        settings = PCFGSettings(horizontal=markov_horizontal(options.horizontal),
                                vertical=options.vertical, rare_threshold=options.rare_threshold)
        return PCFGModel.train(trees, settings, progress=lambda xs: ctx.ui.track(xs, description="binarizing"))

    def model_schema(self, meta):
        from treegram.grammar.pcfg import pcfg_schema

        return pcfg_schema()

    def load_model(self, meta, arrays) -> PCFGModel:
        return PCFGModel.from_bundle(meta, arrays)
