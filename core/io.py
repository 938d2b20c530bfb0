"""Atomic, pickle-free persistence: JSON for metadata, NPZ for arrays.

Writes go to a temporary file in the target directory and are moved into place with `os.replace`, so a crash
or a kill mid-write never leaves a truncated model or checkpoint behind.
"""

from __future__ import annotations

import io
import json
import os
import tempfile
import zipfile
from pathlib import Path
from typing import Any

import numpy as np

from treegram.errors import ModelFileError


def atomic_write_bytes(path: str | os.PathLike, data: bytes) -> None:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise


def atomic_write_text(path: str | os.PathLike, text: str) -> None:
    atomic_write_bytes(path, text.encode("utf-8"))


def save_json(path: str | os.PathLike, obj: Any) -> None:
    atomic_write_text(path, json.dumps(obj, ensure_ascii=False, indent=1) + "\n")


def load_json(path: str | os.PathLike) -> Any:
    path = Path(path)
    if not path.exists():
        raise ModelFileError(f"{path}: file not found", hint="check the path")
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise ModelFileError(f"{path}: not valid JSON ({exc})", hint="the file is corrupt; re-create it") from None


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


def load_bundle(path: str | os.PathLike) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
    path = Path(path)
    if not path.exists():
        raise ModelFileError(f"{path}: file not found", hint="check the path, or train a model first")
    try:
        with zipfile.ZipFile(path) as zf:
            meta = json.loads(zf.read("__meta__.json").decode("utf-8"))
            arrays = {}
            for name in zf.namelist():
                if name.endswith(".npy"):
                    arrays[name[:-4]] = np.lib.format.read_array(io.BytesIO(zf.read(name)), allow_pickle=False)
    except (zipfile.BadZipFile, KeyError, ValueError, json.JSONDecodeError, EOFError) as exc:
        raise ModelFileError(f"{path}: not a treegram model file or corrupt ({exc})",
                             hint="re-create the file with `treegram train`") from None
    return meta, arrays
