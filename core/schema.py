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
values; NaN refused unless `nan=True`) and `Any`; `AllOf` and `Where` (a relation between fields, e.g. a start
label some tree must have) combine them.  `SchemaError` is a `ValueError`, so `treegram.formalism.load_model`
reports it as a corrupt model file in one line; `check_file` turns it into a `ModelFileError` naming the file.

Model files.  Every formalism declares the schema of its model files (`Formalism.model_schema`) as a `Bundle`
(the plugin's metadata and the arrays, checked together), with `Embedded` parts for what it stores inside
(a CFG transform, a coarse PCFG: `treegram.grammar.cfg.cfg_schema`, `treegram.grammar.pcfg.pcfg_schema`).  The
core checks it before a loader sees a file and before `save_model` writes one, so a trainer can never write a
file that a later command refuses.  `settings_schema` derives a flat settings class's schema from its
annotations (real booleans, whole numbers, finite floats), with ranges added per field.

Sealed records.  `seal` adds the SHA-256 of a record's canonical JSON; `unseal` says why a record read back
cannot be reused (edited, damaged, or not matching its schema): the finished batch and chunk files of resumable
runs, the run records of `treegram.runstate`.
"""

from __future__ import annotations

import math
from typing import Any as _Any

import attrs
import numpy as np

from treegram.errors import ModelFileError

__all__ = ["COMMON_OPTIONAL", "SCALAR", "SETTINGS", "AllOf", "Any", "AnyOf", "Arr", "Bool", "Bundle", "CountRows", "Dict", "Float", "Int",
           "Embedded", "List", "LOGP", "Null", "Opt", "PROB", "Prefixed", "SchemaError", "Str", "Tuple", "Where", "check_file", "settings_schema",
           "validate"]


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
    nan: bool = False  # NaN is never a stored number unless a field says so

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
        if not self.nan and value.dtype.kind == "f" and np.isnan(value).any():
            raise SchemaError(f"{where}: contains NaN")
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


@attrs.frozen
class AllOf(Spec):
    """Every one of `specs` (e.g. a type check, then a `Where` relating its fields)."""

    specs: tuple[Spec, ...] = attrs.field(converter=tuple)

    def check(self, value, where, dims):
        for spec in self.specs:
            spec.check(value, where, dims)


@attrs.frozen
class Where(Spec):
    """A relation a type cannot state (a label that must be defined elsewhere in the file, an index below a
    length given by another field): `test(value)` returns None when it holds, else what is wrong.  Used after
    the type checks of the same value (`AllOf((Dict(...), Where(...)))`), so `test` may rely on them."""

    test: _Any  # Callable[[value], str | None]

    def check(self, value, where, dims):
        try:
            problem = self.test(value)
        except SchemaError as exc:  # a test may validate parts itself
            raise SchemaError(f"{where}: {exc}") from None
        if problem:
            raise SchemaError(f"{where}: {problem}")


@attrs.frozen
class Prefixed(Spec):
    """The members of an arrays mapping whose names start with ``prefix.``, the prefix removed, checked against
    `spec` (models embed another model's arrays under a prefix, e.g. ``pcfg.cfg.bin_logp``)."""

    prefix: str
    spec: Spec

    def check(self, value, where, dims):
        if not isinstance(value, dict):
            raise SchemaError(f"{where}: expected an object, got {_kind(value)}")
        n = len(self.prefix) + 1
        self.spec.check({k[n:]: v for k, v in value.items() if k.startswith(self.prefix + ".")},
                        f"{where}[{self.prefix}.*]", {})


@attrs.frozen
class CountRows(Spec):
    """``[[context, [[outcome, count], ...]], ...]`` with string contexts and outcomes and finite counts >= 0: the
    saved form of the back-off count tables (`treegram.compression.syntax.WittenBell`), which can hold millions
    of counts, so it is checked in one tight loop rather than spec by spec."""

    def check(self, value, where, dims):
        if not isinstance(value, list):
            raise SchemaError(f"{where}: expected a list, got {_kind(value)}")
        isfinite = math.isfinite
        for i, row in enumerate(value):
            if type(row) is not list or len(row) != 2 or type(row[0]) is not str or type(row[1]) is not list:
                raise SchemaError(f"{where}[{i}]: expected [context, [[outcome, count], ...]], got {_kind(row)}")
            for j, item in enumerate(row[1]):
                if type(item) is not list or len(item) != 2 or type(item[0]) is not str:
                    raise SchemaError(f"{where}[{i}][1][{j}]: expected [outcome, count], got {_kind(item)}")
                n = item[1]
                if type(n) not in (int, float) or not isfinite(n) or n < 0:
                    raise SchemaError(f"{where}[{i}][1][{j}][1]: expected a finite count >= 0, got {_kind(n)}")


@attrs.frozen
class Bundle(Spec):
    """A whole saved model: ``{"meta": ..., "arrays": ...}`` checked together (named dimensions agree across
    both), then the `parts` that relate the two (e.g. an `Embedded` grammar whose metadata sizes its arrays).
    What a formalism's `model_schema` returns; the core checks it before loading and before writing."""

    meta: Spec = Dict()
    arrays: Spec = Dict()
    parts: tuple[Spec, ...] = attrs.field(default=(), converter=tuple)

    def check(self, value, where, dims):
        if not isinstance(value, dict) or "meta" not in value or "arrays" not in value:
            raise SchemaError(f"{where}: expected a model bundle")
        top = where == "model"
        self.meta.check(value["meta"], "meta" if top else where, dims)
        self.arrays.check(value["arrays"], "arrays" if top else f"{where} arrays", dims)
        for part in self.parts:
            part.check(value, where, dims)


@attrs.frozen
class Embedded(Spec):
    """Another saved object inside a bundle: its metadata at ``meta[path...]`` and its arrays under
    ``prefix.``, checked as the `Bundle` `spec` (a TSG embeds its CFG transform and its coarse PCFG, a
    compressor its parser)."""

    path: tuple[str, ...] = attrs.field(converter=tuple)
    prefix: str = ""
    spec: Spec = attrs.field(factory=lambda: Bundle())
    optional: bool = False

    def check(self, value, where, dims):
        meta = value["meta"]
        for key in self.path:
            if not isinstance(meta, dict) or key not in meta:
                if self.optional:
                    return
                raise SchemaError(f"{where}: missing field {'.'.join(self.path)!r}")
            meta = meta[key]
        if meta is None and self.optional:
            return
        n = len(self.prefix) + 1
        arrays = {k[n:]: v for k, v in value["arrays"].items() if k.startswith(self.prefix + ".")} \
            if self.prefix else value["arrays"]
        inner = ".".join(self.path) or where
        self.spec.check({"meta": meta, "arrays": arrays}, inner if where == "model" else f"{where}.{inner}", {})


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
#: A stored log-probability (log weight): a number, no NaN, at most 0 (log 1) up to rounding; -inf allowed.
LOGP = Float(max=1e-9, finite=False)
#: A probability.
PROB = Float(min=0, max=1)


_ANNOTATED = {"bool": Bool(), "int": Int(), "float": Float(), "str": Str()}


def settings_schema(cls: type, **ranges: Spec) -> Dict:
    """The schema of a flat attrs settings class saved with `attrs.asdict`: each field typed from its annotation
    (``bool``, ``int``, ``float``, ``str``, each optionally ``| None``; `ranges` gives a field a narrower spec),
    fields with a default optional (files written before the field existed), no unknown keys (the loader passes
    them to the class)."""
    fields, optional = {}, {}
    for f in attrs.fields(cls):
        spec = ranges.get(f.name)
        if spec is None:
            ann = str(f.type).replace(" ", "")
            base = ann.removesuffix("|None").removeprefix("None|")
            spec = _ANNOTATED.get(base, Any())
            if base != ann:
                spec = Opt(spec)
        (fields if f.default is attrs.NOTHING else optional)[f.name] = spec
    unknown = set(ranges) - set(fields) - set(optional)
    if unknown:
        raise TypeError(f"settings_schema: {cls.__name__} has no fields {sorted(unknown)}")
    return Dict(fields, optional, extra=False)


# -- sealed records: checkpoint files whose content is checked before it is reused ------------------------------
SEAL_KEY = "sha256"


def _seal_digest(record: dict) -> str:
    import hashlib
    import json

    body = {k: v for k, v in record.items() if k != SEAL_KEY}
    text = json.dumps(body, sort_keys=True, ensure_ascii=False, separators=(",", ":"), allow_nan=True)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def seal(record: dict) -> dict:
    """`record` with the SHA-256 of its content (canonical JSON) under ``"sha256"``: a finished batch or chunk
    written beside an output, so a resumed run can tell a file it wrote from one edited or damaged since."""
    return {**record, SEAL_KEY: _seal_digest(record)}


def unseal(record: _Any, spec: Spec, where: str = "record") -> str | None:
    """Why a sealed `record` (as read back from JSON) cannot be reused -- not an object, no or a wrong checksum
    (edited or damaged), or not matching `spec` -- or None when it can."""
    if not isinstance(record, dict):
        return f"not a JSON object but {_kind(record)}"
    if record.get(SEAL_KEY) != _seal_digest(record):
        return "its content does not match its checksum (edited or damaged)" if SEAL_KEY in record \
            else "it has no checksum"
    try:
        validate(record, spec, where)
    except SchemaError as exc:
        return str(exc)
    return None


def sealed_parts(files, spec: Spec, part: str, redone: list[str] | None = None) -> dict[int, dict]:
    """The finished parts (``NNNNNN.json`` sealed records with an ``index``) of an interrupted run that can be
    reused, by index.  A file that is not what the run wrote -- not JSON, edited, damaged, not matching `spec`, or
    holding another part than its name says -- is left out (and named in `redone`), so its work is done again."""
    import json

    done: dict[int, dict] = {}
    for f in files:
        try:
            res = json.loads(f.read_text(encoding="utf-8"))
        except (OSError, ValueError, RecursionError):
            res = None  # cannot happen with atomic writes unless edited: the part is done again
        problem = unseal(res, spec, f.name) if res is not None else "not valid JSON"
        if problem is None and f.name != f"{res['index']:06d}.json":
            problem = f"it holds {part} {res['index']}"
        if problem is not None:
            if redone is not None:
                redone.append(f"{f.name} ({problem})")
            continue
        done[int(res["index"])] = res
    return done
