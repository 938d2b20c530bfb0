"""The PCFG baseline formalism end to end: training, parsing, unknown words, persistence."""

from __future__ import annotations

import numpy as np
import pytest

from treegram.errors import ModelFileError
from treegram.evaluation.parseval import ParsevalParams, score_corpus
from treegram.formalism import load_model
from treegram.corpora.demo import demo_trees
from treegram.grammar.pcfg import PCFGModel, PCFGSettings


@pytest.fixture(scope="module")
def demo_model():
    return PCFGModel.train(demo_trees(), PCFGSettings(horizontal=1, vertical=1, rare_threshold=1))


def test_reparses_its_own_training_sentences_well(demo_model):
    gold = demo_trees()
    parsed = [demo_model.parse(t.leaves()) for t in gold]
    assert all(p.leaves() == g.leaves() for p, g in zip(parsed, gold))
    assert score_corpus(gold, parsed, ParsevalParams()).f1 >= 85


def test_unknown_words_still_parse(demo_model):
    tokens = "The zorblax quintupled the frobnicators .".split()
    tree = demo_model.parse(tokens)
    assert tree.leaves() == tokens
    assert tree.label == "S"


def test_signature_never_seen_falls_back_to_open_class_tags():
    model = PCFGModel.train(demo_trees(), PCFGSettings(horizontal=1, vertical=1, rare_threshold=1))
    tokens = ["The", "cat", "zz-9!"]
    lex = model.lexical_input(tokens)
    assert lex.uncovered_positions() == []
    tags_at_2 = set(lex.symbol[lex.ptr[2]:lex.ptr[3]].tolist())
    assert tags_at_2 == set(model.unk_tags.tolist())
    assert model.parse(tokens).leaves() == tokens


def test_save_load_round_trip(tmp_path, demo_model):
    path = tmp_path / "demo.model"
    demo_model.save(path)
    loaded = load_model(path)
    assert loaded.formalism == "pcfg"
    for t in demo_trees()[:10]:
        assert loaded.parse(t.leaves()) == demo_model.parse(t.leaves())
    assert np.array_equal(loaded.cfg.bin_logp, demo_model.cfg.bin_logp)


def test_corrupt_and_foreign_model_files_are_clear_errors(tmp_path):
    bad = tmp_path / "bad.model"
    bad.write_bytes(b"not a zip at all")
    with pytest.raises(ModelFileError, match="corrupt"):
        load_model(bad)
    with pytest.raises(ModelFileError, match="not found"):
        load_model(tmp_path / "missing.model")


@pytest.mark.shared
def test_ptb_sample_accuracy(shared_data):
    from treegram.trees import read_treebank

    train = read_treebank([shared_data / "ptb-sample" / "train"])
    dev = read_treebank([shared_data / "ptb-sample" / "dev"])[:40]
    model = PCFGModel.train(train, PCFGSettings(horizontal=2, vertical=2))
    parsed = [model.parse(t.leaves()) for t in dev]
    # the full-dev figure (75.2 F1) is in benchmarks/RESULTS.md; 40 sentences keep this test quick
    assert score_corpus(dev, parsed, ParsevalParams()).f1 >= 70
