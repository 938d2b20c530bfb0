"""The TAG->TSG approximation (`plugins/ostag/tag2tsg.py`, Yamangil & Shieber 2013 sec. 5): on a tiny OSTAG the
TSG gives every derivation the TAG's probability (all of them when every adjunction pair is kept: equal inside
scores; with pairs dropped, the derivations that avoid them), the conversion is deterministic, and the written
file is a TSG model `treegram parse` reads."""

from __future__ import annotations

import math

import numpy as np
import pytest

from treegram.charts import inside, viterbi
from treegram.errors import InputError
from treegram.trees import Tree, parse_brackets

from treegram.plugins.ostag.derivation import derived_tree
from treegram.plugins.ostag.grammar import OSTAG
from treegram.plugins.ostag.tag2tsg import tsg_cfg, used_pairs

T = lambda s: parse_brackets(s)[0]  # noqa: E731

INITIAL = [("(TOP (S (NP) (VP)))", 4), ("(NP (D the) (N dog))", 3), ("(NP (N dogs))", 1), ("(VP (V barked))", 2),
           ("(VP (V saw) (NP))", 2)]
AUX = [("(NP (A big) (NP*))", 2), ("(VP (VP*) (ADV loudly))", 1), ("(NP (Q ``) (NP (NP*) (Q '')))", 1)]
SENTENCES = ["the dog barked", "big the dog barked loudly", "big big dogs saw the dog", "`` the dog '' barked",
             "`` big dogs '' saw `` the dog '' loudly loudly", "dogs saw big `` dogs ''"]


def grammar() -> OSTAG:
    g = OSTAG([(T(s), c) for s, c in INITIAL], [(T(s), c) for s, c in AUX], start="TOP", model="ostag3")
    rng = np.random.default_rng(0)  # distinct adjunction probabilities per Goodman index
    g.set_params(np.asarray(g.initial_count), np.asarray(g.aux_count), rng.uniform(0.5, 2, g.num_ctx),
                 rng.uniform(1, 4, g.num_ctx))
    return g


def all_pairs(g: OSTAG) -> list[tuple[int, int]]:
    nd = g.nodes
    return [(a, n) for a in range(len(g.auxiliary)) for n in range(len(nd))
            if not nd.spine[n] and g.ctx[n] >= 0 and nd.label[n] == g.aux_label[a]]


def labelled(tree) -> Tree:
    """A TSG derivation tree (symbol names `X`, `X@n`, `X@n^s`) with the labels of the nodes they stand for."""
    if isinstance(tree, str):
        return tree
    return Tree(tree.label.split("@")[0], tuple(labelled(c) for c in tree.children))


def parses(g: OSTAG, cfg, sentence: str):
    words = sentence.split()
    red = g.build_cfg()
    d = viterbi(red.cfg, red.cfg.lexical_input(words), words)
    t = viterbi(cfg, cfg.lexical_input(words), words)
    return red, words, d, t


def test_every_pair_kept_gives_the_tags_probabilities():
    g = grammar()
    cfg, report = tsg_cfg(g, all_pairs(g))
    assert report["refused_pairs"] == 0 and report["pair_symbols"] > 0
    adjoined = 0
    for s in SENTENCES:
        red, words, d, t = parses(g, cfg, s)
        assert d is not None and t is not None, s
        z_tag = inside(red.cfg, red.cfg.lexical_input(words)).log_z
        z_tsg = inside(cfg, cfg.lexical_input(words)).log_z
        assert math.isclose(z_tag, z_tsg, rel_tol=0, abs_tol=1e-9), s  # the sum over all derivations
        assert math.isclose(d.logp, t.logp, abs_tol=1e-9), s  # the best derivation's probability
        assert labelled(t.tree) == derived_tree(red, d.derivation.steps, words), s  # and the same derived tree
        adjoined += bool(used_pairs(red, d.derivation.steps))
    assert adjoined >= 4  # the check covers stacked, wrapping and left/right adjunctions


def test_dropped_pairs_lose_only_the_derivations_that_use_them():
    g = grammar()
    pairs = all_pairs(g)
    keep = [p for p in pairs if p[0] != 2]  # drop every adjunction of the wrapping quote tree
    cfg, report = tsg_cfg(g, keep)
    assert report["kept_adjunction_pairs"] == len(keep) < len(pairs)
    lost = 0
    for s in SENTENCES:
        red, words, d, t = parses(g, cfg, s)
        need = used_pairs(red, d.derivation.steps)
        if need <= set(keep):
            assert t is not None and math.isclose(d.logp, t.logp, abs_tol=1e-9), s
        else:
            lost += 1
            assert t is None or t.logp < d.logp - 1e-9, s
        z_tsg = inside(cfg, cfg.lexical_input(words)).log_z
        assert z_tsg <= inside(red.cfg, red.cfg.lexical_input(words)).log_z + 1e-9
    assert lost >= 2  # the quoted sentences needed the dropped tree


def test_conversion_is_deterministic_and_refuses_spine_adjunction():
    g = grammar()
    a, _ = tsg_cfg(g, all_pairs(g))
    b, _ = tsg_cfg(g, list(reversed(all_pairs(g))))
    for name in ("bin_parent", "bin_left", "bin_right", "bin_logp", "un_parent", "un_child", "un_logp",
                 "lex_parent", "lex_word", "lex_logp", "category"):
        assert np.array_equal(getattr(a, name), getattr(b, name)), name
    assert list(a.nonterminals) == list(b.nonterminals)
    spiny = OSTAG([(T(s), c) for s, c in INITIAL], [(T(s), c) for s, c in AUX], start="TOP", spine_levels=1)
    with pytest.raises(InputError, match="spines"):
        tsg_cfg(spiny, all_pairs(spiny))


def test_min_prob_keeps_exactly_the_likely_unseen_adjunctions():
    from types import SimpleNamespace

    from treegram.plugins.ostag.tag2tsg import kept_pairs

    g = grammar()
    pairs = all_pairs(g)
    prob = {(a, n): float(np.exp(g.adj_logp[g.ctx[n]] + g.aux_logp[a])) for a, n in pairs}
    cut = float(np.median(list(prob.values())))
    em = SimpleNamespace(grammar=g, adjunction_pairs=None)  # no statistics: only the probability rule
    with pytest.raises(InputError, match="adjunction statistics"):
        kept_pairs(em)
    assert set(kept_pairs(em, min_prob=cut)) == {p for p, v in prob.items() if v >= cut} != set(pairs)
    seen = pairs[:2]
    bayes = SimpleNamespace(grammar=g, adjunction_pairs=(np.array([a for a, _ in seen]),
                                                         np.array([n for _, n in seen]), np.array([0.5, 2.0])))
    assert kept_pairs(bayes) == sorted(seen) and kept_pairs(bayes, min_count=1) == [seen[1]]
    assert set(kept_pairs(bayes, min_prob=cut)) == set(seen) | set(kept_pairs(em, min_prob=cut))


CORPUS = ["(S (NP (DT the) (NN dog)) (VP (VBD barked)))", "(S (NP (DT the) (JJ big) (NN dog)) (VP (VBD barked)))",
          "(S (NP (DT a) (NN cat)) (VP (VBD saw) (NP (DT the) (NN dog))))",
          "(S (NP (DT the) (JJ old) (JJ big) (NN cat)) (VP (VBD slept) (ADVP (RB soundly))))",
          "(S (NP (NNS dogs)) (VP (VBD barked) (ADVP (RB loudly))))"]


def test_bayesian_model_converts_to_a_tsg_file_treegram_parses(tmp_path):
    from treegram.cli.app import main
    from treegram.formalism import load_model
    from treegram.io import load_bundle

    tb = tmp_path / "tb.mrg"
    tb.write_text("\n".join(CORPUS * 4) + "\n")
    model = tmp_path / "b.model"
    assert main(["-q", "train", "ostag-bayes", "--treebank", str(tb), "--iterations", "4", "--tsg-init", "0",
                 "--mu", "0.6", "--rare-threshold", "1", "--average", "2", "--seed", "1", "--out",
                 str(model)]) == 0
    src = load_model(model)
    assert src.adjunction_pairs is not None and src.adjunction_pairs[0].size > 0  # the sample adjoined
    outs = [tmp_path / "a.tsg", tmp_path / "b.tsg"]
    for out in outs:
        assert main(["-q", "convert", str(model), "--out", str(out), "--json"]) == 0
    (ma, xa), (mb, xb) = load_bundle(outs[0]), load_bundle(outs[1])
    assert ma == mb and all(np.array_equal(xa[k], xb[k]) for k in xa)  # deterministic
    tsg = load_model(outs[0])
    assert tsg.formalism == "tsg" and tsg.default_decoder == src.default_decoder
    from treegram.charts.decoders import decode_mpd

    for line in CORPUS:
        words = parse_brackets(line)[0].leaves()
        assert decode_mpd(tsg, words) == decode_mpd(src, words), line  # same best derivation's tree
    sents = tmp_path / "s.txt"
    sents.write_text("the big dog barked loudly\n")
    assert main(["-q", "parse", "--model", str(outs[0]), "--input", str(sents), "--out",
                 str(tmp_path / "p.txt")]) == 0
    assert (tmp_path / "p.txt").read_text().startswith("(")
    assert main(["-q", "convert", str(model), "--out", str(model)]) != 0  # never over its input


def test_em_model_on_a_tsg_base_route_converts_exactly(demo_file, demo_model_files, tmp_path):
    """An EM OSTAG on a TSG's fragments and base route (the shipped `train ostag --from-tsg`): with every
    adjunction of non-zero probability kept, the TSG has the OSTAG's inside score on every sentence."""
    from treegram.corpora.demo import demo_trees
    from treegram.cli.app import main
    from treegram.formalism import load_model
    from treegram.plugins.ostag.tag2tsg import kept_pairs

    tb = demo_file
    out = tmp_path / "em.ostag"
    assert main(["-q", "train", "ostag", "--from-tsg", str(demo_model_files["tsg"]), "--treebank", str(tb),
                 "--adj-init", "0.2", "--out", str(out)]) == 0
    em = load_model(out)
    g = em.grammar
    assert g.base is not None and len(g.auxiliary) > 0
    coarse = em.pcfg.cfg.nonterminals
    cfg, _ = tsg_cfg(g, kept_pairs(em, min_prob=1e-300), [g.labels.get(coarse.symbol(int(t)))
                                                          for t in em.pcfg.unk_tags.tolist()])
    checked = 0
    for tree in demo_trees()[:8]:
        words = em.pcfg.mapper.map_sentence(tree.leaves())
        red = g.build_cfg(words=words)
        z_tag = inside(red.cfg, red.cfg.lexical_input(words)).log_z
        z_tsg = inside(cfg, cfg.lexical_input(words)).log_z
        if z_tag == -np.inf:
            continue
        assert math.isclose(z_tag, z_tsg, abs_tol=1e-8), tree.leaves()
        checked += 1
    assert checked >= 4
