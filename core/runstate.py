"""The identity of a streaming run, so `--resume` continues only the run that wrote the output.

`treegram parse`, `generate` and `compress` write their results line by line into ``--out``; ``--resume`` keeps the
complete lines and produces the rest.  That is only right if the rest comes from the same run: the same model file
(by content), the same seed, the same settings.  So, while such a run writes to a regular file ``OUT``, a record
``OUT.run.json`` beside it holds the run's identity (`command_identity`: every option of the command line except
where the output goes and how it is shown, file-valued options by the SHA-256 of their content), sealed with a
checksum (`treegram.schema.seal`).  ``--resume`` compares the new command's identity with it and refuses, naming
the options that differ, when they do not agree; a damaged or edited record is refused too.  The record is removed
when the run finishes, like the batch folders of the cluster runs; an output with no record (a finished run, or one
written by an older treegram) is continued with a note that its identity could not be checked.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from treegram.errors import InputError

__all__ = ["RECORD_SUFFIX", "command_identity", "file_digest", "record_path", "run_record"]

RECORD_SUFFIX = ".run.json"
VERSION = 1
#: options that say where the results go or how they are shown, not what they are
NOT_IDENTITY = frozenset({"out", "resume", "json", "quiet", "verbose", "color", "no_color", "func", "handler",
                          "workers", "scheduler", "batch_size", "keep_batches", "force", "input", "encoding"})


def record_path(out: str | os.PathLike) -> Path:
    out = Path(out)
    return out.with_name(out.name + RECORD_SUFFIX)


def file_digest(path: str | os.PathLike) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        while chunk := fh.read(1 << 20):
            h.update(chunk)
    return h.hexdigest()


def _value(value: Any) -> Any:
    if isinstance(value, (bool, int, float)) or value is None:
        return value
    if isinstance(value, (list, tuple)):
        return [_value(v) for v in value]
    text = os.fspath(value) if isinstance(value, os.PathLike) else str(value)
    if text not in ("", "-") and "\n" not in text and len(text) < 4096:
        try:
            if os.path.isfile(text):
                return {"file_sha256": file_digest(text)}
        except (OSError, ValueError):
            pass
    return text


def command_identity(args: Any, *, ignore: Iterable[str] = ()) -> dict[str, Any]:
    """What makes a run's results what they are: its options (minus `NOT_IDENTITY` and `ignore`), files by
    content."""
    skip = NOT_IDENTITY | set(ignore)
    out = {}
    for key, value in sorted(vars(args).items()):
        if key.startswith("_") or key in skip or callable(value):
            continue
        out[key] = _value(value)
    return out


def _flag(key: str) -> str:
    return key if key == "command" else "--" + key.replace("_", "-")


@contextmanager
def run_record(out: str | os.PathLike | None, identity: dict[str, Any], *, resume: bool,
               note: Callable[[str], None] | None = None) -> Iterator[None]:
    """Around a streaming run into `out`: with `resume`, refuse when the record of the run that wrote `out`
    names another identity; write this run's record; remove it when the run finishes without an error."""
    from treegram.io import is_special_output, save_json
    from treegram.schema import Dict, Int, unseal, seal

    if out is None or os.fspath(out) == "-" or is_special_output(out):
        yield
        return
    out = Path(out)
    rec = record_path(out)
    if resume and out.is_file() and out.stat().st_size > 0:
        if rec.is_file():
            try:
                old = json.loads(rec.read_text(encoding="utf-8"))
            except (OSError, ValueError, RecursionError):
                old = None
            problem = unseal(old, Dict({"version": Int(), "identity": Dict()}), rec.name) if old is not None \
                else "not valid JSON"
            if problem is not None:
                raise InputError(f"--resume: the record of the run that wrote {out} ({rec}) is damaged: {problem}",
                                 hint=f"rerun without --resume to start afresh, or remove {rec} to continue "
                                      "unchecked")
            before = old["identity"]
            differ = [k for k in sorted(set(before) | set(identity)) if before.get(k) != identity.get(k)]
            if differ:
                raise InputError(f"--resume: {out} was written by a run with another "
                                 f"{', '.join(_flag(k) for k in differ)} (recorded in {rec})",
                                 hint="resume with the options (and files) of that run, or drop --resume to "
                                      "start afresh")
        elif note is not None:
            note(f"note: no record of the run that wrote {out} (it finished, or an older treegram wrote it): "
                 "continuing without checking it used the same model, seed and settings")
    save_json(rec, seal({"version": VERSION, "identity": identity}))
    yield  # an exception (or a kill) leaves the record: the output can be resumed by the same run
    try:
        rec.unlink()
    except OSError:
        pass
