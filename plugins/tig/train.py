"""Training a TIG end to end: prepare trees, optionally start from a TSG Gibbs sample, run blocked MH (the core loop:
checkpointed, exact resume), extract the model (`model.TIGModel`) from the final sample or, with posterior averaging
(`treegram.bayes.averaging`, `treegram train tig --average K`), from the mean counts of K samples."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from treegram.elementary.tables import key_size, key_to_tree

from treegram.plugins.tig.derivation import DP_INIT, DP_LEFT, DP_RIGHT, TIGSettings
from treegram.plugins.tig.grammar import Builder
from treegram.plugins.tig.model import TIGModel

if TYPE_CHECKING:
    from treegram.formalism import RunOptions

    from treegram.plugins.tig.formalism import TIGOptions

#: elementary trees of each kind stored in the model for `treegram grammar`
KEEP_FRAGMENTS = 500


# -- training ----------------------------------------------------------------------------------------------------
def extract_model(state, pcfg, settings: TIGSettings, options: TIGOptions, run: RunOptions, trace: list[dict],
                  info: dict, samples: list[dict] | None = None, averaging_info: dict | None = None) -> TIGModel:
    """The parsing model (its grammar as `options`, `TIGOptions`, say: min count, pruning, decoder) of the final
    state, or (`samples`: `TypeTableState.snapshot()` dicts from
    `treegram.bayes.averaging.SampleCollector`, newest first) of the posterior average: every
    elementary tree seen in any sample at its mean count, with the mean concentrations, stop, foot and insertion
    probabilities (`TypeTableState.averaged_types`)."""
    view = state.averaged_types(samples)
    cfg, meta = Builder(state, options.min_count, view).build()
    labels, words = state.data.labels, state.data.words
    fragments: dict[str, list[dict[str, Any]]] = {}
    sizes = {}
    for name, dp in (("initial", DP_INIT), ("left", DP_LEFT), ("right", DP_RIGHT)):
        # count = summed over the averaged samples (the final sample's count with one), as the TSG lists them
        items = [(n, key) for (d, key), n in view.summed.items() if d == dp]
        items.sort(key=lambda t: (-t[0], key_size(t[1]), repr(t[1])))
        sizes[f"{name}_trees"] = len(items)
        sizes[f"{name}_trees_count_gt1"] = sum(1 for n, _ in items if n > 1)
        fragments[name] = [{"tree": key_to_tree(key, labels, words).to_bracket(), "count": int(n),
                            "root": labels[key[0]],
                            **({"mean_count": round(view.count[(dp, key)], 4)} if view.samples > 1 else {})}
                           for n, key in items[:KEEP_FRAGMENTS]]
    il, ir = state.insertions()
    info = {**info, **sizes, "training_insertions_left": il, "training_insertions_right": ir,
            "log_likelihood": round(state.log_likelihood(), 3), "iterations": len(trace), "seed": run.seed,
            **(averaging_info or {"averaged_samples": 1})}
    return TIGModel(cfg, meta, pcfg, settings, fragments, info, trace, prune_threshold=options.prune_threshold,
                    default_decoder=options.decoder)


#: Training trees with more nodes are left out (with a note): the per-tree proposal chart is cubic in its length.
MAX_TRAIN_NODES = 2000
