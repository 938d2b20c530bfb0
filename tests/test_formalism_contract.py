"""The formalism contract (treegram.formalism): generated train options, the core sampling loop and sampler-move
hook, model files (namespaced plugin metadata, old files, plugin bugs vs corrupt files), and contained plugin
failures (hooks that raise, entry points that cannot be imported, TREEGRAM_LOAD_PLUGINS)."""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import attrs
import numpy as np
import pytest

import treegram
from treegram.bayes import BlockedMH
from treegram.cli.app import main
from treegram.errors import ModelFileError
from treegram.formalism import (Formalism, PluginLoadError, add_settings_options, load_model, option,
                                settings_from_args)
from treegram.corpora.demo import demo_trees
from treegram.plugin_manager import formalisms, get_plugin_manager, sampler_moves

DEMO = Path(treegram.__file__).parent / "data" / "demo_treebank.mrg"


@pytest.fixture
def registered():
    """Register runtime plugins for one test; unregistered afterwards."""
    pm = get_plugin_manager()
    added = []

    def add(plugin, name):
        pm.register(plugin, name=name)
        added.append(plugin)
        return plugin

    yield add
    from treegram import plugin_manager

    for plugin in added:
        plugin_manager._failures.pop(pm.get_name(plugin), None)
        pm.unregister(plugin)


# -- settings fields are the command-line options -------------------------------------------------------------
def test_settings_fields_generate_typed_options():
    from treegram.argtypes import positive_int

    @attrs.frozen
    class Settings:
        inputs: list = option(required=True, nargs="+", type=Path, help="input files")
        order: int = option(2, help="Markov order", type=positive_int, group="model")
        lowercase: bool = option(False, help="lowercase words first", group="model")
        mode: str = option("a", choices=lambda: ["a", "b"], help="mode")
        names: list = option(attrs.Factory(list), nargs="*", help="names")

    p = argparse.ArgumentParser()
    add_settings_options(p, Settings)
    args = p.parse_args(["--inputs", "x", "y", "--order", "3", "--lowercase", "--mode", "b"])
    s = settings_from_args(Settings, args)
    assert s == Settings(inputs=[Path("x"), Path("y")], order=3, lowercase=True, mode="b", names=[])
    defaults = settings_from_args(Settings, p.parse_args(["--inputs", "x"]))
    assert (defaults.order, defaults.lowercase, defaults.mode) == (2, False, "a")
    assert [g.title for g in p._action_groups if g.title == "model"] == ["model"]
    for bad in (["--inputs", "x", "--order", "0"], ["--inputs", "x", "--mode", "c"], []):
        with pytest.raises(SystemExit):
            p.parse_args(bad)


def test_builtin_formalisms_declare_settings_instead_of_argparse():
    for name in ("pcfg", "tsg", "tig", "ostag", "ostag-bayes", "stsg", "vocabgen", "channel", "corrections"):
        f = formalisms()[name].obj
        assert f.Settings is not None, name
        assert not hasattr(f, "configure_train_parser") and not hasattr(f, "train_from_args"), name
    tsg, tig = formalisms()["tsg"].obj, formalisms()["tig"].obj
    assert tsg.sampling.iterations == 100 and tsg.sampling.default_move == "gibbs"
    assert set(tsg.sampler_moves()) >= {"gibbs", "blocked"} and tig.sampler_moves() == ["blocked"]


def test_a_formalism_writing_argparse_by_hand_is_refused():
    with pytest.raises(TypeError, match="option\\(\\) fields"):
        class HandWritten(Formalism):  # noqa: F841 - defining the class is the test
            name = "handwritten"

            def configure_train_parser(self, parser):
                parser.add_argument("--x")


# -- the one RunOptions: the library entry points train what `treegram train` does -----------------------------------
def _without_timings(x):
    if isinstance(x, dict):
        return {k: _without_timings(v) for k, v in x.items() if not k.endswith("seconds")}
    return [_without_timings(v) for v in x] if isinstance(x, list) else x


@pytest.mark.parametrize("name,flags", [("tsg", ["--sampler", "gibbs", "--average", "2"]),
                                        ("tsg", ["--sampler", "blocked", "--mpp-samples", "3"]),
                                        ("tig", ["--tsg-init", "2", "--variant", "tig"]),
                                        ("ostag-bayes", ["--tsg-init", "2", "--adj-prior", "2"])])
def test_library_entry_point_writes_the_command_lines_model(demo_file, tmp_path, name, flags):
    """`train_tsg` / `train_tig` / `train_bayesian` with the formalism's options and the core `RunOptions` give the
    model file `treegram train NAME` writes (to the byte, but for the wall-clock fields): the command line's run
    options and the formalism's own knobs reach the same places."""
    from treegram.formalism import RunOptions, configure_train_parser
    from treegram.io import load_bundle

    from treegram.plugins.ostag.formalism import train_bayesian
    from treegram.plugins.tig.formalism import train_tig
    from treegram.plugins.tsg.formalism import train_tsg

    out = tmp_path / "cli.model"
    run_flags = ["--iterations", "3", "--seed", "7", "--anneal-start", "2", "--checkpoint-every", "0"]
    assert main(["-q", "train", name, "--treebank", str(demo_file), *run_flags, *flags, "--out", str(out)]) == 0
    formalism = formalisms()[name].obj
    parser = argparse.ArgumentParser()
    configure_train_parser(formalism, parser)
    options = settings_from_args(formalism.Settings, parser.parse_args(["--treebank", "x", *flags]))
    run = RunOptions(move=formalism.sampling.default_move if "--sampler" not in flags else flags[1], iterations=3,
                     seed=7, anneal_start=2.0, checkpoint_every=0)
    train = {"tsg": train_tsg, "tig": train_tig, "ostag-bayes": lambda *a: train_bayesian(*a)[0]}[name]
    train(demo_trees(), options, run).save(tmp_path / "lib.model")
    (cli_meta, cli_arrays), (lib_meta, lib_arrays) = load_bundle(out), load_bundle(tmp_path / "lib.model")
    assert json.dumps(_without_timings(cli_meta), sort_keys=True) == json.dumps(_without_timings(lib_meta),
                                                                                sort_keys=True)
    assert cli_arrays.keys() == lib_arrays.keys()
    for k in cli_arrays:
        assert cli_arrays[k].dtype == lib_arrays[k].dtype and cli_arrays[k].tobytes() == lib_arrays[k].tobytes(), k


# -- sampler moves contributed by a plugin reach every formalism whose state kind fits -----------------------------
class ReverseOrderMH(BlockedMH):
    """A plugin's move: blocked MH visiting the trees in reverse index order (a real, different schedule)."""

    kind = "reverse-blocked"

    def _one_sweep(self, interrupt):
        self.site_order = "fixed"
        return super()._one_sweep(interrupt)

    def _step(self, item, temperature):
        return super()._step(self._num_units() - 1 - item, temperature)


class MovePlugin:
    @treegram.hookimpl
    def register_sampler_moves(self, register):
        from treegram.bayes.moves import SamplerMove

        register(SamplerMove("reverse-blocked", "blocked MH over the trees in reverse order", "items",
                             ReverseOrderMH))


def test_a_plugin_sampler_move_is_offered_to_every_formalism(registered, demo_file, tmp_path, capsys):
    registered(MovePlugin(), "move-plugin")
    assert sampler_moves()["reverse-blocked"].plugin == "move-plugin"
    from treegram.cli.app import build_parser

    train = build_parser()._subparsers._group_actions[0].choices["train"]
    sub = next(a for a in train._actions if isinstance(a, argparse._SubParsersAction))
    for name in ("tsg", "tig"):  # TIG had one move, now it gets --sampler too
        sampler = next(a for a in sub.choices[name]._actions if a.dest == "sampler")
        assert "reverse-blocked" in sampler.choices
    out = tmp_path / "r.tsg"
    assert main(["-q", "train", "tsg", "--treebank", str(demo_file), "--iterations", "1", "--sampler",
                 "reverse-blocked", "--out", str(out)]) == 0
    model = load_model(out)
    assert model.info["sampler"] == "reverse-blocked" and model.trace[0]["accepted"] >= 1
    capsys.readouterr()
    assert main(["plugins", "--json"]) == 0
    listing = json.loads(capsys.readouterr().out)
    assert {"gibbs", "blocked", "reverse-blocked"} <= set(listing["sampler_moves"])
    row = next(r for r in listing["plugins"] if r["name"] == "move-plugin")
    assert row["provides"] == ["sampler_move:reverse-blocked"]
    # a move whose state kind the formalism cannot build is not offered, and refused by the loop itself
    from treegram.errors import InputError
    from treegram.training import get_move

    assert main(["-q", "train", "tig", "--treebank", str(demo_file), "--sampler", "gibbs",
                 "--out", str(tmp_path / "x")]) == 2  # argparse's refusal, as one line (exit 2)
    assert "invalid choice: 'gibbs'" in capsys.readouterr().err
    with pytest.raises(InputError, match="needs a 'sites' state"):
        get_move(formalisms()["tig"].obj, "gibbs")


# -- model files --------------------------------------------------------------------------------------------------
class EchoModel:
    formalism = "echo"

    def __init__(self, meta):
        self.meta = meta

    def save(self, path):
        from treegram.formalism import save_model

        save_model(path, self, self.meta, {"x": np.arange(3)})

    def describe(self, *, top=20):
        return {"formalism": "echo"}


class EchoFormalism(Formalism):
    name = "echo"
    fail_with: Exception | None = None

    def load_model(self, meta, arrays):
        if self.fail_with is not None:
            raise self.fail_with
        return EchoModel(meta)


class EchoPlugin:
    def __init__(self):
        self.formalism = EchoFormalism()

    @treegram.hookimpl
    def register_formalisms(self, register):
        register(self.formalism)


def test_plugin_fields_cannot_overwrite_the_header(registered, tmp_path):
    registered(EchoPlugin(), "echo-plugin")
    own = {"formalism": "mine", "version": 99, "format": "my-format", "written_by": "me", "n": 1}
    path = tmp_path / "e.model"
    EchoModel(own).save(path)
    assert load_model(path).meta == own  # the plugin gets exactly its own fields back
    from treegram.io import load_bundle

    meta, _ = load_bundle(path)
    assert (meta["format"], meta["version"], meta["formalism"]) == ("treegram-model", 1, "echo")
    assert meta["written_by"]["plugin"] == "echo-plugin"


def test_a_plugin_exception_on_load_is_reported_as_that_plugins_bug(registered, tmp_path, capsys):
    plugin = registered(EchoPlugin(), "echo-plugin")
    path = tmp_path / "e.model"
    EchoModel({"n": 1}).save(path)
    plugin.formalism.fail_with = KeyError("weights")
    with pytest.raises(PluginLoadError) as err:
        load_model(path)
    assert "echo-plugin" in str(err.value) and "KeyError" in str(err.value) and "corrupt" not in str(err.value)
    assert "bug in the 'echo-plugin' plugin" in err.value.hint
    plugin.formalism.fail_with = RuntimeError("boom")
    assert main(["grammar", str(path)]) == 2
    assert "echo-plugin" in capsys.readouterr().err
    # a damaged file is still a corrupt file, whoever's formalism it is
    path.write_bytes(path.read_bytes()[:40])
    with pytest.raises(ModelFileError, match="corrupt"):
        load_model(path)


def test_model_files_written_before_the_namespace_still_load(tmp_path, monkeypatch):
    """Files of the flat layout ({**header, **plugin_meta}, today's main): a PCFG and an STSG embedding one."""
    import treegram.formalism as F
    from treegram.grammar.pcfg import PCFGModel
    from treegram.plugins.stsg.compressor import STSGModel
    from treegram.plugins.stsg.grammar import FiniteSTSG

    pcfg = PCFGModel.train(demo_trees())
    monkeypatch.setattr(F, "model_bundle", lambda model, meta: {"format": F.MODEL_FORMAT, "version": 1,
                                                                "formalism": model.formalism, **meta})
    pcfg.save(tmp_path / "old.pcfg")
    STSGModel(FiniteSTSG([], {}, -5.0), parser=pcfg, info={"n": 1}).save(tmp_path / "old.stsg")
    monkeypatch.undo()
    from treegram.io import load_bundle

    assert "plugin_meta" not in load_bundle(tmp_path / "old.pcfg")[0]
    sentence = "The hungry dog slept in the garden .".split()
    assert load_model(tmp_path / "old.pcfg").parse(sentence) == pcfg.parse(sentence)
    stsg = load_model(tmp_path / "old.stsg")
    assert stsg.info == {"n": 1} and stsg.parser.parse(sentence) == pcfg.parse(sentence)


# -- plugins that fail are contained ------------------------------------------------------------------------------
class RaisingPlugin:
    @treegram.hookimpl
    def register_commands(self, register):
        raise RuntimeError("commands exploded")

    @treegram.hookimpl
    def register_formalisms(self, register):
        def exploding_choices():
            raise ValueError("bad option table")

        @attrs.frozen
        class BrokenSettings:
            mode: str = option("a", choices=exploding_choices, help="choices computed when the parser is built")

        class Broken(Formalism):
            name = "broken"
            trains_on = "pairs"  # no corpus options: the settings are what breaks
            Settings = BrokenSettings

        register(Broken())


def test_a_raising_hook_is_listed_and_skipped(registered, demo_file, tmp_path, capsys):
    registered(RaisingPlugin(), "raising-plugin")
    assert main(["--version"]) == 0
    capsys.readouterr()
    assert main(["-q", "train", "pcfg", "--treebank", str(demo_file), "--out", str(tmp_path / "p")]) == 0
    assert main(["-q", "train", "broken", "--out", str(tmp_path / "b")]) == 2
    assert "raising-plugin" in capsys.readouterr().err
    assert main(["plugins", "--json"]) == 0
    row = next(r for r in json.loads(capsys.readouterr().out)["plugins"] if r["name"] == "raising-plugin")
    assert "commands exploded" in row["error"] or "bad option table" in row["error"]
    from treegram.errors import TreegramError
    from treegram.plugin_manager import get_formalism

    with pytest.raises(TreegramError, match="skipped plugins: raising-plugin"):
        get_formalism("nonexistent")


def _fake_distribution(root: Path, name: str, entry: str, module: str, source: str) -> None:
    (root / f"{module}.py").write_text(source, encoding="utf-8")
    info = root / f"{name.replace('-', '_')}-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 0.1\n"
                                   f"Project-URL: Issues, https://example.org/{name}/issues\n", encoding="utf-8")
    (info / "entry_points.txt").write_text(f"[treegram]\n{entry} = {module}\n", encoding="utf-8")


def test_entry_point_plugins_that_fail_to_import_and_treegram_load_plugins(tmp_path):
    root = tmp_path / "site"
    root.mkdir()
    _fake_distribution(root, "broken-plugin", "broken", "broken_plugin_mod",
                       "raise ImportError('needs a library that is not installed')\n")
    _fake_distribution(root, "fine-plugin", "fine", "fine_plugin_mod", textwrap.dedent("""
        import treegram

        @treegram.hookimpl
        def register_metrics(register):
            register("always-one", lambda gold, test: {"one": 1.0})
    """))

    def run(*argv, load=None):
        env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(root), os.environ.get("PYTHONPATH", "")])}
        env.pop("TREEGRAM_LOAD_PLUGINS", None)
        if load is not None:
            env["TREEGRAM_LOAD_PLUGINS"] = load
        return subprocess.run([sys.executable, "-m", "treegram.cli.app", *argv], capture_output=True, text=True,
                              env=env, timeout=120)

    r = run("--version")
    assert r.returncode == 0 and r.stdout.startswith("treegram ")
    r = run("plugins", "--json")
    assert r.returncode == 0, r.stderr
    rows = {row["name"]: row for row in json.loads(r.stdout)["plugins"]}
    assert "needs a library that is not installed" in rows["broken"]["error"]
    assert rows["broken"]["source"] == "broken-plugin 0.1"
    assert rows["fine"]["provides"] == ["metric:always-one"] and "error" not in rows["fine"]
    assert "pcfg" in rows and "tsg" in rows
    r = run("plugins", "--json", load="")  # none of the third-party plugins; the built-ins always load
    rows = {row["name"] for row in json.loads(r.stdout)["plugins"]}
    assert "broken" not in rows and "fine" not in rows and {"pcfg", "tsg", "tig"} <= rows
    r = run("plugins", "--json", load="fine-plugin")
    rows = {row["name"] for row in json.loads(r.stdout)["plugins"]}
    assert "fine" in rows and "broken" not in rows
