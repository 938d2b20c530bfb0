"""treegram.io, the one I/O layer: strict decoding with positions, \\n-only lines, same-file refusal, atomic writes
with normal permissions, special files streamed (never replaced), temporary files cleaned up, zip-bomb limits."""

from __future__ import annotations

import os
import signal
import stat
import subprocess
import sys
import textwrap
import zipfile

import numpy as np
import pytest

import treegram.io as tio
from treegram.errors import InputError, ModelFileError


def test_lines_split_on_newline_only():
    text = "a\rb\n\u2028c\x0cd\x85e\nlast\r\n"
    assert tio.split_lines(text) == ["a\rb", "\u2028c\x0cd\x85e", "last"]
    assert len(text.splitlines()) > 3  # what the commands used to do
    assert tio.split_lines("") == [] and tio.split_lines("x") == ["x"] and tio.split_lines("\n") == [""]


def test_streamed_lines_equal_whole_file_lines(tmp_path):
    p = tmp_path / "in.txt"
    p.write_bytes("\ufeffone\rtwo\n\u2028three\r\n\nfour".encode())
    assert list(tio.iter_lines(p)) == tio.read_lines(p) == ["one\rtwo", "\u2028three", "", "four"]


def test_non_utf8_names_file_line_and_byte(tmp_path):
    p = tmp_path / "latin.txt"
    p.write_bytes(b"ok line\nsecond caf\xe9 line\n")
    for read in (lambda: tio.read_text(p), lambda: list(tio.iter_lines(p))):
        with pytest.raises(InputError) as exc:
            read()
        assert f"{p}:2:" in str(exc.value) and "byte offset 18" in str(exc.value)
        assert "--encoding" in exc.value.hint
    assert tio.read_lines(p, encoding="latin-1")[1] == "second café line"
    with pytest.raises(InputError, match="unknown encoding"):
        tio.read_text(p, encoding="no-such-codec")


def test_same_file_refused_by_inode(tmp_path):
    a = tmp_path / "a.txt"
    a.write_text("x\n")
    link = tmp_path / "link.txt"
    os.link(a, link)
    with pytest.raises(InputError, match="same file"):
        tio.check_distinct({"--out": str(link)}, {"--input": str(a)})
    with pytest.raises(InputError, match="same file"):
        tio.check_distinct({"--out": a, "--checkpoint": link}, {})
    tio.check_distinct({"--out": tmp_path / "new.txt"}, {"--input": a})  # a new file is fine
    tio.check_distinct({"--out": "-"}, {"--input": "-"})
    tb = tmp_path / "tb"
    tb.mkdir()
    (tb / "x.mrg").write_text("(S (A a))\n")
    with pytest.raises(InputError, match="inside"):
        tio.check_distinct({"--out": tb / "x.mrg"}, {"--treebank": [tb]})


def test_atomic_write_uses_umask_and_keeps_existing_mode(tmp_path):
    old = os.umask(0o022)
    try:
        p = tmp_path / "new.txt"
        tio.atomic_write_text(p, "x")
        assert stat.S_IMODE(p.stat().st_mode) == 0o644
        q = tmp_path / "shared.txt"
        q.write_text("old")
        os.chmod(q, 0o664)
        tio.atomic_write_text(q, "new")
        assert stat.S_IMODE(q.stat().st_mode) == 0o664 and q.read_text() == "new"
    finally:
        os.umask(old)
    assert not [f for f in os.listdir(tmp_path) if f.endswith(".tmp")]


def test_special_files_are_streamed_not_replaced(tmp_path, fifo):
    tio.atomic_write_text(fifo.path, "through the pipe\n")
    assert fifo.read(5) == b"through the pipe\n"
    assert stat.S_ISFIFO(os.stat(fifo.path).st_mode)  # still a FIFO, not a regular file
    assert tio.is_special_output("/dev/null") and tio.is_special_output("/dev/stdout") and tio.is_special_output("-")
    assert tio.is_special_output("/dev/fd/1") and not tio.is_special_output(tmp_path / "f.txt")
    link = tmp_path / "to-null"
    link.symlink_to("/dev/null")
    assert tio.is_special_output(link)
    assert stat.S_ISCHR(os.stat("/dev/null").st_mode)


def test_symlink_target_is_replaced_not_the_link(tmp_path):
    target = tmp_path / "real.txt"
    target.write_text("old")
    link = tmp_path / "link.txt"
    link.symlink_to(target)
    tio.atomic_write_text(link, "new")
    assert link.is_symlink() and target.read_text() == "new"


def test_stale_temporaries_of_dead_processes_are_removed(tmp_path):
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    pid = int(dead.stdout)
    stale = tmp_path / f".out.txt.{pid}.abcd.tmp"
    stale.write_text("half")
    mine = tmp_path / f".out.txt.{os.getpid()}.efgh.tmp"
    mine.write_text("in progress")
    other = tmp_path / f".other.txt.{pid}.abcd.tmp"
    other.write_text("not ours")
    tio.atomic_write_text(tmp_path / "out.txt", "done")
    assert not stale.exists() and mine.exists() and other.exists()


def test_sigterm_during_an_atomic_write_removes_the_temporary(tmp_path):
    code = textwrap.dedent(f"""
        import os, signal, tempfile, time
        import treegram.io as tio
        fd, tmp = tempfile.mkstemp(prefix=".x.", suffix=".tmp", dir={str(tmp_path)!r})
        os.close(fd)
        with tio._temp_guard(tmp):
            os.kill(os.getpid(), signal.SIGTERM)
            time.sleep(5)
    """)
    proc = subprocess.run([sys.executable, "-c", code], timeout=30)
    assert proc.returncode == -signal.SIGTERM
    assert not [f for f in os.listdir(tmp_path) if f.endswith(".tmp")]


def test_open_output_resume_cuts_a_half_line(tmp_path):
    p = tmp_path / "out.txt"
    p.write_bytes(b"one\ntwo\nthr")
    with tio.open_output(p, resume=True) as sink:
        assert sink.done == 2
        sink.write_line("three")
    assert p.read_text() == "one\ntwo\nthree\n"
    with tio.open_output(p) as sink:
        assert sink.done == 0
        sink.write_line("fresh")
    assert p.read_text() == "fresh\n"
    with pytest.raises(InputError, match="--resume"):
        with tio.open_output("-", resume=True):
            pass


def _bomb(path, size):
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("__meta__.json", "{}")
        with zf.open("x.npy", "w", force_zip64=True) as fh:
            block = bytes(1 << 20)
            for _ in range(size >> 20):
                fh.write(block)


def test_zip_bomb_refused_before_decompression(tmp_path, monkeypatch):
    monkeypatch.setattr(tio, "MAX_FREE_BYTES", 1 << 20)  # scaled down so the test stays fast
    p = tmp_path / "bomb.model"
    _bomb(p, 32 << 20)
    assert p.stat().st_size < 100_000
    with pytest.raises(ModelFileError, match="refused before decompressing"):
        tio.load_bundle(p)
    ok = tmp_path / "ok.model"
    tio.save_bundle(ok, {"a": 1}, {"x": np.arange(1000)})
    meta, arrays = tio.load_bundle(ok)
    assert meta == {"a": 1} and arrays["x"].sum() == 499500


def test_corrupt_bundles_are_model_file_errors(tmp_path):
    cases = {"empty": b"", "text": b"hello", "half": None, "meta-list": None, "deep-json": None}
    good = tmp_path / "good.model"
    tio.save_bundle(good, {"a": 1}, {"x": np.arange(100)})
    raw = good.read_bytes()
    for name in cases:
        p = tmp_path / f"{name}.model"
        if name == "half":
            p.write_bytes(raw[: len(raw) // 2])
        elif name == "meta-list":
            with zipfile.ZipFile(p, "w") as zf:
                zf.writestr("__meta__.json", "[1, 2]")
        elif name == "deep-json":
            with zipfile.ZipFile(p, "w") as zf:
                zf.writestr("__meta__.json", "[" * 100_000 + "]" * 100_000)
        else:
            p.write_bytes(cases[name])
        with pytest.raises(ModelFileError):
            tio.load_bundle(p)


def test_damaged_cefrpy_cache_is_rebuilt(tmp_path, monkeypatch):
    pytest.importorskip("cefrpy")
    from treegram.plugins.vocabgen import vocab

    cefrpy = pytest.importorskip("cefrpy")

    class Tiny:  # two words instead of cefrpy's whole table (fast)
        def yield_words(self):
            yield from ("go", "house")

        def get_pos_level_dict_for_word(self, w, **kw):
            return {"VB": 1.0} if w == "go" else {"NN": 2.2}

    monkeypatch.setattr(cefrpy, "CEFRAnalyzer", Tiny)
    monkeypatch.setattr(vocab, "user_cache_dir", lambda: tmp_path)
    levels = vocab.cefrpy_levels()  # builds and writes the cache
    assert levels == {"go": 1, "house": 2}
    (cache,) = tmp_path.glob("cefrpy-*.tsv")
    cache.write_bytes(b"\xff\xfe\x00garbage\x80\n")
    assert vocab.cefrpy_levels() == levels


def test_a_sentence_over_spacys_length_limit_is_dropped_not_a_traceback():
    from treegram.plugins.vocabgen.parsing import SPACY_MODEL, parse_sentences

    pytest.importorskip("spacy")
    pytest.importorskip(SPACY_MODEL.replace("-", "_"))
    out = parse_sentences(["word " * 300_000, "The cat sat on the mat ."])
    assert [s.words for s in out] == [("The", "cat", "sat", "on", "the", "mat", ".")]


def test_interrupt_hint_names_what_is_left(tmp_path):
    import argparse

    from treegram.cli.app import _interrupt_hint

    out = tmp_path / "m.model"
    args = argparse.Namespace(command="train", out=out, checkpoint=None)
    assert "nothing to resume" in _interrupt_hint(args)  # e.g. TIG stopped during its TSG initialisation
    (tmp_path / "m.model.ckpt").write_text("x")
    assert "--resume" in _interrupt_hint(args)
    part = tmp_path / "p.mrg"
    part.write_text("(S (A a))\n")
    assert "--resume" in _interrupt_hint(argparse.Namespace(command="parse", out=str(part), resume=False))
    assert _interrupt_hint(argparse.Namespace(command="show", file="x")) is None
