"""DP families of elementary-tree *types* keyed by hashable structures, for blocked samplers over fixed trees.

The TIG and Bayesian OSTAG samplers keep, besides their own formalism-specific decisions (insertions,
adjunctions), several Dirichlet-process families of elementary trees (initial / left / right / auxiliary), one DP
per family and root label, with a base probability per type that depends on hyperparameters being resampled.
`TypeTableState` holds everything they share: the per-row derivation encoding (current / add / remove, exact
checkpoints), counting decoded occurrences, the exact (sequential) predictive of a derivation (MH target) and the
independent one (the proposal's weight), the collapsed joint with the per-label groups that concentration
resampling needs, and the slice sampling of the base distributions' Bernoulli parameters (stop beta[c], foot).

A subclass sets `NAME` and `ENCODING` (((array name, dtype), ...): the per-row arrays of its derivation
encoding), provides `self.data` (`TSGData`), `self.counts` (a `tables.TypeCounts`), `self.types`
({(dp, key): occurrence}), `self.hyper` (`.alpha`: array [dp, label], `.beta`, `.NAMES`, `to_dict` /
`copy_from`), `self.settings`, `self.seed`, `self.hyper_rng`, and implements `decode(item, enc) ->
(occurrences, decisions)` (raising `InvalidDerivation`), `_count_decisions(decisions, by)`,
`_decisions_log(decisions)` (its own decisions' log-probability: insertions, adjunctions), `_proposal_log_z(item)`
and `rebuild()`.  Occurrences have `dp`, `key`, `label`, `log_p0(hyper)` and the P0 pieces `stops`, `expands`,
`fyes`, `fno` (labels whose beta / foot coin the type uses).

The predictive and the joint's terms are `treegram.bayes.dp`'s (`log_predictive`, `log_rising`, `log_normaliser`),
the same functions the TSG kernels and `DPCounts` use.

Posterior averaging (`treegram.bayes.averaging`): `snapshot()` is the encoding + hyperparameters of one sweep;
`averaged_types(snapshots)` rebuilds each one's counts and returns a `TypeView` with the mean counts n̄_e, mean
totals and mean hyperparameters, from which a formalism extracts its averaged grammar exactly as it extracts the
final sample's from `current_types()`.
"""

from __future__ import annotations

import math

from typing import Any

import attrs
import numba
import numpy as np

from treegram.bayes.dp import log_normaliser, log_predictive, log_rising
from treegram.bayes.driver import rng_from_json, rng_to_json
from treegram.bayes.hyper import slice_sample_logit
from treegram.errors import ModelFileError, TreegramError


@numba.njit(cache=True)
def log_rising_sum(n, x):  # pragma: no cover - numba
    """sum_e [log Gamma(n_e + y_e) - log Gamma(y_e)] with y_e = exp(x_e) = alpha P0(e), without underflow."""
    s = 0.0
    for i in range(n.shape[0]):
        s += log_rising(x[i], np.int64(n[i]))
    return s


class GroupedTerms:
    """The `DPCounts` surface `resample_concentrations` needs: an alpha row + per-label (n_c, counts, log P0)."""

    def __init__(self, alpha, groups):
        self.alpha = alpha
        self.num_categories = len(alpha)
        self._groups = groups

    def grouped_terms(self):
        return self._groups


class Occurrence:
    """One elementary tree in a derivation: DP family, root label, type key and the pieces of its log P0 -- the
    fixed PCFG log-prob, the labels of its frontier (beta) and expanded (1 - beta) non-root nodes, and the labels of
    its spine decisions foot / not foot (the family's foot coins, `hyper.foot_coins(dp)`)."""

    __slots__ = ("dp", "label", "key", "pcfg", "stops", "expands", "fyes", "fno")

    def __init__(self, dp: int = 0, label: int = -1):
        self.dp = dp
        self.label = label
        self.key = None
        self.pcfg = 0.0
        self.stops: list[int] = []
        self.expands: list[int] = []
        self.fyes: list[int] = []
        self.fno: list[int] = []

    def log_p0(self, hyper) -> float:
        b = hyper.beta
        lp = self.pcfg
        for c in self.stops:
            lp += math.log(b[c])
        for c in self.expands:
            lp += math.log1p(-b[c])
        if self.fyes or self.fno:
            f = hyper.foot_coins(self.dp)
            for c in self.fyes:
                lp += math.log(f[c])
            for c in self.fno:
                lp += math.log1p(-f[c])
        return lp


@attrs.frozen(kw_only=True)
class TypeView:
    """The elementary-tree types a grammar is extracted from: one sample's (`TypeTableState.current_types`) or the
    posterior average of several (`TypeTableState.averaged_types`).

    `types` {(dp, key): representative occurrence}, `count` {(dp, key): mean count n̄_e}, `summed` {(dp, key):
    count summed over the samples} (what `min_count` filters on, as in the TSG's averaged grammar), `total`
    [dp, label] mean totals n̄_c, `hyper` the (mean) hyperparameters, `samples` K."""

    types: dict
    count: dict
    summed: dict
    total: np.ndarray
    hyper: Any
    samples: int


class InvalidDerivation(Exception):
    """An encoding that is not a derivation of the tree (or has probability zero under the base)."""


class TypeTableState:
    """Shared type bookkeeping and DP probabilities of the TIG / OSTAG blocked samplers (see the module doc)."""

    NAME = "elementary-tree"
    ENCODING: tuple[tuple[str, type], ...] = ()
    _last: tuple[int, float] | None = None  # (item, log Z of its proposal) cached between propose and log_q

    def _setup(self, data, settings, seed: int, tables, hyper) -> None:
        """What every state starts with: the data, settings and seed, the per-row tables (`tables(data)`), the
        hyperparameters at their initial values (`hyper(num_labels, settings)`) and their own RNG."""
        from treegram.argtypes import seed_entropy

        self.data = data
        self.settings = settings
        self.seed = int(seed)
        self.T = tables(data)
        self.hyper = hyper(data.num_labels, settings)
        self.hyper_rng = np.random.default_rng([seed_entropy(self.seed), 2])

    # -- the derivation encoding ------------------------------------------------------------------------------
    def tree_rows(self, t: int) -> tuple[int, int]:
        return self.data.tree_rows(t)

    def num_items(self) -> int:
        return self.data.num_trees

    def current(self, item: int) -> tuple:
        lo, hi = self.tree_rows(item)
        return tuple(getattr(self, name)[lo:hi].copy() for name, _ in self.ENCODING)

    def remove(self, item: int) -> None:
        self._apply(item, self.current(item), -1)
        self._last = None

    def add(self, item: int, enc) -> None:
        lo, hi = self.tree_rows(item)
        for (name, _), values in zip(self.ENCODING, enc):
            getattr(self, name)[lo:hi] = values
        self._apply(item, enc, 1)
        self._last = None

    def _decoded(self, item: int, enc):
        """`decode(item, enc)`, remembered for the last few encodings: one blocked MH step decodes the old and the
        proposed derivation three times each (remove/add, log_p, log_q), and decoding is a pure function of the
        tree and the encoding (probabilities are computed from the occurrences afterwards)."""
        key = (item, *((a.dtype.str, a.tobytes()) for a in map(np.asarray, enc)))
        memo = self.__dict__.setdefault("_decode_memo", {})
        hit = memo.get(key)
        if hit is None:
            hit = self.decode(item, enc)  # InvalidDerivation propagates and is not remembered
            if len(memo) >= 4:
                memo.clear()
            memo[key] = hit
        return hit

    def _apply(self, item: int, enc, by: int) -> None:
        try:
            occs, decisions = self._decoded(item, enc)
        except InvalidDerivation as e:
            raise TreegramError(f"tree {item}: invalid {self.NAME} derivation ({e})") from None
        self._count_occurrences(occs, by)
        self._count_decisions(decisions, by)

    def rebuild(self) -> None:
        """The type counts and the decision counts from the encodings (a deterministic function of them, so a
        checkpoint keeps only the encodings)."""
        nl = self.data.num_labels
        self.counts = self._new_counts(nl)
        self.types: dict[tuple, Any] = {}  # (dp, key) -> an Occurrence (P0 pieces)
        self._reset_decisions(nl)
        for t in range(self.data.num_trees):
            self._apply(t, self.current(t), 1)

    def proposal(self, item: int):
        """(builder, what it built) of the per-tree proposal of `item` (the builder `_proposal_builder` gives)."""
        lo, hi = self.tree_rows(item)
        builder = self._proposal_builder(lo, hi)
        built = builder.build()
        if built is None:
            raise TreegramError(f"tree {item}: the {self.NAME} proposal derives nothing")
        return builder, built

    def log_likelihood(self) -> float:
        """Exact collapsed log joint of all elementary trees and the formalism's decisions (`_decision_joint`:
        insertions, adjunctions) given the hyperparameters."""
        total = self._types_log_joint()
        for term in self._decision_joint():
            total += term
        return total

    def num_types(self) -> tuple[int, ...]:
        """Live types per DP family."""
        out = [0] * self.hyper.alpha.shape[0]
        for dp, _ in self.counts.count:
            out[dp] += 1
        return tuple(out)

    # -- checkpoints (the counts are a function of the encodings: resuming rebuilds them) ---------------------
    def state_dict(self) -> dict[str, Any]:
        return {**{name: getattr(self, name).copy() for name, _ in self.ENCODING},
                **{f"hyper_{k}": v for k, v in self.hyper.to_dict().items()},
                "hyper_rng": rng_to_json(self.hyper_rng), "seed": self.seed, "settings": self.settings.to_dict(),
                "data": self.data.signature()}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        if state.get("data") != self.data.signature():
            raise ModelFileError("the checkpoint was written for different training data or preparation settings",
                                 hint="resume with the same --treebank, --limit and markovization options")
        from treegram.schema import Arr, Dict, check_file

        n = self.data.num_rows  # every encoding array has one entry per row, in its documented range
        ranges = {"sub": (0, 1), "adir": (0, 2), "afoot": (-1, n - 1)}
        check_file("checkpoint", state, Dict({name: Arr("iub", shape=(n,), min=ranges.get(name, (None, None))[0],
                                                        max=ranges.get(name, (None, None))[1])
                                              for name, _ in self.ENCODING}), "model", what="checkpoint")
        for name, dtype in self.ENCODING:
            setattr(self, name, np.asarray(state[name], dtype).copy())
        self.hyper.copy_from({k: state[f"hyper_{k}"] for k in self.hyper.NAMES})
        self.hyper_rng = rng_from_json(state["hyper_rng"])
        self.rebuild()
        self._last = None

    # -- posterior samples (`treegram.bayes.averaging`) -------------------------------------------------------
    def snapshot(self) -> dict[str, Any]:
        """This state as one posterior sample: the derivation encoding and the hyperparameters (the counts are a
        function of the encoding, rebuilt by `averaged_types`).  Copies only: taking it never changes the chain."""
        return {**{name: getattr(self, name).copy() for name, _ in self.ENCODING},
                **{f"hyper_{k}": np.asarray(v, np.float64).copy() for k, v in self.hyper.to_dict().items()}}

    def current_types(self) -> "TypeView":
        """The live types of this state as a `TypeView` (one sample: mean = summed = the counts)."""
        import copy

        return TypeView(types=dict(self.types), count=dict(self.counts.count), summed=dict(self.counts.count),
                        total=self.counts.total.astype(np.float64), hyper=copy.deepcopy(self.hyper), samples=1)

    def averaged_types(self, samples: list[dict[str, Any]] | None) -> "TypeView":
        """The types of snapshots (newest first) with their mean counts n̄_e = (1/K) sum_k n_e(z_k), the mean
        totals and the mean hyperparameters -- the input of the averaged grammar of `treegram.bayes.averaging`
        (eq. 3 with the ratio of the mean counts); no snapshots (None or []): the current state's types.  Each
        snapshot's counts are rebuilt from its encoding; the state is put back as it was afterwards.  A type's
        representative occurrence (P0 pieces, label) comes from the newest snapshot holding it."""
        import copy

        if not samples:
            return self.current_types()
        summed: dict[tuple, int] = {}
        types: dict[tuple, Any] = {}
        total = np.zeros(self.counts.total.shape, np.float64)
        hyper_sum = {k: np.zeros_like(np.asarray(v, np.float64)) for k, v in self.hyper.to_dict().items()}

        def collect():
            for k, n in self.counts.count.items():
                summed[k] = summed.get(k, 0) + int(n)
                if k not in types:
                    types[k] = self.types[k]
            total[...] += self.counts.total
            for k in hyper_sum:
                hyper_sum[k] += np.asarray(getattr(self.hyper, k), np.float64)

        self.for_each_sample(samples, collect)
        K = len(samples)
        hyper = copy.deepcopy(self.hyper)
        hyper.copy_from({k: v / K for k, v in hyper_sum.items()})
        return TypeView(types=types, count={k: n / K for k, n in summed.items()}, summed=summed, total=total / K,
                        hyper=hyper, samples=K)

    def for_each_sample(self, samples: list[dict[str, Any]], fn) -> list:
        """[fn() with this state's encoding and hyperparameters replaced by each snapshot's (counts rebuilt)], then
        the current ones restored (and their counts rebuilt)."""
        saved = self.snapshot()
        try:
            out = []
            for snap in samples:
                self._load_snapshot(snap)
                out.append(fn())
            return out
        finally:
            self._load_snapshot(saved)

    def _load_snapshot(self, snap: dict[str, Any]) -> None:
        for name, dtype in self.ENCODING:
            setattr(self, name, np.asarray(snap[name], dtype).copy())
        self.hyper.copy_from({k: snap[f"hyper_{k}"] for k in self.hyper.NAMES})
        self.rebuild()
        self._last = None

    # -- probabilities ----------------------------------------------------------------------------------------
    def log_p(self, item: int, enc) -> float:
        """Exact (sequential) predictive of the derivation given all other trees: the MH target."""
        try:
            occs, decisions = self._decoded(item, enc)
        except InvalidDerivation:
            return -math.inf
        return self._log_pred(occs, True) + self._decisions_log(decisions)

    def log_q(self, item: int, enc) -> float:
        """The proposal's log-probability: independent predictives x decision terms - log Z."""
        if self._last is None or self._last[0] != item:
            self._last = (item, self._proposal_log_z(item))
        try:
            occs, decisions = self._decoded(item, enc)
        except InvalidDerivation:
            return -math.inf
        return self._log_pred(occs, False) + self._decisions_log(decisions) - float(self._last[1])

    def _count_occurrences(self, occs, by: int) -> None:
        """Add (by=1) or remove (by=-1) decoded occurrences, keeping one representative per live type."""
        for o in occs:
            k = (o.dp, o.key)
            if self.counts.add(o.dp, o.label, o.key, by) == 0:
                self.types.pop(k, None)
            elif by > 0 and k not in self.types:
                self.types[k] = o

    def _log_pred(self, occs, sequential: bool) -> float:
        """log prod (n_e + alpha P0(e)) / (n + alpha) over the occurrences: with `sequential`, each one sees the
        earlier ones (the exact predictive of a whole derivation); without, all see the current counts (the
        blocked proposal's independent predictive)."""
        h = self.hyper
        lp = 0.0
        local: dict[tuple, int] = {}
        local_tot: dict[tuple, int] = {}
        for o in occs:
            k = (o.dp, o.key)
            kt = (o.dp, o.label)
            n_e = self.counts.count.get(k, 0) + local.get(k, 0)
            n = int(self.counts.total[o.dp, o.label]) + local_tot.get(kt, 0)
            lp += log_predictive(n_e, n, float(h.alpha[o.dp, o.label]), o.log_p0(h))
            if sequential:
                local[k] = local.get(k, 0) + 1
                local_tot[kt] = local_tot.get(kt, 0) + 1
        return lp

    def _groups(self) -> list[dict[int, tuple[int, np.ndarray, np.ndarray]]]:
        """Per DP family: {label: (n_c, counts of the live types, their log P0)}."""
        h = self.hyper
        families = h.alpha.shape[0]
        tmp: list[dict[int, tuple[list, list]]] = [{} for _ in range(families)]
        for (dp, key), o in self.types.items():
            ns, lps = tmp[dp].setdefault(o.label, ([], []))
            ns.append(self.counts.count[(dp, key)])
            lps.append(o.log_p0(h))
        out: list[dict[int, tuple[int, np.ndarray, np.ndarray]]] = [{} for _ in range(families)]
        for dp in range(families):
            for lab, (ns, lps) in tmp[dp].items():
                n = np.array(ns, np.int64)
                out[dp][lab] = (int(n.sum()), n, np.array(lps))
        return out

    def _types_log_joint(self, groups=None) -> float:
        """Exact collapsed log joint of all counted types over every DP family, given the hyperparameters."""
        h = self.hyper
        total = 0.0
        for dp, fam in enumerate(self._groups() if groups is None else groups):
            for lab, (n_c, n, lp0) in fam.items():
                a = h.alpha[dp, lab]
                total += log_rising_sum(n.astype(np.float64), math.log(a) + lp0)
                total += log_normaliser(float(a), n_c)
        return total

    #: the order `_resample_base` visits the base parameters in: sorted (True) or in order of first use (False)
    BASE_ORDERED = False

    def resample_hyperparameters(self) -> None:
        """One sweep's hyperparameter moves (unless the settings fix them): the formalism's decision
        probabilities (`_resample_decisions`), the base distributions' Bernoulli parameters, the concentrations."""
        s = self.settings
        if not s.resample:
            return
        self._resample_decisions()
        self._resample_base(self.hyper_rng, s.hyper_iterations, foot_family=self._foot_family,
                            params=self._base_params, ordered=self.BASE_ORDERED)
        self._resample_concentrations(self.hyper_rng, s.hyper_iterations)

    def _conjugate_draw(self, yes, no, current):
        """Per-label decision probabilities drawn from their Beta(1, 1)-prior posterior given the yes / no counts
        (labels without a decision keep `current`)."""
        from treegram.bayes.hyper import resample_beta

        seen = (yes + no) > 0
        draw = np.asarray(resample_beta(yes, no, self.hyper_rng))
        return np.where(seen, np.clip(draw, 1e-6, 1 - 1e-6), current)

    def _resample_base(self, rng, iterations: int, *, foot_family, params, ordered: bool) -> None:
        """Slice-sample every Bernoulli parameter of the base distributions -- beta[c] (stop / expand: `stops`,
        `expands` of the occurrences) and the foot coins (`fyes`, `fno`) -- from the exact collapsed joint of the
        live types.  Parameters are (which, label): which = 0 for beta, `foot_family(occurrence)` for a foot
        coin; `params(which)` is the array holding them (read and written in place); `ordered`: visit them sorted
        (else in order of first use)."""
        h = self.hyper
        types = list(self.types.items())
        if not types:
            return
        n = np.array([self.counts.count[k] for k, _ in types], np.float64)
        la = np.array([math.log(h.alpha[o.dp, o.label]) for _, o in types])
        lp0 = np.array([o.log_p0(h) for _, o in types])
        # (type index, label, code) for every use: 0 stop, 1 expand, 2 foot yes, 3 foot no
        uses: dict[tuple[int, int], dict[int, list[int]]] = {}
        for i, (_, o) in enumerate(types):
            for code, labs in ((0, o.stops), (1, o.expands), (2, o.fyes), (3, o.fno)):
                for c in labs:
                    param = (0, c) if code < 2 else (foot_family(o), c)
                    uses.setdefault(param, {}).setdefault(i, [0, 0])[0 if code in (0, 2) else 1] += 1
        for (which, c), per in (sorted(uses.items()) if ordered else uses.items()):
            idx = np.fromiter(per.keys(), np.int64, len(per))
            yes = np.array([v[0] for v in per.values()], np.float64)
            no = np.array([v[1] for v in per.values()], np.float64)
            b0 = float(params(which)[c])
            l0, m0 = math.log(b0), math.log1p(-b0)
            base = lp0[idx] - yes * l0 - no * m0
            nn, aa = n[idx], la[idx]

            def logpdf(b: float) -> float:
                return log_rising_sum(nn, aa + base + yes * math.log(b) + no * math.log1p(-b))

            b = b0
            for _ in range(iterations):
                b = slice_sample_logit(logpdf, b, rng)
            b = min(max(b, 1e-6), 1 - 1e-6)
            lp0[idx] = base + yes * math.log(b) + no * math.log1p(-b)
            params(which)[c] = b

    def _resample_concentrations(self, rng, iterations: int, groups=None) -> None:
        """Slice-sample every family's per-label concentrations alpha[dp, label] (Gamma prior)."""
        from treegram.bayes.hyper import Gamma, resample_concentrations

        h = self.hyper
        groups = self._groups() if groups is None else groups
        for dp in range(h.alpha.shape[0]):
            g = [groups[dp].get(c, (0, np.zeros(0, np.int64), np.zeros(0))) for c in range(len(h.alpha[dp]))]
            row = h.alpha[dp].copy()
            resample_concentrations(GroupedTerms(row, g), rng, prior=Gamma(), iterations=iterations,
                                    min_alpha=1e-3, max_alpha=1e7)
            h.alpha[dp] = row
