"""Option groups several formalisms share, declared once (issue 28 item 2), on the neutral `treegram.options`.

Each function returns one `treegram.formalism.option` field (an attrs field that is also a ``treegram train NAME``
option), so a formalism's settings class writes ``horizontal: int = horizontal_option(1)`` and gets the flag, its
type check, its help text and its group from here.  The *default* is the formalism's, because the formalisms need
different ones (measured, see each plugin), and the help text states it:

=============  ============  ==========  =====================================================================
group          field         defaults    who
=============  ============  ==========  =====================================================================
markovization  horizontal    2 / 1 / 0   pcfg (Klein & Manning's h=2) / tsg, tig / ostag's built-in source
               vertical      2 / 2 / 1   pcfg, tsg, tig (parent annotation) / ostag's built-in source
               rare_threshold 2          pcfg, tsg, tig, ostag
pruning        prune_threshold 1e-5      tsg, tig (ostag: None = 1e-4, or its source TSG's own)
               CELL_BEAM     15 nats     every chart model at parse time (``treegram parse --cell-beam``, not saved)
parsing        min_count     1 / 2       tsg, tig / ostag's built-in source
decoder        decoder       maxrule     tsg, tig, ostag (pcfg saves none: its models parse with ``mpd``)
compression    pairs, parser, limit, parse_cache: `treegram.compression.policy.CompressorOptions` (channel, stsg)
=============  ============  ==========  =====================================================================

`markov_horizontal` turns the command line's ``-1`` (infinite) into the ``None`` the binarizer takes.
"""

from __future__ import annotations

from treegram import argtypes
from treegram.options import option


# -- markovization ---------------------------------------------------------------------------------------------
def horizontal_option(default: int, *, group: str = "model", what: str = ""):
    """``--horizontal H``: horizontal markovization of the binarized training trees (-1 = infinite)."""
    return option(default, help=f"{what}horizontal markovization h (-1 = infinite; default {default})", group=group,
                  type=argtypes.horizontal)


def vertical_option(default: int, *, group: str = "model", what: str = ""):
    """``--vertical V``: vertical markovization (1 = none, 2 = parent annotation, 3 = grandparent)."""
    return option(default, help=f"{what}vertical markovization v (1 = none, 2 = parent labels; default {default})",
                  group=group, type=argtypes.positive_int)


def rare_threshold_option(default: int = 2, *, group: str = "model"):
    """``--rare-threshold N``: words seen fewer times become unknown-word classes."""
    return option(default, help=f"words seen fewer times become unknown-word classes (default {default})",
                  type=argtypes.positive_int, group=group)


def markov_horizontal(value: int | None) -> int | None:
    """The command line's horizontal markovization as the binarizer takes it: -1 (infinite) -> None."""
    return None if value is None or value < 0 else value


# -- pruning and the parsing grammar ------------------------------------------------------------------------------
#: Cell beam (nats) of every exhaustive chart pass at parse time (a PCFG's own chart, the coarse PCFG pass of a
#: tsg/tig/ostag model; `treegram.charts.pruning.cell_beam`): a cell's entries more than this far below its best
#: are dropped.  Chosen on ptb-sample dev as the widest of {15, 13, 12, 11} that changed no PCFG parse
#: (benchmarks/RESULTS.md `parse-speed-26`); 0 = exhaustive.
CELL_BEAM = 15.0


def prune_option(default: float | None = 1e-5, *, group: str = "parsing grammar", note: str = ""):
    """``--prune-threshold P``: the coarse-to-fine posterior cutoff of the treebank PCFG pass when parsing."""
    return option(default, type=argtypes.probability, group=group,
                  help=note or f"coarse-to-fine posterior threshold of the PCFG pass, a probability in [0, 1] (0 = no "
                               f"pruning; default {default})")


def min_count_option(default: int = 1, *, group: str = "parsing grammar", help: str | None = None):
    """``--min-count N``: elementary trees kept in the parsing grammar."""
    return option(default, type=argtypes.nonnegative_int, group=group,
                  help=help or f"keep elementary trees seen at least this often (default {default})")


# -- the decoder a model is parsed with ---------------------------------------------------------------------------
def decoder_names() -> tuple[str, ...]:
    from treegram.plugin_manager import decoders

    return tuple(sorted(decoders()))


def decoder_name(text: str) -> str:
    """A registered decoder's name (argparse type: an unknown name is one clear error before training)."""
    import argparse

    names = decoder_names()
    if text not in names:
        raise argparse.ArgumentTypeError(f"unknown decoder {text!r} (installed: {', '.join(names) or 'none'}; "
                                         "`treegram plugins` lists them)")
    return text


def decoder_option(default: str = "maxrule", *, group: str = "parsing grammar", note: str = "",
                   deprecated: tuple[str, ...] = ()):
    """``--decoder NAME``: the decoder saved in the model, which ``treegram parse`` (and everything that parses with
    the model: compression, batches, the Python ``model.parse``) uses when none is named
    (`treegram.charts.decoders.resolve_decoder`)."""
    return option(default, group=group, metavar="NAME", type=decoder_name, deprecated=deprecated,
                  help=f"the decoder `treegram parse` uses for this model when given no --decoder (saved in the "
                       f"model; mpd, mpp, maxrule, maxrule-sum or a plugin's; default {default}){note}")


__all__ = ["CELL_BEAM", "decoder_name", "decoder_names", "decoder_option", "horizontal_option", "markov_horizontal",
           "min_count_option", "prune_option", "rare_threshold_option", "vertical_option"]
