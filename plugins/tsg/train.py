"""Training a TSG end to end: prepare trees, sample (Gibbs or blocked, checkpointed), extract the grammar -- from the
final sample, or averaged over several samples of the chain (`average`, `thin`: `treegram.bayes.averaging`)."""

from __future__ import annotations

from typing import Any, Callable

import attrs

from treegram.bayes.moves import BLOCKED, GIBBS
from treegram.elementary.data import TSGSettings, prepare
from treegram.elementary.gibbs import GibbsTSG
from treegram.elementary.run import RunOptions as ElementaryRunOptions
from treegram.errors import InputError
from treegram.grammar.pcfg import PCFGModel, PCFGSettings

from treegram.plugins.tsg.model import TSGModel, averaged_goodman_cfg, goodman_cfg, grammar_stats
from treegram.plugins.tsg.state import BlockedTSG


@attrs.frozen
class RunOptions(ElementaryRunOptions):
    """How to run the TSG sampler: the shared elementary-tree run options plus the sampler choice."""

    sampler: str = "gibbs"  # gibbs | blocked
    iterations: int = 100
    site_order: str = "random"
    mpp_samples: int = 0
    # posterior averaging (the Python API keeps the final sample by default; `treegram train tsg` averages)
    average: int = 1
    thin: int | None = None
    burn_in: int | None = None
    default_decoder: str | None = None  # recorded in the model: what `treegram parse` uses without --decoder

    def __attrs_post_init__(self):
        if self.sampler not in ("gibbs", "blocked"):
            raise InputError(f"unknown sampler {self.sampler!r}", hint="use --sampler gibbs or --sampler blocked")
        super().__attrs_post_init__()
        self.averaging()  # validates average / thin / burn_in

    def averaging(self):
        from treegram.bayes.averaging import AveragingOptions

        return AveragingOptions(self.average, self.thin, self.burn_in)


def prepare_treebank(trees, settings: TSGSettings):
    """(number of trees, the coarse PCFG whose rules are the base distribution, the integer-coded sampler data)."""
    trees = list(trees)
    if not trees:
        raise InputError("no training trees", hint="check the --treebank paths")
    pcfg = PCFGModel.train(trees, PCFGSettings(horizontal=settings.horizontal, vertical=settings.vertical,
                                               rare_threshold=settings.rare_threshold))
    data, _ = prepare(trees, settings, pcfg.mapper)
    return len(trees), pcfg, data


def make_state(data, settings: TSGSettings, run: RunOptions):
    cls = GibbsTSG if run.sampler == "gibbs" else BlockedTSG
    return cls(data, settings, run.seed)


def make_driver(state, run: RunOptions, callback: Callable[[dict], Any] | None = None):
    return run.make_driver(GIBBS if run.sampler == "gibbs" else BLOCKED, state, callback, site_order=run.site_order)


def extract_model(state, pcfg, settings: TSGSettings, run: RunOptions, trace: list[dict], info: dict,
                  samples: list[dict] | None = None, averaging_info: dict | None = None) -> TSGModel:
    """Sampler state -> TSGModel (refuses a state with a 64-bit key collision).  With `samples` (posterior
    snapshots from `treegram.bayes.averaging.SampleCollector`, newest first; more than one) the grammar is the
    averaged one (`averaged_goodman_cfg`); else the final state's."""
    from treegram.trees.labels import is_binarized_node

    state.check_collisions()
    labels = state.data.labels
    if samples is not None and len(samples) > 1:
        cfg, avg_types = averaged_goodman_cfg(state.data, samples, run.min_count)
        rows = [(n, m, r, samples[s]["flags"]) for n, m, r, s in avg_types]
    else:
        cfg, types = goodman_cfg(state, run.min_count)
        rows = [(count, None, rep, None) for count, rep, _lp, _slot in types]
    fragments, depths, lexicalized = [], [], []
    for count, mean, rep, flags in rows:
        tree = state.fragment_tree(rep, flags)
        fragment = {"tree": tree.to_bracket(), "count": count, "root": labels[state.data.label[rep]]}
        if mean is not None:
            fragment["mean_count"] = round(mean, 4)  # count = summed over the averaged samples
        fragments.append(fragment)
        depths.append(_depth(tree, is_binarized_node))
        lexicalized.append(any(not isinstance(c, type(tree)) for n in tree.subtrees() for c in n.children))
    info = {**info, **grammar_stats(fragments, depths, lexicalized),
            "log_likelihood": round(state.log_likelihood(), 3), "sampler": run.sampler,
            "iterations": len(trace), "seed": run.seed, **(averaging_info or {"averaged_samples": 1})}
    return TSGModel(cfg, pcfg, settings, fragments, info, trace, prune_threshold=run.prune_threshold,
                    mpp_samples=run.mpp_samples, default_decoder=getattr(run, "default_decoder", None))


def _depth(tree, is_binarized) -> int:
    """Depth in CFG levels of the *unbinarized* elementary tree (@ nodes do not add a level; words are leaves)."""
    best = 0
    stack = [(tree, 0)]
    while stack:
        node, d = stack.pop()
        if not node.children:
            continue  # frontier nonterminal
        level = d if (is_binarized(node.label) and d > 0) else d + 1
        best = max(best, level)
        for c in node.children:
            if not isinstance(c, str):
                stack.append((c, level))
    return best


def train_tsg(trees, settings: TSGSettings = TSGSettings(), run: RunOptions = RunOptions(), *,
              callback: Callable[[dict], Any] | None = None, progress=None, note=None) -> TSGModel:
    """Train a TSG on treebank trees (see `treegram train tsg -h` for the options)."""
    from treegram.bayes.averaging import SampleCollector

    num_trees, pcfg, data = prepare_treebank(trees, settings)
    state = make_state(data, settings, run)
    driver = make_driver(state, run, callback)
    collector = None
    if run.average > 1:
        collector = SampleCollector(run.averaging(), run.iterations, state.snapshot).attach(driver)
    if note is not None and run.resume:
        note(f"resumed from {run.checkpoint} after {driver.sweeps_done} iterations")
    trace = driver.run(run.iterations)  # Ctrl-C / kill: the core driver checkpoints at the next site and stops
    info = {"training_trees": num_trees, "labels": data.num_labels, "sites": int(len(data.sites))}
    if collector is None:
        return extract_model(state, pcfg, settings, run, trace, info)
    return extract_model(state, pcfg, settings, run, trace, info, collector.samples(), collector.info())
