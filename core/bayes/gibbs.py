"""Generic Gibbs driver: sweeps over a model's sites with annealing, a trace, and exact checkpoint/resume.

A model (e.g. a TSG with one binary substitution flag per treebank node) implements `GibbsModel`.  The driver
only orders the sites and keeps records; the statistics live in the model (typically a `DPCounts`).  For speed a
model may implement `sweep(order, rng, temperature)` and run the whole sweep in a numba kernel; the driver then
never calls `resample_site`.
"""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

import numpy as np

from treegram.bayes.driver import (AnnealingSchedule, CheckpointConfig, SweepDriver, tempered_binary,
                                   tempered_choice)

__all__ = ["AnnealingSchedule", "CheckpointConfig", "GibbsModel", "GibbsSampler", "tempered_binary",
           "tempered_choice"]


@runtime_checkable
class GibbsModel(Protocol):
    """What `GibbsSampler` needs from a model.

    resample_site(site, rng, temperature): remove the site's current value from the statistics, draw a new one
        from the full conditional raised to the power 1/temperature (T = 0: argmax, see
        `treegram.bayes.driver` and the helpers `tempered_choice` / `tempered_binary`), add it back; return
        True when the value changed.  Use only `rng` for randomness.
    log_likelihood(): the model's log joint of the current state (e.g. `DPCounts.log_joint()`), reported per sweep.
    state_dict() / load_state_dict(d): the complete sampler-relevant state as a (nested) dict of numpy arrays and
        JSON values; after load_state_dict the model must behave exactly as the one that was saved.

    Optional: `sweep(order, rng, temperature) -> dict` runs a whole sweep over `order` itself (report
    "changed": int plus any extra JSON scalars); `sweep_stats() -> dict` adds JSON scalars to each sweep record.
    """

    def num_sites(self) -> int: ...

    def resample_site(self, site: int, rng: np.random.Generator, temperature: float) -> bool: ...

    def log_likelihood(self) -> float: ...

    def state_dict(self) -> dict[str, Any]: ...

    def load_state_dict(self, state: dict[str, Any]) -> None: ...


class GibbsSampler(SweepDriver):
    """Sweeps over all sites of a `GibbsModel`: each sweep visits the sites in a fresh random permutation drawn
    from the seeded Generator (site_order="random") or in index order ("fixed").

    >>> sampler = GibbsSampler(model, seed=1, schedule=AnnealingSchedule(5.0, 0.0, 100, "linear"),
    ...                        checkpoint=CheckpointConfig("run.ckpt", every=10))
    >>> trace = sampler.run(100)            # list of per-sweep dicts
    >>> GibbsSampler.resume("run.ckpt", fresh_model).run(100)   # after a crash: same result

    Trace records: sweep (1-based), temperature, log_likelihood, seconds, sites, changed, plus model extras.
    """

    kind = "gibbs"
    _unit_name = "sites"
    _changed_name = "changed"

    def _num_units(self) -> int:
        return self.model.num_sites()

    def _step(self, unit: int, temperature: float) -> bool:
        return self.model.resample_site(unit, self.rng, temperature)
