"""Posterior averaging: a grammar from several samples of one Markov chain instead of its final sample.

A sweep sampler's final state is one draw from the posterior over derivations; the grammar extracted from it
inherits that draw's noise (rare elementary trees present or absent by chance).  Averaging over K draws of the
same chain is the Monte Carlo estimate of the posterior predictive rule probability (Cohn et al. 2010, eq. 3,
averaged over the posterior of the derivations z):

    P(e | c, data) = E_z[(n_e(z) + alpha_c P0(e | c)) / (n_c(z) + alpha_c)]
                  ~= (n̄_e + alpha_c P0(e | c)) / (n̄_c + alpha_c),     n̄_e = (1/K) sum_k n_e(z_k)

where z_1..z_K are the states after sweeps N, N - T, ..., N - (K-1) T of an N-sweep run (T = `thin`), only those
after the burn-in (sweep > `burn_in`).  The right-hand side replaces the mean of the ratios by the ratio of the
mean counts (alpha_c and the base's stop probabilities: their means over the K draws): it keeps the grammar one
Goodman transform with fractional counts, in which an elementary tree present in j of the K draws keeps j/K of
its weight, instead of a mixture of K grammars.  With K = 1 it is exactly the final sample's grammar.

The pieces, shared by every sampling formalism:

* `AveragingOptions(samples=K, thin=T, burn_in=B)`: which sweeps are collected (`sweeps(N)`).
* `SampleCollector`: attached to a `SweepDriver` (`collector.attach(driver)`), it calls the state's
  ``snapshot()`` (a dict of arrays and JSON values, e.g. fragment keys and counts) right after each collected
  sweep -- before that sweep's checkpoint is written -- and keeps the snapshots in the driver's checkpoint, so a
  resumed run collects exactly what the uninterrupted run does (resuming with other --iterations / --average /
  --thin is refused when a snapshot it needs was never taken).
* `average_option(K)`, `thin_option()`, `options_averaging(settings)`: the `--average` / `--thin` options of a
  formalism's ``treegram train`` settings (one definition for every sampling formalism) and the
  `AveragingOptions` they give.
* `average_counts`: the per-key mean counts over the snapshots, with a representative (snapshot, position) of
  every key -- the input of a formalism's grammar extraction (the TSG's: `plugins/tsg/model.py`).
"""

from __future__ import annotations

from typing import Any, Callable

import attrs
import numpy as np

from treegram.errors import InputError, ModelFileError
from treegram.options import SettingsRecord

__all__ = ["AveragingOptions", "SampleCollector", "average_counts", "average_option", "thin_option",
           "options_averaging"]


@attrs.frozen
class AveragingOptions(SettingsRecord):
    """Average the grammar over `samples` states of the chain, `thin` sweeps apart, ending at the final sweep.

    `thin=None` spreads the samples evenly over the sweeps after the burn-in (T = max(1, (N - B) // K));
    `burn_in=None` is half the run (B = N // 2).  Draws at or before the burn-in are dropped, so a short run
    averages fewer samples (at least the final one); the model records the sweeps it used."""

    samples: int = 1
    thin: int | None = None
    burn_in: int | None = None

    def __attrs_post_init__(self):
        if self.samples < 1:
            raise InputError(f"--average must be >= 1, got {self.samples}", hint="1 = the final sample only")
        if self.thin is not None and self.thin < 1:
            raise InputError(f"--thin must be >= 1, got {self.thin}")
        if self.burn_in is not None and self.burn_in < 0:
            raise InputError(f"burn-in must be >= 0 sweeps, got {self.burn_in}")

    def sweeps(self, total: int) -> list[int]:
        """The 1-based sweeps whose states are averaged in a `total`-sweep run, ascending ([] for total = 0)."""
        if total <= 0:
            return []
        burn = total // 2 if self.burn_in is None else self.burn_in
        thin = self.thin if self.thin is not None else max(1, (total - burn) // self.samples)
        picked = [total - i * thin for i in range(self.samples)]
        kept = [s for s in picked if s > burn and s >= 1]
        return sorted(kept) if kept else [total]


class SampleCollector:
    """Snapshots of a sampler state at the sweeps `options.sweeps(total)`; checkpointed with the driver."""

    name = "averaging"

    def __init__(self, options: AveragingOptions, total: int, snapshot: Callable[[], dict[str, Any]], *,
                 name: str = "averaging"):
        self.name = name  # the checkpoint key (several collectors with different schedules may share a driver)
        self.options = options
        self.total = int(total)
        self.schedule = options.sweeps(self.total)
        self._snapshot = snapshot
        self.taken: dict[int, dict[str, Any]] = {}

    # -- the driver protocol (`SweepDriver.attach`) ------------------------------------------------------------
    def attach(self, driver) -> "SampleCollector":
        """Register with `driver` (restoring snapshots from its checkpoint when it was resumed) and check that
        no sweep of the schedule already done is missing."""
        driver.attach(self.name, self)
        missing = [s for s in self.schedule if s <= driver.sweeps_done and s not in self.taken]
        if missing:
            raise InputError(f"the checkpoint after {driver.sweeps_done} sweeps holds no sample of sweep "
                             f"{missing[0]}, which --average {self.options.samples} over {self.total} iterations "
                             "needs", hint="resume with the original --iterations/--average/--thin, or train "
                                           "again without --resume")
        return self

    def after_sweep(self, driver, record: dict[str, Any]) -> None:
        sweep = int(driver.sweeps_done)
        if sweep in self.schedule and sweep not in self.taken:
            self.taken[sweep] = self._snapshot()

    def state_dict(self) -> dict[str, Any]:
        # string keys: `split_state` walks dicts and stores their arrays in the checkpoint bundle
        return {"options": self.options.to_dict(), "taken": {str(s): snap for s, snap in self.taken.items()}}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        try:
            self.taken = {int(s): dict(snap) for s, snap in state["taken"].items()}
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise ModelFileError(f"corrupt averaging snapshots in the checkpoint ({type(exc).__name__})",
                                 hint="delete it and train again without --resume") from None

    # -- results -------------------------------------------------------------------------------------------------
    def samples(self) -> list[dict[str, Any]]:
        """The snapshots of the schedule, newest first (each with its ``sweep``); raises if one is missing
        (the run stopped early)."""
        out = []
        for s in sorted(self.schedule, reverse=True):
            if s not in self.taken:
                raise InputError(f"the run ended before sweep {s}, which the posterior average needs",
                                 hint="run all --iterations, or train with --average 1")
            out.append({**self.taken[s], "sweep": s})
        return out

    def info(self) -> dict[str, Any]:
        return {"averaged_samples": len(self.schedule), "averaged_sweeps": list(self.schedule)}


def average_counts(samples: list[dict[str, Any]], key: str = "keys", count: str = "counts"):
    """Mean count per key over `samples` (each: parallel arrays ``samples[i][key]``, ``samples[i][count]``).

    Returns (keys, summed counts, mean counts, sample index, position): one entry per distinct key, the
    representative being its first occurrence scanning the samples in the given order (newest first from
    `SampleCollector.samples`); entries are ordered by summed count (descending), then by that first occurrence,
    so a single sample keeps its own order."""
    all_keys = np.concatenate([np.asarray(s[key]) for s in samples]) if samples else np.zeros(0, np.uint64)
    all_counts = np.concatenate([np.asarray(s[count], dtype=np.int64) for s in samples]) if samples \
        else np.zeros(0, np.int64)
    which = np.concatenate([np.full(len(s[key]), i, np.int64) for i, s in enumerate(samples)]) if samples \
        else np.zeros(0, np.int64)
    pos = np.concatenate([np.arange(len(s[key]), dtype=np.int64) for s in samples]) if samples \
        else np.zeros(0, np.int64)
    uniq, first, inverse = np.unique(all_keys, return_index=True, return_inverse=True)
    summed = np.bincount(inverse.ravel(), weights=all_counts, minlength=len(uniq)).astype(np.int64)
    order = np.lexsort((first, -summed))
    first = first[order]
    k = max(1, len(samples))
    return uniq[order], summed[order], summed[order] / k, which[first], pos[first]


# -- the `treegram train NAME --average K --thin T` options ---------------------------------------------------------
def average_option(default: int, *, group: str = "parsing grammar", prefix: str = ""):
    """The ``--average K`` field of a formalism's settings class (attrs field + CLI option; `prefix` starts its
    help, e.g. "--bayesian: ")."""
    from treegram.argtypes import positive_int
    from treegram.options import option

    return option(default, help=f"{prefix}average the grammar over K samples of the chain (default {default}; 1 = "
                                "the final sample only)", type=positive_int, group=group, metavar="K")


def thin_option(*, group: str = "parsing grammar", prefix: str = ""):
    """The ``--thin T`` field of a formalism's settings class."""
    from treegram.argtypes import nonnegative_int
    from treegram.options import option

    return option(0, help=f"{prefix}sweeps between the averaged samples (default 0: spread the K samples evenly "
                          "over the second half of the run)", type=nonnegative_int, group=group, metavar="T")


def options_averaging(settings) -> AveragingOptions:
    """The `AveragingOptions` of settings with `average` / `thin` fields (thin 0 = spread evenly)."""
    return AveragingOptions(int(settings.average), int(settings.thin) or None)
