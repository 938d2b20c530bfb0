"""The TIG formalism through the core contract (`treegram.formalism`).

The plugin supplies the settings (the `treegram train tig` options), `prepare` (the TSG tree preparation and the
treebank PCFG whose rules form the base distributions P0 of the initial and auxiliary-tree DPs), `make_state`
(the blocked state whose per-tree proposal is the TIG->TSG->CFG transform of `plugins/tig/proposal.py`,
optionally started from the cuts of a few TSG Gibbs sweeps) and `extract_model` (the parsing CFG of
`plugins/tig/grammar.py` with per-symbol metadata for the back-transform to derived trees).  The blocked MH loop,
annealing, checkpoints and progress are the core's.
"""

from __future__ import annotations

import attrs

from treegram.argtypes import nonnegative_int, open_probability, positive_float
from treegram.errors import InputError
from treegram.bayes.averaging import average_option, options_averaging, thin_option
from treegram.formalism import Formalism, RunOptions, Sampling, option
from treegram.option_groups import (
    decoder_option, horizontal_option, markov_horizontal, min_count_option, prune_option, rare_threshold_option,
    vertical_option,
)

from treegram.plugins.tig.derivation import TIGSettings
from treegram import argtypes


@attrs.frozen
class TIGOptions:
    """`treegram train tig` options (model, initialisation and parsing grammar; the sampler options are the core's)."""

    # Defaults (issue 16): tig0, a 100-sweep TSG start and maxrule; benchmarks/bench_parsing_defaults_tag.py compares
    # them with their TSG controls and (grid) with --variant tig, --tsg-init 0 and mpd.
    variant: str = option("tig0", choices=("tig", "tig0"), group="model",
                          help="tig: feet at any depth, stacked and spine insertions (Yamangil & Shieber 2012); "
                               "tig0: feet below the root, one insertion per node (Shindo et al. 2011) (default tig0)")
    horizontal: int = horizontal_option(1)
    vertical: int = vertical_option(2)
    rare_threshold: int = rare_threshold_option(2)
    alpha: float = option(1.0, help="initial DP concentration (all DPs)", type=positive_float, group="model")
    beta: float = option(0.5, help="initial stop probability per label", type=open_probability, group="model")
    phi: float = option(0.05, help="initial insertion probability per label and side", type=open_probability,
                        group="model")
    foot: float = option(0.5, type=open_probability, group="model",
                         help="initial probability that an auxiliary tree's spine ends (foot) at the next level")
    fixed_hyper: bool = option(False, help="keep alpha, beta, foot and phi fixed", group="model")
    tsg_init: int = option(100, metavar="N", type=nonnegative_int, group="sampling",
                           help="start from the cuts of N TSG collapsed-Gibbs sweeps (0 = random cuts; default 100)")
    min_count: int = min_count_option(1)
    prune_threshold: float = prune_option(1e-5)
    average: int = average_option(5)
    thin: int = thin_option()
    decoder: str = decoder_option("maxrule")

    def __attrs_post_init__(self):
        from treegram.charts.decoders import get_decoder

        get_decoder(self.decoder)  # an unknown name is an error before training, not after

    def averaging(self):
        return options_averaging(self)

    def model_settings(self) -> TIGSettings:
        return TIGSettings(variant=self.variant, horizontal=markov_horizontal(self.horizontal),
                           vertical=self.vertical, rare_threshold=self.rare_threshold, alpha=self.alpha,
                           beta=self.beta, foot=self.foot, phi=self.phi, resample=not self.fixed_hyper)


@attrs.frozen
class Prepared:
    trees: int
    settings: TIGSettings
    pcfg: object  # treebank PCFG: base distributions, unknown words, coarse-to-fine pruning
    data: object  # TSGData: the prepared training trees


def _progress(r: dict) -> str:
    return (f"LL {r['log_likelihood']:.1f}  initial {r.get('initial', '?')}  left {r.get('left', '?')}  "
            f"right {r.get('right', '?')}  acc {r.get('acceptance_rate', 0):.2f}  {r['seconds']:.1f}s")


class TIGFormalism(Formalism):
    name = "tig"
    description = ("Bayesian tree-insertion grammar (DPs over initial and left/right auxiliary trees; blocked MH "
                   "through the TIG->TSG->CFG transform); --variant tig0 for Shindo et al.'s restricted TIG")
    trains_on = "trees"
    Settings = TIGOptions
    sampling = Sampling(iterations=10, default_move="blocked", site_order=False, label="blocked MH",
                        progress=_progress,
                        columns=(("initial", "initial"), ("left aux", "left"), ("right aux", "right"),
                                 ("insertions L", "ins_left"), ("insertions R", "ins_right"),
                                 ("acceptance", "acceptance_rate")))
    state_kinds = ("items",)

    def prepare(self, trees, options: TIGOptions) -> Prepared:
        from treegram.elementary.data import prepare
        from treegram.grammar.pcfg import PCFGModel, PCFGSettings

        from treegram.cli.ui import UI
        from treegram.plugins.tig.train import MAX_TRAIN_NODES
        from treegram.trees.tree import drop_oversized

        settings = options.model_settings()
        trees = drop_oversized(trees, MAX_TRAIN_NODES, what="TIG", note=UI().note)
        if not trees:
            raise InputError("no training trees", hint="check the --treebank paths")
        pcfg = PCFGModel.train(trees, PCFGSettings(horizontal=settings.horizontal, vertical=settings.vertical,
                                                   rare_threshold=settings.rare_threshold))
        data, _ = prepare(trees, settings.tsg_settings(), pcfg.mapper)
        return Prepared(len(trees), settings, pcfg, data)

    def make_state(self, prepared: Prepared, options: TIGOptions, kind: str, run, ctx=None):
        from contextlib import nullcontext

        from treegram.elementary.gibbs import gibbs_cuts

        from treegram.plugins.tig.sampler import BlockedTIG

        init_sub = None
        if options.tsg_init and not run.resume:  # on resume the checkpointed state replaces the initial cuts
            task = ctx.ui.task("TSG Gibbs initialisation", total=options.tsg_init) if ctx else nullcontext()
            with task as advance:
                def callback(r):
                    if advance is not None:
                        advance(1, info=f"TSG LL {r['log_likelihood']:.1f}  types {r.get('types', '?')}")

                init_sub = gibbs_cuts(prepared.data, prepared.settings.tsg_settings(), options.tsg_init, run.seed,
                                      callback)
        return BlockedTIG(prepared.data, prepared.settings, run.seed, init_sub=init_sub)

    def extract_model(self, state, prepared: Prepared, options: TIGOptions, run, trace, *, samples=None,
                      averaging_info=None):
        from treegram.plugins.tig.train import extract_model

        info = {"variant": prepared.settings.variant, "training_trees": prepared.trees,
                "labels": prepared.data.num_labels, "tsg_init_iterations": options.tsg_init}
        return extract_model(state, prepared.pcfg, prepared.settings, options, run, trace, info, samples,
                             averaging_info)

    def model_schema(self, meta):
        from treegram.plugins.tig.model import tig_schema

        return tig_schema(meta)

    def load_model(self, meta, arrays):
        from treegram.plugins.tig.model import TIGModel

        return TIGModel.from_bundle(meta, arrays)


def train_tig(trees, options: TIGOptions | None = None, run: RunOptions | None = None, *, callback=None, note=None):
    """Train a TIG / TIG0 with `treegram train tig`'s options (`TIGOptions`; by default a 100-sweep TSG start and
    averaging) on the core loop (`treegram.training.sample`; `run`: blocked MH, 100 sweeps, seed 0 by default)."""
    from treegram.training import sample

    return sample(TIGFormalism(), trees, options or TIGOptions(), run or RunOptions(), callback=callback,
                  note=note)[0]
