"""DP families of elementary-tree *types* keyed by hashable structures, for blocked samplers over fixed trees.

The TIG and Bayesian OSTAG samplers keep, besides their own formalism-specific decisions (insertions,
adjunctions), several Dirichlet-process families of elementary trees (initial / left / right / auxiliary), one DP
per family and root label, with a base probability per type that depends on hyperparameters being resampled.
`TypeTableState` holds the parts they share: counting decoded occurrences, the exact (sequential) or independent
predictive of a derivation's occurrences, and the collapsed joint with the per-label groups that concentration
resampling needs.

A subclass provides `self.counts` (`.count`: {(dp, key): n}, `.total`: array [dp, label], `.add(dp, label, key,
by) -> new count`), `self.types` ({(dp, key): occurrence}) and `self.hyper` (`.alpha`: array [dp, label]);
occurrences have `dp`, `key`, `label` and `log_p0(hyper)`.

The predictive and the joint's terms are `treegram.bayes.dp`'s (`log_predictive`, `log_rising`, `log_normaliser`),
the same functions the TSG kernels and `DPCounts` use.
"""

from __future__ import annotations

import math

import numba
import numpy as np

from treegram.bayes.dp import log_normaliser, log_predictive, log_rising


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


class TypeTableState:
    """Shared type bookkeeping and DP probabilities of the TIG / OSTAG blocked samplers (see the module doc)."""

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
