"""The two built-in systems: derivation extraction, Imply consistency and text round trips."""

from __future__ import annotations

import numpy as np
import pytest
from toy_data import T

from treegram.errors import InputError, ModelFileError
from treegram.generation import BOS, BUILTIN_SYSTEMS, EOS, NgramSystem, PCFGSystem, check_derivation, make_system
from treegram.trees.tree import Tree


TREES = [
    T("S", T("NP", T("D", "the"), T("N", "dog")), T("VP", T("V", "barks"))),
    T("S", T("NP", T("D", "the"), T("N", "cat")), T("VP", T("V", "sees"), T("NP", T("D", "a"), T("N", "dog")))),
    T("SINV", T("VP", T("V", "runs")), T("NP", T("N", "dogs"))),
]


@pytest.mark.parametrize("order", [1, 2, 3, 5])
def test_ngram_round_trip_and_imply(order):
    rng = np.random.default_rng(order)
    system = NgramSystem(order)
    for length in [0, 1, 2, 7, 30]:
        tokens = [f"w{i}" for i in rng.integers(0, 5, size=length)]
        d = system.derivations(tokens)
        check_derivation(system, d)
        assert system.text(d) == tokens
        assert d.size() == length + 1
        nodes = list(d.nodes())
        padded = [BOS] * (order - 1) + tokens
        for i, node in enumerate(nodes):  # context i = the n-1 tokens before position i
            assert node.context == tuple(padded[i:i + order - 1])
            assert node.outcome == (tokens[i] if i < length else EOS)


def test_ngram_words_and_errors():
    system = NgramSystem(2)
    assert system.words_of_outcome("dog") == ("dog",)
    assert system.words_of_outcome(EOS) == ()
    assert system.imply(("a",), EOS) == []
    with pytest.raises(InputError, match="reserved"):
        system.derivations(["a", "</s>"])
    with pytest.raises(InputError, match="list of tokens"):
        system.derivations("a b c")
    with pytest.raises(InputError):
        NgramSystem(0)


def test_pcfg_derivation_mirrors_the_tree():
    system = PCFGSystem(root_label="TOP")
    for tree in TREES:
        d = system.derivations(tree)
        check_derivation(system, d)
        assert system.text(d) == tree.leaves()
        assert d.context == "TOP" and d.outcome == (tree.label,)
        assert system.tree(d) == Tree("TOP", (tree,))
        # one derivation node per tree node below the synthetic root
        assert d.size() == tree.num_nodes() + 1
        inner = d.children[0]
        for node, sub in zip(inner.nodes(), tree.subtrees()):
            assert node.context == sub.label
            expected = sub.children[0] if sub.is_preterminal else tuple(k.label for k in sub.children)
            assert node.outcome == expected


def test_pcfg_root_not_wrapped_when_it_matches():
    system = PCFGSystem(root_label="S")
    d = system.derivations(TREES[0])
    assert d.context == "S" and d.outcome == ("NP", "VP")
    assert system.tree(d) == TREES[0]


def test_pcfg_words_and_errors():
    system = PCFGSystem()
    assert system.words_of_outcome("dog") == ("dog",)
    assert system.words_of_outcome(("NP", "VP")) == ()
    assert system.imply("NP", ("D", "N")) == ["D", "N"]
    assert system.imply("N", "dog") == []
    with pytest.raises(InputError, match="mixes words"):
        system.derivations(T("S", "word", T("NP", T("N", "x"))))
    with pytest.raises(InputError, match="not a Tree"):
        system.derivations(["a", "b"])


def test_registry_rebuilds_systems_from_spec():
    assert set(BUILTIN_SYSTEMS) == {"pcfg", "ngram"}
    s = make_system({"name": "ngram", "config": {"order": 4}})
    assert isinstance(s, NgramSystem) and s.order == 4
    p = make_system({"name": "pcfg", "config": PCFGSystem("ROOT").config()})
    assert p.root_context() == "ROOT"
    with pytest.raises(ModelFileError, match="unknown generation system"):
        make_system({"name": "nope", "config": {}})
    with pytest.raises(ModelFileError):
        make_system({"name": "ngram", "config": {"order": -1}})
