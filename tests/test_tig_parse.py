"""TIG plugin: the string-level parsing grammar (Figure 4 over labels) is exact.

For a small trained state we enumerate every derivation of the parsing CFG over a training sentence, decode each
to its TIG derivation's derived tree, and compare with a brute-force enumeration of the TIG derivations of the
observed tree: derivations yielding the observed tree must be exactly as many as the TIG derivations (one-to-one)
and carry the same probabilities (the product of independent DP predictives and insertion terms, counts of the
whole state cached).  Viterbi parsing returns the best of them when the observed tree wins.
"""

from __future__ import annotations


import numpy as np
import pytest

from treegram.charts import viterbi

from treegram.plugins.tig.grammar import Builder, Decoder, _Node, derived_tree

from test_tig_transform import brute_force, make_state


def string_derivations(cfg, words):
    """Every derivation of the start symbol over `words`: [(logp, _Node)] (no unary cycles allowed)."""
    n = len(words)
    bins: dict[int, list] = {}
    uns: dict[int, list] = {}
    for p, a, b, w in zip(cfg.bin_parent.tolist(), cfg.bin_left.tolist(), cfg.bin_right.tolist(),
                          cfg.bin_logp.tolist()):
        bins.setdefault(p, []).append((a, b, w))
    for p, a, w in zip(cfg.un_parent.tolist(), cfg.un_child.tolist(), cfg.un_logp.tolist()):
        uns.setdefault(p, []).append((a, w))
    lex = cfg.lexical_input(words)
    lexd: dict[tuple[int, int], float] = {}
    for pos, s, w in zip(lex.position.tolist(), lex.symbol.tolist(), lex.logp.tolist()):
        lexd[(pos, s)] = w
    memo: dict[tuple[int, int, int], list] = {}
    active: set = set()

    def go(s, i, j):
        key = (s, i, j)
        if key in memo:
            return memo[key]
        assert key not in active, "unary cycle"
        active.add(key)
        out = []
        if j == i + 1 and (i, s) in lexd:
            out.append((lexd[(i, s)], _Node(s, [], words[i])))
        for a, w in uns.get(s, ()):
            out.extend((w + lw, _Node(s, [k])) for lw, k in go(a, i, j))
        for a, b, w in bins.get(s, ()):
            for m in range(i + 1, j):
                left = go(a, i, m)
                if not left:
                    continue
                right = go(b, m, j)
                out.extend((w + la + lb, _Node(s, [ka, kb])) for la, ka in left for lb, kb in right)
        active.discard(key)
        memo[key] = out
        return out

    return go(cfg.start, 0, n)


@pytest.mark.parametrize("variant", ["tig", "tig0"])
@pytest.mark.parametrize("item", [0, 1, 3])
def test_parsing_grammar_is_exact(variant, item):
    state = make_state(variant, seed=1, sweeps=3)
    expected = brute_force(state, item)
    cfg, meta = Builder(state).build()
    d = state.data
    lo, hi = d.tree_rows(item)
    gold = _row_tree(d, lo)
    words = gold.leaves()
    by_tree: dict[str, list[float]] = {}
    by_deriv: dict[str, dict[str, float]] = {}
    for lw, node in string_derivations(cfg, words):
        dec = Decoder(d.labels, meta)
        tree = dec.site(node).to_bracket()
        by_tree.setdefault(tree, []).append(lw)
        dec = Decoder(d.labels, meta)
        dec.mark = True
        sig = dec.site(node).to_bracket()
        g = by_deriv.setdefault(tree, {})
        g[sig] = np.logaddexp(g.get(sig, -np.inf), lw)  # cached and base paths of one elementary tree add up
    got = sorted(by_deriv[gold.to_bracket()].values())
    want = sorted(expected.values())
    assert len(got) == len(want)  # the CFG's derivations of the tree are exactly its TIG derivations
    assert np.allclose(got, want, atol=1e-9)  # with the same probabilities
    if variant == "tig":
        assert len(want) > 2 ** (sum(1 for x in range(lo + 1, hi) if not d.is_word[x]))  # insertions add some
    # Viterbi (the most probable path, as the TSG's Goodman transform): the best of all; decoded consistently is the best of all; its decoded tree and log-probability agree
    r = viterbi(cfg, cfg.lexical_input(words), words)
    best = max(max(v) for v in by_tree.values())
    assert r.logp == pytest.approx(best, abs=1e-9)
    tree, _ins = derived_tree(d.labels, meta, r.derivation.steps, words)
    assert max(by_tree[tree.to_bracket()]) == pytest.approx(best, abs=1e-9)


def _row_tree(d, r):
    from treegram.trees import Tree

    if d.is_word[r]:
        return d.words[d.word[r]]
    kids = []
    c = r + 1
    while c < d.subtree_end[r]:
        kids.append(_row_tree(d, c))
        c = d.subtree_end[c]
    return Tree(d.labels[d.label[r]], tuple(kids))
