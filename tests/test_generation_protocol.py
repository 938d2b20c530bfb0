"""Derivation trees, the system protocol and its JSON helpers."""

from __future__ import annotations

import pytest

from treegram.errors import InputError
from treegram.generation import (Derivation, GenerationSystem, NgramSystem, PCFGSystem, SystemBase,
                                 check_derivation, from_json_value, to_json_value)
from treegram.generation.protocol import map_derivation


def small() -> Derivation:
    return Derivation("S", ("A", "B"), (Derivation("A", "a"), Derivation("B", ("C",), (Derivation("C", "c"),))))


def test_preorder_and_postorder():
    d = small()
    assert [n.context for n in d.nodes()] == ["S", "A", "B", "C"]
    assert [n.context for n in d.postorder()] == ["A", "C", "B", "S"]
    assert list(d.pairs()) == [("S", ("A", "B")), ("A", "a"), ("B", ("C",)), ("C", "c")]
    assert d.size() == 4 and d.depth() == 3
    assert d.child_contexts() == ("A", "B")


def test_from_preorder_inverts_nodes():
    d = small()
    listing = [(n.context, n.outcome, len(n.children)) for n in d.nodes()]
    assert Derivation.from_preorder(listing) == d
    with pytest.raises(ValueError):
        Derivation.from_preorder([("S", "x", 2), ("A", "a", 0)])
    with pytest.raises(ValueError):
        Derivation.from_preorder([("A", "a", 0), ("B", "b", 0)])


def test_equality_and_hash_are_structural():
    assert small() == small() and hash(small()) == hash(small())
    other = Derivation("S", ("A", "B"), (Derivation("A", "a"), Derivation("B", ("C",), (Derivation("C", "d"),))))
    assert small() != other
    assert len({small(), small(), other}) == 2


def test_deep_chain_needs_no_recursion():
    tokens = [f"w{i % 7}" for i in range(20000)]
    system = NgramSystem(2)
    d = system.derivations(tokens)
    assert d.size() == 20001 and d.depth() == 20001
    assert d == system.derivations(tokens) and hash(d) == hash(system.derivations(tokens))
    assert system.text(d) == tokens
    assert "nodes=20001" in repr(d)
    copy = map_derivation(d, lambda node, kids: Derivation(node.context, node.outcome, kids))
    assert copy == d


def test_check_derivation_rejects_wrong_children():
    system = PCFGSystem(root_label="S")
    good = small()
    check_derivation(system, good)
    bad = Derivation("S", ("A", "B"), (Derivation("A", "a"),))
    with pytest.raises(InputError, match="implies"):
        check_derivation(system, bad)
    with pytest.raises(InputError, match="root"):
        check_derivation(PCFGSystem(), good)


def test_json_helpers_round_trip_nested_tuples():
    value = (("a", 1), "b", (), (("c",),))
    data = to_json_value(value)
    assert data == [["a", 1], "b", [], [["c"]]]
    assert from_json_value(data) == value
    with pytest.raises(TypeError):
        to_json_value({"a": 1})


def test_builtin_systems_satisfy_protocol():
    assert isinstance(NgramSystem(3), GenerationSystem)
    assert isinstance(PCFGSystem(), GenerationSystem)
    assert isinstance(NgramSystem(3), SystemBase)
    assert "NgramSystem(order=3)" == repr(NgramSystem(3))
