"""OSTAG parse speed-up (the exact site-agnostic coarse pass) and the `treegram grammar --aux --wrapping` view."""

from __future__ import annotations

import json

import attrs
import numpy as np
import pytest
from test_ostag_model import viterbi_parses
from toy_data import OSTAG_TREEBANK, P

from treegram.cli.app import main

from treegram.plugins.ostag.model import OSTAGSettings, train_ostag
from treegram.plugins.ostag.restrict import coarse_filter, coarse_grammar

TREEBANK = [*OSTAG_TREEBANK, "(S (NP (-LRB- -LRB-) (NP (DT the) (NN cat)) (-RRB- -RRB-)) (VP (VBD ran)))"]
SENTS = ["the dog saw a cat", "a big old cat ran to the dog", "the zebra saw a dog", "`` the cat '' saw the big dog",
         "the dog of a cat saw `` a big cat ''", "-LRB- the dog -RRB- saw `` the cat of the dog ''"]


@pytest.fixture(scope="module")
def model():
    return train_ostag([P(s) for s in TREEBANK], OSTAGSettings(kind="ostag3", max_depth=3, min_count=1,
                                                               em_iterations=2, rare_threshold=1))


@pytest.mark.parametrize("threshold", [1e-4, 0.0])
def test_coarse_pass_keeps_parses_identical_toy(model, threshold):
    model.settings = attrs.evolve(model.settings, prune_threshold=threshold)
    sents = [s.split() for s in SENTS]
    exact, fast = viterbi_parses(model, sents, coarse_pass=False), viterbi_parses(model, sents, coarse_pass=True)
    for (lp0, t0, _u0), (lp1, t1, _u1) in zip(exact, fast):
        assert lp0 is not None and lp1 == pytest.approx(lp0, abs=1e-9) and t1 == t0
    assert any(model.parse_with_stats(s)[1]["adjunctions"] for s in sents)  # the sentences do use adjunction


def test_coarse_filter_is_a_superset_of_what_the_best_parse_uses(model):
    """Every node, spine node and adjunction site of the exact Viterbi derivation survives the coarse filter."""
    from treegram.plugins.ostag.grammar import SYM_PAIR

    g = model.grammar
    model.settings = attrs.evolve(model.settings, coarse_pass=False, prune_threshold=0.0)
    for s in SENTS:
        toks = s.split()
        mapped = model.pcfg.mapper.map_sentence(toks)
        usable = g.usable_nodes(mapped)
        cg = coarse_grammar(g, usable)
        keep, site_ok = coarse_filter(g, usable, mapped, model._unknown(), model._uncovered(cg, mapped), None,
                                      coarse=cg)
        _tree, red, res = model.parse_derivation(toks)
        steps = res.derivation.steps
        used = np.unique(steps[:, 2])
        nodes = red.sym_node[used]
        assert keep[nodes[nodes >= 0]].all()
        pairs = used[red.sym_kind[used] == SYM_PAIR]
        sites = red.sym_node[red.sym_site[pairs]]
        assert site_ok[sites].all()
        assert keep.sum() <= usable.sum()


def test_coarse_pass_identical_ptb(shared_data):
    from treegram.trees import read_treebank

    train = list(read_treebank([shared_data / "ptb-sample" / "train"]))[:300]
    dev = [t.leaves() for t in read_treebank([shared_data / "ptb-sample" / "dev"]) if len(t.leaves()) <= 15][:6]
    m = train_ostag(train, OSTAGSettings(kind="ostag3", em_iterations=1))
    assert len(m.grammar.auxiliary) > 0
    exact, fast = viterbi_parses(m, dev, coarse_pass=False), viterbi_parses(m, dev, coarse_pass=True)
    assert sum(lp is not None for lp, *_x in exact) >= 4
    for (lp0, t0, _u0), (lp1, t1, _u1) in zip(exact, fast):
        assert (lp1 is None) == (lp0 is None) and t1 == t0
        assert lp0 is None or lp1 == pytest.approx(lp0, abs=1e-9)


def test_grammar_command_lists_wrapping_trees(model, tmp_path, capsys):
    path = tmp_path / "o.model"
    model.save(path)
    wraps = [a for a, d in enumerate(model.grammar.aux_dir) if d == "wrap"]
    assert wraps, "the toy treebank has quote / parenthesis wrapping trees"
    assert main(["grammar", str(path), "--aux", "--wrapping", "--top", "50"]) == 0
    out = capsys.readouterr().out
    assert "wrapping auxiliary trees" in out and "NP*" in out
    assert "``" in out or "-LRB-" in out
    assert main(["grammar", str(path), "--top", "5"]) == 0
    out = capsys.readouterr().out
    assert "initial trees" in out and "NP*" not in out.split("initial trees", 1)[1]
    assert main(["grammar", str(path), "--aux", "--wrapping", "--json"]) == 0
    info = json.loads(capsys.readouterr().out)
    assert info["wrapping_auxiliary_trees"] == len(wraps)
    assert info["trees"] and all(r["type"] == "wrap" for r in info["trees"])  # --wrapping honoured in --json
    assert main(["grammar", str(path), "--aux", "--json", "--top", "3"]) == 0
    listed = json.loads(capsys.readouterr().out)["trees"]
    assert len(listed) == min(3, len(model.grammar.auxiliary)) and all("*" in r["auxiliary tree"] for r in listed)
    # the alias: same listing, JSON rows are exactly the wrapping trees, each with one foot
    assert main(["ostag-grammar", str(path), "--wrapping", "--json", "--top", "50"]) == 0
    rows = json.loads(capsys.readouterr().out)["trees"]
    assert len(rows) == len(wraps) and all(r["type"] == "wrap" for r in rows)
    assert all(r["auxiliary tree"].count("*") == 1 for r in rows)
    assert main(["ostag-grammar", str(path), "--aux"]) == 0
    assert "auxiliary trees" in capsys.readouterr().out
