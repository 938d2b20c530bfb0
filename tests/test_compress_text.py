"""`treegram compress` on raw text (sentences as typed in, text out), --tokenized, --json fields, the reason for
every sentence returned unchanged, error lines for bad input, the default model, and the core's rate search choosing
among the compressions it meets."""

from __future__ import annotations

import json

import numpy as np
import pytest
from conftest import write_demo_channels

from treegram.cli.app import main
from treegram.compression.compressor import Compression, rate_search, rate_window
from treegram.text import Sentence


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    return write_demo_channels(tmp_path_factory.mktemp("ctext"), 4)


def _json(capsys) -> dict:
    return json.loads(capsys.readouterr().out)


def test_raw_text_in_text_out(files, capsys):
    text = "The cat slept on the mat. The dog chased a cat in the garden!"
    assert main(["-q", "compress", "--model", str(files / "ch4.model"), text, "--json"]) == 0
    res = _json(capsys)
    recs = res["sentences"]
    assert [r["sentence"] for r in recs] == [1, 2] and recs[0]["line"] == recs[1]["line"] == 1
    for r in recs:
        assert r["tokens"][-1] in (".", "!") and len(r["keep"]) == len(r["tokens"])
        assert r["compression"] == " ".join(t for t, k in zip(r["tokens"], r["keep"]) if k)
        assert r["text"] == Sentence.from_text(r["source_text"]).render(r["keep"])
        assert r["rate"] == pytest.approx(sum(r["keep"]) / len(r["keep"]), abs=1e-4)
        assert isinstance(r["score"], float)
    assert recs[0]["source_text"] == "The cat slept on the mat."
    assert res["summary"]["sentences"] == 2
    # plain output: the compressed sentences of the line as text, joined
    assert main(["-q", "compress", "--model", str(files / "ch4.model"), text]) == 0
    assert capsys.readouterr().out.strip() == " ".join(r["text"] for r in recs if r["text"])


def test_files_of_text_stay_line_aligned_and_resume(files, capsys):
    inp = files / "text.txt"
    inp.write_text("The cat slept on the mat.\n\nDogs!\nThe dog chased a cat. It slept.\n", encoding="utf-8")
    out = files / "text.out"
    assert main(["-q", "compress", "--model", str(files / "ch4.model"), "--input", str(inp), "--out", str(out)]) == 0
    lines = out.read_text(encoding="utf-8").split("\n")
    assert len(lines) == 5 and lines[1] == "" and lines[4] == ""
    assert lines[0].endswith(".") and " ." not in lines[0]  # text, not tokens
    full = out.read_bytes()
    out.write_bytes(full[: full.index(b"\n") + 1] + b"half a li")  # interrupted after line 1
    assert main(["-q", "compress", "--model", str(files / "ch4.model"), "--input", str(inp), "--out", str(out),
                 "--resume"]) == 0
    assert out.read_bytes() == full


def test_tokenized_keeps_the_old_behaviour(files, capsys):
    inp = files / "tok.txt"
    inp.write_text("The cat slept on the mat .\nThe dog did n't sleep .\n", encoding="utf-8")
    out = files / "tok.out"
    assert main(["-q", "compress", "--model", str(files / "ch4.model"), "--input", str(inp), "--out", str(out),
                 "--tokenized", "--json"]) == 0
    recs = _json(capsys)["sentences"]
    assert out.read_text(encoding="utf-8").splitlines() == [r["compression"] for r in recs]
    assert recs[1]["tokens"] == "The dog did n't sleep .".split()


def test_unchanged_sentences_say_why_on_stderr(files, capsys):
    inp = files / "odd.txt"
    inp.write_text("Dogs.\n...\nThe cat slept on the mat.\n", encoding="utf-8")
    assert main(["compress", "--model", str(files / "ch4.model"), "--input", str(inp), "--reward", "40",
                 "--out", str(files / "odd.out")]) == 0
    err = capsys.readouterr().err
    assert "line 1: unchanged" in err and "too short" in err
    assert "line 2: unchanged" in err and "only punctuation" in err
    assert "line 3: unchanged" in err and "no deletion is worth its cost at --reward 40" in err
    assert main(["-q", "compress", "--model", str(files / "ch4.model"), "--input", str(inp), "--reward", "40",
                 "--json"]) == 0
    recs = _json(capsys)["sentences"]
    assert all(r["note"] for r in recs) and [r["status"] for r in recs][1] == "punctuation"


def test_rate_met_or_the_reason(files, capsys):
    assert main(["-q", "compress", "--model", str(files / "ch4.model"), "--json", "--rate", "0.5",
                 "The old man slowly walked to the station . The cat slept ."]) == 0
    for r in _json(capsys)["sentences"]:
        n = len(r["tokens"])
        assert r["rate_met"] == (abs(r["rate"] - 0.5) <= 0.05 + 1e-9)
        if not r["rate_met"]:
            assert "nearest" in r["note"]
        if rate_window(n, 0.5):  # the channel reaches every length: exact rate control
            assert r["rate_met"], r


@pytest.mark.parametrize("argv,message", [
    (["compress", ""], "no text to compress"),
    (["compress", "   "], "no text to compress"),
    (["compress", "... ?!"], "only punctuation"),
    (["compress", "--input", "missing/file.txt"], "input file not found"),
    (["compress", "text", "--input", "x.txt"], "not both"),
    (["compress", "Some text.", "--batch-size", "5"], "--batch-size"),
    (["compress", "Some text.", "--workers", "2"], "need --out"),
    (["compress", "Some text.", "--resume"], "--resume needs --out"),
])
def test_bad_input_is_one_clear_line(files, capsys, argv, message):
    assert main([*argv, "--model", str(files / "ch4.model")]) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err and len(err.strip().splitlines()) == 1


def test_default_model_when_installed_and_one_line_when_not(files, capsys, monkeypatch):
    from treegram.compression import default

    monkeypatch.setattr(default, "default_model_path", lambda: None)
    assert main(["-q", "compress", "The cat slept."]) == 2
    err = capsys.readouterr().err
    assert "no default compression model" in err and "--model" in err and len(err.strip().splitlines()) == 1
    monkeypatch.setattr(default, "default_model_path", lambda: files / "ch4.model")
    assert main(["-q", "compress", "The cat slept on the mat.", "--json"]) == 0
    assert _json(capsys)["sentences"][0]["tokens"][:2] == ["The", "cat"]
    assert main(["-q", "eval-compression", "--source", str(files / "src.txt"), "--gold", str(files / "tgt.txt"),
                 "--no-rel", "--trials", "100", "--json"]) == 0
    assert "default" in _json(capsys)["systems"]


def test_eval_compression_takes_models(files, capsys):
    out = files / "sys.txt"
    assert main(["-q", "compress", "--model", str(files / "ch4.model"), "--input", str(files / "src.txt"),
                 "--tokenized", "--out", str(out)]) == 0
    assert main(["-q", "eval-compression", "--source", str(files / "src.txt"), "--gold", str(files / "tgt.txt"),
                 "--model", f"ch={files / 'ch4.model'}", "--system", f"file={out}", "--no-rel", "--trials", "100",
                 "--json"]) == 0
    res = _json(capsys)
    assert list(res["systems"]) == ["ch", "file"]
    assert res["systems"]["ch"]["token_f1"] == res["systems"]["file"]["token_f1"]  # the same compressions
    assert main(["-q", "eval-compression", "--source", str(files / "src.txt"), "--gold", str(files / "tgt.txt"),
                 "--model", str(files / "ch4.model"), "--rate", "0.6", "--no-rel", "--json"]) == 0
    s = _json(capsys)["systems"]["ch4"]
    assert s["rate_met"] == 100.0 and s["rate_possible"] > 30 and abs(s["compression_rate"] - 60.0) < 6.0


# -- the rate search's choice ------------------------------------------------------------------------------------

class LengthDecoder:
    """Exact lengths with given model scores (None: the model has no compression of that length)."""

    def __init__(self, scores: dict[int, float | None], n: int):
        self.scores, self.n, self.asked = scores, n, []

    def _c(self, k: int, score: float, reward: float = 0.0) -> Compression:
        keep = np.zeros(self.n, bool)
        keep[:k] = True
        return Compression(["w"] * self.n, keep, None, score + reward * k, reward)

    def decode(self, reward: float) -> Compression:
        k = max((k for k, v in self.scores.items() if v is not None), key=lambda k: self.scores[k] + reward * k)
        return self._c(k, self.scores[k], reward)

    def decode_length(self, k: int):
        self.asked.append(k)
        v = self.scores.get(k)
        return None if v is None else self._c(k, v)


def test_within_the_tolerance_the_best_model_score_wins():
    dec = LengthDecoder({k: -float(abs(k - 12)) for k in range(1, 21)}, 20)  # the model likes 12 of 20
    c = rate_search(dec, 20, 0.5, tolerance=0.05)  # window: 9, 10, 11 words
    assert c.kept == 11 and c.note is None and sorted(dec.asked) == [9, 10, 11]
    c0 = rate_search(LengthDecoder({k: -float(abs(k - 12)) for k in range(1, 21)}, 20), 20, 0.5, tolerance=0.0)
    assert c0.kept == 10  # tolerance 0: the nearest


def test_out_of_reach_rates_come_back_nearest_with_a_note():
    dec = LengthDecoder({1: -5.0, 2: -1.0, 3: -9.0}, 3)
    c = rate_search(dec, 3, 0.5)
    assert c.kept in (1, 2) and "3-word sentence" in c.note  # no k/3 within 0.05 of 0.5
    gaps = LengthDecoder({k: (0.0 if k in (4, 16, 20) else None) for k in range(1, 21)}, 20)
    c = rate_search(gaps, 20, 0.5)
    assert c.kept == 4 or c.kept == 16
    assert "no compression keeping 9-11 of the 20 words" in c.note


def test_reward_only_decoders_choose_among_both_sides():
    class RewardOnly:
        def __init__(self):
            self.inner = LengthDecoder({k: -0.9 * k if k <= 6 else -0.9 * 6 - 3.0 * (k - 6) for k in range(1, 11)}, 10)

        def decode(self, reward):
            return self.inner.decode(reward)

    # concave scores: each reward picks one length; the bisection meets lengths on both sides of 0.55
    c = rate_search(RewardOnly(), 10, 0.55)
    assert abs(c.rate - 0.55) <= 0.05 + 1e-9 and c.note is None


def test_a_terminal_shows_the_text_with_deleted_words_struck_through(files, capsys, monkeypatch):
    monkeypatch.setenv("FORCE_COLOR", "1")
    monkeypatch.setenv("TTY_COMPATIBLE", "1")
    assert main(["-q", "compress", "--model", str(files / "ch4.model"), "--reward", "-5",
                 "The old man slowly walked to the station."]) == 0
    out = capsys.readouterr().out
    assert "\x1b[2;9m" in out  # struck through (dim)
    plain = __import__("re").sub("\x1b\\[[0-9;]*m", "", out).strip()
    assert plain == "The old man slowly walked to the station."  # the sentence as typed, every word shown


def test_models_declare_the_contract(files):
    from treegram.compression.compressor import Compressor, is_compressor
    from treegram.formalism import load_model

    ch, parser = load_model(files / "ch4.model"), load_model(files / "parser.model")
    assert isinstance(ch, Compressor) and is_compressor(ch)
    assert not isinstance(parser, Compressor) and not is_compressor(parser)
