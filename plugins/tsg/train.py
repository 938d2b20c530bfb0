"""Training a TSG end to end: prepare trees, sample (Gibbs or blocked, checkpointed), extract the grammar."""

from __future__ import annotations

from typing import Any, Callable

import attrs

from treegram.bayes.moves import BLOCKED, GIBBS
from treegram.elementary.data import TSGSettings, prepare
from treegram.elementary.gibbs import GibbsTSG
from treegram.elementary.run import RunOptions as ElementaryRunOptions
from treegram.errors import InputError
from treegram.grammar.pcfg import PCFGModel, PCFGSettings

from treegram.plugins.tsg.model import TSGModel, goodman_cfg, grammar_stats
from treegram.plugins.tsg.state import BlockedTSG


@attrs.frozen
class RunOptions(ElementaryRunOptions):
    """How to run the TSG sampler: the shared elementary-tree run options plus the sampler choice."""

    sampler: str = "gibbs"  # gibbs | blocked
    iterations: int = 100
    site_order: str = "random"
    mpp_samples: int = 0

    def __attrs_post_init__(self):
        if self.sampler not in ("gibbs", "blocked"):
            raise InputError(f"unknown sampler {self.sampler!r}", hint="use --sampler gibbs or --sampler blocked")
        super().__attrs_post_init__()


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


def extract_model(state, pcfg, settings: TSGSettings, run: RunOptions, trace: list[dict], info: dict) -> TSGModel:
    """Final sampler state -> TSGModel (refuses a state with a 64-bit key collision)."""
    from treegram.trees.labels import is_binarized_node

    state.check_collisions()
    cfg, types = goodman_cfg(state, run.min_count)
    labels = state.data.labels
    fragments, depths, lexicalized = [], [], []
    for count, rep, _lp, _slot in types:
        tree = state.fragment_tree(rep)
        fragments.append({"tree": tree.to_bracket(), "count": count, "root": labels[state.data.label[rep]]})
        depths.append(_depth(tree, is_binarized_node))
        lexicalized.append(any(not isinstance(c, type(tree)) for n in tree.subtrees() for c in n.children))
    info = {**info, **grammar_stats(fragments, depths, lexicalized),
            "log_likelihood": round(state.log_likelihood(), 3), "sampler": run.sampler,
            "iterations": len(trace), "seed": run.seed}
    return TSGModel(cfg, pcfg, settings, fragments, info, trace, prune_threshold=run.prune_threshold,
                    mpp_samples=run.mpp_samples)


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
    num_trees, pcfg, data = prepare_treebank(trees, settings)
    state = make_state(data, settings, run)
    driver = make_driver(state, run, callback)
    if note is not None and run.resume:
        note(f"resumed from {run.checkpoint} after {driver.sweeps_done} iterations")
    trace = driver.run(run.iterations)  # Ctrl-C / kill: the core driver checkpoints at the next site and stops
    info = {"training_trees": num_trees, "labels": data.num_labels, "sites": int(len(data.sites))}
    return extract_model(state, pcfg, settings, run, trace, info)
