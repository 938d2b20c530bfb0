"""TIG plugin: the optimised anchored proposal builder (`anchored.TreeGrammar`, which skips cached types whose rule
shapes do not all occur in the tree) gives the same CFG as the unoptimised one (`TreeGrammar(..., filter_candidates=False)`).

The reference also builds sub-grammars of such types before finding them dead; those symbols are unreachable from
the start symbol.  So both grammars are trimmed to the symbols reachable from the start, renumbered in depth-first
order (a symbol's rules in emission order), and then compared: same symbols with the same metadata (role, anchored
row, foot), same rules, log-probs within 1e-12; the charts' log Z agree and the same seed draws the same encoding.
"""

from __future__ import annotations

import numpy as np
import pytest

from treegram.bayes import BlockedMH

from treegram.plugins.tig.proposal import TreeGrammar
from treegram.plugins.tig.derivation import TIGSettings
from treegram.plugins.tig.sampler import BlockedTIG

from test_tig_transform import make_state


def canonical(tg):
    """(start-reachable symbols in DFS order as (role, node, foot, rules)) with rules over canonical ids."""
    rules: dict[int, list] = {}
    for p, a, b, w in tg.bin:
        rules.setdefault(p, []).append(("b", (a, b), w))
    for p, a, w in tg.un:
        rules.setdefault(p, []).append(("u", (a,), w))
    for pos, s, w in tg.lex:
        rules.setdefault(s, []).append(("l", (), w, pos))
    start = tg.memo[("SUB", tg.lo)]
    order: dict[int, int] = {}
    stack = [start]
    while stack:  # iterative pre-order DFS, children in rule order
        s = stack.pop()
        if s in order:
            continue
        order[s] = len(order)
        kids = [k for r in rules.get(s, []) for k in r[1]]
        stack.extend(reversed(kids))
    out = []
    for s in sorted(order, key=order.get):
        rs = [(r[0], tuple(order[k] for k in r[1]), r[3] if r[0] == "l" else None, r[2]) for r in rules.get(s, [])]
        out.append((tg.role[s], tg.node[s], tg.foot[s], rs))
    return out


def assert_same(state, items):
    """Compare the two builders on these trees; returns the total symbols (reference, optimised) before trimming."""
    checked = 0
    sizes = [0, 0]
    for item in items:
        lo, hi = state.data.tree_rows(item)
        args = (state.T, state.counts, state.hyper, lo, hi, state.settings.tig0)
        ref, new = TreeGrammar(*args, filter_candidates=False), TreeGrammar(*args)
        g_ref, g_new = ref.build(), new.build()
        assert (g_ref is None) == (g_new is None)
        if g_ref is None:
            continue
        a, b = canonical(ref), canonical(new)
        assert len(a) == len(b)
        for (ra, na, fa, rules_a), (rb, nb, fb, rules_b) in zip(a, b):
            assert (ra, na, fa) == (rb, nb, fb)
            assert [r[:3] for r in rules_a] == [r[:3] for r in rules_b]
            np.testing.assert_allclose([r[3] for r in rules_a], [r[3] for r in rules_b], rtol=0, atol=1e-12)
        assert g_new.num_symbols <= g_ref.num_symbols
        sizes[0] += g_ref.num_symbols
        sizes[1] += g_new.num_symbols
        assert g_new.chart().log_z == pytest.approx(g_ref.chart().log_z, abs=1e-12)
        d_ref, _ = g_ref.sample(np.random.default_rng(item))
        d_new, _ = g_new.sample(np.random.default_rng(item))
        for x, y in zip(ref.encoding(np.unique(d_ref.steps[:, 2])), new.encoding(np.unique(d_new.steps[:, 2]))):
            assert np.array_equal(x, y)
        checked += 1
    assert checked == len(items)
    return sizes


@pytest.mark.parametrize("variant", ["tig", "tig0"])
def test_same_cfg_on_small_trees(variant):
    state = make_state(variant, sweeps=4)
    assert sum(state.num_types()[1:]) > 0  # cached auxiliary types take part
    for item in range(state.num_items()):
        state.remove(item)
        assert_same(state, [item])
        state.add(item, state.current(item))


def prepared_state(trees, variant):
    from treegram.grammar.pcfg import PCFGModel, PCFGSettings
    from treegram.elementary.data import TSGSettings, prepare

    pcfg = PCFGModel.train(trees, PCFGSettings(horizontal=1, vertical=2, rare_threshold=2))
    data, _ = prepare(trees, TSGSettings(horizontal=1, vertical=2), pcfg.mapper)
    state = BlockedTIG(data, TIGSettings(variant=variant, horizontal=1, vertical=2, phi=0.2), 3)
    BlockedMH(state, seed=3).run(1)
    return state


@pytest.mark.parametrize("variant", ["tig", "tig0"])
def test_same_cfg_on_ptb_sample(shared_data, variant):
    state = ptb_state(shared_data, variant)
    assert sum(state.num_types()[1:]) > 0
    items = list(range(0, state.num_items(), 10))
    for item in items:  # as in the sampler, a tree's proposal is built without its own elementary trees
        state.remove(item)
    ref, new = assert_same(state, items)
    assert new < ref  # the shortcut really skipped dead sub-grammars here


def ptb_state(shared_data, variant):
    from treegram.trees import read_treebank

    return prepared_state(list(read_treebank([shared_data / "ptb-sample" / "train"]))[:250], variant)


def test_same_cfg_on_demo_trees():
    from treegram.corpora.demo import demo_trees

    state = prepared_state(list(demo_trees()), "tig")
    BlockedMH(state, seed=0).run(2)
    for item in range(state.num_items()):
        state.remove(item)
        assert_same(state, [item])
        state.add(item, state.current(item))
