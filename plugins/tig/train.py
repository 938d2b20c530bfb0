"""Training a TIG end to end: prepare trees, optionally start from a TSG Gibbs sample, run blocked MH (checkpointed,
exact resume), extract the model (`model.TIGModel`) from the final sample or, with posterior averaging
(`treegram.bayes.averaging`, `treegram train tig --average K`), from the mean counts of K samples."""

from __future__ import annotations

from typing import Any, Callable

import attrs
import numpy as np

from treegram.elementary.data import prepare
from treegram.elementary.gibbs import gibbs_cuts
from treegram.elementary.run import RunOptions as ElementaryRunOptions
from treegram.elementary.tables import key_size, key_to_tree
from treegram.errors import InputError
from treegram.grammar.pcfg import PCFGModel, PCFGSettings

from treegram.plugins.tig.derivation import DP_INIT, DP_LEFT, DP_RIGHT, TIGSettings
from treegram.plugins.tig.grammar import Builder
from treegram.plugins.tig.model import TIGModel


@attrs.frozen
class RunOptions(ElementaryRunOptions):
    """How to run the TIG sampler: the shared elementary-tree run options plus the stored inventory size."""

    keep_fragments: int = 500  # elementary trees of each kind stored in the model for `treegram grammar`
    decoder: str | None = "maxrule"  # the model's default decoder (`treegram parse` without --decoder); None = mpd


# -- training ----------------------------------------------------------------------------------------------------
def extract_model(state, pcfg, settings: TIGSettings, run: RunOptions, trace: list[dict], info: dict,
                  samples: list[dict] | None = None, averaging_info: dict | None = None) -> TIGModel:
    """The parsing model of the final state, or (`samples`: `TypeTableState.snapshot()` dicts from
    `treegram.bayes.averaging.SampleCollector`, newest first) of the posterior average: every
    elementary tree seen in any sample at its mean count, with the mean concentrations, stop, foot and insertion
    probabilities (`TypeTableState.averaged_types`)."""
    view = state.averaged_types(samples)
    cfg, meta = Builder(state, run.min_count, view).build()
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
                           for n, key in items[: run.keep_fragments]]
    il, ir = state.insertions()
    info = {**info, **sizes, "training_insertions_left": il, "training_insertions_right": ir,
            "log_likelihood": round(state.log_likelihood(), 3), "iterations": len(trace), "seed": run.seed,
            **(averaging_info or {"averaged_samples": 1})}
    return TIGModel(cfg, meta, pcfg, settings, fragments, info, trace, prune_threshold=run.prune_threshold,
                    default_decoder=getattr(run, "decoder", None))


#: Training trees with more nodes are left out (with a note): the per-tree proposal chart is cubic in its length.
MAX_TRAIN_NODES = 2000


def train_tig(trees, settings: TIGSettings = TIGSettings(), run: RunOptions = RunOptions(), *,
              callback: Callable[[dict], Any] | None = None, init_callback: Callable[[dict], Any] | None = None,
              note=None, init_sub: np.ndarray | None = None, task=None) -> TIGModel:
    """Train a TIG / TIG0 on treebank trees by blocked MH (see `treegram train tig -h`).  `init_sub` (cut flags over
    the prepared rows, e.g. a TSG sample's) overrides `run.tsg_init`.  `task(description, total)` (e.g. `UI.task`)
    wraps each phase in a progress context whose `advance` the callbacks then receive as second argument (without
    `task` they get the sweep record only)."""
    from contextlib import nullcontext
    from treegram.bayes.moves import BLOCKED
    from treegram.plugins.tig.sampler import BlockedTIG

    from treegram.trees.tree import drop_oversized

    trees = drop_oversized(trees, MAX_TRAIN_NODES, what="TIG", note=note)
    if not trees:
        raise InputError("no training trees", hint="check the --treebank paths")
    pcfg = PCFGModel.train(trees, PCFGSettings(horizontal=settings.horizontal, vertical=settings.vertical,
                                               rare_threshold=settings.rare_threshold))
    data, _ = prepare(trees, settings.tsg_settings(), pcfg.mapper)
    if run.resume:
        state = BlockedTIG(data, settings, run.seed)
        driver = run.make_driver(BLOCKED, state, callback)
        if note is not None:
            note(f"resumed from {run.checkpoint} after {driver.sweeps_done} iterations")
    else:
        if init_sub is None and run.tsg_init:
            with (task("TSG Gibbs initialisation", run.tsg_init) if task else nullcontext()) as adv:
                cb = init_callback if (init_callback is None or task is None) else (lambda r: init_callback(r, adv))
                init_sub = gibbs_cuts(data, settings.tsg_settings(), run.tsg_init, run.seed, cb)
        state = BlockedTIG(data, settings, run.seed, init_sub=init_sub)
        driver = run.make_driver(BLOCKED, state, callback)
    if task is not None and callback is not None:
        with task(f"{settings.variant.upper()} blocked MH", run.iterations) as adv:
            driver.callback = lambda r: callback(r, adv)
            trace = driver.run(run.iterations)
    else:
        trace = driver.run(run.iterations)
    info = {"variant": settings.variant, "training_trees": len(trees), "labels": data.num_labels,
            "tsg_init_iterations": run.tsg_init}
    return extract_model(state, pcfg, settings, run, trace, info)
