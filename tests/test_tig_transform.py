"""TIG plugin: the anchored TIG -> CFG transform is exact.

On small trees we enumerate (a) every encoding (sub, adir, afoot) by brute force, keeping those the model's
decoder accepts with non-zero probability, and (b) every derivation of the anchored CFG, mapped back to an
encoding through its symbols.  The two sets must coincide, and for every TIG derivation the CFG's paths must sum
to the model's independent-predictive probability prod_e (n_e + alpha P0(e)) / (n + alpha) x phi-terms, with the
counts of the other trees cached (so cached-tree paths, including ones with insertions inside, are exercised).
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from conftest import substitution_vectors

from treegram.bayes import BlockedMH
from treegram.trees import parse_brackets

from treegram.plugins.tig.proposal import TreeGrammar
from treegram.plugins.tig.derivation import LEFT, RIGHT, Invalid, TIGSettings, decode, phi_log
from treegram.plugins.tig.sampler import BlockedTIG
from treegram.elementary.data import KIND_BINARY, TSGData

# already binary, TOP-rooted; same-category paths give left/right insertion sites at several depths
TREES = """
(TOP (NP (NP (DT the) (NN dog)) (PP (IN of) (NP (NN cats)))))
(TOP (NP (JJ big) (NP (JJ red) (NP (NN dog)))))
(TOP (S (NP (NN dog)) (VP (VP (VB runs)) (ADVP (RB fast)))))
(TOP (NP (NP (NP (NN dog)) (NN cats)) (NN dog)))
(TOP (NP (JJ big) (NP (NP (NN dog)) (PP (IN of) (NP (NN cats))))))
"""


def make_state(variant: str, seed: int = 0, sweeps: int = 3):
    trees = parse_brackets(TREES) * 2
    data = TSGData(trees)
    settings = TIGSettings(variant=variant, alpha=0.8, beta=0.4, foot=0.6, phi=0.3, resample=False)
    state = BlockedTIG(data, settings, seed)
    nl = data.num_labels
    h = state.hyper
    h.alpha[:] = 0.3 + 0.1 * (np.arange(3)[:, None] + np.arange(nl)[None, :] % 5)
    h.beta[:] = 0.2 + 0.5 * (np.arange(nl) % 3) / 3
    h.foot[1:] = 0.3 + 0.4 * (np.arange(nl) % 2)
    h.phi[1] = 0.35 + 0.1 * (np.arange(nl) % 2)
    h.phi[2] = 0.25 + 0.1 * (np.arange(nl) % 3)
    state.rebuild()
    BlockedMH(state, seed=seed).run(sweeps)
    return state


def brute_force(state, item):
    """Every valid encoding of tree `item` with its log q (independent predictive)."""
    d = state.data
    T = state.T
    lo, hi = d.tree_rows(item)
    rows = list(range(lo, hi))
    sub_rows = [x for x in rows if not d.is_word[x] and x != lo]
    aux_opts = []
    for x in rows:
        opts = [(0, -1)]
        if T.kind[x] == KIND_BINARY:
            for side, ch in ((LEFT, T.child2), (RIGHT, T.child1)):
                q = x
                while T.kind[q] == KIND_BINARY:
                    q = int(ch[q])
                    opts.append((side, q))
        aux_opts.append(opts)
    out = {}
    for sub in substitution_vectors(lo, hi, sub_rows):
        for auxs in itertools.product(*aux_opts):
            adir = np.array([a for a, _ in auxs], np.int8)
            afoot = np.array([z for _, z in auxs], np.int32)
            try:
                occs, phis = decode(T, lo, hi, sub, adir, afoot, state.settings.tig0)
            except Invalid:
                continue
            lq = state._log_pred(occs, False) + phi_log(phis, state.hyper)
            if lq > -math.inf:
                out[(sub.tobytes(), adir.tobytes(), afoot.tobytes())] = lq
    return out


def cfg_derivations(tg: TreeGrammar, g):
    """All derivations of the anchored CFG: {encoding: log of the summed path weights}."""
    rules: dict[int, list] = {}
    for p, a, b, w in tg.bin:
        rules.setdefault(p, []).append((w, (a, b)))
    for p, a, w in tg.un:
        rules.setdefault(p, []).append((w, (a,)))
    for _pos, s, w in tg.lex:
        rules.setdefault(s, []).append((w, ()))
    memo: dict[int, list] = {}

    def derivs(s):
        if s in memo:
            return memo[s]
        out = []
        for w, kids in rules.get(s, []):
            parts = [derivs(k) for k in kids]
            for combo in itertools.product(*parts):
                used = frozenset().union(*(u for _, u in combo)) | {s}
                out.append((w + sum(lw for lw, _ in combo), used))
        memo[s] = out
        return out

    grouped: dict[tuple, float] = {}
    for lw, used in derivs(g.start):
        sub, adir, afoot = tg.encoding(np.array(sorted(used), np.int64))
        key = (sub.tobytes(), adir.tobytes(), afoot.tobytes())
        grouped[key] = np.logaddexp(grouped.get(key, -np.inf), lw)
    return grouped


@pytest.mark.parametrize("variant", ["tig", "tig0"])
@pytest.mark.parametrize("item", [0, 1, 3, 4])
def test_transform_is_exact(variant, item):
    state = make_state(variant)
    state.remove(item)
    expected = brute_force(state, item)
    lo, hi = state.data.tree_rows(item)
    tg = TreeGrammar(state.T, state.counts, state.hyper, lo, hi, state.settings.tig0)
    g = tg.build()
    got = cfg_derivations(tg, g)
    assert set(got) == set(expected)
    for k, lq in expected.items():
        assert got[k] == pytest.approx(lq, abs=1e-9)
    # the chart's normaliser is the sum over all TIG derivations
    log_z = g.chart().log_z
    assert log_z == pytest.approx(np.logaddexp.reduce(list(expected.values())), abs=1e-9)
    if variant == "tig":
        # the tree has derivations with insertions, stacked and deep ones among them
        adirs = [np.frombuffer(k[1], np.int8) for k in expected]
        assert max(int((a != 0).sum()) for a in adirs) >= (1 if item == 0 else 2)


def test_cached_paths_exercised():
    """After a few sweeps the counts hold auxiliary types, so the transform really contains cached paths."""
    state = make_state("tig", sweeps=4)
    assert sum(state.num_types()[1:]) > 0
    assert state.insertions() != (0, 0)
