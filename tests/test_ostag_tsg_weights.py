"""Issue 16: `treegram train ostag --from-tsg M --tsg-weights posterior` weighs the TSG's fragments by the TSG
model's posterior pseudo-counts n_e + alpha_c P0(e) (`extract.TSGPosterior`), read off its Goodman grammar."""

from __future__ import annotations

import math

import numpy as np
import pytest

from treegram.cli.app import main
from treegram.formalism import load_model
from treegram.trees import parse_brackets


@pytest.fixture(scope="module")
def files(demo_file, tmp_path_factory):
    """A demo TSG with alpha and beta held fixed (alpha = 2.5, beta = 0.5, the final sample's grammar), and the
    OSTAG models built from it with either weighting (0 EM iterations: the weights are the trees' counts)."""
    d = tmp_path_factory.mktemp("ostag_tsg_weights")
    tb = demo_file
    tsg = d / "fixed.tsg"
    assert main(["-q", "train", "tsg", "--treebank", str(tb), "--seed", "4", "--iterations", "3", "--fixed-hyper",
                 "--alpha", "2.5", "--beta", "0.5", "--average", "1", "--out", str(tsg)]) == 0
    out = {"tb": tb, "tsg": tsg}
    for w in ("counts", "posterior"):
        out[w] = d / f"{w}.ostag"
        assert main(["-q", "train", "ostag", "--from-tsg", str(tsg), "--treebank", str(tb), "--seed", "4",
                     "--em-iterations", "0", "--tsg-weights", w, "--out", str(out[w])]) == 0
    return out


def test_alpha_and_base_are_read_off_the_tsg_grammar(files):
    from treegram.plugins.ostag.extract import TSGPosterior

    post = TSGPosterior(load_model(files["tsg"]))
    # alpha_c = n_c p_c / (1 - p_c) recovers the fixed concentration for every root label
    assert post.alpha and all(a == pytest.approx(2.5, rel=1e-9) for a in post.alpha.values())
    for tree, n in post.fragments:
        lp = post.log_p0(tree)
        assert -np.inf < lp <= 0  # every fragment is derivable by the base too
        assert post.weight(tree, n) == pytest.approx(n + 2.5 * math.exp(lp))
    assert post.log_p0(parse_brackets("(NOSUCHLABEL (X y))", source="test")[0]) == -np.inf
    # the base factorizes over nodes: replacing a frontier child of a depth-1 binary fragment by a lexical
    # fragment of its label multiplies P0 by (1 - beta) / beta (= 1 here) times that fragment's P0
    from treegram.trees import Tree

    lexical = {u.label: u for u, _n in post.fragments if len(u.children) == 1 and isinstance(u.children[0], str)}
    pairs = [(t, lexical[t.children[0].label]) for t, _n in post.fragments
             if len(t.children) == 2 and not any(c.children for c in t.children) and t.children[0].label in lexical]
    assert pairs, "the demo TSG has a depth-1 binary fragment over a preterminal"
    for t, lex in pairs[:10]:
        deeper = Tree(t.label, (lex, t.children[1]))
        assert post.log_p0(deeper) == pytest.approx(post.log_p0(t) + post.log_p0(lex))


def test_posterior_weights_reach_the_ostag_grammar(files):
    from treegram.corpora.demo import demo_trees
    from treegram.plugins.ostag.extract import TSGPosterior, depth_fragments, ostag_from_tsg, prepare_tree

    counts, posterior = load_model(files["counts"]), load_model(files["posterior"])
    assert counts.settings.tsg_weights == "counts" and posterior.settings.tsg_weights == "posterior"
    tsg = load_model(files["tsg"])
    post = TSGPosterior(tsg)
    # expected: the fragments at n_e + alpha P0, the treebank's other depth-1 rules at alpha P0, through the paper's
    # extraction (initial-tree weights summed over the rules they come from)
    prep = [prepare_tree(t, tsg.pcfg.mapper, horizontal=tsg.settings.horizontal, vertical=tsg.settings.vertical,
                         mark_unary=False) for t in demo_trees()]
    have = {t for t, _n in post.fragments}
    extra = [(t, post.weight(t)) for t, _c in depth_fragments(prep, 1, 1) if t not in have]
    assert extra
    init, aux = ostag_from_tsg(post.elementary_trees() + extra)
    g = posterior.grammar
    got = dict(zip(g.initial, g.initial_count))
    assert set(got) == {t for t, _w in init}
    for t, w in init:
        assert got[t] == pytest.approx(w, rel=1e-9)
    assert dict(zip(g.auxiliary, g.aux_count)) == pytest.approx(dict(aux), rel=1e-9)
    # 0 EM iterations: P_sub(e | c) is e's weight relative to its root label's
    label = np.array([t.label for t in g.initial])
    w = np.array(g.initial_count)
    for i in range(0, len(w), max(1, len(w) // 20)):
        assert np.exp(g.sub_logp[i]) == pytest.approx(w[i] / w[label == label[i]].sum())
    # the counts weighting gives a different grammar over the same trees
    assert set(counts.grammar.initial) == set(g.initial)
    assert not np.allclose(counts.grammar.initial_count, [got[t] for t in counts.grammar.initial])


def test_posterior_model_parses(files, tmp_path):
    inp = tmp_path / "in.txt"
    inp.write_text("The hungry dog slept in the garden .\n", encoding="utf-8")
    out = tmp_path / "out.txt"
    assert main(["-q", "parse", "--model", str(files["posterior"]), "--input", str(inp), "--out", str(out)]) == 0
    (tree,) = parse_brackets(out.read_text(encoding="utf-8"), source="test")
    assert tree.leaves() == "The hungry dog slept in the garden .".split()


def test_unknown_tsg_weights_refused():
    from treegram.errors import InputError
    from treegram.plugins.ostag.model import OSTAGSettings

    with pytest.raises(InputError, match="unknown TSG weights"):
        OSTAGSettings(tsg_weights="nope")


def test_rule_weight_is_the_base_mass_of_the_root_rule(files, tmp_path):
    from treegram.plugins.ostag.extract import TSGPosterior

    post = TSGPosterior(load_model(files["tsg"]))
    seen = {1: 0, 2: 0, "lex": 0}
    for t, _n in post.fragments:
        if len(t.children) == 1 and isinstance(t.children[0], str):
            assert post.rule_weight(t) == pytest.approx(post.weight(t))  # a word: nothing to stop or expand
            seen["lex"] += 1
        elif not any(c.children for c in t.children):
            # beta = 0.5 fixed: stopping every child is 0.5 ** k of the rule's mass (k children)
            k = len(t.children)
            assert post.rule_weight(t) == pytest.approx(post.weight(t) * 2 ** k)
            seen[k] += 1
    assert seen["lex"] and seen[2]
    out = tmp_path / "rules.ostag"
    assert main(["-q", "train", "ostag", "--from-tsg", str(files["tsg"]), "--treebank", str(files["tb"]), "--seed",
                 "4", "--em-iterations", "0", "--tsg-weights", "posterior-rules", "--out", str(out)]) == 0
    rules, posterior = load_model(out), load_model(files["posterior"])
    assert rules.settings.tsg_weights == "posterior-rules"
    # the same trees; the added depth-1 rules weigh more (2 ** k), the fragments the same
    assert set(rules.grammar.initial) == set(posterior.grammar.initial)
    p = dict(zip(posterior.grammar.initial, posterior.grammar.initial_count))
    assert any(c > p[t] * 1.5 for t, c in zip(rules.grammar.initial, rules.grammar.initial_count))
