"""Issue 16 (TIG / OSTAG part): the shipped training defaults, the model's saved default decoder (round trip, used
by `treegram parse` when no --decoder is given), and old model files without one."""

from __future__ import annotations

import numpy as np
import pytest

from treegram.charts.decoders import ChartModel, decode, model_decoder, parse_default
from treegram.cli.app import main
from treegram.errors import InputError
from treegram.formalism import PLUGIN_META, load_model, model_from_bundle
from treegram.io import load_bundle, save_bundle

WORDS = "The hungry dog slept in the garden .".split()
SENTENCES = ["The hungry dog slept in the garden .", "The cat saw the dog ."]


def _parse_cli(model, tmp_path, *extra) -> list[str]:
    inp = tmp_path / "in.txt"
    inp.write_text("\n".join(SENTENCES) + "\n", encoding="utf-8")
    out = tmp_path / f"out{len(extra)}{'-'.join(extra)}.txt"
    assert main(["-q", "parse", "--model", str(model), "--input", str(inp), "--out", str(out), *extra]) == 0
    return out.read_text(encoding="utf-8").splitlines()


def _without_default_decoder(path, tmp_path):
    """A copy of the model file as written before issue 16 (no default_decoder; OSTAG: no em_initial either)."""
    meta, arrays = load_bundle(path)
    meta[PLUGIN_META].pop("default_decoder")
    meta[PLUGIN_META]["settings"].pop("em_initial", None)
    old = tmp_path / ("old-" + path.name)
    save_bundle(old, meta, arrays)
    return old


@pytest.fixture(scope="module")
def demo_ostag_files(demo_file, tmp_path_factory, demo_model_files):
    """OSTAG models of the demo treebank with the shipped defaults: EM from the demo TSG, and Bayesian."""
    d = tmp_path_factory.mktemp("ostag_defaults")
    tb = demo_file
    em, bayes = d / "em.ostag", d / "bayes.ostag"
    assert main(["-q", "train", "ostag", "--from-tsg", str(demo_model_files["tsg"]), "--treebank", str(tb),
                 "--seed", "3", "--out", str(em)]) == 0
    assert main(["-q", "train", "ostag", "--bayesian", "--iterations", "1", "--tsg-init", "2", "--treebank",
                 str(tb), "--seed", "3", "--out", str(bayes)]) == 0
    return {"em": em, "bayes": bayes}


def test_shipped_option_defaults():
    from treegram.plugins.ostag.formalism import OSTAGOptions
    from treegram.plugins.tig.formalism import TIGOptions

    tig = TIGOptions()
    assert (tig.variant, tig.tsg_init, tig.decoder) == ("tig0", 100, "maxrule")
    ostag = OSTAGOptions()
    assert (ostag.em_iterations, ostag.em_initial, ostag.decoder, ostag.tsg_weights) == (
        None, "counts", "maxrule", "base")  # None: 0 EM iterations from posterior / base TSG weights, else 1
    # None: with --from-tsg --tsg-weights base, the TSG's own pruning and adjunction weight 0.01; else 1e-4 and 0.1
    assert (ostag.prune_threshold, ostag.adj_init) == (None, None)
    for cls in (TIGOptions, OSTAGOptions):
        with pytest.raises(InputError, match="unknown decoder"):
            cls(decoder="no-such-decoder")


def test_unknown_decoder_is_refused_before_training(tmp_path, capsys):
    tb = tmp_path / "tb.mrg"
    tb.write_text("(S (NP (D the) (N dog)) (VP (V slept)))\n", encoding="utf-8")
    out = tmp_path / "m.tig"
    assert main(["-q", "train", "tig", "--treebank", str(tb), "--out", str(out), "--decoder", "nope"]) != 0
    assert not out.exists() and "unknown decoder" in capsys.readouterr().err


def test_tig_model_keeps_its_default_decoder_and_parse_uses_it(demo_model_files, tmp_path):
    path = demo_model_files["tig"]  # trained by the CLI (conftest) without --decoder: the shipped default
    model = load_model(path)
    assert isinstance(model, ChartModel)
    assert model.default_decoder == "maxrule" and model.describe(top=0)["default_decoder"] == "maxrule"
    assert model.settings.variant == "tig0"  # the shipped variant (conftest passes no --variant)
    again_path = tmp_path / "again.tig"
    model.save(again_path)
    assert load_model(again_path).default_decoder == "maxrule"
    assert parse_default(model)(WORDS).to_bracket() == decode(model, WORDS, "maxrule").to_bracket()
    # `treegram parse` without --decoder = with --decoder maxrule; --decoder overrides the saved default
    assert _parse_cli(path, tmp_path) == _parse_cli(path, tmp_path, "--decoder", "maxrule")
    mpd = _parse_cli(path, tmp_path, "--decoder", "mpd")
    assert mpd == [decode(model, s.split(), "mpd").to_bracket() for s in SENTENCES]


def test_old_tig_file_loads_and_parses_with_mpd(demo_model_files, tmp_path):
    old = load_model(_without_default_decoder(demo_model_files["tig"], tmp_path))
    assert old.default_decoder is None and model_decoder(old) is None
    assert parse_default(old)(WORDS).to_bracket() == old.parse(WORDS).to_bracket()


def test_tig_train_with_another_decoder(demo_file, demo_model_files, tmp_path):
    tb = demo_file
    out = tmp_path / "m.tig"
    assert main(["-q", "train", "tig", "--treebank", str(tb), "--seed", "3", "--out", str(out), "--iterations", "1",
                 "--tsg-init", "2", "--decoder", "mpd", "--variant", "tig"]) == 0
    model = load_model(out)
    assert model.default_decoder == "mpd" and model.settings.variant == "tig"
    assert model.info["tsg_init_iterations"] == 2


@pytest.mark.parametrize("kind", ["em", "bayes"])
def test_ostag_model_keeps_its_default_decoder_and_parse_uses_it(demo_ostag_files, kind, tmp_path,
                                                                  demo_model_files):
    path = demo_ostag_files[kind]
    model = load_model(path)
    assert isinstance(model, ChartModel)  # parses through the core charts: every core decoder applies
    assert model.default_decoder == "maxrule" and model.describe(top=0)["default_decoder"] == "maxrule"
    if kind == "em":
        # --from-tsg with the shipped base weights: the TSG's fragment counts and base route, no EM iteration,
        # adjunction weight 0.01, the TSG's pruning threshold
        assert (model.settings.em_iterations, model.settings.tsg_weights) == (0, "base")
        assert model.grammar.base is not None and model.settings.adj_init == 0.01
        assert model.settings.prune_threshold == load_model(demo_model_files["tsg"]).prune_threshold
        assert len(model.trace) == 0
    again_path = tmp_path / "again.ostag"
    model.save(again_path)
    assert load_model(again_path).default_decoder == "maxrule"
    assert parse_default(model)(WORDS).to_bracket() == decode(model, WORDS, "maxrule").to_bracket()
    assert _parse_cli(path, tmp_path) == _parse_cli(path, tmp_path, "--decoder", "maxrule")
    assert _parse_cli(path, tmp_path, "--decoder", "mpd") == [decode(model, s.split(), "mpd").to_bracket()
                                                             for s in SENTENCES]


def test_old_ostag_file_loads_with_counts_start_and_mpd(demo_ostag_files, tmp_path):
    old = load_model(_without_default_decoder(demo_ostag_files["em"], tmp_path))
    assert old.default_decoder is None and old.settings.em_initial == "counts"  # what older files were trained with
    assert parse_default(old)(WORDS).to_bracket() == old.parse(WORDS).to_bracket()


def test_em_initial_uniform_start():
    """`uniform`: every initial (auxiliary) tree of a root label starts equally likely; `counts`: relative
    frequencies of the elementary trees' counts."""
    from treegram.trees import parse_brackets

    from treegram.plugins.ostag.model import OSTAGSettings, build_grammar

    P = lambda s: parse_brackets(s)[0]  # noqa: E731
    el = [(P("(S (NP (D the) (N dog)) (VP))"), 6.0), (P("(S (NP) (VP (V slept)))"), 2.0),
          (P("(NP (D the) (N cat))"), 3.0), (P("(NP (NP) (PP (P in) (NP)))"), 1.0), (P("(VP (V slept))"), 1.0)]
    g = build_grammar(el, OSTAGSettings(kind="ostag3"))
    g.init_params(0.1)
    counts = np.exp(g.sub_logp)
    g.init_params(0.1, uniform=True)
    uniform = np.exp(g.sub_logp)
    labels = np.asarray(g.initial_label)
    for lab in np.unique(labels):
        sel = labels == lab
        assert np.allclose(uniform[sel], 1.0 / sel.sum())
        assert np.isclose(counts[sel].sum(), 1.0)
    assert not np.allclose(counts, uniform)
    if len(g.auxiliary):
        aux = np.exp(g.aux_logp)
        alab = np.asarray(g.aux_label)
        for lab in np.unique(alab):
            assert np.allclose(aux[alab == lab], 1.0 / (alab == lab).sum())
    with pytest.raises(InputError, match="EM initial estimate"):
        OSTAGSettings(em_initial="random")
