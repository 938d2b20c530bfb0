"""The TSG formalism through the core contract (`treegram.formalism`): the reference conversion.

What the plugin supplies: the settings (their fields are the `treegram train tsg` options), `prepare` (binarized,
integer-coded training trees and the treebank PCFG whose rule probabilities form the base distribution P0 of
Cohn et al. 2010, eq. 2), `make_state` (a substitution-flag state for the Gibbs site move, or the blocked state
whose proposal is the per-tree CFG transform of `plugins/tsg/proposal.py`), and `extract_model` (Goodman's
TSG->CFG transform for parsing, `plugins/tsg/model.py`, whose derivations map back to derived trees).  The
sampling loop, annealing, checkpoints, progress and the CLI are the core's (`treegram.training`).
"""

from __future__ import annotations

import attrs

from treegram.argtypes import nonnegative_int, open_probability, positive_float
from treegram.formalism import Formalism, RunOptions, Sampling, option
from treegram.bayes.averaging import average_option, options_averaging, thin_option
from treegram.option_groups import (
    decoder_option, horizontal_option, markov_horizontal, min_count_option, prune_option, rare_threshold_option,
    vertical_option,
)

from treegram.elementary.data import TSGSettings


@attrs.frozen
class TSGOptions:
    """`treegram train tsg` options (model definition and parsing grammar; the sampler options are the core's)."""

    horizontal: int = horizontal_option(1)
    vertical: int = vertical_option(2)
    rare_threshold: int = rare_threshold_option(2)
    alpha: float = option(1.0, help="initial DP concentration per category", type=positive_float, group="model")
    beta: float = option(0.5, help="initial stop probability per category", type=open_probability, group="model")
    fixed_hyper: bool = option(False, help="keep alpha and beta fixed (no slice sampling)", group="model")
    init: str = option("random", choices=("random", "minimal", "maximal"), group="model",
                       help="initial derivations: random cuts, every node a site (PCFG), or whole trees")
    min_count: int = min_count_option(1)
    prune_threshold: float = prune_option(1e-5)
    mpp_samples: int = option(0, help="the model's default decoder becomes the sampled MPP over N derivations "
                                      "(--decoder mpp with N samples; `treegram parse --decoder mpp --samples N` "
                                      "does the same for any model without retraining); 0 = --decoder",
                              type=nonnegative_int, group="parsing grammar")
    average: int = average_option(5)
    thin: int = thin_option()
    # `--default-decoder`: the spelling before issue 28 (in plugins/tsg/README.md until then), still accepted
    decoder: str = decoder_option("maxrule", deprecated=("--default-decoder",))

    def averaging(self):
        return options_averaging(self)

    def model_settings(self) -> TSGSettings:
        return TSGSettings(horizontal=markov_horizontal(self.horizontal), vertical=self.vertical,
                           rare_threshold=self.rare_threshold, alpha=self.alpha, beta=self.beta,
                           resample_alpha=not self.fixed_hyper, resample_beta=not self.fixed_hyper, init=self.init)


@attrs.frozen
class Prepared:
    trees: int
    settings: TSGSettings
    pcfg: object  # the treebank PCFG: base distribution P0, unknown words and coarse-to-fine pruning
    data: object  # TSGData: binarized, integer-coded trees with their candidate substitution sites


def _progress(record: dict) -> str:
    return (f"LL {record['log_likelihood']:.1f}  types {record.get('types', '?')}  T {record['temperature']:.2f}  "
            f"{record['seconds']:.1f}s")


class TSGFormalism(Formalism):
    name = "tsg"
    description = "Bayesian tree-substitution grammar (DP prior; collapsed Gibbs or blocked MH sampling)"
    trains_on = "trees"
    Settings = TSGOptions
    sampling = Sampling(iterations=100, default_move="gibbs", progress=_progress,
                        columns=(("elementary trees", "types"), ("changed/accepted", "changed|accepted")))
    state_kinds = ("sites", "items")

    def prepare(self, trees, options: TSGOptions) -> Prepared:
        from treegram.plugins.tsg.train import prepare_treebank

        settings = options.model_settings()
        num_trees, pcfg, data = prepare_treebank(trees, settings)
        return Prepared(num_trees, settings, pcfg, data)

    def make_state(self, prepared: Prepared, options, kind: str, run, ctx=None):
        from treegram.elementary.gibbs import GibbsTSG
        from treegram.plugins.tsg.state import BlockedTSG

        return (GibbsTSG if kind == "sites" else BlockedTSG)(prepared.data, prepared.settings, run.seed)

    def extract_model(self, state, prepared: Prepared, options: TSGOptions, run, trace, *, samples=None,
                      averaging_info=None):
        from treegram.plugins.tsg.train import extract_model

        info = {"training_trees": prepared.trees, "labels": prepared.data.num_labels,
                "sites": int(len(prepared.data.sites))}
        return extract_model(state, prepared.pcfg, prepared.settings, options, run, trace, info, samples,
                             averaging_info)

    def model_schema(self, meta):
        from treegram.plugins.tsg.model import tsg_schema

        return tsg_schema(meta)

    def load_model(self, meta, arrays):
        from treegram.plugins.tsg.model import TSGModel

        return TSGModel.from_bundle(meta, arrays)


def train_tsg(trees, options: TSGOptions | None = None, run: RunOptions | None = None, *, callback=None, note=None):
    """A TSG trained on treebank trees as `treegram train tsg` trains it: the core loop (`treegram.training.sample`)
    with its options (default the command line's) and the core's `RunOptions` (default: Gibbs, 100 sweeps, seed 0)."""
    from treegram.training import sample

    return sample(TSGFormalism(), trees, options or TSGOptions(), run or RunOptions(), callback=callback,
                  note=note)[0]
