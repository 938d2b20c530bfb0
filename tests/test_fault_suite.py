"""The fault suite (issue 17): the audit's bad-input cases as a table run against the CLI in-process, plus
property-based fuzzing (hypothesis) of the bracket reader, the model and checkpoint loaders and every command's
argument parser.  Every case must end in exit 0 or a clean one-line error (exit 2) -- never a traceback -- and no
input file may change.  `test_summary` prints the counts (cases tried, clean errors, tracebacks, inputs destroyed).
"""

from __future__ import annotations

import copy
import json
import os
import stat
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from faults import meta_paths, new_tally, run_cli, set_path, small_world, summary

from treegram.cli.app import build_parser, main
from treegram.errors import TreegramError
from treegram.io import load_bundle, save_bundle

TALLY = new_tally()
FUZZ = settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)


def run_case(argv, inputs=(), capsys=None):
    """Run one CLI case; returns (exit code, stderr).  Tallies tracebacks and destroyed inputs."""
    code, _out, err = run_cli(TALLY, argv, inputs, capsys)
    return code, err


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    w = small_world(tmp_path_factory.mktemp("faults"))
    d = w["d"]
    tsg = d / "tsg.model"
    ck = d / "tsg.ckpt"
    assert main(["-q", "train", "tsg", "--treebank", str(w["tb"]), "--out", str(tsg), "--iterations", "2",
                 "--checkpoint", str(ck), "--seed", "3"]) == 0
    latin = d / "latin.txt"
    latin.write_bytes(b"the caf\xe9 sat .\n")
    empty = d / "empty.txt"
    empty.write_text("")
    return {**w, "tsg": tsg, "ck": ck, "latin": latin, "empty": empty}


# -- the audit's cases, as a table ----------------------------------------------------------------------------------
def _cases(w):
    d, tb, m, s = w["d"], w["tb"], w["model"], w["sents"]
    return [
        # (name, argv, expected exit, text expected in the error, inputs that must not change)
        ("parse --out = --input", ["parse", "--model", m, "--input", s, "--out", s], 2, "same file", [s, m]),
        ("parse --out = --model", ["parse", "--model", m, "--input", s, "--out", m], 2, "same file", [s, m]),
        ("parse --out hard link of input", None, 2, "same file", [s]),
        ("train pcfg --out = treebank", ["train", "pcfg", "--treebank", tb, "--out", tb], 2, "same file", [tb]),
        ("train tsg --checkpoint = treebank", ["train", "tsg", "--treebank", tb, "--out", d / "x.model",
                                               "--checkpoint", tb, "--iterations", "1"], 2, "same file", [tb]),
        ("train ostag --from-tsg M --out M", ["train", "ostag", "--from-tsg", w["tsg"], "--treebank", tb,
                                              "--out", w["tsg"]], 2, "same file", [w["tsg"], tb]),
        ("--out = --checkpoint", ["train", "tsg", "--treebank", tb, "--out", d / "y.model", "--checkpoint",
                                  d / "y.model", "--iterations", "1"], 2, "same file", [tb]),
        ("parse non-UTF-8", ["parse", "--model", m, "--input", w["latin"]], 2, "byte offset 7", [w["latin"]]),
        ("parse --encoding latin-1", ["parse", "--model", m, "--input", w["latin"], "--encoding", "latin-1"], 0,
         "", [w["latin"]]),
        ("parse bad --encoding", ["parse", "--model", m, "--input", s, "--encoding", "klingon"], 2, "encoding", [s]),
        ("evalb non-UTF-8", ["evalb", w["latin"], w["latin"]], 2, "not valid UTF-8", [w["latin"]]),
        ("show non-UTF-8", ["show", w["latin"]], 2, "not valid UTF-8", [w["latin"]]),
        ("parse empty file", ["parse", "--model", m, "--input", w["empty"]], 2, "empty", [w["empty"]]),
        ("evalb empty files", ["evalb", w["empty"], w["empty"]], 2, "empty", [w["empty"]]),
        ("show empty file", ["show", w["empty"]], 2, "no trees", [w["empty"]]),
        ("parse --max-length -5", ["parse", "--model", m, "--input", s, "--max-length", "-5"], 2, "at least 1", [s]),
        ("parse --max-length 0", ["parse", "--model", m, "--input", s, "--max-length", "0"], 2, "at least 1", [s]),
        ("show --first -2", ["show", tb, "--first", "-2"], 2, "at least 1", [tb]),
        ("grammar --top -3", ["grammar", m, "--top", "-3"], 2, "0 or more", [m]),
        ("train --limit 0", ["train", "pcfg", "--treebank", tb, "--out", d / "l.model", "--limit", "0"], 2,
         "at least 1", [tb]),
        ("train tsg --seed -1", ["train", "tsg", "--treebank", tb, "--out", d / "neg.model", "--iterations", "1",
                                 "--seed", "-1"], 0, "", [tb]),
        ("train --seed huge", ["train", "pcfg", "--treebank", tb, "--out", d / "h.model", "--seed", str(2**200)],
         2, "2**128", [tb]),
        ("train --seed word", ["train", "pcfg", "--treebank", tb, "--out", d / "h.model", "--seed", "abc"], 2,
         "whole number", [tb]),
        ("tsg --alpha nan", ["train", "tsg", "--treebank", tb, "--out", d / "a.model", "--alpha", "nan"], 2,
         "finite", [tb]),
        ("tsg --beta 1.5", ["train", "tsg", "--treebank", tb, "--out", d / "a.model", "--beta", "1.5"], 2,
         "between", [tb]),
        ("tsg --iterations -1", ["train", "tsg", "--treebank", tb, "--out", d / "a.model", "--iterations", "-1"],
         2, "0 or more", [tb]),
        ("tig --horizontal -7", ["train", "tig", "--treebank", tb, "--out", d / "a.model", "--horizontal", "-7"],
         2, "-1", [tb]),
        ("eval-compression empty --lines", ["eval-compression", "--source", s, "--gold", s, "--system", f"a={s}",
                                            "--lines", "5-3"], 2, "empty", [s]),
        ("compress --rate 2", ["compress", "--model", m, "--input", "a b", "--rate", "2"], 2, "between", [m]),
        ("parse --resume to stdout", ["parse", "--model", m, "--input", s, "--resume"], 2, "--out", [s]),
        ("parse missing model", ["parse", "--model", d / "nope.model", "--input", s], 2, "not found", [s]),
        ("parse a directory as model", ["parse", "--model", d, "--input", s], 2, "directory", [s]),
        ("parse treebank as model", ["parse", "--model", tb, "--input", s], 2, "", [tb, s]),
        ("show a model file", ["show", m], 2, "", [m]),
        ("evalb line mismatch", ["evalb", tb, s], 2, "", [tb, s]),
        ("resume with other seed", ["train", "tsg", "--treebank", tb, "--out", d / "r.model", "--iterations", "3",
                                    "--checkpoint", w["ck"], "--resume", "--seed", "4"], 2, "other settings",
         [w["ck"], tb]),
        ("resume other seed --force", ["train", "tsg", "--treebank", tb, "--out", d / "r.model", "--iterations",
                                       "3", "--checkpoint", d / "ck-copy", "--resume", "--seed", "4", "--force"],
         0, "", [tb]),
    ]


def test_audit_cases_table(world, capsys, tmp_path):
    import shutil

    shutil.copy(world["ck"], world["d"] / "ck-copy")
    link = world["d"] / "s-link.txt"
    if not link.exists():
        os.link(world["sents"], link)
    failures = []
    for name, argv, want, text, inputs in _cases(world):
        if argv is None:
            argv = ["parse", "--model", world["model"], "--input", world["sents"], "--out", link]
        code, err = run_case(argv, inputs, capsys)
        if code != want or (text and text not in err):
            failures.append(f"{name}: exit {code} (want {want}), stderr {err.strip()[:200]!r}")
        if code == 2 and err.count("\n") > 3:
            failures.append(f"{name}: error is not one line: {err[:300]!r}")
    assert not failures, "\n".join(failures)


def test_corrupt_checkpoint_values_refused(world, capsys, tmp_path):
    meta, arrays = load_bundle(world["ck"])
    cases = {
        "flags 7": lambda m, a: a.__setitem__("model/flags", np.where(a["model/flags"] == 1, 7, 0).astype(np.int8)),
        "flags -3": lambda m, a: a.__setitem__("model/flags", np.full_like(a["model/flags"], -3)),
        "sweeps_done -5": lambda m, a: m.__setitem__("sweeps_done", -5),
        "sweeps_done text": lambda m, a: m.__setitem__("sweeps_done", "2"),
        "trace not a list": lambda m, a: m.__setitem__("trace", {"a": 1}),
        "schedule kind": lambda m, a: m["schedule"].__setitem__("kind", "cubic"),
        "rng garbage": lambda m, a: m.__setitem__("rng", {"bit_generator": "PCG64", "state": "x"}),
        "site order": lambda m, a: m.__setitem__("site_order", 3),
        "alpha negative": lambda m, a: a.__setitem__("model/alpha", -a["model/alpha"] - 1),
        "flags wrong shape": lambda m, a: a.__setitem__("model/flags", a["model/flags"][:3]),
    }
    for name, mutate in cases.items():
        m, a = copy.deepcopy(meta), {k: v.copy() for k, v in arrays.items()}
        mutate(m, a)
        ck = tmp_path / f"{name.replace(' ', '_')}.ckpt"
        save_bundle(ck, m, a)
        code, err = run_case(["train", "tsg", "--treebank", world["tb"], "--out", tmp_path / "o.model",
                              "--iterations", "3", "--checkpoint", ck, "--resume", "--seed", "3"],
                             [world["tb"]], capsys)
        assert code == 2 and "checkpoint" in err, (name, err)


def test_special_outputs_stream_and_survive(world, capsys, fifo):
    code, _ = run_case(["parse", "--model", world["model"], "--input", world["sents"], "--out", fifo.path],
                       [world["sents"]], capsys)
    assert code == 0 and fifo.read().count(b"\n") == 2
    assert stat.S_ISFIFO(os.stat(fifo.path).st_mode)
    # /dev/null is written through (as any user may), never replaced
    code, _ = run_case(["parse", "--model", world["model"], "--input", world["sents"], "--out", "/dev/null"],
                       [world["sents"]], capsys)
    assert code == 0 and stat.S_ISCHR(os.stat("/dev/null").st_mode)


def test_line_alignment_with_odd_separators(world, capsys, tmp_path):
    src = tmp_path / "odd.txt"
    src.write_bytes("the cat\rsat .\nthe dog\u2028sat .\na dog\x0csaw the cat\x85.\n".encode())
    out = tmp_path / "out.mrg"
    code, _ = run_case(["parse", "--model", world["model"], "--input", src, "--out", out], [src], capsys)
    assert code == 0 and out.read_text().count("\n") == 3


def test_brackets_in_words_read_back(world, capsys, tmp_path):
    src = tmp_path / "br.txt"
    src.write_text("the cat ( sat ) on f(x) [ the ] mat .\n")
    out = tmp_path / "out.mrg"
    assert run_case(["parse", "--model", world["model"], "--input", src, "--out", out], [src], capsys)[0] == 0
    tree = out.read_text()
    assert "-LRB-" in tree and "f-LRB-x-RRB-" in tree and "-LSB-" in tree
    assert run_case(["show", out, "--json"], [out], capsys)[0] == 0
    assert run_case(["-q", "show", out, "--json"], [out], None)[0] == 0
    words = json.loads(capsys.readouterr().out)[0]["words"]
    assert words == "the cat ( sat ) on f(x) [ the ] mat .".split()  # restored for the user
    assert run_case(["evalb", out, out], [out], capsys)[0] == 0


def test_parse_streams_and_resumes(world, capsys, tmp_path):
    src = tmp_path / "many.txt"
    src.write_text("the cat sat on the mat .\n" * 6 + "\n" + "a dog saw the cat .\n" * 3)
    full = tmp_path / "full.mrg"
    assert run_case(["-q", "parse", "--model", world["model"], "--input", src, "--out", full], [src], capsys)[0] == 0
    text = full.read_text()
    lines = text.split("\n")
    part = tmp_path / "part.mrg"
    part.write_text("\n".join(lines[:4]) + "\n" + lines[4][:7])  # killed mid-line
    assert run_case(["-q", "parse", "--model", world["model"], "--input", src, "--out", part, "--resume"],
                    [src], capsys)[0] == 0
    assert part.read_text() == text


# -- fuzzing ----------------------------------------------------------------------------------------------------------
@FUZZ
@given(st.text(alphabet=st.sampled_from(list("() ab\n\t\r\u2028-*LRB")), max_size=60))
def test_fuzz_bracket_reader(text):
    from treegram.errors import TreeSyntaxError
    from treegram.trees import format_tree, parse_brackets

    try:
        trees = parse_brackets(text)
    except TreeSyntaxError:
        return
    for t in trees:
        try:
            again = parse_brackets(format_tree(t))
        except TreegramError:
            continue  # unwritable (e.g. an unlabelled node with a word): refused with a clear error
        assert again == [t]


_VALUES = [None, True, -5, 0, 2**70, 1.5, float("nan"), "x", "", [], [1, "a"], {}, {"a": None}]


@pytest.mark.parametrize("which", ["model", "tsg"])
def test_fuzz_model_metadata(world, which, tmp_path, capsys):
    """Every metadata field (3 levels deep) replaced by values of the wrong type or range: load + grammar + parse
    must end in exit 0 or a clean error."""
    meta, arrays = load_bundle(world[which])
    paths = [p for p in meta_paths(meta, 3) if p[0] not in ("format", "version", "formalism")]
    rng = np.random.default_rng(0)
    for i, path in enumerate(paths):
        for value in rng.choice(np.array(_VALUES, dtype=object), 1, replace=False):
            m = copy.deepcopy(meta)
            set_path(m, path, value)
            f = tmp_path / f"m{i}.model"
            save_bundle(f, m, arrays)
            run_case(["-q", "grammar", f, "--json"], [f], capsys)
            run_case(["-q", "parse", "--model", f, "--input", world["sents"], "--out", tmp_path / "o.txt"],
                     [f], capsys)


@FUZZ
@given(st.binary(max_size=200), st.integers(0, 10_000))
def test_fuzz_corrupt_model_bytes(data, cut):
    import tempfile

    good = Path(tempfile.gettempdir()) / "treegram-fuzz-good.model"
    if not good.exists():
        save_bundle(good, {"format": "treegram-model", "version": 1, "formalism": "pcfg"}, {"x": np.arange(5)})
    raw = good.read_bytes()
    with tempfile.TemporaryDirectory() as d:
        for blob in (data, raw[: cut % len(raw)] + data, raw[:cut % len(raw)] + data + raw[cut % len(raw):]):
            f = Path(d) / "m.model"
            f.write_bytes(blob)
            try:
                from treegram.formalism import load_model

                load_model(f)
            except TreegramError:
                pass


_ARG_TOKENS = ["--seed", "--top", "--first", "--max-length", "--limit", "--iterations", "--alpha", "--beta", "-n",
               "--rate", "--encoding", "--lines", "--out", "--input", "--per-word", "-1", "0", "1e400", "nan",
               "abc", "-", "5-3", "x" * 300, "\u2028", "--json", "--resume", "--force"]


@pytest.mark.parametrize("command", ["parse", "evalb", "show", "grammar", "compress", "generate", "exercises",
                                     "eval-compression", "train pcfg", "train tsg", "train tig", "train ostag",
                                     "train stsg", "train vocabgen"])
def test_fuzz_argument_parsers(command):
    """Random argument lists never raise anything but a clean usage error (SystemExit 2) from the parser."""
    parser = build_parser()

    @FUZZ
    @given(st.lists(st.sampled_from(_ARG_TOKENS), max_size=8))
    def check(tokens):
        try:
            parser.parse_args(command.split() + tokens)
        except SystemExit as exc:
            assert exc.code in (0, 2)

    import contextlib
    import io

    with contextlib.redirect_stderr(io.StringIO()), contextlib.redirect_stdout(io.StringIO()):
        check()


def test_summary(capsys):
    """The counts for the closing note (run last in this file)."""
    summary(TALLY, "fault suite", capsys)
