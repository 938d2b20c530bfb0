"""Shared machinery of the sweep-based samplers: annealing, tempered choices, seeded RNGs, checkpoint/resume.

`GibbsSampler` (sites) and `BlockedMH` (items) both run *sweeps*: one pass over all units in a random or fixed
order.  This module owns the loop, per-sweep trace records, Ctrl-C handling and the checkpoint file, so that an
interrupted run resumed from its last checkpoint reproduces the uninterrupted run exactly.

Temperature.  At temperature T a sampler targets p(x)^(1/T) instead of p(x): a Gibbs site draws outcome k with
probability proportional to p_k^(1/T); a Metropolis-Hastings step uses (p_new/p_old)^(1/T) * q_old/q_new.  T = 1
is the true posterior, T > 1 flattens it (exploration, annealing starts high), T -> 0 concentrates on the mode and
T = 0 exactly means argmax (ties broken uniformly at random; MH accepts only non-worse moves).
"""

from __future__ import annotations

import contextlib
import contextvars
import math
import signal
import threading
import time
from pathlib import Path
from typing import Any, Callable

import attrs
import numpy as np

from treegram.errors import ModelFileError, TreegramError
from treegram.io import load_bundle, save_bundle

__all__ = [
    "AnnealingSchedule",
    "CheckpointConfig",
    "SweepDriver",
    "join_state",
    "make_rng",
    "rng_from_json",
    "resume_policy",
    "rng_to_json",
    "split_state",
    "tempered_accept",
    "tempered_binary",
    "tempered_choice",
]

CHECKPOINT_FORMAT = "treegram-sampler-checkpoint"
CHECKPOINT_VERSION = 1

# --------------------------------------------------------------------------------------------------------------
# Annealing


def _check_kind(instance, attribute, value):
    if value not in ("linear", "geometric", "constant"):
        raise TreegramError(f"annealing kind must be linear, geometric or constant, got {value!r}")


@attrs.frozen
class AnnealingSchedule:
    """Temperature per sweep: from `start` (sweep 0) to `end` (sweep `sweeps`-1), then `end` for ever.

    kind="linear" interpolates linearly (Yamangil & Shieber anneal 5 -> 0), "geometric" multiplicatively (start
    and end must be > 0), "constant" stays at `start`.  The default is plain sampling at T = 1.
    """

    start: float = 1.0
    end: float = 1.0
    sweeps: int = 1
    kind: str = attrs.field(default="constant", validator=_check_kind)

    def __attrs_post_init__(self):
        if self.start < 0 or self.end < 0 or not (math.isfinite(self.start) and math.isfinite(self.end)):
            raise TreegramError(f"temperatures must be finite and >= 0, got start={self.start}, end={self.end}")
        if self.sweeps < 1:
            raise TreegramError(f"annealing schedule needs sweeps >= 1, got {self.sweeps}")
        if self.kind == "geometric" and (self.start <= 0 or self.end <= 0):
            raise TreegramError("a geometric schedule needs start > 0 and end > 0",
                                hint="use kind='linear' to anneal down to T = 0")

    def temperature(self, sweep: int) -> float:
        """Temperature of 0-based sweep `sweep`."""
        if self.kind == "constant":
            return float(self.start)
        if sweep >= self.sweeps - 1:
            return float(self.end) if self.sweeps > 1 or sweep > 0 else float(self.start)
        frac = sweep / (self.sweeps - 1)
        if self.kind == "linear":
            return float(self.start + (self.end - self.start) * frac)
        return float(self.start * (self.end / self.start) ** frac)

    def temperatures(self, n: int | None = None) -> np.ndarray:
        return np.array([self.temperature(i) for i in range(self.sweeps if n is None else n)])

    def to_json(self) -> dict:
        return attrs.asdict(self)

    @classmethod
    def from_json(cls, d: dict) -> "AnnealingSchedule":
        return cls(**d)


# --------------------------------------------------------------------------------------------------------------
# Tempered decisions (helpers for models' resample_site and for the MH driver)


def tempered_choice(log_weights: np.ndarray | list[float], rng: np.random.Generator, temperature: float) -> int:
    """Index k drawn with probability proportional to exp(log_weights[k] / T); argmax (random tie-break) at T=0."""
    if len(log_weights) <= 16 and temperature > 0:  # few outcomes (typical per site): plain floats beat numpy
        inv_t = 1.0 / temperature
        scaled = [float(w) * inv_t for w in log_weights]
        m = max(scaled)
        if m == -math.inf or m != m:
            raise TreegramError("all outcomes of a sampling step have probability zero")
        cumulative = []
        acc = 0.0
        for s in scaled:
            acc += math.exp(s - m)
            cumulative.append(acc)
        u = rng.random() * acc
        for k, c in enumerate(cumulative):
            if u < c:
                return k
        return len(cumulative) - 1
    lw = np.asarray(log_weights, dtype=np.float64)
    if temperature == 0:
        best = np.flatnonzero(lw == lw.max())
        return int(best[0]) if len(best) == 1 else int(best[rng.integers(len(best))])
    scaled = lw / temperature
    m = scaled.max()
    if m == -np.inf:
        raise TreegramError("all outcomes of a sampling step have probability zero")
    p = np.exp(scaled - m)
    cdf = np.cumsum(p)
    return int(min(np.searchsorted(cdf, rng.random() * cdf[-1], side="right"), len(lw) - 1))


def tempered_binary(log_w0: float, log_w1: float, rng: np.random.Generator, temperature: float) -> int:
    """Fast two-outcome `tempered_choice` (the join/split decision of TSG-style Gibbs samplers)."""
    if temperature == 0:
        if log_w0 == log_w1:
            return int(rng.random() < 0.5)
        return int(log_w1 > log_w0)
    d = (log_w0 - log_w1) / temperature  # P(1) = 1 / (1 + exp(d))
    if d != d:
        raise TreegramError("both outcomes of a sampling step have probability zero")
    p1 = 1.0 / (1.0 + math.exp(d)) if d < 700 else 0.0
    return int(rng.random() < p1)


def tempered_accept(log_p_ratio: float, log_q_ratio: float, rng: np.random.Generator, temperature: float) -> bool:
    """Metropolis-Hastings acceptance of target ratio p_new/p_old (tempered) and proposal ratio q_old/q_new."""
    if temperature == 0:
        if log_p_ratio != 0:
            return bool(log_p_ratio > 0)
        log_ratio = log_q_ratio
    else:
        log_ratio = log_p_ratio / temperature + log_q_ratio
    if log_ratio != log_ratio:  # NaN: both states impossible or both proposals impossible -- stay
        return False
    if log_ratio >= 0:
        return True
    return bool(math.log(rng.random()) < log_ratio) if log_ratio > -745 else False


# --------------------------------------------------------------------------------------------------------------
# RNG and state (de)serialisation

_BIG = 2**53


def make_rng(seed: int | np.random.SeedSequence | np.random.Generator | None) -> np.random.Generator:
    """A Generator from a seed (a Generator is used as is: the sampler then advances the caller's stream)."""
    if isinstance(seed, np.random.Generator):
        return seed
    if seed is None:
        raise TreegramError("samplers need an explicit seed", hint="pass seed=<int> for reproducible runs")
    if isinstance(seed, (int, np.integer)) and seed < 0:
        from treegram.argtypes import seed_entropy

        seed = seed_entropy(int(seed))  # any integer seed works; negatives map to distinct non-negative ones
    return np.random.default_rng(seed)


def _to_json(obj: Any) -> Any:
    if isinstance(obj, dict):
        return {str(k): _to_json(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_to_json(v) for v in obj]
    if isinstance(obj, np.ndarray):
        return {"__ndarray__": [_to_json(v) for v in obj.tolist()], "dtype": str(obj.dtype)}
    if isinstance(obj, np.generic):
        obj = obj.item()
    if isinstance(obj, bool) or obj is None or isinstance(obj, (str, float)):
        return obj
    if isinstance(obj, int):
        return {"__int__": str(obj)} if abs(obj) >= _BIG else obj
    raise TypeError(f"cannot store {type(obj).__name__} in JSON")


def _from_json(obj: Any) -> Any:
    if isinstance(obj, dict):
        if "__int__" in obj:
            return int(obj["__int__"])
        if "__ndarray__" in obj:
            return np.array([_from_json(v) for v in obj["__ndarray__"]], dtype=obj["dtype"])
        return {k: _from_json(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_from_json(v) for v in obj]
    return obj


def rng_to_json(rng: np.random.Generator) -> dict:
    """The bit generator's full state as JSON (128-bit integers as strings, arrays as lists)."""
    return _to_json(rng.bit_generator.state)


def rng_from_json(state: dict) -> np.random.Generator:
    state = _from_json(state)
    name = state.get("bit_generator")
    cls = getattr(np.random, str(name), None)
    if cls is None or not isinstance(cls, type) or not issubclass(cls, np.random.BitGenerator):
        raise ModelFileError(f"checkpoint names an unknown bit generator {name!r}")
    bitgen = cls()
    bitgen.state = state
    return np.random.Generator(bitgen)


def split_state(state: Any, prefix: str = "model") -> tuple[Any, dict[str, np.ndarray]]:
    """Split a nested state into a JSON tree and named arrays (for one `save_bundle` file).

    Dicts (string keys) are walked and their numpy-array values replaced by {"__array__": name}; numpy scalars
    become Python numbers.  Lists and tuples are stored as JSON values without being walked (fast for large key
    lists; tuples come back as lists), so they must not contain arrays or numpy scalars.
    """
    arrays: dict[str, np.ndarray] = {}

    def walk(obj: Any, path: str) -> Any:
        if isinstance(obj, np.ndarray):
            arrays[path] = obj
            return {"__array__": path}
        if isinstance(obj, dict):
            out = {}
            for k, v in obj.items():
                if not isinstance(k, str):
                    raise TypeError(f"state key {k!r} at {path} is not a string")
                out[k] = walk(v, f"{path}/{k}")
            return out
        if isinstance(obj, np.generic):
            return obj.item()
        if obj is None or isinstance(obj, (bool, int, float, str, list, tuple)):
            return obj
        raise TypeError(f"state entry {path} of type {type(obj).__name__} is neither an array nor JSON")

    return walk(state, prefix), arrays


def join_state(tree: Any, arrays: dict[str, np.ndarray]) -> Any:
    """Inverse of `split_state`."""
    if isinstance(tree, dict):
        if set(tree) == {"__array__"}:
            try:
                return arrays[tree["__array__"]]
            except KeyError:
                raise ModelFileError(f"checkpoint lacks array {tree['__array__']!r}") from None
        return {k: join_state(v, arrays) for k, v in tree.items()}
    return tree


# --------------------------------------------------------------------------------------------------------------
# Checkpoints


@attrs.frozen
class CheckpointConfig:
    """Write one checkpoint file `path` every `every` completed sweeps (0: never periodically), at the end of
    `run` (`on_finish`) and when Ctrl-C stops a run (`on_interrupt`)."""

    path: Path = attrs.field(converter=Path)
    every: int = 10
    on_finish: bool = True
    on_interrupt: bool = True

    def __attrs_post_init__(self):
        if self.every < 0:
            raise TreegramError(f"checkpoint interval must be >= 0 sweeps, got {self.every}")


class _SigintDeferral:
    """While active (main thread), the first Ctrl-C (SIGINT with the default handler) or `kill` (SIGTERM with the
    default action) only sets `requested`; the driver stops at the next site boundary, writes a consistent
    checkpoint and raises KeyboardInterrupt.  A second signal acts at once (the previous handlers are restored by
    the first).  Each signal is deferred independently, so `kill` still checkpoints when SIGINT was inherited as
    ignored (background jobs, nohup, CI)."""

    _DEFERRABLE = ((signal.SIGINT, signal.default_int_handler), (signal.SIGTERM, signal.SIG_DFL))

    def __init__(self, enabled: bool):
        self.enabled = enabled
        self.requested = False
        self._previous: dict[int, Any] = {}
        self._bound = self._handler  # one bound-method object, so `getsignal(...) is self._bound` can match

    def _handler(self, signum, frame):
        self.requested = True
        for sig, previous in self._previous.items():
            if signal.getsignal(sig) is self._bound:
                signal.signal(sig, previous)

    def __enter__(self):
        if self.enabled and threading.current_thread() is threading.main_thread():
            for sig, default in self._DEFERRABLE:
                if signal.getsignal(sig) is default:
                    self._previous[sig] = default
                    signal.signal(sig, self._bound)
        return self

    def __exit__(self, *exc):
        for sig, previous in self._previous.items():
            if signal.getsignal(sig) is self._bound:
                signal.signal(sig, previous)
        self._previous.clear()
        return False


@attrs.define
class _Partial:
    """A sweep interrupted between two units: enough to finish it exactly as the uninterrupted run would."""

    order: np.ndarray
    position: int
    temperature: float
    changed: int
    seconds: float


def _plain(value: Any) -> Any:
    if isinstance(value, np.generic):
        return value.item()
    return value


class SweepDriver:
    """Base class: sweep loop, trace, checkpoints.  Subclasses define the unit step and the model protocol."""

    kind = "sweep"
    _unit_name = "units"
    _changed_name = "changed"
    _rate_name = "changed_rate"

    def __init__(self, model, *, seed, schedule: AnnealingSchedule | None = None, site_order: str = "random",
                 checkpoint: CheckpointConfig | None = None,
                 callback: Callable[[dict], bool | None] | None = None, handle_sigint: bool = True):
        if site_order not in ("random", "fixed"):
            raise TreegramError(f"site_order must be 'random' or 'fixed', got {site_order!r}")
        self.model = model
        self.rng = make_rng(seed)
        self.schedule = schedule if schedule is not None else AnnealingSchedule()
        self.site_order = site_order
        self.checkpoint = checkpoint
        self.callback = callback
        self.handle_sigint = handle_sigint
        self.trace: list[dict[str, Any]] = []
        self.sweeps_done = 0
        self._partial: _Partial | None = None
        self._attachments: dict[str, Any] = {}
        self._pending: dict[str, Any] = {}  # attachment states read by `resume`, waiting for `attach`
        #: `unit_progress(fraction_of_a_sweep)` is called ~200 times a sweep on the unit-by-unit path (a progress
        #: bar that moves, with an ETA, inside sweeps that take minutes); it sees nothing of the sampler's state
        self.unit_progress: Callable[[float], None] | None = None

    def attach(self, name: str, obj) -> None:
        """Run `obj.after_sweep(driver, record)` after every completed sweep, before that sweep's checkpoint, and
        keep `obj.state_dict()` in the checkpoint (restored by `obj.load_state_dict` when attached to a resumed
        driver).  Used by posterior averaging (`treegram.bayes.averaging.SampleCollector`)."""
        self._attachments[name] = obj
        pending = self._pending.pop(name, None)
        if pending is not None:
            obj.load_state_dict(join_state(*pending))

    # -- to be provided by subclasses --------------------------------------------------------------------------

    def _num_units(self) -> int:
        raise NotImplementedError

    def _step(self, unit: int, temperature: float) -> bool:
        raise NotImplementedError

    def _whole_sweep(self):
        """The model's `sweep(order, rng, temperature)` escape hatch, or None."""
        fn = getattr(self.model, "sweep", None)
        return fn if callable(fn) else None

    # -- running -----------------------------------------------------------------------------------------------

    def run(self, sweeps: int | None = None) -> list[dict[str, Any]]:
        """Run until `sweeps` sweeps have been completed in total (default: the schedule's length), counting
        sweeps done before a resume.  Returns the whole trace (one record per sweep).

        Stops early when the callback returns True.  Ctrl-C (SIGINT) and `kill` (SIGTERM) in the main thread are
        deferred to the next site boundary: the driver then writes a checkpoint that includes the half-done sweep
        and raises KeyboardInterrupt; a second signal interrupts at once.  A KeyboardInterrupt raised by the callback also
        checkpoints (the sweep is complete).  Any other exception -- or an interrupt raised inside model code
        when SIGINT is not deferred -- leaves the last periodic checkpoint as it was, since the model may be
        halfway through an update.
        """
        target = self.schedule.sweeps if sweeps is None else int(sweeps)
        with _SigintDeferral(self.handle_sigint) as interrupt:
            while self.sweeps_done < target:
                record = self._one_sweep(interrupt)
                self.trace.append(record)
                self.sweeps_done += 1
                for obj in self._attachments.values():
                    obj.after_sweep(self, record)
                ck = self.checkpoint
                if ck is not None and ck.every and self.sweeps_done % ck.every == 0:
                    self.save_checkpoint()
                try:
                    stop = self.callback(record) if self.callback is not None else None
                except KeyboardInterrupt:
                    self._interrupted()
                    raise
                if interrupt.requested:
                    self._interrupted()
                    raise KeyboardInterrupt
                if stop is True:
                    break
            if self.checkpoint is not None and self.checkpoint.on_finish:
                self.save_checkpoint()
        return self.trace

    def _interrupted(self) -> None:
        if self.checkpoint is not None and self.checkpoint.on_interrupt:
            self.save_checkpoint()

    def _one_sweep(self, interrupt: _SigintDeferral) -> dict[str, Any]:
        index = self.sweeps_done
        partial, self._partial = self._partial, None
        if partial is not None:
            order, start, temperature = partial.order, partial.position, partial.temperature
            changed, seconds = partial.changed, partial.seconds
        else:
            temperature = self.schedule.temperature(index)
            n = int(self._num_units())
            order = self.rng.permutation(n) if self.site_order == "random" else np.arange(n)
            start, changed, seconds = 0, 0, 0.0
        extras: dict[str, Any] = {}
        t0 = time.perf_counter()
        whole = self._whole_sweep()
        if whole is not None and start == 0:
            extras = dict(whole(order, self.rng, temperature) or {})
            changed = int(extras.pop(self._changed_name, 0))
        else:
            step = self._step
            units = order.tolist()
            report, every = self.unit_progress, max(1, len(units) // 200)
            for pos in range(start, len(units)):
                if step(units[pos], temperature):
                    changed += 1
                if report is not None and (pos + 1) % every == 0:
                    report(every / len(units))
                if interrupt.requested:
                    self._partial = _Partial(order, pos + 1, temperature, changed,
                                             seconds + time.perf_counter() - t0)
                    if pos + 1 == len(units):
                        self._partial = None  # the sweep is complete: record it normally
                        break
                    self._interrupted()
                    raise KeyboardInterrupt
        seconds += time.perf_counter() - t0
        record: dict[str, Any] = {
            "sweep": index + 1,
            "temperature": temperature,
            "log_likelihood": float(self.model.log_likelihood()),
            "seconds": seconds,
            self._unit_name: len(order),
            self._changed_name: changed,
        }
        stats = getattr(self.model, "sweep_stats", None)
        if callable(stats):
            extras.update(stats() or {})
        for key, value in extras.items():
            record.setdefault(key, _plain(value))
        self._finish_record(record)
        return record

    def _finish_record(self, record: dict[str, Any]) -> None:
        """Derived statistics: the share of the sweep's units that changed (Gibbs) or were accepted (blocked MH)."""
        units = record[self._unit_name]
        record.setdefault(self._rate_name, record[self._changed_name] / units if units else 0.0)

    # -- checkpoints -------------------------------------------------------------------------------------------

    def save_checkpoint(self, path: str | Path | None = None) -> Path:
        """Write model state, RNG state, sweep count and trace atomically into one bundle file."""
        if path is None:
            if self.checkpoint is None:
                raise TreegramError("no checkpoint path configured", hint="pass checkpoint=CheckpointConfig(path)")
            path = self.checkpoint.path
        path = Path(path)
        model_tree, arrays = split_state(self.model.state_dict(), "model")
        attached = {}
        for name, obj in self._attachments.items():
            attached[name], extra = split_state(obj.state_dict(), f"attach/{name}")
            arrays.update(extra)
        for name, tree in self._pending.items():  # resumed but not (yet) attached: keep what the file had
            attached.setdefault(name, tree[0])
            arrays.update(tree[1])
        partial_meta = None
        if self._partial is not None:
            p = self._partial
            arrays["partial/order"] = np.asarray(p.order, dtype=np.int64)
            partial_meta = {"position": p.position, "temperature": p.temperature, "changed": p.changed,
                            "seconds": p.seconds}
        meta = {
            "format": CHECKPOINT_FORMAT,
            "version": CHECKPOINT_VERSION,
            "driver": self.kind,
            "model_type": f"{type(self.model).__module__}.{type(self.model).__qualname__}",
            "sweeps_done": self.sweeps_done,
            "rng": rng_to_json(self.rng),
            "schedule": self.schedule.to_json(),
            "site_order": self.site_order,
            "checkpoint": None if self.checkpoint is None else {
                "every": self.checkpoint.every, "on_finish": self.checkpoint.on_finish,
                "on_interrupt": self.checkpoint.on_interrupt},
            "partial": partial_meta,
            "trace": _to_json(self.trace),
            "model": model_tree,
        }
        if attached:
            meta["attachments"] = attached
        save_bundle(path, meta, arrays)
        return path

    @classmethod
    def resume(cls, path: str | Path, model, *, schedule: AnnealingSchedule | None = None,
               checkpoint: CheckpointConfig | None = None, callback=None, handle_sigint: bool = True,
               force: bool | None = None):
        """A sampler continuing from checkpoint `path`: loads the model state into `model` (a freshly built model
        of the same kind), restores RNG, trace and sweep count.  By default it keeps checkpointing to `path` with
        the saved interval; `run(total)` then finishes the run exactly as if it had never stopped.

        The file is validated first (`CHECKPOINT_SCHEMA`: types, ranges, counts).  The run settings the model
        records in its state (``seed``, ``settings`` and scalar hyperparameters such as ``alpha``) must equal those
        of `model`, unless `force` (default: the `resume_policy` in effect, i.e. `treegram train --force`)."""
        path = Path(path)
        meta, arrays = load_bundle(path)
        if meta.get("format") != CHECKPOINT_FORMAT:
            raise ModelFileError(f"{path}: not a sampler checkpoint", hint="pass the file written by checkpointing")
        if meta.get("version") != CHECKPOINT_VERSION:
            raise ModelFileError(f"{path}: checkpoint version {meta.get('version')} is not supported")
        if meta.get("driver") != cls.kind:
            raise ModelFileError(f"{path}: checkpoint of a {meta.get('driver')!r} sampler, not {cls.kind!r}",
                                 hint="resume it with the matching sampler class")
        validate_checkpoint(path, meta, arrays)
        saved = join_state(meta["model"], arrays)
        _check_same_run(path, saved, model, _FORCE.get() if force is None else force)
        try:
            model.load_state_dict(saved)
        except (KeyError, TypeError, IndexError, ValueError, AttributeError) as exc:
            if isinstance(exc, TreegramError):
                raise
            raise ModelFileError(f"{path}: corrupt checkpoint ({type(exc).__name__}: {exc})"[:300],
                                 hint="delete it and train again without --resume") from None
        if checkpoint is None and meta.get("checkpoint") is not None:
            checkpoint = CheckpointConfig(path, **meta["checkpoint"])
        try:
            rng = rng_from_json(meta["rng"])
        except (KeyError, TypeError, ValueError, OverflowError) as exc:
            raise ModelFileError(f"{path}: corrupt checkpoint (random generator state: {exc})"[:300],
                                 hint="delete it and train again without --resume") from None
        sampler = cls(model, seed=rng,
                      schedule=schedule or AnnealingSchedule.from_json(meta["schedule"]),
                      site_order=meta["site_order"], checkpoint=checkpoint, callback=callback,
                      handle_sigint=handle_sigint)
        sampler.sweeps_done = int(meta["sweeps_done"])
        sampler.trace = _from_json(meta["trace"])
        attachments = meta.get("attachments") or {}
        if not isinstance(attachments, dict):
            raise ModelFileError(f"{path}: corrupt checkpoint (attachments)", hint="delete it and train again "
                                                                                  "without --resume")
        for name, tree in attachments.items():
            prefix = f"attach/{name}/"
            sampler._pending[name] = (tree, {k: v for k, v in arrays.items() if k.startswith(prefix)})
        if meta.get("partial") is not None:
            p = meta["partial"]
            sampler._partial = _Partial(arrays["partial/order"], int(p["position"]), float(p["temperature"]),
                                        int(p["changed"]), float(p["seconds"]))
        return sampler


# --------------------------------------------------------------------------------------------------------------
# Checkpoint validation and the same-run check

_FORCE: contextvars.ContextVar[bool] = contextvars.ContextVar("treegram_resume_force", default=False)


@contextlib.contextmanager
def resume_policy(*, force: bool):
    """Within this block, `SweepDriver.resume` accepts checkpoints written with other settings iff `force`
    (`treegram train --force`)."""
    token = _FORCE.set(bool(force))
    try:
        yield
    finally:
        _FORCE.reset(token)


def _checkpoint_schema():
    from treegram.schema import Arr, Bool, Dict, Float, Int, List, Opt, Str

    return Dict({
        "sweeps_done": Int(min=0, max=10**9),
        "rng": Dict({"bit_generator": Str()}),
        "schedule": Dict({"start": Float(min=0), "end": Float(min=0), "sweeps": Int(min=1),
                          "kind": Str(choices=("linear", "geometric", "constant"))}),
        "site_order": Str(choices=("random", "fixed")),
        "checkpoint": Opt(Dict({"every": Int(min=0), "on_finish": Bool(), "on_interrupt": Bool()}, extra=False)),
        "partial": Opt(Dict({"position": Int(min=0), "temperature": Float(min=0), "changed": Int(min=0),
                             "seconds": Float(min=0)})),
        "trace": List(Dict()),
        "model": Dict(),
    }), Arr("iu", ndim=1, min=0)


def validate_checkpoint(path: Path, meta: dict, arrays: dict) -> None:
    """Types, ranges and counts of a checkpoint's driver fields (the model state is checked by the model)."""
    from treegram.schema import check_file

    schema, order_spec = _checkpoint_schema()
    check_file(path, meta, schema, "checkpoint", what="checkpoint")
    if len(meta["trace"]) != meta["sweeps_done"]:
        raise ModelFileError(f"{path}: corrupt checkpoint file (the trace has {len(meta['trace'])} sweeps but "
                             f"sweeps_done is {meta['sweeps_done']})", hint="delete it and train without --resume")
    if meta["partial"] is not None:
        order = arrays.get("partial/order")
        if order is None:
            raise ModelFileError(f"{path}: corrupt checkpoint file (partial sweep without its order)")
        check_file(path, order, order_spec, "partial/order", what="checkpoint")
        if meta["partial"]["position"] > len(order) or (len(order) and int(order.max()) >= len(order)):
            raise ModelFileError(f"{path}: corrupt checkpoint file (partial sweep position or order out of range)",
                                 hint="delete it and train without --resume")


#: Keys of a model's `state_dict()` that describe the run's settings rather than its sampled state.
RUN_KEYS = ("seed", "settings", "alpha", "beta")


def _plain_setting(value):
    if isinstance(value, np.ndarray):
        return None  # arrays are sampled state (resampled hyperparameters), not settings
    return _from_json(_to_json(value)) if isinstance(value, (dict, list, tuple, np.generic)) else value


def _check_same_run(path: Path, saved: dict, model, force: bool) -> None:
    current_fn = getattr(model, "state_dict", None)
    if not callable(current_fn) or not isinstance(saved, dict):
        return
    current = current_fn()
    if not isinstance(current, dict):
        return
    diffs = []
    for key in RUN_KEYS:
        if key not in current or key not in saved:
            continue
        a, b = _plain_setting(saved[key]), _plain_setting(current[key])
        if a is None or b is None:
            continue
        if isinstance(a, dict) and isinstance(b, dict):
            for k in sorted(set(a) | set(b)):
                if a.get(k) != b.get(k):
                    diffs.append(f"{k} {a.get(k)!r} -> {b.get(k)!r}")
        elif a != b:
            diffs.append(f"{key} {a!r} -> {b!r}")
    if diffs and not force:
        raise TreegramError(f"{path}: the checkpoint was written with other settings ({'; '.join(diffs[:4])})",
                            hint="resume with the original options, or add --force to continue with the new ones")
