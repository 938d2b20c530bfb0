"""SPINEDEP, vocabularies, the model file, exercises and the CLI of the vocabgen plugin (no spaCy, no shared data)."""

from __future__ import annotations

import json

import numpy as np
import pytest
from toy_data import PETS, dep

from treegram.cli.app import main
from treegram.errors import InputError
from treegram.generation import check_derivation, fit_mle
from treegram.generation.constraints import NoSentenceError
from treegram.plugins.vocabgen.exercises import make_sheet
from treegram.plugins.vocabgen.formats import render
from treegram.plugins.vocabgen.generator import ConstrainedGenerator
from treegram.plugins.vocabgen.model import VocabgenModel
from treegram.plugins.vocabgen.spinedep import END, HEAD, ROOT_CONTEXT, SpineDepSystem, surface
from treegram.plugins.vocabgen.vocab import inflections, parse_vocab_spec, read_cefrj


CORPUS = [*PETS, dep("An aardvark bit me .", "DT NN VBD PRP .", "2 3 0 3 3")]


@pytest.fixture(scope="module")
def model() -> VocabgenModel:
    return VocabgenModel.train(CORPUS * 2)


def test_spinedep_derivation_contexts_outcomes_and_text():
    system = SpineDepSystem()
    d = system.derivations(CORPUS[0])
    check_derivation(system, d)
    assert d.context == ROOT_CONTEXT and d.outcome == (("VBZ", "likes"),)
    likes = d.children[0]
    assert likes.context == (("VBZ", "likes"), ("ROOT", "ROOT"), "-")
    assert likes.outcome == (("PRP", "she"), HEAD, ("NNS", "dogs"), (".", "."))
    dogs = likes.children[1]
    assert dogs.context == (("NNS", "dogs"), ("VBZ", "likes"), "ROOT")
    assert dogs.outcome == (("JJ", "big"), HEAD)
    assert dogs.children[0].outcome == END
    assert dogs.children[0].context == (("JJ", "big"), ("NNS", "dogs"), "VBZ")
    assert system.text(d) == ["she", "likes", "big", "dogs", "."]
    assert surface(system.tagged_text(d)) == "She likes big dogs."
    assert system.words_of_outcome(likes.outcome) == ("she", "dogs", ".")
    assert SpineDepSystem.context_word(dogs.context) == "dogs"


def test_spinedep_every_training_sentence_round_trips():
    system = SpineDepSystem()
    for s in CORPUS:
        assert system.text(system.derivations(s)) == [w.lower() for w in s.words]


def test_spinedep_rejects_bad_input():
    with pytest.raises(InputError):
        SpineDepSystem().derivations(["not", "a", "tree"])
    with pytest.raises(InputError):
        SpineDepSystem().derivations(dep("a b", "DT NN", "2 1"))  # cycle


def test_min_count_discards_pairs_seen_once():
    system = SpineDepSystem()
    once = fit_mle(system, CORPUS[:-1] * 2 + CORPUS[-1:], min_count=2)
    assert "aardvark" not in once.word_index  # seen once
    assert "dog" in once.word_index


def test_surface_detokenizes():
    assert surface(["i", "do", "n't", "know", "john", "."]) == "I don't know john."
    assert surface([("NNP", "john"), ("VBZ", "runs"), (",", ","), ("RB", "too"), (".", "!")]) == "John runs, too!"


def test_inflections():
    assert {"went", "goes", "going", "gone"} <= inflections("go")
    assert {"stopped", "stopping", "stops"} <= inflections("stop", "verb")
    assert "cities" in inflections("city", "noun")
    assert {"bigger", "biggest"} <= inflections("big", "adjective")
    assert "taller" in inflections("tall", "adjective") and "taller" not in inflections("tall", "other")


def test_vocab_specs(tmp_path):
    v = parse_vocab_spec("words:The, dog,bit")
    assert "the" in v and "The" in v and "dog" in v and "cat" not in v and "." in v and "n't" in v
    f = tmp_path / "list.txt"
    f.write_text("# my words\nDog\ncat  bird\n", encoding="utf-8")
    assert parse_vocab_spec(str(f)).words == {"dog", "cat", "bird"}
    d = tmp_path / "dolch"
    d.mkdir()
    (d / "nouns").write_text("apple\n", encoding="utf-8")
    (d / "verbs").write_text("run\n", encoding="utf-8")
    (d / "README").write_text("Dolch Word List\n", encoding="utf-8")
    assert parse_vocab_spec(str(d)).words == {"apple", "run"}
    csv = tmp_path / "cefrj.csv"
    csv.write_text("headword,pos,CEFR\ndog,noun,A1\ngo,verb,A1\nabandon,verb,B1\na.m./am,adverb,A1\n",
                   encoding="utf-8")
    v = parse_vocab_spec(f"{csv}@A1")
    assert {"dog", "dogs", "go", "went", "a.m.", "am"} <= v.words and "abandon" not in v
    assert "abandoned" in read_cefrj(csv, "B1")
    for bad in ("", "cefr:Z9", str(tmp_path / "missing.txt"), str(csv)):
        with pytest.raises(InputError):
            parse_vocab_spec(bad)
    empty = tmp_path / "empty.txt"
    empty.write_text("# nothing\n", encoding="utf-8")
    with pytest.raises(InputError, match="empty"):
        parse_vocab_spec(str(empty))


def test_generator_checks_vocabulary_and_word(model):
    vocab = parse_vocab_spec("words:the,dog,cat,bit,likes,me,she")
    gen = ConstrainedGenerator(model.generation, model.system, vocab)
    sents, stats = gen.sample(200, np.random.default_rng(1))
    assert len(sents) == 200 and stats["rejected_by_check"] == 0
    assert all(all(t in vocab for t in s.tokens) for s in sents)
    assert not any("big" in s.tokens for s in sents)
    with_cat, _ = gen.sample(100, np.random.default_rng(2), word="cat")
    assert len(with_cat) == 100 and all("cat" in s.tokens for s in with_cat)
    a, _ = gen.sample(20, 7, word="dog")
    b, _ = gen.sample(20, 7, word="dog")
    assert [s.text for s in a] == [s.text for s in b]
    uniq, _ = gen.sample(50, 3, unique=True)
    assert len({s.text for s in uniq}) == len(uniq) < 50  # the model has few sentences: stops, no endless loop
    with pytest.raises(NoSentenceError, match="unknown word"):
        gen.sample(1, 0, word="zebra")
    # 'big' only occurs with 'dogs', which this vocabulary lacks -> the word cannot appear
    with pytest.raises(NoSentenceError, match="no sentence of the model contains 'big'"):
        gen.sample(1, 0, word="big")
    with pytest.raises(NoSentenceError):
        ConstrainedGenerator(model.generation, model.system, parse_vocab_spec("words:xyz"))


def test_model_file_round_trip(model, tmp_path):
    from treegram.formalism import load_model

    path = tmp_path / "m.model"
    model.save(path)
    back = load_model(path)
    assert isinstance(back, VocabgenModel)
    assert back.generation.contexts == model.generation.contexts
    np.testing.assert_array_equal(back.generation.prob, model.generation.prob)
    assert back.corpus == model.corpus
    assert back.describe(top=3)["top_rules"]


def test_exercise_sheets_have_an_answer_key(model):
    vocab = parse_vocab_spec("words:the,dog,cat,bit,likes,me,she")
    gen = ConstrainedGenerator(model.generation, model.system, vocab)
    groups = {w: gen.sample(2, 0, word=w, unique=True)[0] for w in ("cat", "dog")}
    for kind in ("cloze", "translate", "reorder"):
        sheet = make_sheet(groups, kind, np.random.default_rng(0), vocab)
        items = sheet.items
        md = render(sheet, "md").decode()
        assert "## Answer key" in md
        key = md.split("## Answer key")[1]
        for it in items:
            assert f"{it.number}. " in key and it.sentence in key
        if kind == "cloze":
            assert all("_____" in it.prompt and it.word not in it.prompt.lower().split() for it in items)
        if kind == "reorder":
            assert all(sorted(" ".join(it.tiles).lower().replace("n't", " n't").split())
                       == sorted(t.lower() for t in it.sentence.rstrip(".!?").split()) for it in items)
        html = render(sheet, "html").decode()
        assert "Answer key" in html and html.startswith("<!DOCTYPE html>")
        data = json.loads(render(sheet, "json"))
        assert len(data["items"]) == 4 and all("answer" in i for i in data["items"])


# -- CLI ---------------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def model_file(model, tmp_path_factory):
    path = tmp_path_factory.mktemp("vg") / "toy.model"
    model.save(path)
    return path


VOCAB = "words:the,dog,cat,bit,likes,me,she"


def test_cli_generate_json(model_file, capsys):
    assert main(["generate", "--model", str(model_file), "--vocab", VOCAB, "--include", "cat", "-n", "5",
                 "--seed", "3", "--json", "--no-unique"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert len(out) == 5 and all("cat" in o["tokens"] and o["text"] for o in out)
    assert len({o["text"] for o in out}) < 5  # the tiny model repeats itself ...
    assert main(["generate", "--model", str(model_file), "--vocab", VOCAB, "--include", "cat", "-n", "5",
                 "--seed", "3", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)  # ... and -n <= 200 gives different sentences by default
    assert len({o["text"] for o in out}) == len(out) >= 2


def test_cli_exercises(model_file, capsys, tmp_path):
    out = tmp_path / "sheet.html"
    assert main(["exercises", "--allow-unchecked", "--model", str(model_file), "--vocab", VOCAB, "--words", "cat,dog", "--per-word", "2",
                 "--kind", "cloze", "--format", "html", "--out", str(out)]) == 0
    assert "Answer key" in out.read_text(encoding="utf-8")


@pytest.mark.parametrize("argv, message", [
    (["generate", "--vocab", VOCAB, "--include", "zebra"], "unknown word"),
    (["generate", "--vocab", VOCAB, "--include", "big"], "no sentence of the model contains"),
    (["generate", "--vocab", "words:xyz"], "no sentence of the model uses only words"),
    (["generate", "--vocab", "words:"], "empty"),
    (["generate", "--vocab", VOCAB, "--include", "."], "is not a word"),
    (["generate", "--vocab", VOCAB, "--include", "?!"], "is not a word"),
    (["exercises", "--vocab", VOCAB, "--words", "cat,.,dog"], "is not a word"),
    (["generate", "--vocab", "cefr:Q3"], "unknown CEFR level"),
    (["generate", "--vocab", "nowhere.txt"], "no such vocabulary file"),
    (["exercises", "--vocab", VOCAB, "--words", "zebra,big", "--allow-above"], "no sentence for any of the words"),
    (["exercises", "--vocab", VOCAB, "--words", "cat,zebra"], "zebra: CEFR-J says B2, not in the vocabulary"),
    (["exercises", "--vocab", VOCAB, "--words", ","], "--words is empty"),
])
def test_cli_errors(model_file, capsys, argv, message):
    assert main(argv[:1] + ["--model", str(model_file)] + argv[1:]) == 2
    assert message in capsys.readouterr().err


def test_cli_counts_use_the_shared_argtypes(model_file, capsys):
    for argv in (["generate", "--vocab", VOCAB, "-n", "0"], ["exercises", "--vocab", VOCAB, "--words", "cat",
                                                             "--per-word", "-3"]):
        assert main(argv[:1] + ["--model", str(model_file)] + argv[1:]) == 2
        assert "must be at least 1" in capsys.readouterr().err


def test_cli_large_requests_are_capped_with_a_message(model_file, capsys, monkeypatch):
    from treegram.plugins.vocabgen import cli as vcli

    monkeypatch.setattr(vcli, "MAX_UNIQUE", 50)
    monkeypatch.setattr(vcli, "UNIQUE_PATIENCE", 300)
    assert main(["generate", "--model", str(model_file), "--vocab", VOCAB, "-n", "100000", "--unique"]) == 0
    err = capsys.readouterr().err
    assert "capped at 50" in err and "only" in err and "different sentences" in err
    assert main(["generate", "--model", str(model_file), "--vocab", VOCAB, "-n", "2000"]) == 0
    err = capsys.readouterr().err
    assert "sentences are different" in err and "--unique" in err
    assert main(["exercises", "--allow-unchecked", "--model", str(model_file), "--vocab", VOCAB, "--words", "cat", "--per-word",
                 "100000"]) == 0
    assert "capped at 50" in capsys.readouterr().err


def test_cli_missing_model(capsys, tmp_path):
    assert main(["generate", "--model", str(tmp_path / "none.model"), "--vocab", VOCAB]) == 2
    assert "model file not found" in capsys.readouterr().err


def test_cli_train_from_trees(tmp_path, capsys):
    from treegram.plugins.vocabgen.parsing import write_conllu

    trees = tmp_path / "trees"
    trees.mkdir()
    write_conllu(trees / "a.conllu", CORPUS * 2)
    out = tmp_path / "t.model"
    assert main(["train", "vocabgen", "--trees", str(trees), "--out", str(out), "--json"]) == 0
    info = json.loads(capsys.readouterr().out)
    assert info["training_sentences"] == 14 and out.is_file()
    assert main(["train", "vocabgen", "--out", str(out)]) == 2
    assert "no training data" in capsys.readouterr().err
