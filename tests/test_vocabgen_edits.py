"""Derivation edits (edits.py) on the embedded data: a swap changes one slot of a real sentence and keeps it in the
vocabulary, articles and gender agree, closed sets and respellings, the plausibility check, and sheets that show
edits (through the classroom-fitness floor) only when the editor is on."""

from __future__ import annotations

import attrs
import numpy as np
import pytest

from treegram.plugins.vocabgen.edits import (_FEMALE, _MALE, _SHE, EDIT_THRESHOLD, MAX_DROP, Edit, EditGenerator,
                                             acceptable, default_edit_data, edit_host, is_edit)
from treegram.plugins.vocabgen.vocab import cefr_vocabulary, word_forms


@pytest.fixture(scope="module")
def gen():
    data = default_edit_data()
    if data is None:
        pytest.skip("no embedded edit data")
    return EditGenerator(data, cefr_vocabulary("A1"), "A1")


@pytest.mark.parametrize("word", ["apple", "elephant", "uncle"])
def test_a_swap_changes_one_slot_of_a_real_sentence(gen, word):
    c = gen.corpus
    forms = word_forms(word, "A1")
    allowed = gen.vocab.with_words(forms - gen.vocab.words)
    edits = gen.edits(word)
    assert len(edits) >= 5
    for e in edits:
        host = c.tokens[e.item]
        assert len(e.tokens) == len(host) and host[e.position] == e.anchor
        assert e.tokens[e.position].lower() == e.form and e.form in forms
        changed = [k for k, (a, b) in enumerate(zip(host, e.tokens)) if a != b]
        # the slot, and at most the article right before it (a -> an)
        assert set(changed) <= {e.position, e.position - 1}, (c.texts[e.item], e.text)
        if e.position > 0 and e.tokens[e.position - 1].lower() in ("a", "an"):
            assert e.tokens[e.position - 1].lower() == "an", e.text  # apple, elephant, uncle: a vowel sound
        assert e.form in e.text.lower() and e.text != c.texts[e.item]
        assert not allowed.missing(e.tokens) and not c.is_training_sentence(e.tokens)
        assert e.anchor.lower() not in forms


def test_gendered_nouns_keep_pronouns_consistent(gen):
    edits = [e for e in gen.edits("uncle") if e.kind == "swap"]
    assert edits
    for e in edits:
        assert e.anchor.lower() not in _FEMALE, e.text  # never "my aunt" -> "my uncle" (her, she ... around)
        if e.anchor.lower() not in _MALE:  # "the doctor ... she" -> no "the uncle ... she"
            assert not any(t.lower() in _SHE for t in e.tokens), e.text


def test_closed_sets_and_respellings(gen):
    months = [e for e in gen.edits("march") if e.kind == "set"]
    assert months and all(e.anchor.lower() in {"january", "february", "april", "may", "june", "july", "august",
                                               "september", "october", "november", "december"} for e in months)
    resp = gen.edits("colour")
    assert resp and {e.kind for e in resp} == {"respell"}
    # the American spelling becomes the British one, for every word of the sentence ("favorite color" -> both)
    assert all(e.form == e.anchor.lower().replace("or", "our", 1) for e in resp)
    assert any(e.anchor.lower() == "color" for e in resp)
    assert not any("color" in t.lower() or "favorite" in t.lower() for e in resp for t in e.tokens)


def test_acceptance_against_threshold_and_host():
    e = Edit(0, 0, "dog", "cat", ("cat",), "cat")
    assert acceptable(e, EDIT_THRESHOLD + 0.1, EDIT_THRESHOLD + 0.5)
    assert not acceptable(e, EDIT_THRESHOLD - 0.1, EDIT_THRESHOLD)            # below the threshold
    assert not acceptable(e, EDIT_THRESHOLD + 0.1, EDIT_THRESHOLD + MAX_DROP + 0.2)  # far below its host
    syn = attrs.evolve(e, kind="synonym")
    assert acceptable(syn, -5.0, EDIT_THRESHOLD) and not acceptable(syn, 5.0, EDIT_THRESHOLD - 0.1)
    assert acceptable(attrs.evolve(e, kind="respell"), -5.0, -5.0)


@pytest.fixture(scope="module")
def source():
    from treegram.plugins.vocabgen.default import load_default_model
    from treegram.plugins.vocabgen.generator import ConstrainedGenerator
    from treegram.plugins.vocabgen.selection import default_source

    if default_edit_data() is None:
        pytest.skip("no embedded edit data")
    model = load_default_model()
    return default_source(ConstrainedGenerator(model.generation, model.system, cefr_vocabulary("A1")))


def test_sheets_show_edits_for_a_poorly_covered_word(source):
    from treegram.plugins.vocabgen.selection import select_sentences

    assert source.editor is not None and source.fitness is not None
    # "grandpa": fewer corpus items under cefr:A1 than a sheet of 4 wants; edits fill it
    groups, _ = select_sentences(source, ["grandpa"], 4, np.random.default_rng(0))
    edits = [s for s in groups["grandpa"] if is_edit(s)]
    assert edits
    fit = source.fitness.score_batch([(s.tokens, s.provenance, s.source) for s in edits])
    assert (fit >= source.fitness.floor).all()  # the fitness floor holds for edits too
    for s in edits:
        host = edit_host(s)
        assert host in source.corpus.texts and s.score >= EDIT_THRESHOLD and "CC BY" in s.provenance
    off, _ = select_sentences(attrs.evolve(source, editor=None), ["grandpa"], 4, np.random.default_rng(0))
    assert not any(is_edit(s) for ss in off.values() for s in ss)


def test_fit_order_drops_unfit_items_and_keeps_the_order_inside_a_band(source):
    from treegram.plugins.vocabgen.generator import Sentence
    from treegram.plugins.vocabgen.selection import fit_order

    class Bands:  # a fitness model whose score is the sentence's length: bands by length
        floor, bands = 3.0, (5.0,)

        def score_batch(self, items):
            return np.asarray([float(len(t)) for t, _, _ in items])

        def band(self, s):
            return np.where(s < self.floor, -1, np.where(s >= 5.0, 0, 1))

    def sent(text, edit):
        prov = 'edited from the real sentence "x" (y): a -> b' if edit else "generated by SPINEDEP"
        return Sentence(tuple(text.split()), text, "w", "generated", prov, None, 1.0)

    items = [sent("a b c d", True), sent("a b c d e", False), sent("a b", True), sent("a b c d e f", True)]
    got = fit_order(attrs.evolve(source, fitness=Bands()), items)
    assert [s.text for s in got] == ["a b c d e", "a b c d e f", "a b c d"]  # band 0 first, stable; "a b" unfit


def test_a_sheet_never_shows_an_edit_of_another_practised_words_sentence():
    """"She's a dog." -> "She's a cat." would take the sentence a sheet for cat and dog needs for dog (the two are
    near-duplicates): edits from hosts that hold another word of the sheet are left out."""
    from treegram.corpora import DepSentence
    from treegram.plugins.vocabgen.model import VocabgenModel
    from treegram.plugins.vocabgen.selection import as_source, select_sentences
    from treegram.plugins.vocabgen.vocab import Vocabulary

    if default_edit_data() is None:
        pytest.skip("no embedded edit data")
    toy = [DepSentence("The cat likes me .".split(), "DT NN VBZ PRP .".split(), [2, 3, 0, 3, 3]),
           DepSentence("She saw a dog .".split(), "PRP VBD DT NN .".split(), [2, 0, 4, 2, 2])]
    model = VocabgenModel.train(toy * 2)
    vocab = Vocabulary("toy", set("the,dog,cat,likes,me,she,saw,a,is,'s,dogs,cats".split(",")))
    from treegram.plugins.vocabgen.generator import ConstrainedGenerator

    src = as_source(ConstrainedGenerator(model.generation, model.system, vocab))
    edits = src.editor.get().edits("cat")
    assert any("dog" in src.corpus.texts[e.item].lower() for e in edits)  # such edits exist
    groups, _ = select_sentences(src, ["cat", "dog"], 3, np.random.default_rng(0), allow_unchecked=True)
    for s in groups.get("cat", []):
        assert not is_edit(s) or "dog" not in edit_host(s).lower(), s.provenance
    for s in groups.get("dog", []):
        assert not is_edit(s) or "cat" not in edit_host(s).lower(), s.provenance
    alone, _ = select_sentences(src, ["cat"], 3, np.random.default_rng(0), allow_unchecked=True)
    assert any(is_edit(s) and "dog" in edit_host(s).lower() for s in alone["cat"])  # alone, they are fine
