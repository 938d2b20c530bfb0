"""treegram.text: Penn Treebank tokens of typed text (with spans), sentence splitting, rendering the kept words as
typed text, and detokenizing tokens; round trips on typed text and on treebank sentences."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from treegram.text import Sentence, detokenize, is_punctuation, split_sentences, tokenize


@pytest.mark.parametrize("text,tokens", [
    ("He isn't here.", ["He", "is", "n't", "here", "."]),
    ("I can't and won't.", ["I", "ca", "n't", "and", "wo", "n't", "."]),
    ("Smith's co-worker left.", ["Smith", "'s", "co-worker", "left", "."]),
    ("It cost $5.50 (about 10%).", ["It", "cost", "$", "5.50", "-LRB-", "about", "10", "%", "-RRB-", "."]),
    ('He said, "Go now."', ["He", "said", ",", "``", "Go", "now", ".", "''"]),
    ("She said \u201cyes\u201d and left\u2026", ["She", "said", "``", "yes", "''", "and", "left", "..."]),
    ("It\u2019s 3:30 p.m. in the U.S.", ["It", "'s", "3:30", "p.m.", "in", "the", "U.S.", "."]),
    ("They merged with Ranger Industries Inc.", ["They", "merged", "with", "Ranger", "Industries", "Inc", "."]),
    ("Wait \u2014 really?", ["Wait", "--", "really", "?"]),
    ("Mail a.b@c.org or see http://x.org/a.", ["Mail", "a.b@c.org", "or", "see", "http://x.org/a", "."]),
    ("A [bracketed] {word}", ["A", "-LSB-", "bracketed", "-RSB-", "-LCB-", "word", "-RCB-"]),
])
def test_tokens_follow_the_treebank(text, tokens):
    got, spans = tokenize(text)
    assert got == tokens
    assert len(spans) == len(got) and all(0 <= s <= e <= len(text) for s, e in spans)
    assert [s for s, _e in spans] == sorted(s for s, _e in spans)


def test_every_typed_character_is_in_a_span():
    text = "Mr. O'Neil's (the 2nd) \u201cplan\u201d cost $1,000\u2014or 5%!"
    toks, spans = tokenize(text)
    covered = set()
    for s, e in spans:
        covered.update(range(s, e))
    assert all(i in covered for i, ch in enumerate(text) if not ch.isspace())


def test_sentence_splitting_keeps_abbreviations_and_quotes():
    text = 'Mr. Smith went to the U.S. on Monday. He said "Hi." Then he left...  Really?  '
    spans = split_sentences(text)
    sents = [text[a:b] for a, b in spans]
    assert sents == ["Mr. Smith went to the U.S. on Monday.", 'He said "Hi."', "Then he left...", "Really?"]
    assert split_sentences("   ") == [] and split_sentences("") == []


def test_rendering_keeps_what_was_typed_and_spaces_like_the_detokenizer():
    s = Sentence.from_text("Police say the man, a teacher from Ohio, was arrested in the U.S.")
    assert s.render([True] * len(s.tokens)) == s.text
    drop = {"Police", "say"} | {"a", "teacher", "from", "Ohio"}
    keep = [t not in drop for t in s.tokens]
    keep[s.tokens.index(",", 5)] = False  # the second comma of the apposition
    keep[4] = False  # and the first
    assert s.render(keep) == "The man was arrested in the U.S."  # capital restored, one full stop
    keep2 = [True] * len(s.tokens)
    keep2[s.tokens.index("U.S.")] = False
    assert s.render(keep2).endswith("arrested in the.")  # the treebank's extra full stop stands alone
    q = Sentence.from_text('He said \u201cgo now\u201d, and (quietly) left.')
    k = [t not in ("now", "quietly") for t in q.tokens]
    assert q.render(k) == "He said \u201cgo\u201d, and () left."


def test_pre_tokenized_sentences_and_detokenize():
    s = Sentence.from_tokens("He did n't say `` no '' -LRB- or yes -RRB- .".split())
    assert s.render([True] * len(s.tokens)) == s.text
    assert detokenize(list(s.tokens)) == 'He didn\'t say "no" (or yes).'
    assert detokenize([]) == ""


def test_punctuation_tokens():
    assert all(is_punctuation(t) for t in [".", ",", "``", "''", "-LRB-", "--", "...", "?!"])
    assert not any(is_punctuation(t) for t in ["a", "n't", "5", "U.S.", "$5"])


_WORDS = st.sampled_from(["the", "U.S.", "don't", "Smith's", "$5", "10%", "(", ")", '"', ",", ".", "co-op", "e.g.",
                          "3.5", "Inc.", "\u201c", "\u201d", "--", "it's", "?", "'", "N.Y."])


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(_WORDS, st.sampled_from([" ", "", "  "])), min_size=1, max_size=14))
def test_keeping_everything_gives_the_text_back(parts):
    text = "".join(w + sep for w, sep in parts).strip()
    if not text:
        return
    s = Sentence.from_text(text)
    assert s.render([True] * len(s.tokens)) == re.sub(" +", " ", text)  # spaces between words become one


def test_treebank_sentences_survive_detokenize_then_tokenize(shared_data):
    """ptb-sample dev: the words of each tree, detokenized and tokenized again (benchmarks/RESULTS.md `text`
    measures the rest)."""
    from treegram.trees import parse_brackets

    same = total = 0
    for f in sorted((shared_data / "ptb-sample" / "dev").glob("*.mrg"))[:6]:
        for t in parse_brackets(f.read_text(encoding="utf-8")):
            words = [w for w, tag in t.pos() if tag != "-NONE-"]
            total += 1
            same += tokenize(detokenize(words))[0] == words
    assert total > 50 and same / total > 0.97


def test_parse_takes_typed_text(demo_model_files, tmp_path, capsys):
    from treegram.cli.app import main
    from treegram.trees import parse_brackets

    inp = tmp_path / "typed.txt"
    inp.write_text("The dog didn't sleep (really).\n\nA cat's toy.\n", encoding="utf-8")
    assert main(["-q", "parse", "--model", str(demo_model_files["pcfg"]), "--input", str(inp), "--text"]) == 0
    lines = capsys.readouterr().out.split("\n")
    assert lines[1] == ""
    assert parse_brackets(lines[0])[0].leaves() == ["The", "dog", "did", "n't", "sleep", "-LRB-", "really", "-RRB-",
                                                    "."]
    assert parse_brackets(lines[2])[0].leaves() == ["A", "cat", "'s", "toy", "."]
