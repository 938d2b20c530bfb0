"""One decoder choice (issue 28 item 1): `charts.decoders.resolve_decoder` is the only place a decoder is chosen.

Every way of parsing with a model -- `treegram parse`, `model.parse`, compression's source parse, batch parsing --
decodes with the same decoder, and `describe()` names exactly that decoder.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from treegram.charts.decoders import decode, decoder_label, parse_default, resolve_decoder
from treegram.cli.app import main
from treegram.formalism import load_model

SENTENCES = ["The hungry dog slept in the garden .", "A cat saw the dog ."]


def _cli_parse(model: Path, tmp_path: Path, *extra: str) -> list[str]:
    src, out = tmp_path / "in.txt", tmp_path / "out.txt"
    src.write_text("\n".join(SENTENCES) + "\n", encoding="utf-8")
    if out.exists():
        out.unlink()
    assert main(["-q", "parse", "--model", str(model), "--input", str(src), "--out", str(out), *extra]) == 0
    return out.read_text(encoding="utf-8").splitlines()


def _agree(path: Path, tmp_path: Path) -> str:
    """Assert that every parse route and describe() agree on `path`'s decoder; return its label."""
    from treegram.compression.compressor import parse_source

    model = load_model(path)
    name, samples = resolve_decoder(model)
    label = model.describe(top=0)["default_decoder"]
    assert label.split(" (model predates")[0] == decoder_label(model)
    assert label.split()[0] == name  # describe() names the decoder that is run
    expected = [decode(model, s.split(), name, samples=samples).to_bracket() for s in SENTENCES]
    assert [model.parse(s.split()).to_bracket() for s in SENTENCES] == expected
    assert [parse_default(model)(s.split()).to_bracket() for s in SENTENCES] == expected
    assert [parse_source(model, s.split())[0].children[0].to_bracket() for s in SENTENCES] == expected
    assert _cli_parse(path, tmp_path) == expected
    return label


@pytest.mark.parametrize("name", ["pcfg", "tsg", "tig"])
def test_describe_and_every_parse_route_agree(name, demo_model_files, tmp_path):
    label = _agree(demo_model_files[name], tmp_path)
    assert label == ("mpd" if name == "pcfg" else "maxrule")  # the shipped defaults


def test_ostag_describe_and_every_parse_route_agree(demo_file, tmp_path):
    tb = demo_file
    out = tmp_path / "demo.ostag"
    assert main(["-q", "train", "ostag", "--treebank", str(tb), "--em-iterations", "1", "--out", str(out)]) == 0
    assert _agree(out, tmp_path) == "maxrule"


def test_tsg_mpp_samples_is_the_default_decoder_everywhere(demo_file, tmp_path):
    """`train tsg --mpp-samples N`: describe() says mpp with N samples and `treegram parse` (and every other route)
    runs exactly that (before issue 28 `treegram parse` ran maxrule while `model.parse` ran mpp)."""
    tb = demo_file
    out = tmp_path / "mpp.tsg"
    assert main(["-q", "train", "tsg", "--treebank", str(tb), "--seed", "3", "--iterations", "2",
                 "--mpp-samples", "7", "--out", str(out)]) == 0
    assert _agree(out, tmp_path) == "mpp (7 samples)"
    assert resolve_decoder(load_model(out)) == ("mpp", 7)
    # --samples overrides the saved count; --decoder overrides the saved decoder
    assert resolve_decoder(load_model(out), None, 3) == ("mpp", 3)
    assert resolve_decoder(load_model(out), "mpd") == ("mpd", None)
    assert _cli_parse(out, tmp_path, "--decoder", "mpp", "--samples", "7") == _cli_parse(out, tmp_path)


def test_train_tsg_takes_decoder_flag(demo_file, tmp_path):
    """One `--decoder` flag on every parsing formalism (tsg's `--default-decoder` is a hidden deprecated alias)."""
    tb = demo_file
    out = tmp_path / "m.tsg"
    assert main(["-q", "train", "tsg", "--treebank", str(tb), "--iterations", "1", "--decoder", "mpd",
                 "--out", str(out)]) == 0
    assert resolve_decoder(load_model(out)) == ("mpd", None)
    # the spelling before issue 28 (documented then) still works, hidden from --help
    old = tmp_path / "old.tsg"
    assert main(["-q", "train", "tsg", "--treebank", str(tb), "--iterations", "1", "--default-decoder", "maxrule-sum",
                 "--out", str(old)]) == 0
    assert resolve_decoder(load_model(old)) == ("maxrule-sum", None)
    assert main(["-q", "train", "tsg", "--treebank", str(tb), "--iterations", "1", "--decoder", "nope",
                 "--out", str(tmp_path / "x.tsg")]) != 0


def test_a_model_outside_the_charts_keeps_its_own_parse():
    class Own:
        formalism = "own"

        def parse(self, tokens):
            return tokens

    model = Own()
    assert resolve_decoder(model) == (None, None) and parse_default(model) == model.parse
    assert decoder_label(model) == "the model's own parse"
