"""Shared benchmark plumbing: locating ../shared/data and writing a marked section of RESULTS.md atomically."""

from __future__ import annotations

import platform
import re
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared" / "data"
RESULTS = ROOT / "benchmarks" / "RESULTS.md"
ARCHIVE = ROOT / "benchmarks" / "RESULTS-archive.md"  # superseded sections (benchmarks/results_index.py --archive)


def require_shared() -> Path:
    if not SHARED.is_dir():
        sys.exit(f"this benchmark needs the shared corpora at {SHARED}")
    return SHARED


def machine_line() -> str:
    import numpy

    return (f"{time.strftime('%Y-%m-%d')}, Python {platform.python_version()}, numpy {numpy.__version__}, "
            f"{platform.machine()}, single process")


def markdown_table(columns: list[str], rows: list[list]) -> str:
    def fmt(v):
        return f"{v:.2f}" if isinstance(v, float) else str(v)

    out = ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    out += ["| " + " | ".join(fmt(v) for v in row) + " |" for row in rows]
    return "\n".join(out)


def write_section(name: str, body: str) -> None:
    """Replace (or append) the section between <!-- name:begin --> and <!-- name:end --> in RESULTS.md (in
    RESULTS-archive.md when the section was archived there)."""
    from treegram.io import atomic_write_text

    begin, end = f"<!-- {name}:begin -->", f"<!-- {name}:end -->"
    target = RESULTS
    if ARCHIVE.exists() and begin in ARCHIVE.read_text(encoding="utf-8"):
        target = ARCHIVE
    text = target.read_text(encoding="utf-8") if target.exists() else "# Benchmark results\n"
    block = f"{begin}\n{body.rstrip()}\n{end}"
    if begin in text:
        text = re.sub(re.escape(begin) + ".*?" + re.escape(end), lambda _: block, text, flags=re.S)
    else:
        text = text.rstrip() + "\n\n" + block + "\n"
    atomic_write_text(target, text)


def stamped_run(out: Path, args: list[str], run) -> dict:
    """`run()` (a command that writes `out`, returning a dict of its figures, e.g. seconds) unless the same `args`
    already wrote `out`: then the figures recorded in the `.cmd.json` stamp beside it, so a benchmark cut short
    resumes after its finished trainings.  The stamp keeps `args` and the figures."""
    import json

    stamp = out.with_name(out.name + ".cmd.json")
    if out.exists() and stamp.exists():
        done = json.loads(stamp.read_text(encoding="utf-8"))
        if done["args"] == args:
            print(f"reusing {out} ({', '.join(f'{k} {v}' for k, v in done.items() if k != 'args')})", flush=True)
            return done
    figures = run()
    stamp.write_text(json.dumps({"args": args, **figures}), encoding="utf-8")
    return {"args": args, **figures}


def kill9_when_done(cmd: list[str], folder: Path, count: int, poll: float = 0.1) -> dict[str, str]:
    """Start `cmd` in a session of its own, SIGKILL its whole process group once `folder` holds `count` finished
    `NNN.json` files (or it exits), and return {file name: sha1} of the files it left: the resume benchmarks'
    kill -9."""
    import hashlib
    import os
    import signal
    import subprocess

    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    while True:
        done = sorted(folder.glob("[0-9]*.json")) if folder.is_dir() else []
        if len(done) >= count or proc.poll() is not None:
            break
        time.sleep(poll)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    time.sleep(1.0)
    return {f.name: hashlib.sha1(f.read_bytes()).hexdigest() for f in folder.glob("[0-9]*.json")}


def module_at(ref: str, path: str, name: str, tmp: Path):
    """The module `path` (repository-relative) as it was at git `ref`, imported under `name` from a copy in `tmp`:
    the baseline side of a same-process old-vs-new speed comparison (numba kernels compile from the copy)."""
    import importlib.util
    import subprocess

    src = subprocess.run(["git", "-C", str(ROOT), "show", f"{ref}:{path}"], check=True, capture_output=True,
                         text=True).stdout
    f = Path(tmp) / f"{name}.py"
    f.write_text(src, encoding="utf-8")
    spec = importlib.util.spec_from_file_location(name, f)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod
