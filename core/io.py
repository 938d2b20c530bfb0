"""The one I/O layer every command goes through: reading text, writing results, and pickle-free persistence.

Reading.  Text is decoded as UTF-8 (or an explicit `encoding`); a byte sequence that does not decode is an
`InputError` naming the file, the line and the byte offset.  Lines are split on ``\\n`` only (a CRLF ending is
dropped with it): a lone CR, U+2028, a form feed or NEL stay *inside* their line, so line N of the output always
answers line N of the input (`str.splitlines` would split on all of them).

Writing.  A regular file is written atomically: a temporary ``.NAME.PID.XXXX.tmp`` in the target directory, moved
into place with `os.replace`, with the permissions of the file it replaces (a new file gets ``0666 & ~umask``, as
`open` would give it).  A special file -- ``-``, a character device such as ``/dev/null``, a FIFO, a socket,
``/dev/stdout`` or ``/dev/fd/N`` -- is never replaced: it is opened and written to as a stream.  A SIGTERM during an
atomic write removes the temporary file before the process dies; temporaries left by SIGKILL are removed by the next
write to the same path (their PID is no longer running).

Same-file protection.  `check_distinct` refuses, before any work starts, an output path that is the same file
(same inode, so hard links and symlinks count; or the same path, for files not written yet) as an input or as
another output; `treegram.cli.app.main` applies it to every command's arguments *and* to the paths a command
derives from them (``OUT.ckpt``, ``OUT.batches/``, ``OUT.chunks/``, cache directories): a derived directory may
not be an existing file, hold an input, or hold an output.  `derived_path` gives no derived path beside a stream
or device (``--out /dev/null`` never creates ``/dev/null.ckpt``).  A failed write (disk full, ...) is an error
naming the path.

Persistence.  JSON metadata plus NPZ arrays in one zip bundle (`save_bundle` / `load_bundle`), never pickle;
members are size-checked *before* decompression, so a zip bomb is refused without inflating it, and each array's
header (shape x item size) is checked against its member's size *before* the array is allocated, so a header
claiming terabytes is a clean error.
"""

from __future__ import annotations

import argparse
import codecs
import io
import json
import os
import signal
import stat
import sys
import tempfile
import threading
import time
import zipfile
import zlib
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any

import numpy as np

from treegram.errors import InputError, ModelFileError

DEFAULT_ENCODING = "utf-8"

#: Limits on model/checkpoint bundles, checked against the zip directory before anything is decompressed: all
#: members together may expand to MAX_FREE_BYTES plus MAX_RATIO times the file's size (real models and checkpoints
#: are mostly incompressible counts and indices; a zip bomb is ~1000:1), and no member beyond MAX_MEMBER_BYTES.
MAX_FREE_BYTES = 64 * 2**20
MAX_RATIO = 100
MAX_MEMBER_BYTES = 4 * 2**30
MAX_META_BYTES = 512 * 2**20  # the JSON metadata member

__all__ = ["DEFAULT_ENCODING", "atomic_write_bytes", "atomic_write_text", "check_distinct", "check_encoding",
           "clean_stale_temporaries", "derived_path", "is_special_output", "write_failed", "writes_stdout", "iter_lines", "load_bundle", "load_json",
           "open_output", "read_lines", "read_text", "save_bundle", "save_json", "split_lines", "write_output"]


# -- reading -------------------------------------------------------------------------------------------------------
def check_encoding(encoding: str | None) -> str:
    """The codec name for `encoding` (default UTF-8), or an InputError for an unknown one or for a codec that is
    not a text encoding (rot13, base64, zlib: transforms, not ways of storing text)."""
    encoding = encoding or DEFAULT_ENCODING
    try:
        info = codecs.lookup(encoding)
    except (LookupError, ValueError, TypeError):
        raise InputError(f"unknown encoding {encoding!r}", hint="e.g. --encoding utf-8, latin-1, cp1252") from None
    if not getattr(info, "_is_text_encoding", True):
        raise InputError(f"{encoding!r} is not a text encoding (it is a {info.name} transform)",
                         hint="e.g. --encoding utf-8, latin-1, cp1252")
    return info.name


def _display(path: str | os.PathLike) -> str:
    return "<stdin>" if str(path) == "-" else str(path)


def _decode_error(source: str, data: bytes, exc: UnicodeDecodeError, encoding: str, base_line: int = 1,
                  base_offset: int = 0, hint: str | None = None) -> InputError:
    line = base_line + data.count(b"\n", 0, exc.start)
    byte = base_offset + exc.start
    bad = data[exc.start:exc.start + 4].hex(" ")
    encoding = encoding.upper() if encoding.startswith("utf") else encoding
    return InputError(f"{source}:{line}: not valid {encoding} text (byte offset {byte}: {bad}, {exc.reason})",
                      hint=hint or "convert the file to UTF-8, or name its encoding with --encoding (e.g. latin-1)")


def _open_binary(path: str | os.PathLike, what: str) -> IO[bytes]:
    if str(path) == "-":
        return sys.stdin.buffer
    p = Path(path)
    if p.is_dir():
        raise InputError(f"{p}: is a directory, not a file", hint=f"give the {what} file")
    try:
        return open(p, "rb")
    except FileNotFoundError:
        raise InputError(f"{p}: {what} file not found", hint="check the path (relative paths start at the current "
                                                             "directory)") from None
    except PermissionError:
        raise InputError(f"{p}: permission denied", hint="check the file's permissions") from None


def read_text(path: str | os.PathLike, *, encoding: str | None = None, what: str = "input",
              hint: str | None = None) -> str:
    """The whole text of a file (``-`` = stdin), decoded strictly; errors name file, line and byte (`hint`: the
    fix for undecodable text, for a reader without ``--encoding``)."""
    enc = check_encoding(encoding)
    if str(path) == "-" and not hasattr(sys.stdin, "buffer"):
        return sys.stdin.read()
    fh = _open_binary(path, what)
    try:
        data = fh.read()
    finally:
        if fh is not sys.stdin.buffer:
            fh.close()
    try:
        text = data.decode(enc)
    except UnicodeDecodeError as exc:
        raise _decode_error(_display(path), data, exc, enc, hint=hint) from None
    return text[1:] if text.startswith("\ufeff") else text


def split_lines(text: str) -> list[str]:
    """Lines split on ``\\n`` only (a CRLF's CR goes with it; a final newline does not start an empty line).

    >>> split_lines("a\\rb\\u2028c\\r\\nd\\x0ce\\n")
    ['a\\rb\\u2028c', 'd\\x0ce']
    """
    if not text:
        return []
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    return [ln[:-1] if ln.endswith("\r") else ln for ln in lines]


def read_lines(path: str | os.PathLike, *, encoding: str | None = None, what: str = "input") -> list[str]:
    return split_lines(read_text(path, encoding=encoding, what=what))


_ASCII_COMPATIBLE = {"utf-8", "utf-8-sig", "ascii", "latin-1", "iso8859-1", "cp1252", "iso8859-15"}


def iter_lines(path: str | os.PathLike, *, encoding: str | None = None, what: str = "input") -> Iterator[str]:
    """Stream the lines of a file (``-`` = stdin) without holding it in memory; same splitting and errors as
    `read_lines`.  Codecs in which ``\\n`` is not the byte 0x0A (UTF-16/32) are read whole."""
    enc = check_encoding(encoding)
    if enc not in _ASCII_COMPATIBLE and not enc.startswith(("iso8859", "cp", "latin")):
        yield from read_lines(path, encoding=enc, what=what)
        return
    if str(path) == "-" and not hasattr(sys.stdin, "buffer"):  # a text stream put in place of stdin (tests)
        yield from split_lines(sys.stdin.read())
        return
    fh = _open_binary(path, what)
    source = _display(path)
    try:
        offset = 0
        for lineno, raw in enumerate(fh, 1):
            try:
                line = raw.decode(enc)
            except UnicodeDecodeError as exc:
                raise _decode_error(source, raw, exc, enc, lineno, offset) from None
            if lineno == 1 and line.startswith("\ufeff"):
                line = line[1:]
            offset += len(raw)
            if line.endswith("\n"):
                line = line[:-2] if line.endswith("\r\n") else line[:-1]
            yield line
    finally:
        if fh is not sys.stdin.buffer:
            fh.close()


def count_lines(path: str | os.PathLike) -> int | None:
    """Number of lines of a regular file (for progress bars), or None for stdin/special files."""
    if str(path) == "-" or not Path(path).is_file():
        return None
    n, last = 0, b"\n"
    with open(path, "rb") as fh:
        while chunk := fh.read(1 << 20):
            n += chunk.count(b"\n")
            last = chunk[-1:]
    return n + (last != b"\n")


# -- same-file protection ------------------------------------------------------------------------------------------
#: argparse destinations that name files a command writes; every other path-valued argument is an input.
OUTPUT_DESTS = ("out", "output", "checkpoint", "html")
#: argparse destinations that name directories a command writes files into (caches)
OUTPUT_DIR_DESTS = ("parse_cache", "cache")


def derived_path(out: str | os.PathLike | None, suffix: str) -> Path | None:
    """``OUT + suffix`` (a checkpoint, a batch folder) beside a regular output file; None when `out` is not
    given or is a stream or device (``-``, ``/dev/null``, ``/dev/stdout``, a FIFO), where nothing may be created.

    >>> derived_path("m.model", ".ckpt"), derived_path("/dev/null", ".ckpt"), derived_path("-", ".ckpt")
    (PosixPath('m.model.ckpt'), None, None)
    """
    if out is None or os.fspath(out) in ("", "-") or is_special_output(out):
        return None
    return Path(os.fspath(out) + suffix)


def required_derived_path(out: str | os.PathLike | None, suffix: str, message: str, hint: str) -> Path:
    """`derived_path` for a run that keeps its finished parts there and cannot go on without it: an InputError
    (`message`, `hint`) when `out` is a stream or device."""
    path = derived_path(out, suffix)
    if path is None:
        raise InputError(message, hint=hint)
    return path


def writes_stdout(path: str | os.PathLike | None) -> bool:
    """True when writing `path` writes this process's stdout (``-``, ``/dev/stdout``, ``/dev/fd/1``, or a device
    or FIFO that stdout is also connected to)."""
    if path is None or isinstance(path, bool):
        return False
    s = os.fspath(path)
    if s == "-":
        return True
    if not is_special_output(s):
        return False
    try:
        a, b = os.stat(s), os.fstat(sys.stdout.fileno())
    except (OSError, ValueError, AttributeError, io.UnsupportedOperation):
        return s in ("/dev/stdout", "/dev/fd/1", "/proc/self/fd/1")
    return (a.st_dev, a.st_ino) == (b.st_dev, b.st_ino) and not stat.S_ISCHR(a.st_mode) or s in (
        "/dev/stdout", "/dev/fd/1", "/proc/self/fd/1")


def _identity(path: str | os.PathLike) -> tuple[int, int] | None:
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return None
    if not stat.S_ISREG(st.st_mode):
        return None  # devices, FIFOs, directories: writing there never destroys an input file
    return st.st_dev, st.st_ino


def _other_path(name: str) -> str:
    if name.startswith("--"):
        return f"give {name} another path"
    return f"{name} is derived from --out: give --out another path" + (
        " or name the checkpoint with --checkpoint FILE" if "checkpoint" in name else "")


def _inside(path: str, folder: str) -> bool:
    """True if `path` is `folder` or lies under it (symlinks resolved)."""
    p, f = os.path.realpath(path), os.path.realpath(folder)
    return p == f or p.startswith(f.rstrip(os.sep) + os.sep)


def check_distinct(outputs: dict[str, Any], inputs: dict[str, Any], *,
                   tree_suffixes: tuple[str, ...] = (".mrg", ".ptb", ".tree"),
                   output_dirs: dict[str, Any] | None = None, cache_dirs: dict[str, Any] | None = None) -> None:
    """Refuse an output that is the same file as an input (same inode, so links and `./x` vs `x` count) or as
    another output (same inode, or the same path when neither exists yet), or an existing tree file inside an input
    directory.  `output_dirs` are work folders the command writes into and removes when done (``OUT.batches/``):
    each must not be an existing file, and no input or output may lie inside it; `cache_dirs` (``--parse-cache``)
    only add files named by a hash, so they must not be an existing file.  Values may be paths or lists of paths."""

    def paths(value: Any) -> list[str]:
        if value is None or isinstance(value, bool):
            return []
        if isinstance(value, (list, tuple)):
            return [p for v in value for p in paths(v)]
        if isinstance(value, (str, os.PathLike)):
            s = os.fspath(value)
            return [s] if s and s != "-" and "\n" not in s else []
        return []

    seen: dict[tuple[int, int], str] = {}
    for name, value in inputs.items():
        for p in paths(value):
            ident = _identity(p)
            if ident is not None:
                seen.setdefault(ident, f"{name} {p}")
    written: dict[Any, str] = {}
    for name, value in outputs.items():
        for p in paths(value):
            ident = _identity(p)
            if ident is None:
                if os.path.lexists(p) and not os.path.islink(p) or is_special_output(p):
                    continue  # a device, FIFO or directory (the writer reports a directory)
                ident = ("path", os.path.realpath(p))  # not written yet: the same path is the same file
            if ident in seen:
                raise InputError(f"{name} {p} is the same file as {seen[ident]}: writing it would destroy that input",
                                 hint=_other_path(name))
            if ident in written:
                raise InputError(f"{name} {p} is the same file as {written[ident]}",
                                 hint="give each output its own path")
            written[ident] = f"{name} {p}"
    for name, value in inputs.items():
        for p in paths(value):
            if not os.path.isdir(p):
                continue
            for oname, ovalue in outputs.items():
                for o in paths(ovalue):
                    if (o.endswith(tree_suffixes) and os.path.isfile(o)
                            and os.path.samefile(os.path.dirname(os.path.abspath(o)), p)):
                        raise InputError(f"{oname} {o} is a tree file inside {name} {p}: writing it would change "
                                         "the input", hint=f"write {oname} somewhere else")
    for dname, dvalue in [*(output_dirs or {}).items(), *(cache_dirs or {}).items()]:
        for d in paths(dvalue):
            if os.path.lexists(d) and not os.path.isdir(d):
                raise InputError(f"{dname} {d} is a file, not a folder: the command writes files into it",
                                 hint=f"move that file, or give {dname} another path")
    for dname, dvalue in (output_dirs or {}).items():
        for d in paths(dvalue):
            for kind, group in (("input", inputs), ("output", outputs)):
                for name, value in group.items():
                    for p in paths(value):
                        if os.path.lexists(p) and _inside(p, d):
                            raise InputError(f"{kind} {name} {p} is inside {dname} {d}, which the command writes "
                                             "into (and may remove)", hint=_other_path(dname))


def check_args_distinct(args: argparse.Namespace, outputs: Iterable[str] = OUTPUT_DESTS, *,
                        derived: dict[str, Any] | None = None, derived_dirs: dict[str, Any] | None = None,
                        output_dirs: Iterable[str] = OUTPUT_DIR_DESTS) -> None:
    """`check_distinct` over a parsed command line: the `outputs` destinations (plus the `derived` files and
    `derived_dirs` folders the command makes from them, by label) against every other argument."""
    outputs, output_dirs = tuple(outputs), tuple(output_dirs)
    values = {k: v for k, v in vars(args).items() if not k.startswith("_")}
    flag = lambda k: "--" + k.replace("_", "-")  # noqa: E731
    outs = {flag(k): v for k, v in values.items() if k in outputs}
    outs.update({k: v for k, v in (derived or {}).items() if v is not None})
    caches = {flag(k): v for k, v in values.items() if k in output_dirs}
    dirs = {k: v for k, v in (derived_dirs or {}).items() if v is not None}
    ins = {flag(k): v for k, v in values.items() if k not in outputs and k not in output_dirs}
    check_distinct(outs, ins, output_dirs=dirs, cache_dirs=caches)


# -- writing ---------------------------------------------------------------------------------------------------------
def is_special_output(path: str | os.PathLike) -> bool:
    """True for outputs that must be streamed to, never replaced: ``-``, devices, FIFOs, sockets, and paths
    that go through /dev or /proc (``/dev/stdout``, ``/dev/fd/1``, ``/proc/self/fd/1``)."""
    s = os.fspath(path)
    if s == "-":
        return True
    try:
        st = os.stat(s)
    except OSError:
        st = None
    if st is not None and not stat.S_ISREG(st.st_mode):
        return not stat.S_ISDIR(st.st_mode)
    absolute = os.path.abspath(s)
    real = os.path.realpath(s)
    return absolute.startswith(("/dev/", "/proc/")) or real.startswith(("/dev/", "/proc/"))


def _umask() -> int:
    with _LOCK:
        mask = os.umask(0)
        os.umask(mask)
    return mask


_LOCK = threading.Lock()
_LIVE_TEMPS: set[str] = set()


def _sigterm_cleanup(signum, frame):  # pragma: no cover - exercised by a subprocess test
    for tmp in list(_LIVE_TEMPS):
        try:
            os.unlink(tmp)
        except OSError:
            pass
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    os.kill(os.getpid(), signal.SIGTERM)


@contextmanager
def _temp_guard(tmp: str):
    """While `tmp` exists: a SIGTERM with the default action removes it before the process dies."""
    _LIVE_TEMPS.add(tmp)
    installed = False
    if threading.current_thread() is threading.main_thread():
        try:
            if signal.getsignal(signal.SIGTERM) is signal.SIG_DFL:
                signal.signal(signal.SIGTERM, _sigterm_cleanup)
                installed = True
        except ValueError:
            pass
    try:
        yield
    finally:
        _LIVE_TEMPS.discard(tmp)
        if installed and signal.getsignal(signal.SIGTERM) is _sigterm_cleanup:
            signal.signal(signal.SIGTERM, signal.SIG_DFL)


def _pid_alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError):
        return True
    return True


def clean_stale_temporaries(path: str | os.PathLike, *, legacy_age: float = 600.0) -> list[Path]:
    """Remove temporaries of earlier atomic writes to `path` whose process is gone (killed with SIGKILL).

    Current names are ``.NAME.PID.XXXX.tmp``; older treegram versions wrote ``.NAME.XXXX.tmp``, which are removed
    once they are `legacy_age` seconds old."""
    path = Path(path)
    removed = []
    prefix = f".{path.name}."
    try:
        entries = list(os.scandir(path.parent if str(path.parent) else "."))
    except OSError:
        return removed
    for entry in entries:
        name = entry.name
        if not (name.startswith(prefix) and name.endswith(".tmp")) or not entry.is_file(follow_symlinks=False):
            continue
        middle = name[len(prefix):-4]
        pid_text = middle.split(".", 1)[0]
        stale = False
        if "." in middle and pid_text.isdigit():
            stale = not _pid_alive(int(pid_text))
        else:
            try:
                stale = time.time() - entry.stat(follow_symlinks=False).st_mtime > legacy_age
            except OSError:
                stale = False
        if stale:
            try:
                os.unlink(entry.path)
                removed.append(Path(entry.path))
            except OSError:
                pass
    return removed


def write_failed(path: str | os.PathLike, exc: OSError) -> InputError:
    """A failed write (disk full, quota, I/O error) as one error that names the file being written."""
    import errno

    where = "<stdout>" if os.fspath(path) == "-" else os.fspath(path)
    if exc.errno in (errno.ENOSPC, errno.EDQUOT):
        return InputError(f"{where}: cannot write, the disk is full ({exc.strerror})",
                          hint="free some space or write somewhere else; the file was left as it was before")
    return InputError(f"{where}: cannot write ({exc.strerror or exc})", hint="check the path, the disk and permissions")


@contextmanager
def _writing(path: str | os.PathLike):
    """Turn an OSError without a file name (ENOSPC from write/flush/fsync) into an error naming `path`."""
    try:
        yield
    except BrokenPipeError:
        raise
    except OSError as exc:
        if exc.filename is not None:
            raise
        raise write_failed(path, exc) from None


def _stream_write(path: str | os.PathLike, data: bytes) -> None:
    with _writing(path):
        if os.fspath(path) == "-":
            sys.stdout.flush()
            sys.stdout.buffer.write(data)
            sys.stdout.buffer.flush()
            return
        with open(path, "wb") as fh:  # a device or FIFO: write through, never replace
            fh.write(data)


def atomic_write_bytes(path: str | os.PathLike, data: bytes) -> None:
    """Write `data` to `path`: atomically for a regular file (normal permissions), streamed for a special file."""
    if is_special_output(path):
        _stream_write(path, data)
        return
    path = Path(os.path.realpath(path)) if os.path.islink(path) else Path(path)  # replace a link's target
    if path.is_dir():
        raise InputError(f"{path}: is a directory", hint="give a file name to write")
    path.parent.mkdir(parents=True, exist_ok=True)
    clean_stale_temporaries(path)
    try:
        mode = stat.S_IMODE(os.stat(path).st_mode)
    except OSError:
        mode = 0o666 & ~_umask()
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.{os.getpid()}.", suffix=".tmp", dir=path.parent)
    with _temp_guard(tmp), _writing(path):
        try:
            with os.fdopen(fd, "wb") as fh:
                fh.write(data)
                fh.flush()
                os.fchmod(fh.fileno(), mode)
                os.fsync(fh.fileno())
            os.replace(tmp, path)
        except BaseException:
            try:
                os.unlink(tmp)
            except FileNotFoundError:
                pass
            raise


def atomic_write_text(path: str | os.PathLike, text: str, *, encoding: str = DEFAULT_ENCODING) -> None:
    atomic_write_bytes(path, text.encode(encoding))


def write_output(path: str | os.PathLike, text: str, *, encoding: str = DEFAULT_ENCODING) -> None:
    """A command's whole output: ``-`` is stdout, special files are streamed, regular files written atomically."""
    if os.fspath(path) == "-":
        with _writing(path):
            sys.stdout.write(text)
            sys.stdout.flush()
        return
    atomic_write_text(path, text, encoding=encoding)


class LineSink:
    """Where a streaming batch command writes one result line per input line (see `open_output`)."""

    def __init__(self, fh: IO[str], *, done: int = 0, flush_every: int = 1, close: bool = True,
                 path: str | os.PathLike = "-"):
        self._fh = fh
        self.path = path
        self.done = done  # lines already present (resume)
        self.written = 0
        self._flush_every = max(1, flush_every)
        self._close = close

    def write_line(self, line: str) -> None:
        if "\n" in line:
            raise ValueError("a result line contains a newline")
        with _writing(self.path):
            self._fh.write(line + "\n")
            self.written += 1
            if self.written % self._flush_every == 0:
                self._fh.flush()

    def write(self, text: str) -> None:
        with _writing(self.path):
            self._fh.write(text)

    def flush(self) -> None:
        with _writing(self.path):
            self._fh.flush()

    def close(self) -> None:
        try:
            with _writing(self.path):
                self._fh.flush()
        except BaseException:
            if self._close:
                try:
                    self._fh.close()  # flushes again, fails again: the first error is the one to report
                except OSError:
                    pass
            raise
        if self._close:
            with _writing(self.path):
                self._fh.close()


def _complete_lines(path: Path) -> tuple[int, int]:
    """(number of complete lines, byte length of them) in an existing output file."""
    n = end = pos = 0
    with open(path, "rb") as fh:
        while chunk := fh.read(1 << 20):
            k = chunk.count(b"\n")
            if k:
                n += k
                end = pos + chunk.rindex(b"\n") + 1
            pos += len(chunk)
    return n, end


@contextmanager
def open_output(path: str | os.PathLike, *, resume: bool = False, encoding: str = DEFAULT_ENCODING,
                flush_every: int = 1) -> Iterator[LineSink]:
    """A line sink for a streaming batch: results appear as they are produced, so a killed run keeps them.

    ``-`` and special files are streamed.  A regular file is truncated (``resume=False``) or, with ``resume=True``,
    kept up to its last complete line (a half-written last line is cut) and appended to; `sink.done` says how many
    input lines to skip.  The file keeps its permissions (a new one gets ``0666 & ~umask``)."""
    s = os.fspath(path)
    if s == "-":
        if resume:
            raise InputError("--resume needs --out FILE", hint="resume continues a file written by an earlier run")
        sys.stdout.flush()
        sink = LineSink(sys.stdout, flush_every=flush_every, close=False)
        try:
            yield sink
        finally:
            sink.flush()
        return
    if is_special_output(s):
        if resume:
            raise InputError(f"--resume: {s} is not a regular file", hint="resume continues a file written earlier")
        fh = open(s, "w", encoding=encoding, newline="\n")
        sink = LineSink(fh, flush_every=flush_every, path=s)
    else:
        p = Path(s)
        if p.is_dir():
            raise InputError(f"{p}: is a directory", hint="give a file name to write")
        p.parent.mkdir(parents=True, exist_ok=True)
        done = 0
        if resume and p.is_file():
            done, end = _complete_lines(p)
            fh = open(p, "r+", encoding=encoding, newline="\n")
            fh.truncate(end)
            fh.seek(end)
        else:
            fh = open(p, "w", encoding=encoding, newline="\n")
        sink = LineSink(fh, done=done, flush_every=flush_every, path=s)
    try:
        yield sink
    finally:
        sink.close()


# -- JSON and bundles ---------------------------------------------------------------------------------------------
def save_json(path: str | os.PathLike, obj: Any) -> None:
    atomic_write_text(path, json.dumps(obj, ensure_ascii=False, indent=1) + "\n")


def load_json(path: str | os.PathLike) -> Any:
    path = Path(path)
    if not path.exists():
        raise ModelFileError(f"{path}: file not found", hint="check the path")
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError, RecursionError) as exc:
        raise ModelFileError(f"{path}: not valid JSON ({type(exc).__name__})",
                             hint="the file is corrupt; re-create it") from None


def save_bundle(path: str | os.PathLike, meta: dict[str, Any], arrays: dict[str, np.ndarray]) -> None:
    """One file holding JSON metadata plus numpy arrays (an NPZ with a `__meta__.json` member)."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("__meta__.json", json.dumps(meta, ensure_ascii=False))
        for name, arr in arrays.items():
            arr = np.asarray(arr)
            if arr.dtype == object:
                raise TypeError(f"array {name!r} has dtype object; store strings in meta instead")
            member = io.BytesIO()
            np.lib.format.write_array(member, arr, allow_pickle=False)
            zf.writestr(f"{name}.npy", member.getvalue())
    atomic_write_bytes(path, buf.getvalue())


def _check_sizes(path: Path, zf: zipfile.ZipFile, file_size: int) -> None:
    allowed = MAX_FREE_BYTES + MAX_RATIO * file_size
    total = 0
    for info in zf.infolist():
        limit = MAX_META_BYTES if info.filename == "__meta__.json" else MAX_MEMBER_BYTES
        if info.file_size > limit:
            raise ModelFileError(f"{path}: member {info.filename!r} would expand to {info.file_size} bytes "
                                 "(refused before decompressing)",
                                 hint="the file is corrupt or malicious; re-create it with `treegram train`")
        total += info.file_size
    if total > allowed:
        raise ModelFileError(f"{path}: its {file_size} bytes would expand to {total} bytes (more than "
                             f"{MAX_RATIO}:1; refused before decompressing)",
                             hint="the file is corrupt or malicious; re-create it with `treegram train`")


def _read_member(path: Path, zf: zipfile.ZipFile, info: zipfile.ZipInfo) -> bytes:
    """Read one member, stopping if it inflates beyond its declared size (a lying zip directory)."""
    out = bytearray()
    with zf.open(info) as fh:
        while chunk := fh.read(1 << 20):
            out += chunk
            if len(out) > info.file_size:
                raise ModelFileError(f"{path}: member {info.filename!r} is larger than its header says",
                                     hint="the file is corrupt; re-create it")
    return bytes(out)


def _npy_header(path: Path, zf: zipfile.ZipFile, info: zipfile.ZipInfo) -> tuple[tuple, bool, np.dtype, int]:
    """``(shape, fortran_order, dtype, header bytes)`` of an NPY member, read from its first bytes only."""
    with zf.open(info) as fh:
        head = fh.read(min(info.file_size, 70_000))  # an NPY header is at most 65,535 bytes plus its preamble
    buf = io.BytesIO(head)
    version = np.lib.format.read_magic(buf)
    read = {(1, 0): np.lib.format.read_array_header_1_0, (2, 0): np.lib.format.read_array_header_2_0}.get(version)
    if read is None:
        raise ModelFileError(f"{path}: array {info.filename!r} has an unknown NPY version {version}",
                             hint="the file is corrupt; re-create it")
    shape, fortran, dtype = read(buf, max_header_size=70_000)
    return shape, fortran, dtype, buf.tell()


def _read_npy(path: Path, zf: zipfile.ZipFile, info: zipfile.ZipInfo) -> np.ndarray:
    """One NPY member, its header's claimed shape checked against the member's size *before* anything is
    allocated (a header claiming terabytes is a clean error, not an allocation attempt)."""
    shape, _fortran, dtype, header = _npy_header(path, zf, info)
    if dtype.hasobject:
        raise ModelFileError(f"{path}: array {info.filename!r} holds Python objects (pickle), which are refused",
                             hint="the file is corrupt or malicious; re-create it with `treegram train`")
    count = 1
    for n in shape:  # Python ints: no overflow whatever the header claims
        if not isinstance(n, int) or n < 0:
            raise ModelFileError(f"{path}: array {info.filename!r} has a bad shape {shape}",
                                 hint="the file is corrupt; re-create it")
        count *= n
    need = count * dtype.itemsize
    if header + need != info.file_size:
        raise ModelFileError(f"{path}: array {info.filename!r} claims shape {shape} of {dtype} ({need:,} bytes) "
                             f"but the member holds {max(info.file_size - header, 0):,} bytes of data "
                             "(refused before allocating)", hint="the file is corrupt; re-create it")
    return np.lib.format.read_array(io.BytesIO(_read_member(path, zf, info)), allow_pickle=False)


def load_bundle(path: str | os.PathLike) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
    path = Path(path)
    if not path.exists():
        raise ModelFileError(f"{path}: file not found", hint="check the path, or train a model first")
    if path.is_dir():
        raise ModelFileError(f"{path}: is a directory, not a model file", hint="give the model file")
    try:
        with zipfile.ZipFile(path) as zf:
            _check_sizes(path, zf, path.stat().st_size)
            infos = {i.filename: i for i in zf.infolist()}
            meta = json.loads(_read_member(path, zf, infos["__meta__.json"]).decode("utf-8"))
            if not isinstance(meta, dict):
                raise ModelFileError(f"{path}: metadata is a {type(meta).__name__}, not an object",
                                     hint="the file is corrupt; re-create it")
            arrays = {}
            for name, info in infos.items():
                if name.endswith(".npy"):
                    arrays[name[:-4]] = _read_npy(path, zf, info)
    except (zipfile.BadZipFile, zipfile.LargeZipFile, KeyError, ValueError, json.JSONDecodeError, EOFError,
            UnicodeDecodeError, RecursionError, NotImplementedError, zlib.error, OSError) as exc:
        if isinstance(exc, OSError) and not isinstance(exc, (EOFError,)) and exc.errno is not None:
            raise ModelFileError(f"{path}: cannot read ({exc.strerror})", hint="check the file's permissions") from None
        raise ModelFileError(f"{path}: not a treegram model file or corrupt ({type(exc).__name__}: {exc})"[:300],
                             hint="re-create the file with `treegram train`") from None
    return meta, arrays
