"""Issue 25: the merged graded-enja + Tatoeba corpus items and the sheet scorer (fast tests; no shared data)."""

from __future__ import annotations

import numpy as np
import pytest

from treegram.corpora import DepSentence
from treegram.plugins.vocabgen.build_default import merge_sources
from treegram.plugins.vocabgen.corpus import NO_FILE, dedup_key, fragment_reason, text_reason
from treegram.plugins.vocabgen.default import default_corpus
from treegram.plugins.vocabgen.nnlm import BOS, EOS, UNK, LSTMScorer
from treegram.plugins.vocabgen.ranking import tokenize


def test_dedup_key_merges_case_spacing_and_punctuation_variants():
    assert dedup_key("Hello, Tom!") == dedup_key("hello  tom.") == dedup_key("HELLO TOM")
    assert dedup_key("It\u2019s mine.") == dedup_key("it's mine")
    assert dedup_key("It's mine.") != dedup_key("Its mine.")


def test_merge_keeps_graded_rows_and_japanese_and_attributes_tatoeba():
    rows = [("I am Tom.", "私はトムです。", "easy/3.tsv", 1), ("i am tom", "重複", "easy/3.tsv", 2),
            ("It is hot.", "暑い。", "easy/3.tsv", 3)]
    tatoeba = [("I am Tom!", 10, "alice"), ("She runs.", 11, "bob"), ("she runs", 12, "carol")]
    merged, attr = merge_sources(rows, tatoeba)
    assert [m[0] for m in merged] == ["I am Tom.", "It is hot.", "She runs."]
    assert merged[0][1] == "私はトムです。" and merged[2][1] == "" and merged[2][2] == ""
    assert attr == [(10, "alice"), None, (11, "bob")]


def _dep(words, tags, heads, rels):
    return DepSentence(words.split(), tags.split(), heads, rels.split())


def test_fragment_and_text_filters():
    ok = _dep("He ran home .", "PRP VBD NN .", [2, 0, 2, 2], "nsubj ROOT npadvmod punct")
    imperative = _dep("Open the door .", "VB DT NN .", [0, 3, 1, 1], "ROOT det dobj punct")
    because = _dep("Because the train left .", "IN DT NN VBD .", [4, 3, 4, 0, 4], "mark det nsubj ROOT punct")
    noun = _dep("A cup of tea .", "DT NN IN NN .", [2, 0, 2, 3, 2], "det ROOT prep pobj punct")
    assert fragment_reason(ok) is None and fragment_reason(imperative) is None
    assert "subordinate" in fragment_reason(because) and "no verb" in fragment_reason(noun)
    assert text_reason("He ran home.") is None and text_reason("Is it OK?") is None
    assert text_reason('He said "no".') and text_reason("he ran.") and text_reason("Wait...")
    assert text_reason("Run! Now.") and text_reason("I LOVE it.")


def test_embedded_corpus_has_tatoeba_items_with_attribution():
    c = default_corpus()
    tat = [i for i in range(0, len(c), 97) if int(c.file[i]) == NO_FILE]
    assert tat, "no Tatoeba-only sentence in the excerpt"
    for i in tat[:20]:
        p = c.provenance(i)
        assert p.startswith("tatoeba.org #") and "(CC BY 2.0 FR)" in p and c.ja[i] == ""
    both = next(i for i in range(len(c)) if int(c.file[i]) != NO_FILE and int(c.tatoeba_id[i]))
    assert "graded-enja" in c.provenance(both) and "tatoeba.org #" in c.provenance(both) and c.ja[both]


def test_tokenize_splits_like_the_training_parses():
    assert tokenize("I don't know Tom's dog.") == ["I", "do", "n't", "know", "Tom", "'s", "dog", "."]
    assert tokenize("We can't, can we?") == ["We", "ca", "n't", ",", "can", "we", "?"]
    assert tokenize("Mr. Smith cannot come at 6:30.") == ["Mr.", "Smith", "can", "not", "come", "at", "6:30", "."]


def test_lstm_scorer_gives_normalized_probabilities():
    rng = np.random.default_rng(0)
    words = [UNK, BOS, EOS, "a", "b", "c"]
    V, H = len(words), 4
    arrays = LSTMScorer.arrays_from_float(rng.normal(size=(V, H)), rng.normal(size=(4 * H, H)),
                                          rng.normal(size=(4 * H, H)), rng.normal(size=4 * H), rng.normal(size=V),
                                          np.log(np.full(V, 1.0 / V)))
    lm = LSTMScorer(words, arrays)
    # P(next | <s> a b) over every token of the vocabulary sums to 1
    probs = [np.exp(lm.token_logprobs_batch([["a", "b", w]])[0][2]) for w in words]
    assert np.isclose(sum(probs), 1.0, atol=1e-4)
    # batching (padding to the longest sentence) does not change a sentence's scores
    one = lm.token_logprobs_batch([["a", "c", "b"]])[0]
    many = lm.token_logprobs_batch([["b"], ["a", "c", "b"], ["c", "c", "c", "c", "a"]])[1]
    assert np.allclose(one, many)


def test_general_lm_prefers_real_word_order():
    pytest.importorskip("pocketsphinx")
    from treegram.plugins.vocabgen.ranking import GeneralLM

    g = GeneralLM()
    assert g.words("I do n't know Tom 's dog .".split())[0] == ["i", "don't", "know", "tom's", "dog"]
    good, _ = g.local("I go to school every day .".split())
    bad, _ = g.local("School day go every I to .".split())
    assert good.mean() > bad.mean() + 1


def test_public_plausibility_scores_text_and_tokens():
    from treegram.plugins.vocabgen.ranking import plausibility, plausibility_batch, sheet_threshold

    good, bad = plausibility_batch(["I go to school every day.", "School day go every I to."])
    assert good > bad + 2 and sheet_threshold() > bad
    assert plausibility("I go to school every day.") == pytest.approx(good)
    assert plausibility(["I", "go", "to", "school", "every", "day", "."]) == pytest.approx(good)
