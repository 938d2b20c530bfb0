"""Generation views of the parsing grammars (issue 11 item 5): PCFG, TSG and TIG models as Context/Outcome/Imply
systems through the same constraint machinery as SPINEDEP, on small models of the built-in demo treebank."""

from __future__ import annotations

import json

import numpy as np
import pytest

from treegram.charts import viterbi
from treegram.cli.app import main
from treegram.formalism import load_model
from treegram.corpora.demo import demo_trees
from treegram.grammar.pcfg import PCFGModel, PCFGSettings
from treegram.generation import Derivation
from treegram.generation.cfg_view import WORD, CFGViewSystem
from treegram.trees.tree import Tree

from treegram.plugins.vocabgen.generator import ConstrainedGenerator
from treegram.plugins.vocabgen.vocab import Vocabulary

VOCAB = Vocabulary("test", {"a", "the", "dog", "cat", "is", "was", "hungry", "slept", "saw", "in", "garden", "she",
                            "he", "it", "big", "small", "book", "reads", "on", "mat", "chased", "park"})


@pytest.fixture(scope="module")
def models(demo_model_files):
    return demo_model_files


def to_generation(tree: Tree) -> Derivation:
    """A CFG tree over symbol names (words at the leaves) as a derivation of the view."""
    kids = []
    for c in tree.children:
        if isinstance(c, str):
            w = c.lower()
            kids.append(Derivation((WORD, w), w, ()))
        else:
            kids.append(to_generation(c))
    return Derivation(tree.label, tuple(k.context for k in kids), tuple(kids))


def test_view_probabilities_are_the_grammar_s():
    """A derivation's probability under the view equals its CFG probability (the view renormalises only over
    the signature words it leaves out, which this model does not have: rare_threshold=1)."""
    model = PCFGModel.train(demo_trees(), PCFGSettings(rare_threshold=1))
    gen, system = model.generation_view()
    assert isinstance(system, CFGViewSystem)
    sums = np.bincount(gen.ctx_of_entry, weights=gen.prob, minlength=gen.n_contexts)
    assert np.allclose(sums[np.diff(gen.ctx_ptr) > 0], 1.0)
    words = "The cat slept on the mat .".split()
    cfg = model.cfg
    parse = viterbi(cfg, model.lexical_input(words), words)
    d = to_generation(parse.tree)
    assert system.text(d) == ["the", "cat", "slept", "on", "the", "mat", "."]
    # the view generates "The" and "the" as one word "the": its preterminal rules add up
    merged = 0.0
    for node in parse.tree.subtrees():
        if node.is_preterminal:
            w = node.children[0]
            x = cfg.nonterminals[node.label]
            same = [k for k in range(cfg.num_lexical) if cfg.lex_parent[k] == x
                    and cfg.words.symbol(int(cfg.lex_word[k])).lower() == w.lower()]
            own = [k for k in same if cfg.words.symbol(int(cfg.lex_word[k])) == w]
            merged += np.logaddexp.reduce(cfg.lex_logp[same]) - cfg.lex_logp[own[0]]
    assert merged > 0
    assert gen.log_prob(d) == pytest.approx(parse.logp + merged)


@pytest.mark.parametrize("name", ["pcfg", "tsg", "tig"])
def test_views_generate_in_vocabulary_with_required_word(models, name):
    model = load_model(models[name])
    gen_model, system = model.generation_view()
    gen = ConstrainedGenerator(gen_model, system, VOCAB)
    known = {w.lower() for t in demo_trees() for w in t.leaves()}
    sents, stats = gen.sample(20, np.random.default_rng(1), word="dog")
    assert len(sents) == 20
    for s in sents:
        assert all(t in VOCAB for t in s.tokens)
        assert "dog" in {t.lower() for t in s.tokens}
        assert all(t.lower() in known for t in s.tokens)  # words only: no labels, no @/^ symbols, no signatures
    free, _ = gen.sample(20, np.random.default_rng(2))
    assert free and all(all(t in VOCAB for t in s.tokens) for s in free)
    assert len({s.text for s in free}) > 1


def test_cli_generate_from_tsg_model(models, capsys):
    capsys.readouterr()
    assert main(["-q", "generate", "--model", str(models["tsg"]), "--vocab", "words:" + ",".join(sorted(VOCAB.words)),
                 "--include", "dog", "-n", "20", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert len(out) == 20
    for s in out:
        assert "dog" in [t.lower() for t in s["tokens"]] and all(t in VOCAB for t in s["tokens"])


def test_cli_generate_cefr(models, capsys):
    pytest.importorskip("cefrpy")
    capsys.readouterr()
    assert main(["-q", "generate", "--model", str(models["pcfg"]), "--vocab", "cefr:A1", "--include", "dog",
                 "-n", "5", "--json"]) == 0
    assert len(json.loads(capsys.readouterr().out)) == 5


def test_cli_generate_refuses_model_without_view(tmp_path, capsys, monkeypatch):
    import treegram.formalism

    class NoView:
        formalism = "stsg"

    path = tmp_path / "x.model"
    path.write_text("x", encoding="utf-8")
    monkeypatch.setattr(treegram.formalism, "load_model", lambda p: NoView())
    assert main(["-q", "generate", "--model", str(path), "--vocab", "words:dog", "-n", "1"]) != 0
    assert "no generation view" in capsys.readouterr().err
