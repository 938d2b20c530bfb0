"""Unary closure vs the dense matrix inverse on random grammars with many cyclic components."""

from __future__ import annotations

import numpy as np
import pytest

from treegram.errors import InputError
from treegram.grammar.closure import compute_unary_closure


def random_unary(seed, nsym=40):
    """DAG edges plus self loops, 2-cycles, 3-cycles and duplicate rules; every parent's mass is < 1."""
    rng = np.random.default_rng(seed)
    par, chi = [], []
    for _ in range(60):  # DAG-ish edges downwards
        a = int(rng.integers(1, nsym))
        par.append(a)
        chi.append(int(rng.integers(0, a)))
    for s in rng.choice(nsym, 5, replace=False):  # self loops
        par.append(int(s)); chi.append(int(s))  # noqa: E702
    for _ in range(4):  # 2- and 3-cycles
        k = int(rng.integers(2, 4))
        cyc = rng.choice(nsym, k, replace=False)
        for t in range(k):
            par.append(int(cyc[t])); chi.append(int(cyc[(t + 1) % k]))  # noqa: E702
    par += par[:5]  # duplicate (A, B) pairs: probabilities add
    chi += chi[:5]
    par, chi = np.array(par), np.array(chi)
    w = rng.random(par.shape[0]) + 0.05
    tot = np.bincount(par, weights=w, minlength=nsym)
    p = w / tot[par] * rng.uniform(0.3, 0.95, nsym)[par]
    return nsym, par, chi, np.log(p)


@pytest.mark.parametrize("seed", range(8))
def test_closure_matches_dense_inverse(seed):
    nsym, par, chi, logp = random_unary(seed)
    u = np.zeros((nsym, nsym))
    np.add.at(u, (par, chi), np.exp(logp))
    expect = np.linalg.inv(np.eye(nsym) - u)
    cl = compute_unary_closure(nsym, par, chi, logp)
    got = np.zeros((nsym, nsym))
    got[cl.parent, cl.child] = np.exp(cl.inside_logw)
    np.testing.assert_allclose(got, expect, atol=1e-10, rtol=1e-10)
    reach = np.eye(nsym, dtype=bool) | (u > 0)  # reflexive-transitive closure of the unary graph
    while True:
        nxt = (reach.astype(np.int64) @ reach.astype(np.int64)) > 0
        if np.array_equal(nxt, reach):
            break
        reach = nxt
    assert set(zip(cl.parent.tolist(), cl.child.tolist())) == {(int(a), int(b)) for a, b in zip(*np.nonzero(reach))}
    # indexes: sorted by (child, parent); by_parent sorted by (parent, child)
    key = cl.child.astype(np.int64) * nsym + cl.parent
    assert np.all(np.diff(key) > 0)
    pk = cl.parent[cl.by_parent].astype(np.int64) * nsym + cl.child[cl.by_parent]
    assert np.all(np.diff(pk) > 0)
    np.testing.assert_array_equal(np.diff(cl.child_ptr), np.bincount(cl.child, minlength=nsym))
    np.testing.assert_array_equal(np.diff(cl.parent_ptr), np.bincount(cl.parent, minlength=nsym))
    # the per-entry fields travel with their (parent, child): the empty chain has weight 0 and no first hop, every
    # other best chain starts with a rule from its parent to the recorded next symbol
    same = cl.parent == cl.child
    assert np.all(cl.viterbi_logw[same] == 0.0) and np.all(cl.viterbi_next[same] == -1)
    hop = ~same
    assert np.all(par[cl.viterbi_rule[hop]] == cl.parent[hop])
    assert np.all(chi[cl.viterbi_rule[hop]] == cl.viterbi_next[hop])


def test_divergent_cycle_in_large_component_raises():
    nsym, par, chi, logp = random_unary(0)
    # a 3-cycle of probability-1 rules somewhere among healthy components
    par = np.concatenate([par, [7, 8, 9]])
    chi = np.concatenate([chi, [8, 9, 7]])
    logp = np.concatenate([logp, [0.0, 0.0, 0.0]])
    with pytest.raises(InputError, match="cycle"):
        compute_unary_closure(nsym, par, chi, logp)
