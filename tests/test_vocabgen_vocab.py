"""The embedded CEFR-J / Octanove vocabulary: levels, part-of-speech-aware inflections, phrases, names, bad files."""

from __future__ import annotations

import pytest

from treegram.errors import InputError
from treegram.plugins.vocabgen.vocab import (LEVELS, cefr_vocabulary, headword_forms, headwords, inflections,
                                             parse_vocab_spec)


def test_cefr_a1_is_cefrj_with_pos_inflections():
    a1 = parse_vocab_spec("cefr:A1")
    assert a1.name == "cefr:A1"
    assert 1000 <= len(headwords("A1")) <= 1200  # CEFR-J 1.5 lists ~1,060 single-word A1 headwords
    assert {"bus", "buses", "hole", "holes", "go", "went", "gone", "child", "children", "happy", "happier"} <= a1.words
    # bus and hole are A1 nouns only: no verb forms (the audit found "bussed", "holing" on sheets)
    assert not {"bussed", "bused", "busing", "holing", "holed", "busses"} & a1.words
    for w in ("meticulousness", "heavyset", "mummified", "abandon"):
        assert w not in a1
    assert len(a1.words) < 3000  # cefrpy's A1 was 23,125 forms


def test_levels_are_cumulative_and_reach_c2():
    sizes = [len(cefr_vocabulary(lv).words) for lv in LEVELS]
    assert sizes == sorted(sizes) and sizes[0] < sizes[-1]
    assert cefr_vocabulary("A1").words <= cefr_vocabulary("A2").words
    assert "abandon" in cefr_vocabulary("B1") and "abandon" not in cefr_vocabulary("A2")
    assert "cloak" in cefr_vocabulary("C1") and "cloak" not in cefr_vocabulary("B2")  # Octanove C1


def test_multiword_and_slash_headwords():
    words, phrases = headword_forms("colour/color", "noun")
    assert {"colour", "colours", "color", "colors"} <= words and not phrases
    words, phrases = headword_forms("bus stop", "noun")
    assert {("bus", "stop"), ("bus", "stops")} <= phrases and not words
    words, phrases = headword_forms("look for", "verb")
    assert ("looked", "for") in phrases
    words, phrases = headword_forms("T-shirt/tee-shirt", "noun")
    assert ("t", "-", "shirts") in phrases
    a1 = cefr_vocabulary("A1")
    # "t" is allowed only inside T-shirt
    assert a1.missing("I have two T - shirts .".split()) == []
    assert a1.missing("I have t .".split()) == ["t"]


def test_names_numerals_and_clitics():
    a1 = cefr_vocabulary("A1")
    toks = "Tom does n't have 3 books in Japan .".split()
    assert a1.missing(toks) == []
    assert a1.names_in(toks) == ["Tom", "Japan"]
    assert parse_vocab_spec("words:dog").missing(["Tom"]) == ["Tom"]  # names only where the vocabulary allows them


def test_inflections_keep_the_part_of_speech():
    assert inflections("bus", "noun") == {"bus", "buses"}
    assert {"went", "goes", "going", "gone"} <= inflections("go", "verb")
    assert {"am", "is", "are", "was", "were", "been", "being"} <= inflections("be", "be-verb")
    assert inflections("in", "preposition") == {"in"}


def test_bad_vocabulary_files(tmp_path):
    nul = tmp_path / "nul.txt"
    nul.write_bytes(b"dog\x00cat\n")
    with pytest.raises(InputError, match="NUL"):
        parse_vocab_spec(str(nul))
    utf16 = tmp_path / "u16.txt"
    utf16.write_text("dog\ncat\n", encoding="utf-16")
    with pytest.raises(InputError, match="NUL|UTF-8"):
        parse_vocab_spec(str(utf16))
    ctl = tmp_path / "ctl.txt"
    ctl.write_bytes(b"dog\x07\n")
    with pytest.raises(InputError, match="control"):
        parse_vocab_spec(str(ctl))
    with pytest.raises(InputError):
        parse_vocab_spec("cefr:D1")


def test_precomputed_inflection_table_matches_lemminflect():
    pytest.importorskip("lemminflect")
    from treegram.plugins.vocabgen import vocab as V

    table = V._table()
    assert len(table) > 10000
    keys = sorted(table)[::500] + [("bus", "NOUN"), ("hole", "NOUN"), ("be", "AUX"), ("go", "VERB")]
    for key in keys:
        assert table[key] == V._lemminflect_forms(*key), key
