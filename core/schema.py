"""Small declarative schemas for what treegram reads back from disk: model metadata, checkpoints, arrays.

A loader states what it expects and calls `validate` once, before using anything::

    from treegram.schema import Arr, Dict, Float, Int, Str, validate

    META = Dict({"settings": Dict({"alpha": Float(min=0), "horizontal": Int(min=-1)}),
                 "labels": List(Str(), min_len=1)}, extra=True)
    validate(meta, META, "meta")                           # raises SchemaError naming the field
    validate(arrays, Dict({"counts": Arr("iu", ndim=1, min=0)}), "arrays")

Specs are plain frozen objects: `Int`, `Float`, `Bool`, `Str`, `Null`, `AnyOf` (and `Opt(x)` = x or null),
`List`, `Tuple`, `Dict` (named fields; `extra=True` allows more keys; `values=` types the values of an open
mapping), `Arr` (numpy arrays: kind, ndim, shape with named dimensions that must agree, value range, allowed
values) and `Any`.  `SchemaError` is a `ValueError`, so `treegram.formalism.load_model` reports it as a corrupt
model file in one line; `check_file` turns it into a `ModelFileError` naming the file.
"""

from __future__ import annotations

import math
from typing import Any as _Any

import attrs
import numpy as np

from treegram.errors import ModelFileError

__all__ = ["COMMON_OPTIONAL", "SCALAR", "SETTINGS", "Any", "AnyOf", "Arr", "Bool", "Dict", "Float", "Int", "List", "Null", "Opt", "SchemaError", "Str",
           "Tuple", "check_file", "validate"]


class SchemaError(ValueError):
    """A value read from a file does not have the expected type, range, shape or count."""


def _kind(value: _Any) -> str:
    if isinstance(value, np.ndarray):
        return f"an array of shape {value.shape} and dtype {value.dtype}"
    text = repr(value)
    return f"{type(value).__name__} {text[:40] + '...' if len(text) > 40 else text}"


class Spec:
    def check(self, value: _Any, where: str, dims: dict[str, int]) -> None:  # pragma: no cover - abstract
        raise NotImplementedError


@attrs.frozen
class Any(Spec):
    def check(self, value, where, dims):
        return None


@attrs.frozen
class Null(Spec):
    def check(self, value, where, dims):
        if value is not None:
            raise SchemaError(f"{where}: expected null, got {_kind(value)}")


@attrs.frozen
class Bool(Spec):
    def check(self, value, where, dims):
        if not isinstance(value, (bool, np.bool_)):
            raise SchemaError(f"{where}: expected true/false, got {_kind(value)}")


@attrs.frozen
class Int(Spec):
    min: int | None = None
    max: int | None = None

    def check(self, value, where, dims):
        if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
            raise SchemaError(f"{where}: expected a whole number, got {_kind(value)}")
        if self.min is not None and value < self.min:
            raise SchemaError(f"{where}: {value} is below the minimum {self.min}")
        if self.max is not None and value > self.max:
            raise SchemaError(f"{where}: {value} is above the maximum {self.max}")


@attrs.frozen
class Float(Spec):
    """A number (ints accepted); finite unless `finite=False`; `min`/`max` inclusive, `gt`/`lt` exclusive."""

    min: float | None = None
    max: float | None = None
    gt: float | None = None
    lt: float | None = None
    finite: bool = True

    def check(self, value, where, dims):
        if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.integer, np.floating)):
            raise SchemaError(f"{where}: expected a number, got {_kind(value)}")
        v = float(value)
        if math.isnan(v) or (self.finite and math.isinf(v)):
            raise SchemaError(f"{where}: expected a finite number, got {value}")
        if self.min is not None and v < self.min:
            raise SchemaError(f"{where}: {value} is below the minimum {self.min}")
        if self.max is not None and v > self.max:
            raise SchemaError(f"{where}: {value} is above the maximum {self.max}")
        if self.gt is not None and not v > self.gt:
            raise SchemaError(f"{where}: {value} must be greater than {self.gt}")
        if self.lt is not None and not v < self.lt:
            raise SchemaError(f"{where}: {value} must be smaller than {self.lt}")


@attrs.frozen
class Str(Spec):
    choices: tuple[str, ...] | None = attrs.field(default=None, converter=lambda c: None if c is None else tuple(c))
    nonempty: bool = False

    def check(self, value, where, dims):
        if not isinstance(value, str):
            raise SchemaError(f"{where}: expected a string, got {_kind(value)}")
        if self.nonempty and not value:
            raise SchemaError(f"{where}: empty string")
        if self.choices is not None and value not in self.choices:
            raise SchemaError(f"{where}: {value!r} is not one of {', '.join(map(repr, self.choices))}")


@attrs.frozen
class AnyOf(Spec):
    options: tuple[Spec, ...] = attrs.field(converter=tuple)

    def check(self, value, where, dims):
        errors = []
        for option in self.options:
            try:
                option.check(value, where, dict(dims))
                return
            except SchemaError as exc:
                errors.append(str(exc).removeprefix(where + ": "))
        raise SchemaError(f"{where}: " + " or ".join(errors))


def Opt(spec: Spec) -> Spec:  # noqa: N802 - reads like a type
    """`spec` or null."""
    return AnyOf((Null(), spec))


def _count(value: int, spec: int | str | None, where: str, dims: dict[str, int], what: str) -> None:
    if spec is None:
        return
    if isinstance(spec, str):
        if spec in dims and dims[spec] != value:
            raise SchemaError(f"{where}: {what} {value} does not match {spec} = {dims[spec]} elsewhere in the file")
        dims.setdefault(spec, value)
    elif value != spec:
        raise SchemaError(f"{where}: {what} {value}, expected {spec}")


@attrs.frozen
class List(Spec):
    """A JSON list; `length` may name a dimension (a string) that other fields must agree with."""

    item: Spec = Any()
    min_len: int = 0
    max_len: int | None = None
    length: int | str | None = None

    def check(self, value, where, dims):
        if not isinstance(value, (list, tuple)):
            raise SchemaError(f"{where}: expected a list, got {_kind(value)}")
        if len(value) < self.min_len:
            raise SchemaError(f"{where}: {len(value)} entries, expected at least {self.min_len}")
        if self.max_len is not None and len(value) > self.max_len:
            raise SchemaError(f"{where}: {len(value)} entries, expected at most {self.max_len}")
        _count(len(value), self.length, where, dims, "length")
        if isinstance(self.item, Any):
            return
        for i, v in enumerate(value):
            self.item.check(v, f"{where}[{i}]", dims)


@attrs.frozen
class Tuple(Spec):
    items: tuple[Spec, ...] = attrs.field(converter=tuple)

    def check(self, value, where, dims):
        if not isinstance(value, (list, tuple)) or len(value) != len(self.items):
            raise SchemaError(f"{where}: expected a list of {len(self.items)} entries, got {_kind(value)}")
        for i, (spec, v) in enumerate(zip(self.items, value)):
            spec.check(v, f"{where}[{i}]", dims)


@attrs.frozen
class Dict(Spec):
    """A mapping with string keys.  `fields`: required keys; `optional`: keys that may be absent; `extra`: allow
    other keys (typed by `values` if given)."""

    fields: dict[str, Spec] = attrs.field(factory=dict)
    optional: dict[str, Spec] = attrs.field(factory=dict)
    extra: bool = True
    values: Spec | None = None

    def check(self, value, where, dims):
        if not isinstance(value, dict):
            raise SchemaError(f"{where}: expected an object, got {_kind(value)}")
        for key, spec in self.fields.items():
            if key not in value:
                raise SchemaError(f"{where}: missing field {key!r}")
            spec.check(value[key], f"{where}.{key}", dims)
        for key, spec in self.optional.items():
            if key in value:
                spec.check(value[key], f"{where}.{key}", dims)
        for key, v in value.items():
            if not isinstance(key, str):
                raise SchemaError(f"{where}: key {key!r} is not a string")
            if key in self.fields or key in self.optional:
                continue
            if not self.extra:
                raise SchemaError(f"{where}: unexpected field {key!r}")
            if self.values is not None:
                self.values.check(v, f"{where}.{key}", dims)


@attrs.frozen
class Arr(Spec):
    """A numpy array: `kind` (numpy dtype kinds, e.g. "iu" integers, "f" floats, "b" booleans, "U" strings),
    `ndim`, `shape` (ints, None = any, or names of dimensions that must agree across the file), inclusive value
    range `min`/`max`, allowed `values`, and `finite` for floats."""

    kind: str = "iufb"
    ndim: int | None = None
    shape: tuple[int | str | None, ...] | None = attrs.field(default=None,
                                                             converter=lambda s: None if s is None else tuple(s))
    min: float | None = None
    max: float | None = None
    values: tuple | None = attrs.field(default=None, converter=lambda v: None if v is None else tuple(v))
    finite: bool = False

    def check(self, value, where, dims):
        if not isinstance(value, np.ndarray):
            raise SchemaError(f"{where}: expected an array, got {_kind(value)}")
        if value.dtype.kind not in self.kind:
            raise SchemaError(f"{where}: dtype {value.dtype} is not of kind {self.kind!r}")
        ndim = self.ndim if self.ndim is not None else (len(self.shape) if self.shape is not None else None)
        if ndim is not None and value.ndim != ndim:
            raise SchemaError(f"{where}: {value.ndim} dimensions, expected {ndim}")
        if self.shape is not None:
            for axis, (n, want) in enumerate(zip(value.shape, self.shape)):
                _count(n, want, where, dims, f"size {n} of axis {axis}: size")
        if value.size == 0 or value.dtype.kind not in "iufb":
            return
        if self.finite and value.dtype.kind == "f" and not np.isfinite(value).all():
            raise SchemaError(f"{where}: contains NaN or infinite values")
        if self.min is not None:
            lo = value.min()
            if lo < self.min:
                raise SchemaError(f"{where}: value {lo} is below the minimum {self.min}")
        if self.max is not None:
            hi = value.max()
            if hi > self.max:
                raise SchemaError(f"{where}: value {hi} is above the maximum {self.max}")
        if self.values is not None:
            bad = ~np.isin(value, np.asarray(self.values))
            if bad.any():
                raise SchemaError(f"{where}: value {value[bad].flat[0]} is not one of {list(self.values)}")


def validate(value: _Any, spec: Spec, where: str = "value", dims: dict[str, int] | None = None) -> dict[str, int]:
    """Check `value` against `spec`; raises `SchemaError` naming the first bad field.  Returns the named
    dimensions it saw (so a second call, e.g. for the arrays, can check them against the metadata)."""
    dims = {} if dims is None else dims
    spec.check(value, where, dims)
    return dims


def check_file(path, value: _Any, spec: Spec, where: str = "meta", *, what: str = "model",
               dims: dict[str, int] | None = None) -> dict[str, int]:
    """`validate`, reporting a mismatch as a `ModelFileError` naming the file."""
    try:
        return validate(value, spec, where, dims)
    except SchemaError as exc:
        raise ModelFileError(f"{path}: corrupt {what} file ({exc})",
                             hint="re-create it (the file was damaged or edited by hand)") from None


#: Flat settings objects (attrs classes saved with `asdict`): scalar values only.
SCALAR = AnyOf((Null(), Bool(), Int(), Float(finite=False), Str()))
SETTINGS = Dict(values=AnyOf((SCALAR, List(SCALAR))))
#: Fields most saved models share: free-form `info`, the sampler `trace`, the parsing-grammar pruning threshold.
COMMON_OPTIONAL = {"info": Opt(Dict()), "trace": Opt(List(Dict())), "prune_threshold": Float(min=0, max=1),
                   "mpp_samples": Int(min=0)}
