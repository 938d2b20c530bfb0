"""The `channel` formalism: its settings (`treegram train channel` options) and `ChannelFormalism`; compressing is the
core `treegram compress` (any compressor model)."""

from __future__ import annotations

import attrs

from treegram.argtypes import positive_int
from treegram.compression.policy import CompressorOptions
from treegram.formalism import Formalism, option

from treegram.plugins.channel import DEFAULT_LEVELS


@attrs.frozen
class ChannelOptions(CompressorOptions):
    """`treegram train channel` options (the inputs and the deletion-policy options come from `CompressorOptions`)."""

    levels: int = option(DEFAULT_LEVELS, type=int, choices=(4, 6),
                         help="4: from level 4 down, unlexicalized (Knight & Marcu 2000; default: the better "
                              "measured on broadcast-news dev, benchmarks/RESULTS.md `channel`); 6: lexicalized "
                              "channel and source model, Witten-Bell over the six back-off levels (Yamangil & "
                              "Nelken 2008)")
    source: str = option("default", choices=("default", "lexicalized", "pcfg"),
                         help="source and added-subtree model: lexicalized with --levels 6, a PCFG with --levels 4 "
                              "(default); the other combinations are ablations")
    workers: int = option(1, type=positive_int, help="processes parsing the long sentences (default 1)")


class ChannelFormalism(Formalism):
    name = "channel"
    description = ("lexicalized noisy-channel sentence compression (Yamangil & Nelken 2008); --levels 4: Knight & "
                   "Marcu's unlexicalized model")
    trains_on = "pairs"
    Settings = ChannelOptions

    def train(self, corpus, options: ChannelOptions, ctx):
        from treegram.compression.align import load_training_data
        from treegram.compression.compressor import parser_fingerprint
        from treegram.plugins.channel.compressor import train_channel

        ui = ctx.ui
        parser, pairs = load_training_data(options.pairs, options.parser, limit=options.limit, note=ui.note)
        source_lex = None if options.source == "default" else options.source == "lexicalized"
        return train_channel(pairs, parser, levels=options.levels, source_lexicalized=source_lex,
                             parser_path=options.parser,
                             parser_id=parser_fingerprint(options.parser), cache_dir=options.parse_cache,
                             workers=options.workers, ui=ui, options=options)

    def model_schema(self, meta):
        from treegram.errors import ModelFileError
        from treegram.plugins.channel.compressor import FORMAT, ChannelModel

        if meta.get("format") != FORMAT:  # an older layout: say so rather than list its differences
            raise ModelFileError(f"channel model of format {meta.get('format')!r}, but this treegram reads "
                                 f"{FORMAT!r}", hint="retrain it with `treegram train channel`")
        return ChannelModel.schema()

    def load_model(self, meta, arrays):
        from treegram.plugins.channel.compressor import ChannelModel

        return ChannelModel.from_bundle(meta, arrays)
