"""Sheet sentence choice on the embedded default data: corpus items, ranking, safety, near-duplicates, re-checks."""

from __future__ import annotations

import attrs
import numpy as np
import pytest

from treegram.plugins.vocabgen.corpus import sentence_key, split_offsets, tokenize_with
from treegram.plugins.vocabgen.default import default_corpus, default_scorer, load_default_model
from treegram.plugins.vocabgen.generator import ConstrainedGenerator
from treegram.plugins.vocabgen.edits import EDIT_THRESHOLD, is_edit
from treegram.plugins.vocabgen.exercises import names_used
from treegram.plugins.vocabgen.safety import is_safe, unsafe_reason
from treegram.plugins.vocabgen.selection import (MAX_PER_WORD, SheetSource, default_source,
                                                 near_duplicate, select_sentences, sheet_order)
from treegram.plugins.vocabgen.vocab import cefr_vocabulary, word_forms


@pytest.fixture(scope="module")
def source():
    model = load_default_model()
    gen = ConstrainedGenerator(model.generation, model.system, cefr_vocabulary("A1"))
    return default_source(gen)


def test_embedded_data_is_small_and_complete():
    from treegram.plugins.vocabgen.default import DATA_FILES, data_dir

    sizes = {name: (data_dir() / name).stat().st_size for name in DATA_FILES}
    assert max(sizes.values()) < 3_000_000 and sum(sizes.values()) < 7_000_000, sizes
    notice = (data_dir() / "NOTICE.md").read_text(encoding="utf-8")
    assert "Tono" in notice and "graded-enja" in notice and "CC BY-SA 4.0" in notice
    assert "Tatoeba" in notice and "CC BY 2.0 FR" in notice and "pocketsphinx" in notice


def test_main_sheet_prefers_corpus_items(source):
    groups, problems = select_sentences(source, ["school", "book", "family", "water"], 5, np.random.default_rng(3))
    assert not problems and all(s.source == "corpus" for ss in groups.values() for s in ss)


def test_main_sheet_items_are_checked_and_mixed(source):
    vocab = source.vocab
    source = attrs.evolve(source, corpus_share=0.5)
    groups, problems = select_sentences(source, ["school", "book", "family", "water"], 5, np.random.default_rng(3))
    assert set(groups) == {"school", "book", "family", "water"} and not problems
    items = [s for ss in groups.values() for s in ss]
    assert {s.source for s in items} == {"corpus", "generated"}
    for w, sents in groups.items():
        allowed = vocab.with_words(word_forms(w, "A1"))
        for s in sents:
            assert not allowed.missing(s.tokens), s.text
            assert any(t.lower() in word_forms(w, "A1") for t in s.tokens)
            assert is_safe(s.tokens) and s.provenance and s.word == w
            if s.source == "corpus":  # exact corpus text; graded-enja's with its translation and file:line,
                # Tatoeba's with its id and contributor (CC BY 2.0 FR)
                if "graded-enja" in s.provenance:
                    assert s.translation and ".tsv:" in s.provenance
                else:
                    assert s.provenance.startswith("tatoeba.org #") and "CC BY 2.0 FR" in s.provenance
                i = source.corpus.find_copy(s.tokens)
                assert source.corpus.texts[i] == s.text
            else:  # new: not a copy of any training sentence, and plausible enough
                assert source.corpus.find_copy(s.tokens) is None
                assert not source.corpus.is_training_sentence(s.tokens)
                if is_edit(s):  # an edit of a real sentence, named with its attribution, at the edit threshold
                    host = s.provenance.split('"')[1]
                    assert host in source.corpus.texts and host != s.text
                    assert "CC BY" in s.provenance and s.score >= EDIT_THRESHOLD
                else:
                    assert s.score >= source.threshold
    for a in items:
        for b in items:
            if a is not b:
                assert not near_duplicate(a.tokens, b.tokens), (a.text, b.text)


def test_seeded_and_shuffled(source):
    a, _ = select_sentences(source, ["school", "water"], 4, np.random.default_rng(7))
    b, _ = select_sentences(source, ["school", "water"], 4, np.random.default_rng(7))
    assert [[s.text for s in v] for v in a.values()] == [[s.text for s in v] for v in b.values()]
    order = sheet_order(a, np.random.default_rng(1))
    assert sorted(s.text for s in order) == sorted(s.text for v in a.values() for s in v)
    words = [s.word for s in order]
    assert words != sorted(words, key=["school", "water"].index)  # not grouped in word-box order


def test_per_word_cap_and_unknown_words(source):
    groups, problems = select_sentences(source, ["qwzx"], MAX_PER_WORD + 5, np.random.default_rng(0))
    assert not groups and any("capped" in p for p in problems) and any(p.startswith("qwzx") for p in problems)


def test_names_are_listed(source):
    vocab = source.vocab
    groups = {"tom": [s for s in select_sentences(source, ["tom"], 3, np.random.default_rng(2))[0]["tom"]]}
    assert "Tom" in names_used(groups, vocab)


def test_safety_filter_words_and_senses():
    for bad in ("They say he gives good head .", "The child had to make water .", "He killed the cat .",
                "She went to bed with him ."):
        assert unsafe_reason(bad.split()), bad
    for ok in ("I have a knife and a fork .", "She went to bed with a cold .", "I drink water ."):
        assert unsafe_reason(ok.split()) is None, ok


def test_near_duplicates():
    assert near_duplicate("He likes school .".split(), "She likes school .".split())
    assert near_duplicate("X was happy to get the win .".split(), "Tom was happy to get the win .".split())
    assert near_duplicate("My brother goes to school by bus .".split(), "My sister goes to school by bus .".split())
    assert not near_duplicate("I go to school .".split(), "Where is the water ?".split())


def test_corpus_tokens_tile_the_text_and_copy_keys():
    assert tokenize_with("I don't know.", split_offsets("I don't know.", ["I", "do", "n't", "know", "."])) \
        == ("I", "do", "n't", "know", ".")
    assert sentence_key("I don't know.") == sentence_key(["I", "do", "n't", "know", "."])
    c = default_corpus()
    assert len(c) > 20000 and c.is_training_sentence(c.tokens[5])
    assert not c.is_training_sentence("Purple elephants never dance on Tuesdays .".split())


def test_scorer_prefers_real_word_order():
    scorer, threshold = default_scorer()
    good = scorer.slor("I go to school every day .".split())
    bad = scorer.slor("School day go every I to .".split())
    assert good > threshold > bad


def test_ranker_scores_and_threshold(source):
    from treegram.plugins.vocabgen.ranking import PlausibilityRanker

    ranker = source.scorer
    assert isinstance(ranker, PlausibilityRanker) and source.threshold == ranker.threshold
    good = ranker.score("I go to school every day .".split())
    bad = ranker.score("School day go every I to .".split())
    assert good > bad + 2 and bad < ranker.threshold
    # the worst single position counts: one bad join sinks an otherwise fluent sentence
    assert ranker.score("I go to school every day .".split()) > ranker.score("I go to school every the day .".split())


def test_ranker_cache_stays_bounded_and_answers_every_batch():
    from treegram.plugins.vocabgen.default import default_ranker

    ranker = default_ranker()
    if ranker is None:
        pytest.skip("no embedded ranker")
    ranker = type(ranker)(ranker.res, ranker.spec)  # a fresh cache
    ranker.cache_max = 3
    a, b, c, d = ("I like dogs .", "She is here .", "We eat rice .", "He runs fast .")
    first = ranker.score_batch([a.split(), b.split()])
    # a full cache is trimmed to what the batch reads: the cached sentence a is still answered
    got = ranker.score_batch([a.split(), c.split(), d.split()])
    assert got[0] == first[0] and len(ranker._cache) <= 4
    assert got[2] == pytest.approx(ranker.score(d.split()))


def test_bare_generator_gets_the_embedded_corpus(source):
    groups, _ = select_sentences(source.generator, ["water"], 2, np.random.default_rng(0))
    assert len(groups["water"]) == 2
    only_gen, _ = select_sentences(SheetSource(source.generator), ["water"], 2, np.random.default_rng(0))
    assert all(s.source == "generated" for s in only_gen["water"])


def test_below_threshold_items_are_a_marked_last_resort(source):
    strict = attrs.evolve(source, corpus=None, threshold=1e9, editor=None)  # SPINEDEP only (edits: below)
    groups, problems = select_sentences(strict, ["water"], 2, np.random.default_rng(0))
    assert "water" not in groups  # never printed unless asked
    assert any("left out (--allow-unchecked" in p for p in problems)
    groups, problems = select_sentences(strict, ["water"], 2, np.random.default_rng(0), allow_unchecked=True)
    items = groups["water"]
    assert items and all("below the plausibility threshold" in s.provenance for s in items)
    assert all(source.scorer.slor(s.tokens) >= source.floor for s in items)
    assert any("below the plausibility threshold" in p for p in problems)


def test_dependency_parses_become_phrase_structure():
    from treegram.corpora import DepSentence
    from treegram.plugins.vocabgen.syntax import dep_to_tree

    s = DepSentence("The old man sat in the park .".split(), "DT JJ NN VBD IN DT NN .".split(),
                    [3, 3, 4, 0, 4, 7, 5, 4], "det amod nsubj ROOT prep det pobj punct".split())
    assert dep_to_tree(s).to_bracket() == \
        "(S (NP (DT The) (JJ old) (NN man)) (VBD sat) (PP (IN in) (NP (DT the) (NN park))) (. .))"


# -- draw until pass (issue 12 word inclusion: the sampler behind sheets and the benchmark's hybrid) ---------------
def test_draw_passing_stops_when_enough_pass_and_is_seeded(source):
    from treegram.plugins.vocabgen.selection import draw_passing

    src = attrs.evolve(source, fallbacks=(), threshold=0.5)  # the mechanics, at a threshold many drafts pass
    d = draw_passing(src, "make", 5, np.random.default_rng(4))
    assert len(d.passed) == 5 and not d.capped and 0 < d.draws <= src.draw_cap(5)
    assert len({s.text for s in d.passed}) == 5  # unique by default
    allowed = src.vocab.with_words(word_forms("make", "A1"))
    for s in d.passed:
        assert s.score >= src.threshold and not allowed.missing(s.tokens) and is_safe(s.tokens)
        assert src.corpus.find_copy(s.tokens) is None and not src.corpus.is_training_sentence(s.tokens)
    again = draw_passing(src, "make", 5, np.random.default_rng(4))
    assert [s.text for s in again.passed] == [s.text for s in d.passed] and again.draws == d.draws
    # with repeats (Figure 5 sampling): the same sentence may come back, every output still passes
    rep = draw_passing(src, "make", 60, np.random.default_rng(4), unique=False)
    assert len(rep.passed) == 60 and len({s.text for s in rep.passed}) < 60


def test_draw_cap_is_hit_with_a_note(source):
    from treegram.plugins.vocabgen.selection import draw_passing

    strict = attrs.evolve(source, threshold=1e9, floor=None, fallbacks=(), min_draws=300, draws_per_item=10)
    d = draw_passing(strict, "make", 3, np.random.default_rng(0))
    assert d.capped and not d.passed and d.draws == 300
    groups, problems = select_sentences(attrs.evolve(strict, corpus=None), ["make"], 3, np.random.default_rng(0))
    assert "make" not in groups
    note = [p for p in problems if p.startswith("make:")]
    assert note and "passed the plausibility ranker in 300 draws (the cap: 300)" in note[0]


def test_poorly_covered_words_draw_from_the_fallback(source):
    from treegram.plugins.vocabgen.selection import LazyGenerator, draw_passing, poorly_covered

    model = load_default_model()
    lazy = LazyGenerator(model, source.vocab)
    fussy = attrs.evolve(source, fallbacks=(lazy,), min_distinct=10**6, probe=200)
    assert lazy._gen is None  # built only when a poorly covered word needs it
    assert poorly_covered(fussy, "make")
    d = draw_passing(fussy, "make", 3, np.random.default_rng(1))
    assert d.fallback_used and lazy._gen is not None
    assert d.passed and all("fallback model" in s.provenance for s in d.passed)
    easy = attrs.evolve(source, fallbacks=(lazy,), min_distinct=1, probe=200, threshold=0.5)
    assert not poorly_covered(easy, "make")
    d = draw_passing(easy, "make", 3, np.random.default_rng(1))
    assert not d.fallback_used and all("fallback" not in s.provenance for s in d.passed)


def test_embedded_fallback_model_is_small_when_present():
    from treegram.plugins.vocabgen.default import default_fallback_path

    path = default_fallback_path()
    if not path.is_file():
        pytest.skip("no embedded fallback model")
    assert path.stat().st_size < 3_500_000


def test_below_threshold_items_are_bounded_per_word(source):
    strict = attrs.evolve(source, corpus=None, threshold=1e9, fallbacks=())
    groups, problems = select_sentences(strict, ["make"], 8, np.random.default_rng(0), allow_unchecked=True)
    assert len(groups["make"]) == strict.max_below == 2  # drawing found more below the threshold; 2 are shown
    assert any("only 2 different sentence(s)" in p for p in problems)


def test_corpus_floor_skips_low_scoring_corpus_items(source):
    from treegram.plugins.vocabgen.selection import CorpusPool
    from treegram.plugins.vocabgen.vocab import word_forms as wf

    forms = wf("school", "A1")
    allowed = source.vocab.with_words(forms - source.vocab.words)
    pool = CorpusPool(source, "school", forms, allowed, np.random.default_rng(0))
    first = [s for _, s in zip(range(20), pool)]
    assert len(first) == 20 and all(s.score is not None for s in first)
    assert [s.text for s in pool][:20] == [s.text for s in first]  # iterating again replays the same items
    floor = float(np.median([s.score for s in first]))
    strict = CorpusPool(attrs.evolve(source, corpus_floor=floor), "school", forms, allowed, np.random.default_rng(0))
    kept = [s for _, s in zip(range(20), strict)]
    assert kept and all(s.score >= floor for s in kept) and strict.skipped > 0


def test_fragments_and_senses_above_the_level_are_not_sheet_sentences():
    from treegram.plugins.vocabgen.quality import fragment_reason, sheet_reason

    frag = tuple("Because the train did not wait for me .".split())
    assert "subordinate" in fragment_reason(frag)
    assert fragment_reason(tuple("Swimming in the river .".split())) == "no finite main clause"
    for ok in ("Open the door .", "Where is she ?", "When I was young , I lived here .", "What a nice day !"):
        assert fragment_reason(tuple(ok.split())) is None, ok
    verb = tuple("The smoke made our eyes water .".split())  # tagged NN, but with a subject of its own
    assert "B2" in sheet_reason(verb, "water", "A1")
    assert sheet_reason(verb, "water", "B2") is None
    assert sheet_reason(tuple("There is little water in the glass .".split()), "water", "A1") is None


def test_sheets_skip_fragments_and_verb_senses(source):
    from treegram.plugins.vocabgen.quality import sheet_reason

    groups, _ = select_sentences(source, ["water", "because"], 10, np.random.default_rng(3))
    for w, sents in groups.items():
        assert all(sheet_reason(s.tokens, w, "A1") is None for s in sents)
