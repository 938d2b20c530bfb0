"""Training a TSG end to end: prepare trees, sample (Gibbs or blocked, checkpointed: the core loop), extract the
grammar -- from the final sample, or averaged over several samples of the chain (`average`, `thin`:
`treegram.bayes.averaging`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from treegram.elementary.data import TSGSettings, prepare
from treegram.errors import InputError
from treegram.grammar.pcfg import PCFGModel, PCFGSettings

from treegram.plugins.tsg.model import TSGModel, averaged_goodman_cfg, goodman_cfg, grammar_stats

if TYPE_CHECKING:
    from treegram.formalism import RunOptions

    from treegram.plugins.tsg.formalism import TSGOptions


def prepare_treebank(trees, settings: TSGSettings):
    """(number of trees, the coarse PCFG whose rules are the base distribution, the integer-coded sampler data)."""
    trees = list(trees)
    if not trees:
        raise InputError("no training trees", hint="check the --treebank paths")
    pcfg = PCFGModel.train(trees, PCFGSettings(horizontal=settings.horizontal, vertical=settings.vertical,
                                               rare_threshold=settings.rare_threshold))
    data, _ = prepare(trees, settings, pcfg.mapper)
    return len(trees), pcfg, data


def extract_model(state, pcfg, settings: TSGSettings, options: TSGOptions, run: RunOptions, trace: list[dict],
                  info: dict, samples: list[dict] | None = None, averaging_info: dict | None = None) -> TSGModel:
    """Sampler state -> TSGModel (refuses a state with a 64-bit key collision), its parsing grammar as `options`
    (`TSGOptions`: min count, pruning, decoder) say.  With `samples` (posterior snapshots from
    `treegram.bayes.averaging.SampleCollector`, newest first; more than one) the grammar is the averaged one
    (`averaged_goodman_cfg`); else the final state's."""
    from treegram.trees.labels import is_binarized_node

    state.check_collisions()
    labels = state.data.labels
    if samples is not None and len(samples) > 1:
        cfg, avg_types = averaged_goodman_cfg(state.data, samples, options.min_count)
        rows = [(n, m, r, samples[s]["flags"]) for n, m, r, s in avg_types]
    else:
        cfg, types = goodman_cfg(state, options.min_count)
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
            "log_likelihood": round(state.log_likelihood(), 3), "sampler": run.move,
            "iterations": len(trace), "seed": run.seed, **(averaging_info or {"averaged_samples": 1})}
    return TSGModel(cfg, pcfg, settings, fragments, info, trace, prune_threshold=options.prune_threshold,
                    mpp_samples=options.mpp_samples, default_decoder=options.decoder)


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
