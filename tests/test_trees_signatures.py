"""Unknown-word signatures and the rare-word mapper."""

from __future__ import annotations

import json

import pytest

from treegram.errors import InputError
from treegram.trees import RareWordMapper, Tree, parse_brackets, word_signature


@pytest.mark.parametrize(
    "word, initial, expected",
    [
        ("walked", False, "UNK-ed"),
        ("running", False, "UNK-ing"),
        ("nation", False, "UNK-ion"),
        ("quickly", False, "UNK-ly"),
        ("cats", False, "UNK-s"),
        ("glass", False, "UNK"),  # -ss is not a plural
        ("oddity", False, "UNK-ity"),
        ("Walked", True, "UNK-INITC-ed"),
        ("Smithson", False, "UNK-CAP"),
        ("NASA", False, "UNK-ALLC"),
        ("iPhone", False, "UNK-MIXC"),
        ("1,200.50", False, "UNK-NUM"),
        ("1990s", False, "UNK-DIG-s"),
        ("B-52", False, "UNK-CAP-DIG-DASH"),  # one letter: not ALLC
        ("well-known", False, "UNK-DASH"),
        ("U.S.", False, "UNK-ALLC-PERIOD"),
        ("a,b", False, "UNK-COMMA"),
        ("--", False, "UNK-DASH-NOLET"),
        ("john@example.com", False, "UNK-PERIOD-SYM"),
        ("ox", False, "UNK"),  # too short for a suffix class
    ],
)
def test_word_signature(word, initial, expected):
    assert word_signature(word, sentence_initial=initial) == expected


def test_known_lowercase_feature():
    known = {"walked"}
    assert word_signature("Walked", sentence_initial=True, known_lowercase=known.__contains__) == "UNK-INITC-KNOWNLC-ed"
    assert word_signature("Talked", sentence_initial=True, known_lowercase=known.__contains__) == "UNK-INITC-ed"
    # Only a sentence-initial capital is checked against the lower-case vocabulary.
    assert word_signature("Walked", sentence_initial=False, known_lowercase=known.__contains__) == "UNK-CAP-ed"


TRAIN = [
    "(S (NP (DT The) (NN dog)) (VP (VBD barked)))",
    "(S (NP (DT the) (NN dog)) (VP (VBD walked) (ADVP (RB quickly))))",
    "(S (NP (NNP Zork)) (VP (VBD barked)))",
]


def test_mapper_fit_and_map():
    trees = [parse_brackets(t)[0] for t in TRAIN]
    m = RareWordMapper().fit(trees, min_count=2)
    # Counted by hand: dog x2, barked x2; everything else once.
    assert m.known == frozenset({"dog", "barked"})
    mapped = m.map_training_tree(trees[1])
    assert mapped.leaves() == ["UNK", "dog", "UNK-ed", "UNK-ly"]
    assert [l for _, l in mapped.pos()] == [l for _, l in trees[1].pos()]  # structure untouched
    assert m.map_sentence(["Dogs", "barked", "loudly"]) == ["UNK-INITC-s", "barked", "UNK-ly"]


def test_mapper_on_mixed_children_keeps_word_order():
    t = Tree("S", ["a", Tree("X", ["b", "c"]), "d"])
    m = RareWordMapper(min_count=1).fit([Tree("S", ["b", "d"])])
    assert m.map_training_tree(t).leaves() == ["UNK", "b", "UNK", "d"]


def test_mapper_json_round_trip():
    trees = [parse_brackets(t)[0] for t in TRAIN]
    m = RareWordMapper().fit(trees, min_count=2)
    back = RareWordMapper.from_dict(json.loads(json.dumps(m.to_dict())))
    assert back.known == m.known and back.counts == m.counts and back.min_count == 2
    assert back.map_sentence(["The", "dog", "zorked"]) == m.map_sentence(["The", "dog", "zorked"])
    with pytest.raises(InputError):
        RareWordMapper.from_dict({"kind": "something else"})
    with pytest.raises(InputError):
        RareWordMapper.from_dict({"kind": "RareWordMapper", "min_count": 2})
