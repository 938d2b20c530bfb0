"""The shipped default compression model: what `treegram compress` and `treegram eval-compression` use without
``--model``.

One place decides where it lives: the package data file ``treegram/compression/data/default-compressor.model``
(source tree: ``core/compression/data/``), a model file like any other (`treegram.formalism.load_model`), with its
parser embedded.  While no model is installed there, asking for the default is one clear error that says to pass
``--model``.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

from treegram.errors import InputError

__all__ = ["DEFAULT_MODEL_FILE", "default_model", "default_model_path", "load_compressor"]

DEFAULT_MODEL_FILE = "default-compressor.model"


def default_model_path() -> Path | None:
    """The installed default compression model's file, or None when this installation has none."""
    from importlib.resources import files

    try:
        path = Path(str(files("treegram.compression") / "data" / DEFAULT_MODEL_FILE))
    except (ModuleNotFoundError, TypeError):  # not an importable package layout (e.g. a zip import)
        return None
    return path if path.is_file() else None


@lru_cache(maxsize=1)
def _load(path: str, mtime_ns: int):
    from treegram.formalism import load_model

    return load_model(path)


def default_model():
    """The shipped default compression model (loaded once per process)."""
    path = default_model_path()
    if path is None:
        raise InputError("no default compression model is installed with this treegram",
                         hint="pass --model FILE (a model from `treegram train stsg` or `treegram train channel`)")
    return _load(str(path), path.stat().st_mtime_ns)


def load_compressor(path: str | Path | None):
    """The model at `path` (None: the shipped default), checked to be a compressor; returns (model, its path)."""
    from treegram.compression.compressor import is_compressor
    from treegram.formalism import load_model

    if path is None:
        model, path = default_model(), default_model_path()
    else:
        model = load_model(path)
    if not is_compressor(model):
        raise InputError(f"{path}: a {model.formalism} model cannot compress sentences",
                         hint="train one with `treegram train stsg` or `treegram train channel`")
    return model, Path(path)
