"""Collapsed Dirichlet-process count tables over elementary structures (one DP per category).

A grammar plugin maps each elementary structure (an elementary tree, an auxiliary tree, a synchronous pair, ...) to
a *key*: a hashable, JSON-serialisable canonical form -- plugins use (nested) tuples of ints and strings, e.g.
``("NP", ("DT", "the"), "NN")`` or ``(17, 3, -1, 42)``; bytes are accepted too.  `KeyTable` interns keys to dense
int ids so that counts live in flat numpy arrays that numba kernels can update in place.

With the DP draws G_c integrated out (the Chinese-restaurant view), the predictive probability of the next
structure e of category c is

    P(e | counts) = (n_e + alpha_c * P0(e)) / (n_c + alpha_c)

and the probability of a whole multiset of structures, in any order, is the exchangeable joint

    sum_c [lgamma(alpha_c) - lgamma(alpha_c + n_c)] + sum_e [lgamma(n_e + alpha_c P0(e)) - lgamma(alpha_c P0(e))].

Everything is computed in log space: base probabilities of large trees underflow float64 long before they
matter (alpha * P0 = 1e-400 is still a valid, tiny pseudo-count).

**The formulas live here once**, as numba functions every sampler calls (from njit kernels or from Python):
`log_predictive` (the predictive above), `log_rising` (log Gamma(n + a) - log Gamma(a), a type's joint term) and
`log_normaliser` (log Gamma(alpha) - log Gamma(alpha + n_c), a category's).  `DPCounts` below, the TSG hash-table
kernels (`treegram.elementary.kernels`) and the TIG / OSTAG type tables (`treegram.elementary.types`) all use them.
"""

from __future__ import annotations

import base64
import json
import math
from typing import Any, Callable, Hashable, Iterable, NamedTuple, Sequence

import numba
import numpy as np

from treegram.errors import ModelFileError, TreegramError

__all__ = [
    "CountError",
    "DPArrays",
    "DPCounts",
    "KeyTable",
    "decode_key",
    "encode_key",
    "encode_keys",
    "log_normaliser",
    "log_predictive",
    "log_rising",
    "logaddexp",
    "nb_decrement",
    "nb_increment",
    "nb_log_predictive",
]


class CountError(TreegramError, ValueError):
    """A count table update that would make a count negative (a plugin removed a structure it never added)."""


# --------------------------------------------------------------------------------------------------------------
# Keys


def _json_default(obj: Any) -> Any:
    if isinstance(obj, (bytes, bytearray)):
        return {"b64": base64.b64encode(bytes(obj)).decode("ascii")}
    if isinstance(obj, np.generic):
        return obj.item()
    raise TypeError(f"key part {obj!r} of type {type(obj).__name__} is not JSON-serialisable; "
                    "use (nested) tuples of ints and strings")


def encode_keys(keys: Sequence[Hashable]) -> list:
    """JSON form of many keys: tuples become lists, bytes {"b64": ...} (a C-speed json round trip)."""
    return json.loads(json.dumps(list(keys), default=_json_default, ensure_ascii=False))


def encode_key(key: Hashable) -> Any:
    return encode_keys([key])[0]


def decode_key(obj: Any) -> Hashable:
    """Inverse of `encode_key`: lists become tuples again."""
    cls = obj.__class__
    if cls is list:
        return tuple([decode_key(o) if o.__class__ is list or o.__class__ is dict else o for o in obj])
    if cls is dict:
        return base64.b64decode(obj["b64"])
    return obj


class KeyTable:
    """Interns hashable keys to dense ids 0, 1, 2, ... in first-seen order (ids are stable for a table's life)."""

    __slots__ = ("_encoded", "_ids", "_keys")

    def __init__(self, keys: Iterable[Hashable] = ()):
        self._encoded: list = []  # JSON forms of the first len(_encoded) keys (keys are immutable: cache them)
        self._keys: list[Hashable] = list(keys)
        self._ids: dict[Hashable, int] = dict(zip(self._keys, range(len(self._keys))))
        if len(self._ids) != len(self._keys):
            raise ValueError("duplicate keys in KeyTable initialiser")

    def __len__(self) -> int:
        return len(self._keys)

    def __contains__(self, key: Hashable) -> bool:
        return key in self._ids

    def intern(self, key: Hashable) -> int:
        """The id of `key`, assigning the next free id when it is new."""
        kid = self._ids.get(key)
        if kid is None:
            kid = len(self._keys)
            self._ids[key] = kid
            self._keys.append(key)
        return kid

    def get(self, key: Hashable, default: int = -1) -> int:
        return self._ids.get(key, default)

    def key(self, kid: int) -> Hashable:
        return self._keys[kid]

    def keys(self) -> list[Hashable]:
        return list(self._keys)

    def to_json(self) -> list:
        """JSON form of all keys; only keys added since the last call are encoded (cheap periodic checkpoints)."""
        if len(self._encoded) < len(self._keys):
            self._encoded.extend(encode_keys(self._keys[len(self._encoded):]))
        return list(self._encoded)

    @classmethod
    def from_json(cls, items: list) -> "KeyTable":
        table = cls([decode_key(o) if o.__class__ is list or o.__class__ is dict else o for o in items])
        table._encoded = list(items)
        return table


# --------------------------------------------------------------------------------------------------------------
# numba kernels (also usable from a plugin's own @njit code through `DPCounts.arrays()`)


@numba.njit(cache=True)
def logaddexp(x, y):
    """log(exp(x) + exp(y)) without overflow."""
    if x == -np.inf:
        return y
    if y == -np.inf:
        return x
    if x > y:
        return x + math.log1p(math.exp(y - x))
    return y + math.log1p(math.exp(x - y))


@numba.njit(cache=True)
def log_predictive(n_e, n_c, alpha, log_p0):
    """The DP predictive log((n_e + alpha P0(e)) / (n_c + alpha)) of a structure seen n_e times among the n_c of its
    category, computed from log P0(e) (no underflow for large elementary trees)."""
    pseudo = math.log(alpha) + log_p0
    num = logaddexp(math.log(n_e), pseudo) if n_e > 0 else pseudo
    return num - math.log(n_c + alpha)


@numba.njit(cache=True)
def log_rising(log_a, n):
    """log Gamma(n + a) - log Gamma(a) for a = exp(log_a) > 0, n >= 1: a type's term of the collapsed joint.

    Written as log(a) + sum_{i<n} log(i + a) (exact for small n: most types are seen once or twice) or
    log(a) + lgamma(n + a) - lgamma(1 + a), both exact when a underflows because log a is given directly.
    """
    a = math.exp(log_a)
    if n <= 16:
        out = log_a
        for i in range(1, n):
            out += math.log(i + a)
        return out
    return log_a + math.lgamma(n + a) - math.lgamma(1.0 + a)


@numba.njit(cache=True)
def log_normaliser(alpha, n_c):
    """log Gamma(alpha) - log Gamma(alpha + n_c): a category's term of the collapsed joint."""
    return math.lgamma(alpha) - math.lgamma(alpha + n_c)


@numba.njit(cache=True)
def nb_log_predictive(count, total, category_of, log_base, alpha, key):
    """log P(key | counts) for njit code over `DPCounts.arrays()`."""
    c = category_of[key]
    return log_predictive(count[key], total[c], alpha[c], log_base[key])


@numba.njit(cache=True)
def nb_increment(count, total, category_of, key):
    count[key] += 1
    total[category_of[key]] += 1


@numba.njit(cache=True)
def nb_decrement(count, total, category_of, key):
    if count[key] <= 0:
        raise ValueError("DP count would become negative (structure removed that was never added)")
    count[key] -= 1
    total[category_of[key]] -= 1


@numba.njit(cache=True)
def _category_log_joint(alpha, n_c, counts, log_base):
    """Alpha-dependent collapsed joint of one category given its keys with n_e > 0 (used by slice sampling)."""
    total = log_normaliser(alpha, n_c)
    log_alpha = math.log(alpha)
    for i in range(counts.shape[0]):
        total += log_rising(log_alpha + log_base[i], counts[i])
    return total


@numba.njit(cache=True)
def _log_joint(count, total, category_of, log_base, alpha):
    out = 0.0
    for c in range(alpha.shape[0]):
        if total[c] > 0:
            out += log_normaliser(alpha[c], total[c])
    for k in range(count.shape[0]):
        n = count[k]
        if n > 0:
            out += log_rising(math.log(alpha[category_of[k]]) + log_base[k], n)
    return out


@numba.njit(cache=True)
def _log_predictive_many(n_e, n_c, alpha, log_base):
    out = np.empty(n_e.shape[0])
    for i in range(n_e.shape[0]):
        out[i] = log_predictive(n_e[i], n_c[i], alpha[i], log_base[i])
    return out


# --------------------------------------------------------------------------------------------------------------


class DPArrays(NamedTuple):
    """The live storage of a `DPCounts` (views of length num_keys / num_categories; modify in place only)."""

    count: np.ndarray  # int64 [num_keys]: n_e
    total: np.ndarray  # int64 [num_categories]: n_c = sum of n_e over keys of category c
    category_of: np.ndarray  # int32 [num_keys]
    log_base: np.ndarray  # float64 [num_keys]: log P0(e)
    alpha: np.ndarray  # float64 [num_categories]: concentration alpha_c


class DPCounts:
    """One collapsed DP per category over interned keys, with counts in growable numpy arrays.

    Keys are registered once with `intern(key, category, log_base)`; the caller supplies log P0(e) (or a zero
    argument callable computing it, evaluated only for a new key).  Counts change through `increment` /
    `decrement` (or directly in a numba kernel via `arrays()` and `nb_increment` / `nb_decrement`).
    """

    def __init__(self, alphas: Sequence[float] | np.ndarray, *, capacity: int = 1024):
        alphas = np.array(alphas, dtype=np.float64).reshape(-1)
        if not np.all(np.isfinite(alphas)) or np.any(alphas <= 0):
            raise TreegramError(f"DP concentrations must be positive and finite, got {alphas.tolist()}",
                                hint="choose alpha_c > 0 for every category")
        self.keys = KeyTable()
        self._n = 0
        capacity = max(int(capacity), 16)
        self._count = np.zeros(capacity, dtype=np.int64)
        self._category = np.zeros(capacity, dtype=np.int32)
        self._log_base = np.zeros(capacity, dtype=np.float64)
        self._alpha = alphas.copy()
        self._total = np.zeros(len(alphas), dtype=np.int64)

    # -- structure -------------------------------------------------------------------------------------------

    @property
    def num_keys(self) -> int:
        return self._n

    @property
    def num_categories(self) -> int:
        return len(self._alpha)

    @property
    def alpha(self) -> np.ndarray:
        """Concentrations per category (a live array: assign elements to change them)."""
        return self._alpha

    @property
    def count(self) -> np.ndarray:
        return self._count[: self._n]

    @property
    def total(self) -> np.ndarray:
        return self._total

    @property
    def category_of(self) -> np.ndarray:
        return self._category[: self._n]

    @property
    def log_base(self) -> np.ndarray:
        return self._log_base[: self._n]

    def add_category(self, alpha: float) -> int:
        """A new, empty DP; returns its category id."""
        if not (alpha > 0 and math.isfinite(alpha)):
            raise TreegramError(f"DP concentration must be positive and finite, got {alpha}")
        self._alpha = np.append(self._alpha, float(alpha))
        self._total = np.append(self._total, np.int64(0))
        return len(self._alpha) - 1

    def _grow(self, need: int) -> None:
        cap = len(self._count)
        if need <= cap:
            return
        new_cap = max(need, 2 * cap)
        for name in ("_count", "_category", "_log_base"):
            old = getattr(self, name)
            new = np.zeros(new_cap, dtype=old.dtype)
            new[: self._n] = old[: self._n]
            setattr(self, name, new)

    def intern(self, key: Hashable, category: int, log_base: float | Callable[[], float]) -> int:
        """The id of `key`, registering it (count 0) with its category and log P0 if new.

        `log_base` may be a callable so that P0 is computed only for new keys.  Re-interning an existing key with
        another category is a plugin bug and raises.
        """
        kid = self.keys.get(key)
        if kid >= 0:
            if self._category[kid] != category:
                raise TreegramError(f"key {key!r} already registered under category {int(self._category[kid])},"
                                    f" not {category}")
            return kid
        if not 0 <= category < len(self._alpha):
            raise TreegramError(f"category {category} out of range (have {len(self._alpha)} categories)",
                                hint="add the category with add_category() first")
        lb = float(log_base() if callable(log_base) else log_base)
        if math.isnan(lb) or lb > 1e-9:
            raise TreegramError(f"log P0 of key {key!r} is {lb}; it must be a log-probability (<= 0)")
        kid = self.keys.intern(key)
        self._grow(kid + 1)
        self._category[kid] = category
        self._log_base[kid] = lb
        self._count[kid] = 0
        self._n = kid + 1
        return kid

    def key_id(self, key: Hashable) -> int:
        """The id of a registered key, or -1."""
        return self.keys.get(key)

    def key(self, kid: int) -> Hashable:
        return self.keys.key(kid)

    # -- counts ----------------------------------------------------------------------------------------------

    def increment(self, kid: int, by: int = 1) -> None:
        self._count[kid] += by
        self._total[self._category.item(kid)] += by

    def decrement(self, kid: int, by: int = 1) -> None:
        if self._count.item(kid) < by:
            raise CountError(f"decrementing key {self.keys.key(kid)!r} (id {kid}) by {by} would make its count "
                             f"{int(self._count[kid]) - by}", hint="a structure was removed that was never added")
        self._count[kid] -= by
        self._total[self._category.item(kid)] -= by

    def increment_many(self, ids: Sequence[int] | np.ndarray) -> None:
        ids = np.asarray(ids, dtype=np.int64)
        np.add.at(self._count, ids, 1)
        np.add.at(self._total, self._category[ids], 1)

    def decrement_many(self, ids: Sequence[int] | np.ndarray) -> None:
        ids = np.asarray(ids, dtype=np.int64)
        uniq, times = np.unique(ids, return_counts=True)
        if np.any(self._count[uniq] < times):
            bad = int(uniq[np.argmax(self._count[uniq] < times)])
            raise CountError(f"decrementing key {self.keys.key(bad)!r} (id {bad}) would make its count negative",
                             hint="a structure was removed that was never added")
        np.subtract.at(self._count, uniq, times)
        np.subtract.at(self._total, self._category[uniq], times)

    # -- probabilities ---------------------------------------------------------------------------------------

    def log_predictive(self, kid: int) -> float:
        """log P(key | current counts) = log((n_e + alpha_c P0(e)) / (n_c + alpha_c))."""
        c = self._category.item(kid)
        return log_predictive(self._count.item(kid), self._total.item(c), self._alpha.item(c),
                              self._log_base.item(kid))

    def log_predictive_many(self, ids: Sequence[int] | np.ndarray) -> np.ndarray:
        """Independent predictives of each key against the current counts (vectorised, no sequence effect)."""
        ids = np.asarray(ids, dtype=np.int64)
        return self._log_predictive_with(ids, self._count[ids], self._total[self._category[ids]])

    def _log_predictive_with(self, ids: np.ndarray, n_e: np.ndarray, n_c: np.ndarray) -> np.ndarray:
        return _log_predictive_many(n_e.astype(np.int64), n_c.astype(np.int64), self._alpha[self._category[ids]],
                                    self._log_base[ids])

    def log_predictive_sequence(self, ids: Sequence[int] | np.ndarray) -> float:
        """log P(e_1, ..., e_k | counts) when the keys are added one after another (each sees the earlier ones).

        This is the exact collapsed probability of adding several structures at once (a Gibbs move that joins or
        splits two elementary trees, or a whole derivation for Metropolis-Hastings); the counts are unchanged.
        """
        ids = np.asarray(ids, dtype=np.int64)
        prior_same = _occurrences_before(ids)
        prior_cat = _occurrences_before(self._category[ids].astype(np.int64))
        n_e = self._count[ids] + prior_same
        n_c = self._total[self._category[ids]] + prior_cat
        return float(self._log_predictive_with(ids, n_e, n_c).sum())

    def log_joint(self) -> float:
        """Exact collapsed log-probability of all counted structures (sum over categories of the DP joint)."""
        n = self._n
        return float(_log_joint(self._count[:n], self._total, self._category[:n], self._log_base[:n], self._alpha))

    def category_terms(self, category: int) -> tuple[int, np.ndarray, np.ndarray]:
        """(n_c, counts, log P0) of the keys of `category` with positive count -- what alpha_c's posterior needs."""
        n = self._n
        mask = (self._category[:n] == category) & (self._count[:n] > 0)
        return int(self._total[category]), self._count[:n][mask].copy(), self._log_base[:n][mask].copy()

    def grouped_terms(self) -> list[tuple[int, np.ndarray, np.ndarray]]:
        """`category_terms` of every category in one pass (what resampling all concentrations needs)."""
        n = self._n
        used = np.flatnonzero(self._count[:n] > 0)
        order = used[np.argsort(self._category[used], kind="stable")]
        bounds = np.searchsorted(self._category[order], np.arange(len(self._alpha) + 1))
        return [(int(self._total[c]), self._count[order[bounds[c]:bounds[c + 1]]],
                 self._log_base[order[bounds[c]:bounds[c + 1]]]) for c in range(len(self._alpha))]

    def category_log_joint(self, category: int, alpha: float | None = None) -> float:
        """The collapsed joint of one category's structures, optionally at another concentration `alpha`."""
        a = float(self._alpha[category] if alpha is None else alpha)
        n_c, counts, log_base = self.category_terms(category)
        if n_c == 0:
            return 0.0
        return float(_category_log_joint(a, float(n_c), counts, log_base))

    # -- numba access & persistence -------------------------------------------------------------------------

    def arrays(self) -> DPArrays:
        """Views of the live arrays for in-place updates by njit kernels (`nb_increment` etc.).

        The views stay valid until the next `intern` of a new key (storage may be reallocated) or `add_category`;
        fetch them again after registering keys.
        """
        n = self._n
        return DPArrays(self._count[:n], self._total, self._category[:n], self._log_base[:n], self._alpha)

    def check(self) -> None:
        """Raise if totals disagree with the per-key counts or any count is negative (a debugging aid)."""
        n = self._n
        if np.any(self._count[:n] < 0):
            raise CountError("negative DP counts")
        expect = np.bincount(self._category[:n], weights=self._count[:n], minlength=len(self._alpha))
        if not np.array_equal(expect.astype(np.int64), self._total):
            raise CountError(f"DP totals {self._total.tolist()} disagree with per-key counts {expect.tolist()}")

    def state_dict(self) -> dict[str, Any]:
        """Plain arrays plus the JSON list of keys (tuples stored as lists, restored as tuples)."""
        n = self._n
        return {
            "keys": self.keys.to_json(),
            "count": self._count[:n].copy(),
            "category_of": self._category[:n].copy(),
            "log_base": self._log_base[:n].copy(),
            "alpha": self._alpha.copy(),
            "total": self._total.copy(),
        }

    @classmethod
    def from_state_dict(cls, state: dict[str, Any]) -> "DPCounts":
        try:
            keys = KeyTable.from_json(state["keys"])
            count = np.asarray(state["count"], dtype=np.int64)
            category = np.asarray(state["category_of"], dtype=np.int32)
            log_base = np.asarray(state["log_base"], dtype=np.float64)
            alpha = np.asarray(state["alpha"], dtype=np.float64)
            total = np.asarray(state["total"], dtype=np.int64)
        except (KeyError, ValueError, TypeError) as exc:
            raise ModelFileError(f"DP count state is incomplete or malformed ({exc})") from None
        n = len(keys)
        if not (len(count) == len(category) == len(log_base) == n) or len(total) != len(alpha):
            raise ModelFileError("DP count state has inconsistent array lengths")
        dp = cls(alpha, capacity=max(16, n))
        dp.keys = keys
        dp._n = n
        dp._count[:n] = count
        dp._category[:n] = category
        dp._log_base[:n] = log_base
        dp._total = total.copy()
        if n and (category.min() < 0 or category.max() >= len(alpha)):
            raise ModelFileError("DP count state refers to a category that does not exist")
        try:
            dp.check()
        except CountError as exc:
            raise ModelFileError(f"DP count state is inconsistent: {exc}") from None
        return dp


def _occurrences_before(values: np.ndarray) -> np.ndarray:
    """For each position i, how many j < i have values[j] == values[i]."""
    order = np.argsort(values, kind="stable")
    sorted_vals = values[order]
    starts = np.ones(len(values), dtype=bool)
    starts[1:] = sorted_vals[1:] != sorted_vals[:-1]
    group_start = np.maximum.accumulate(np.where(starts, np.arange(len(values)), 0))
    rank = np.empty(len(values), dtype=np.int64)
    rank[order] = np.arange(len(values)) - group_start
    return rank
