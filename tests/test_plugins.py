"""The plugin system: documented hooks, entry-point registration, and a third-party formalism end to end."""

from __future__ import annotations

import inspect
import json
from collections import Counter

import numpy as np
import pytest

import treegram
from treegram import hookspecs
from treegram.cli.app import main
from treegram.formalism import Formalism, save_model
from treegram.plugin_manager import formalisms, get_plugin_manager, plugin_table
from treegram.trees.tree import Tree


def hook_functions():
    return [f for name, f in inspect.getmembers(hookspecs, inspect.isfunction) if name.startswith("register_")]


def test_every_hook_is_documented():
    hooks = hook_functions()
    assert len(hooks) >= 6
    names = {h.__name__ for h in hooks}
    assert {"register_formalisms", "register_commands", "register_corpus_readers", "register_generation_systems",
            "register_smoothers", "register_metrics"} <= names
    for hook in hooks:
        doc = inspect.getdoc(hook) or ""
        assert len(doc.split()) >= 15, f"{hook.__name__} needs a real docstring"
        assert "register(" in doc, f"{hook.__name__}'s docstring must say how to call register"
        assert list(inspect.signature(hook).parameters) == ["register"]


def test_hookspecs_are_registered_with_pluggy():
    pm = get_plugin_manager()
    for hook in hook_functions():
        assert hasattr(pm.hook, hook.__name__)


def test_builtins_come_from_the_entry_point():
    """The built-in formalisms and the core's own hooks load through the `treegram` entry-point group, like any
    third-party plugin (no private pluggy API, no core module registered by hand)."""
    from treegram.plugin_manager import commands, plugin_distribution

    get_plugin_manager()
    assert plugin_distribution("pcfg").get("package") == "treegram", "pcfg must come from the entry-point group"
    assert plugin_distribution("core").get("package") == "treegram", "the core's hooks must come from it too"
    assert formalisms()["pcfg"].plugin == "pcfg"
    assert commands()["parse"].plugin == "core" and commands()["compress"].plugin == "core"


# -- a third-party plugin defined right here -------------------------------------------------------
class FirstTagModel:
    """Toy model: tags every word with its most frequent training tag and builds a flat S."""

    formalism = "firsttag"

    def __init__(self, lexicon: dict[str, str], default: str):
        self.lexicon, self.default = lexicon, default

    def parse(self, tokens):
        return Tree("S", tuple(Tree(self.lexicon.get(w, self.default), (w,)) for w in tokens))

    def save(self, path):
        words = sorted(self.lexicon)
        save_model(path, self, {"words": words, "tags": [self.lexicon[w] for w in words], "default": self.default},
                   {"dummy": np.zeros(1)})

    def describe(self, *, top=20):
        return {"formalism": self.formalism, "words": len(self.lexicon)}


class FirstTagFormalism(Formalism):
    name = "firsttag"
    description = "toy formalism defined in a test module"
    trains_on = "trees"  # the core adds --treebank and hands train() the trees

    def train(self, trees, settings, ctx):
        counts: dict[str, Counter] = {}
        for t in trees:
            for w, tag in t.pos():
                counts.setdefault(w, Counter())[tag] += 1
        lexicon = {w: c.most_common(1)[0][0] for w, c in counts.items()}
        default = Counter(lexicon.values()).most_common(1)[0][0]
        return FirstTagModel(lexicon, default)

    def load_model(self, meta, arrays):
        return FirstTagModel(dict(zip(meta["words"], meta["tags"])), meta["default"])


class ToyPlugin:
    @treegram.hookimpl
    def register_formalisms(self, register):
        register(FirstTagFormalism())


@pytest.fixture
def toy_plugin():
    pm = get_plugin_manager()
    plugin = ToyPlugin()
    pm.register(plugin, name="toy-plugin")
    yield plugin
    pm.unregister(plugin)


def test_plugin_in_a_test_module_trains_parses_and_is_listed(toy_plugin, tmp_path, capsys):
    treebank = tmp_path / "tb.mrg"
    treebank.write_text("(S (NP (DT the) (NN dog)) (VP (VBZ barks)))\n(S (NP (DT the) (NN cat)) (VP (VBZ runs)))\n")
    model_path = tmp_path / "toy.model"
    assert main(["-q", "train", "firsttag", "--treebank", str(treebank), "--out", str(model_path), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["words"] == 5

    sentences = tmp_path / "in.txt"
    sentences.write_text("the cat barks\nthe unicorn\n")
    out = tmp_path / "out.txt"
    assert main(["-q", "parse", "--model", str(model_path), "--input", str(sentences), "--out", str(out)]) == 0
    lines = out.read_text().splitlines()
    assert lines[0] == "(S (DT the) (NN cat) (VBZ barks))"
    assert lines[1].startswith("(S (DT the) (")

    capsys.readouterr()
    assert main(["plugins", "--json"]) == 0
    listing = json.loads(capsys.readouterr().out)
    assert "firsttag" in listing["formalisms"] and "pcfg" in listing["formalisms"]
    row = next(r for r in listing["plugins"] if r["name"] == "toy-plugin")
    assert row["source"] == "runtime" and "formalism:firsttag" in row["provides"]


def test_unregistered_plugin_is_gone(tmp_path):
    assert "firsttag" not in formalisms()
    rows = {r["name"] for r in plugin_table()}
    assert "toy-plugin" not in rows and "pcfg" in rows


def test_duplicate_registration_is_a_clear_error():
    class Clash:
        @treegram.hookimpl
        def register_formalisms(self, register):
            class Dup(Formalism):
                name = "pcfg"

            register(Dup())

    pm = get_plugin_manager()
    plugin = Clash()
    pm.register(plugin, name="clash")
    try:
        with pytest.raises(treegram.errors.TreegramError, match="already registered"):
            formalisms()
    finally:
        pm.unregister(plugin)


def test_model_of_an_uninstalled_formalism_is_refused(tmp_path, toy_plugin):
    path = tmp_path / "m.model"
    FirstTagModel({"a": "DT"}, "NN").save(path)
    get_plugin_manager().unregister(toy_plugin)
    try:
        from treegram.errors import ModelFileError
        from treegram.formalism import load_model

        with pytest.raises(ModelFileError, match="no installed plugin provides"):
            load_model(path)
    finally:
        get_plugin_manager().register(toy_plugin, name="toy-plugin")
