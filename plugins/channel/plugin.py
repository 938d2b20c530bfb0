"""The channel plugin's hook implementation: the `channel` formalism (`treegram train channel`); compressing is the
core `treegram compress` (any compressor model)."""

from __future__ import annotations

from pathlib import Path

import attrs

from treegram.cli.argtypes import positive_int
from treegram.errors import InputError
from treegram.formalism import Formalism, option
from treegram.plugin_manager import hookimpl


@attrs.frozen
class ChannelOptions:
    """`treegram train channel` options."""

    pairs: list = option(required=True, nargs=2, metavar=("LONG", "SHORT"), type=Path,
                         help="line-parallel files: long sentences and their compressions, one tokenized sentence "
                              "per line")
    parser: Path = option(required=True, type=Path,
                          help="a treegram parsing model (pcfg, tsg, ...) for the long sentences")
    levels: int = option(6, type=int, choices=(6, 4),
                         help="6: lexicalized channel and source model, Witten-Bell over the six back-off levels "
                              "(Yamangil & Nelken 2008; default); 4: from level 4 down, unlexicalized (Knight & "
                              "Marcu 2000)")
    source: str = option("default", choices=("default", "lexicalized", "pcfg"),
                         help="source and added-subtree model: lexicalized with --levels 6, a PCFG with --levels 4 "
                              "(default); the other combinations are ablations")
    workers: int = option(1, type=positive_int, help="processes parsing the long sentences (default 1)")
    limit: int | None = option(None, type=positive_int, help="use only the first N pairs")
    parse_cache: Path | None = option(None, type=Path,
                                      help="directory for cached parses (bracket files keyed by input + parser)")


class ChannelFormalism(Formalism):
    name = "channel"
    description = ("lexicalized noisy-channel sentence compression (Yamangil & Nelken 2008); --levels 4: Knight & "
                   "Marcu's unlexicalized model")
    trains_on = "pairs"
    Settings = ChannelOptions

    def train(self, corpus, options: ChannelOptions, ctx):
        from treegram.compression.align import alignment_report, read_pairs
        from treegram.compression.treeprep import model_fingerprint
        from treegram.formalism import load_model

        from treegram.plugins.channel.compressor import train_channel

        ui = ctx.ui
        if not options.parser.is_file():
            raise InputError(f"{options.parser}: parser model not found",
                             hint="train one first, e.g. `treegram train pcfg --treebank ... --out pcfg.model`")
        parser = load_model(options.parser)
        if not hasattr(parser, "parse"):
            raise InputError(f"{options.parser}: a {parser.formalism} model cannot parse sentences",
                             hint="pass a parsing model (pcfg, tsg, tig, ostag)")
        pairs = read_pairs(options.pairs[0], options.pairs[1], text_alignment=True,
                           lines=slice(0, options.limit) if options.limit else None)
        if not pairs:
            raise InputError(f"{options.pairs[0]}: no sentence pairs", hint="give one tokenized sentence per line")
        rep = alignment_report(pairs)
        ui.note(f"read {rep['pairs']} pairs ({rep['pure_deletion']} pure deletions, {rep['non_deletion']} projected "
                f"onto their longest common subsequence); gold compression rate {rep['compression_rate']}%")
        source_lex = None if options.source == "default" else options.source == "lexicalized"
        return train_channel(pairs, parser, levels=options.levels, source_lexicalized=source_lex,
                             parser_path=options.parser,
                             parser_id=model_fingerprint(options.parser), cache_dir=options.parse_cache,
                             workers=options.workers, ui=ui)

    def load_model(self, meta, arrays):
        from treegram.plugins.channel.compressor import ChannelModel

        return ChannelModel.from_bundle(meta, arrays)


@hookimpl
def register_formalisms(register):
    register(ChannelFormalism())
