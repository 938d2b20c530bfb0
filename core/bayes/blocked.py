"""Generic blocked Metropolis-Hastings driver: resample whole derivations of items (e.g. trees) at once.

For each item: take its current derivation out of the statistics, draw a complete new derivation from an
approximating proposal q (typically a CFG transform of the grammar sampled top-down from an inside chart, built
from the counts *without* this item), and accept it with probability

    min(1, [p(new) / p(old)]^(1/T) * q(old) / q(new))

where p is the exact collapsed model probability of the derivation given all other items (for DP models the
sequence predictive `DPCounts.log_predictive_sequence`).  The accepted derivation is added back.  This is an
independence sampler per item, so any q that covers the support gives the right stationary distribution; the
closer q is to p, the higher the acceptance rate.
"""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

import attrs
import numpy as np

from treegram.bayes.driver import AnnealingSchedule, CheckpointConfig, SweepDriver, tempered_accept

__all__ = ["AnnealingSchedule", "BlockedMH", "BlockedModel", "CheckpointConfig", "Proposal"]


@attrs.frozen
class Proposal:
    """A derivation sampled from the proposal distribution together with its proposal log-probability."""

    derivation: Any
    log_q: float


@runtime_checkable
class BlockedModel(Protocol):
    """What `BlockedMH` needs from a model.  A derivation is any value the model understands.

    current(item) -> the item's derivation now in the statistics (an immutable value or a copy: it must stay
        valid after remove/add).
    remove(item) / add(item, derivation): take the current derivation out of / put `derivation` into the counts.
    propose(item, rng) -> Proposal: a fresh derivation from q given the counts without `item` (use only `rng`).
    log_q(item, derivation): log q of an arbitrary derivation under the same proposal distribution.
    log_p(item, derivation): exact model log-probability of `derivation` given all other items.
    log_likelihood(), state_dict(), load_state_dict(d): as for `GibbsModel`.
    Optional: sweep(order, rng, temperature) -> dict (report "accepted"), sweep_stats() -> dict.
    """

    def num_items(self) -> int: ...

    def current(self, item: int) -> Any: ...

    def remove(self, item: int) -> None: ...

    def propose(self, item: int, rng: np.random.Generator) -> Proposal: ...

    def log_q(self, item: int, derivation: Any) -> float: ...

    def log_p(self, item: int, derivation: Any) -> float: ...

    def add(self, item: int, derivation: Any) -> None: ...

    def log_likelihood(self) -> float: ...

    def state_dict(self) -> dict[str, Any]: ...

    def load_state_dict(self, state: dict[str, Any]) -> None: ...


class BlockedMH(SweepDriver):
    """Sweeps of blocked MH steps over all items (random or fixed order), with annealing and checkpoint/resume
    exactly like `GibbsSampler`.  Trace records: sweep, temperature, log_likelihood, seconds, items, accepted,
    acceptance_rate, plus model extras."""

    kind = "blocked-mh"
    _unit_name = "items"
    _changed_name = "accepted"
    _rate_name = "acceptance_rate"

    def _num_units(self) -> int:
        return self.model.num_items()

    def _step(self, item: int, temperature: float) -> bool:
        model = self.model
        old = model.current(item)
        model.remove(item)
        proposal = model.propose(item, self.rng)
        new = proposal.derivation
        log_p_ratio = _log_diff(model.log_p(item, new), model.log_p(item, old))
        log_q_ratio = _log_diff(model.log_q(item, old), proposal.log_q)
        accept = tempered_accept(log_p_ratio, log_q_ratio, self.rng, temperature)
        model.add(item, new if accept else old)
        return accept


def _log_diff(a: float, b: float) -> float:
    """a - b for log-probabilities, with impossible states handled: moving away from an impossible state is
    always allowed (+inf), into one never (-inf); both impossible gives NaN (reject)."""
    a = float(a)
    b = float(b)
    if b == -np.inf:
        return np.inf if a > -np.inf else np.nan
    return a - b
