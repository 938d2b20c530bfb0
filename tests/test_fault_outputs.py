"""Fault suite, issue 27 (outputs, markup, bounds and arguments): every output argument and every path a command
derives from one, user strings printed through Rich, length limits of the compressors, and every numeric option of
every command.  Same pattern and tally as `tests/test_fault_suite.py`, plus *silent wrong outputs*: a case that
exits 0 but whose output is not what the user asked for (a changed name, a table inside a model file, a file
beside /dev/null).  `test_summary` prints the counts.
"""

from __future__ import annotations

import argparse
import errno
import json
import math
import os
import subprocess
import sys
from pathlib import Path

import pytest

from faults import SMALL_TREEBANK, new_tally, run_cli, small_world, summary

from treegram import argtypes
from treegram.cli.app import build_parser

TALLY = new_tally("option_values", "silent_wrong")


def run_case(argv, inputs=(), capsys=None, *, want=None, text="", check=None):
    """Run one CLI case in-process.  Tallies tracebacks, destroyed inputs, clean errors and -- when the case
    exits as wanted but `check(out, err)` (or the expected error text) fails -- silent wrong outputs."""
    code, out, err = run_cli(TALLY, argv, inputs, capsys)
    lines = [ln for ln in err.strip().split("\n") if ln.strip()]
    if code == 2 and not (lines and lines[-1].startswith("error:") and sum(ln.startswith("error:") for ln in lines) == 1):
        TALLY["silent_wrong"] += 1
        raise AssertionError(f"{argv}: error is not one line: {err!r}")
    if want is not None and code != want:
        if code == 0:
            TALLY["silent_wrong"] += 1
        raise AssertionError(f"{argv}: exit {code}, want {want}; stderr {err.strip()[:300]!r}")
    if text and text not in err + out:
        TALLY["silent_wrong"] += 1
        raise AssertionError(f"{argv}: {text!r} not in the output: {(err + out)[:400]!r}")
    if check is not None and not check(out, err):
        TALLY["silent_wrong"] += 1
        raise AssertionError(f"{argv}: wrong output: out {out[:300]!r} err {err[:300]!r}")
    return code, out, err


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    return small_world(tmp_path_factory.mktemp("outputs"))


# -- Rich markup: user strings are printed literally ----------------------------------------------------------------
def test_ui_prints_every_string_literally(capsys):
    from treegram.cli.ui import UI

    ui = UI()
    for s in ["d[/b].json", "[red]x[/red]", "[bold", "a [/] b", "[link=file:///etc]x"]:
        ui.note(s)
        ui.note(s, label="note")
        ui.print(s)
        ui.table(s, [s, s], [(s, s)])
        ui.error(s, s)
        with ui.task(s, 1) as advance:
            advance(1, info=s)
        list(ui.track([1], description=s))
        out, err = capsys.readouterr()
        assert (out + err).count(s) >= 6, (s, out, err)


def test_no_markup_strings_left_in_the_code():
    """The console prints strings literally, so a Rich markup tag in a message would show as text: style with
    `ui.note(..., label=...)` or `treegram.cli.ui.styled` instead."""
    import re

    root = Path(__file__).resolve().parents[1]
    tag = re.compile(r"""["'][^"'\n]*\[/(?:\]|bold|yellow|red|dim|green)""")
    found = [f"{p.relative_to(root)}:{i}" for d in ("core", "plugins") for p in (root / d).rglob("*.py")
             if p.name != "ui.py" for i, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1)
             if tag.search(line)]
    assert not found, found


def _markup_cases(w, d):
    """Commands that print a user-provided string (a path, a name, a word) through the console."""
    weird = d / "m[/b]"
    weird.mkdir(parents=True, exist_ok=True)
    red = weird / "[red]x.model"
    tb_red = weird / "[red]tb.mrg"
    tb_red.write_text(SMALL_TREEBANK)
    s_red = weird / "[red]s.txt"
    s_red.write_text("the cat sat .\n")
    gold = weird / "[red]gold.txt"
    gold.write_text("the cat sat .\n")
    out_mrg = weird / "[bold]o.mrg"
    return [
        ("train pcfg --out d[/b]", ["train", "pcfg", "--treebank", tb_red, "--out", red, "--rare-threshold", "1"],
         [tb_red], str(red)),
        ("grammar [red]", ["grammar", red], [red], "[red]x.model"),
        ("show [red]", ["show", tb_red], [tb_red], ""),
        ("parse --out [bold]", ["parse", "--model", red, "--input", s_red, "--out", out_mrg], [s_red, red], ""),
        ("parse --resume note", ["parse", "--model", red, "--input", s_red, "--out", out_mrg, "--resume"],
         [s_red, red], ""),
        ("evalb [red]", ["evalb", out_mrg, out_mrg], [out_mrg], ""),
        ("eval-compression [red] system", ["eval-compression", "--source", s_red, "--gold", gold, "--system",
                                           f"[red]sys={gold}", "--no-rel"], [s_red, gold], "[red]sys"),
        ("eval-compression --lines past end", ["eval-compression", "--source", s_red, "--gold", gold, "--system",
                                               f"[red]sys={gold}", "--no-rel", "--lines", "1-9"], [s_red, gold],
         "only 1 lines"),
        ("tsg-trees of a pcfg [red]", ["tsg-trees", red], [red], ""),
        ("ostag-grammar of a pcfg [red]", ["ostag-grammar", red], [red], ""),
        ("show missing [red]", ["show", weird / "[red]nope.mrg"], [], "[red]nope.mrg"),
        ("corrections [red] files", ["corrections", s_red, gold, "--out", weird / "[/b]r.json"], [s_red, gold], ""),
        ("demo [red] words", ["demo", "the [red]cat[/red] sat ."], [], "[red]cat[/red]"),
    ]


def test_markup_in_user_strings(world, capsys):
    failures = []
    for name, argv, inputs, text in _markup_cases(world, world["d"]):
        try:
            code, out, err = run_case(argv, inputs, capsys, text=text)
        except AssertionError as exc:
            failures.append(f"{name}: {exc}")
            continue
        if "MarkupError" in err or "Traceback" in err:
            failures.append(f"{name}: {err[:200]}")
    assert not failures, "\n".join(failures)


# -- outputs: named and derived paths -------------------------------------------------------------------------------
def test_corrections_html_is_an_output(world, capsys, tmp_path):
    orig, corr = tmp_path / "orig.txt", tmp_path / "corr.txt"
    orig.write_text("anna: I goes to school .\n")
    corr.write_text("anna: I go to school .\n")
    link = tmp_path / "corr-link.txt"
    link.symlink_to(corr)
    fake_model = tmp_path / "c.model"
    fake_model.write_text("{}")
    cases = [
        ("--html = ORIGINAL", ["corrections", orig, corr, "--html", orig], "same file"),
        ("--html -> CORRECTED via symlink", ["corrections", orig, corr, "--html", link], "same file"),
        ("--html = --model", ["corrections", orig, corr, "--model", fake_model, "--html", fake_model], "same file"),
        ("--html = --out (new)", ["corrections", orig, corr, "--out", tmp_path / "r.json", "--html",
                                  tmp_path / "r.json"], "same file"),
    ]
    for name, argv, text in cases:
        run_case(argv, [orig, corr, fake_model], capsys, want=2, text=text)
    assert not (tmp_path / "r.json").exists()


def test_derived_paths_are_checked(world, capsys, tmp_path):
    tb, model, s = world["tb"], world["model"], world["sents"]
    # the implicit checkpoint OUT.ckpt onto the treebank
    ck_tb = tmp_path / "m.model.ckpt"
    ck_tb.write_text(SMALL_TREEBANK)
    run_case(["train", "tsg", "--treebank", ck_tb, "--out", tmp_path / "m.model", "--iterations", "1"], [ck_tb],
             capsys, want=2, text="same file")
    # ... and through a symlink
    (tmp_path / "n.model.ckpt").symlink_to(tb)
    run_case(["train", "tsg", "--treebank", tb, "--out", tmp_path / "n.model", "--iterations", "1"], [tb],
             capsys, want=2, text="same file")
    # --out equal to --checkpoint (neither exists yet)
    run_case(["train", "tsg", "--treebank", tb, "--out", tmp_path / "y.model", "--checkpoint", tmp_path / "y.model",
              "--iterations", "1"], [tb], capsys, want=2, text="same file")
    # OUT.batches/ holding the input: it is removed when the run completes
    wdir = tmp_path / "o.mrg.batches"
    wdir.mkdir()
    inner = wdir / "in.txt"
    inner.write_text(s.read_text())
    for cmd in (["parse", "--model", model], ["compress", "--model", model, "--tokenized"]):
        run_case([*cmd, "--input", inner, "--out", tmp_path / "o.mrg", "--workers", "1"], [inner, wdir], capsys,
                 want=2, text="inside")
    # OUT.batches is an existing file
    (tmp_path / "p.mrg.batches").write_text("x")
    run_case(["parse", "--model", model, "--input", s, "--out", tmp_path / "p.mrg", "--workers", "1"],
             [s, tmp_path / "p.mrg.batches"], capsys, want=2, text="not a folder")
    # --workers with a device as --out: no folder beside it
    run_case(["parse", "--model", model, "--input", s, "--out", "/dev/null", "--workers", "1"], [s], capsys,
             want=2, text="regular file")
    # OUT.chunks/ of mine-revisions holding the dump
    cdir = tmp_path / "pairs.tsv.chunks"
    cdir.mkdir()
    dump = cdir / "dump.xml"
    dump.write_text("<mediawiki></mediawiki>")
    run_case(["mine-revisions", dump, "--out", tmp_path / "pairs.tsv", "--workers", "1"], [dump, cdir], capsys,
             want=2, text="inside")
    # --parse-cache onto an input file
    run_case(["train", "channel", "--pairs", s, s, "--parser", model, "--out", tmp_path / "ch.model",
              "--parse-cache", s], [s], capsys, want=2, text="not a folder")


def test_no_derived_file_beside_a_device(world, capsys, tmp_path):
    from treegram.io import derived_path

    assert derived_path("/dev/null", ".ckpt") is None and derived_path("-", ".batches") is None
    assert derived_path(tmp_path / "m", ".ckpt") == tmp_path / "m.ckpt"
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    assert derived_path(fifo, ".ckpt") is None
    assert not os.path.exists("/dev/null.ckpt")
    run_case(["-q", "train", "tsg", "--treebank", world["tb"], "--out", "/dev/null", "--iterations", "1"],
             [world["tb"]], capsys, want=0, check=lambda o, e: not os.path.exists("/dev/null.ckpt"))
    run_case(["train", "tsg", "--treebank", world["tb"], "--out", "/dev/null", "--iterations", "1", "--resume"],
             [world["tb"]], capsys, want=2, text="--checkpoint")


def test_summary_goes_to_stderr_when_the_output_is_stdout(world, tmp_path):
    from treegram.io import load_bundle

    model = tmp_path / "stdout.model"
    with open(model, "wb") as fh:
        res = subprocess.run([sys.executable, "-m", "treegram.cli.app", "train", "pcfg", "--treebank",
                              str(world["tb"]), "--out", "/dev/stdout"], stdout=fh, stderr=subprocess.PIPE,
                             timeout=300)
    TALLY["cases"] += 1
    TALLY["ok" if res.returncode == 0 else "clean_errors"] += 1
    try:
        meta, _ = load_bundle(model)
    except Exception:  # noqa: BLE001 - the table in front of the zip is exactly the wrong output
        TALLY["silent_wrong"] += 1
        raise
    assert res.returncode == 0 and meta["formalism"] == "pcfg" and b"model written" in res.stderr


def test_disk_full_names_the_path(world, capsys, tmp_path, monkeypatch):
    run_case(["parse", "--model", world["model"], "--input", world["sents"], "--out", "/dev/full"],
             [world["sents"]], capsys, want=2, text="/dev/full")
    run_case(["train", "pcfg", "--treebank", world["tb"], "--out", "/dev/full"], [world["tb"]], capsys, want=2,
             text="/dev/full: cannot write, the disk is full")

    def full(fd):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "fsync", full)
    target = tmp_path / "full.model"
    run_case(["train", "pcfg", "--treebank", world["tb"], "--out", target], [world["tb"]], capsys, want=2,
             text=f"{target}: cannot write, the disk is full")
    assert not target.exists() and not list(tmp_path.glob(".full.model.*.tmp"))


# -- bounds: the compressors' length limit ---------------------------------------------------------------------------
@pytest.fixture(scope="module")
def channel(tmp_path_factory):
    from conftest import write_demo_channels

    return write_demo_channels(tmp_path_factory.mktemp("channel-bounds"), 6)


def test_compress_long_lines_with_a_channel_model(channel, capsys):
    d = channel
    src = d / "long.txt"
    words = ("the cat sat on the mat and the dog saw a bird " * 100).split()
    src.write_text(" ".join(words[:1000]) + "\n" + " ".join(words[:700]) + "\nthe cat sat on the mat .\n")
    out = d / "long.out"
    run_case(["compress", "--model", d / "ch6.model", "--input", src, "--out", out, "--tokenized"], [src], capsys,
             want=0, check=lambda o, e: "not compressed" in e or "longer than" in e)
    lines = out.read_text().split("\n")
    assert lines[0].split() == words[:1000] and lines[1].split() == words[:700]  # unchanged, said so


def test_channel_probabilities_in_log_space(channel):
    from treegram.formalism import load_model
    from treegram.plugins.channel.model import Channel

    model = load_model(channel / "ch6.model")
    ch: Channel = model.grammar.channel
    cat = sorted(ch.categories)[0]
    ev = {"A": cat, "H": cat, "gaps": [[cat] * 400], "added": [],
          "ctx": {k: "never-seen" for k in (1, 2, 3, 4)}, "out": {k: "x" for k in (1, 2, 3, 4)}}
    lp = ch.logp(ev)  # the gap product alone is far below the smallest float
    assert math.isfinite(lp) and lp < -700


def test_train_channel_skips_overlong_pairs(channel, capsys, tmp_path):
    d = channel
    src, tgt = tmp_path / "src.txt", tmp_path / "tgt.txt"
    huge = " ".join(["word"] * 2_000_000)
    src.write_text((d / "src.txt").read_text() + huge + "\n")
    tgt.write_text((d / "tgt.txt").read_text() + "word word\n")
    run_case(["train", "channel", "--pairs", src, tgt, "--parser", d / "parser.model", "--levels", "4", "--out",
              tmp_path / "c.model"], [src, tgt], capsys, want=0, text="skipped 1 pair(s) longer than 100 tokens")


# -- arguments: every numeric option of every command ---------------------------------------------------------------
def _actions(parser, prefix=()):
    for a in parser._actions:
        if isinstance(a, argparse._SubParsersAction):
            for name, sp in a.choices.items():
                yield from _actions(sp, prefix + (name,))
        elif a.option_strings and a.nargs != 0:
            yield " ".join(prefix), a


def test_no_option_takes_a_raw_int_or_float():
    """The cause of `--C nan`, `--max-iter -1`, `--iterations 99999999999999999999`: an option typed plain `int`
    or `float` accepts any of them.  Every numeric option goes through a `treegram.argtypes` type."""
    raw = [f"{cmd} {'/'.join(a.option_strings)}" for cmd, a in _actions(build_parser()) if a.type in (int, float)]
    assert not raw, raw


_BAD = ["nan", "inf", "-inf", "1e400", "99999999999999999999", "-99999999999999999999", "abc", ""]


def test_every_numeric_option_range_checked(capsys):
    """Every option with an argtypes type, given out-of-range text: a clean usage error (exit 2, one line), or a
    value inside the type's range."""
    numeric = {argtypes.positive_int, argtypes.nonnegative_int, argtypes.integer, argtypes.finite_float,
               argtypes.positive_float, argtypes.nonnegative_float, argtypes.probability, argtypes.open_probability,
               argtypes.horizontal, argtypes.seed}
    parser = build_parser()
    seen = failures = 0
    for cmd, a in _actions(parser):
        if a.type not in numeric:
            continue
        seen += 1
        for bad in _BAD + ["-1", "0", "2"]:
            TALLY["cases"] += 1
            TALLY["option_values"] += 1
            try:
                v = a.type(bad)
            except argparse.ArgumentTypeError:
                TALLY["clean_errors"] += 1
                continue
            except Exception as exc:  # noqa: BLE001
                TALLY["tracebacks"] += 1
                failures += 1
                print(cmd, a.option_strings, bad, type(exc).__name__)
                continue
            TALLY["ok"] += 1
            if isinstance(v, float) and not math.isfinite(v) or isinstance(v, int) and abs(v) > 2**128:
                TALLY["silent_wrong"] += 1
                failures += 1
    assert seen > 100 and failures == 0


def test_audit_argument_cases(world, capsys, tmp_path):
    tb, s = world["tb"], world["sents"]
    d = tmp_path
    fce = d / "fce.json"
    fce.write_text("{}\n")
    vocab_cases = [["exercises", "--vocab", "cefr:A1", "--words", "dog", "--top-errors", "2"],
                   ["exercises", "--vocab", "cefr:A1", "--level", "A2", "--words", "dog"],
                   ["generate", "--vocab", "cefr:A1", "--level", "B1", "-n", "1"]]
    cases = [
        (["train", "pcfg", "--treebank", tb, "--out", d / "a.model", "--rare-threshold", "0"], "at least 1"),
        (["train", "tsg", "--treebank", tb, "--out", d / "a.model", "--rare-threshold", "0"], "at least 1"),
        (["train", "corrections", "--fce", fce, "--out", d / "c.model", "--C", "nan"], "finite"),
        (["train", "corrections", "--fce", fce, "--out", d / "c.model", "--max-iter", "-1"], "at least 1"),
        (["train", "stsg", "--pairs", s, s, "--out", d / "st.model", "--iterations", "99999999999999999999"],
         "too large"),
        (["train", "tsg", "--treebank", tb, "--out", d / "a.model", "--iterations", "1" + "0" * 30], "too large"),
        (["eval-corrections", "--fce", fce, "--limit", "-1"], "at least 1"),
        (["eval-corrections", "--fce", fce, "--limit", "0"], "at least 1"),
        (["parse", "--model", world["model"], "--input", s, "--encoding", "rot13"], "not a text encoding"),
        (["parse", "--model", world["model"], "--input", s, "--encoding", "base64"], "not a text encoding"),
        (["show", tb, "--encoding", "zlib"], "not a text encoding"),
        (["train", "channel", "--pairs", s, s, "--out", d / "c.model", "--lm", "nan"], "finite"),
        (["train", "channel", "--pairs", s, s, "--out", d / "c.model", "--nbest", "0"], "at least 1"),
        (["train", "channel", "--pairs", s, s, "--out", d / "c.model", "--target-rate", "1.5"], "between"),
        (["train", "channel", "--pairs", s, s, "--out", d / "c.model", "--levels", "1e400"], "whole number"),
        (["serve", "--port", "99999999999999999999"], "--port"),
        *[(argv, "--top-errors" if "--top-errors" in argv else "--level") for argv in vocab_cases],
    ]
    failures = []
    for argv, text in cases:
        try:
            run_case(argv, [tb, s, fce], capsys, want=2, text=text)
        except AssertionError as exc:
            failures.append(str(exc))
    assert not failures, "\n".join(failures)


def test_repeated_words_practised_once(capsys, tmp_path):
    out = tmp_path / "sheet.json"
    run_case(["exercises", "--vocab", "cefr:A1", "--words", ",".join(["dog"] * 5000 + ["school"]), "--per-word", "1",
              "--format", "json", "--out", out], [], capsys, want=0, text="4,999 repeat(s)",
             check=lambda o, e: len(json.loads(out.read_text())["words"]) == 2)


def test_summary(capsys):
    """The counts for the closing note (run last in this file)."""
    summary(TALLY, "fault suite (outputs)", capsys)
