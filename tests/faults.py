"""What the fault-suite files (tests/test_fault_*.py) share: digests of the inputs a case must leave alone, and one
command-line case run in-process with its tally (cases, ok, clean errors, tracebacks, inputs destroyed).  Each file
keeps its own tally dict and its own extra checks (silent wrong outputs) on top of `run_cli`."""

from __future__ import annotations

import hashlib
from pathlib import Path

from treegram.cli.app import main


def digest(paths) -> dict[str, object]:
    """sha256 of every file in `paths` and the listing of every folder (a case must change neither)."""
    out: dict[str, object] = {}
    for p in map(Path, paths):
        if p.is_file():
            out[str(p)] = hashlib.sha256(p.read_bytes()).hexdigest()
        elif p.is_dir():
            out[str(p)] = sorted(str(q) for q in p.rglob("*"))
    return out


def run_cli(tally: dict, argv, inputs=(), capsys=None) -> tuple[int, str, str]:
    """Run `treegram ARGV` in-process: (exit code, stdout, stderr).  A traceback or a changed input is tallied and
    fails the case; otherwise the exit code counts as ok (0) or a clean error."""
    before = digest(inputs)
    tally["cases"] += 1
    try:
        code = main([str(a) for a in argv])
    except SystemExit as exc:  # argparse usage errors: one red line (treegram.cli.app._Parser), exit 2
        code = exc.code
    except BaseException as exc:  # anything escaping main() would be a traceback for the user
        tally["tracebacks"] += 1
        raise AssertionError(f"traceback for {argv}: {type(exc).__name__}: {exc}") from exc
    out, err = capsys.readouterr() if capsys is not None else ("", "")
    if digest(inputs) != before:
        tally["inputs_destroyed"] += 1
        raise AssertionError(f"{argv} changed an input file")
    tally["ok" if code == 0 else "clean_errors"] += 1
    return code, out, err
