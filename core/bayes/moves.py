"""Sampler moves: the ways the core can resample a derivation state, contributed through the
``register_sampler_moves`` hook (see `treegram.hookspecs`), so that every formalism gets every move whose state
kind it can build.

A move names the *state kind* it works on and the sweep driver that runs it:

- ``"sites"`` — a state implementing `treegram.bayes.GibbsModel`: one binary/categorical variable per site,
  resampled from its full conditional (collapsed Gibbs; Goldwater et al. 2009, Cohn et al. 2010 section 4.1);
- ``"items"`` — a state implementing `treegram.bayes.BlockedModel`: a whole tree (or pair) resampled at once by
  Metropolis-Hastings with a proposal drawn from the formalism's per-item CFG transform (Cohn et al. 2010
  section 4.2; Johnson et al. 2007).

The built-in moves below (``gibbs`` and ``blocked``) are registered by this module exactly as a plugin's would be.
Annealing, checkpoint/resume, the trace and Ctrl-C handling belong to the drivers (`treegram.bayes.driver`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

import attrs

from treegram.bayes.blocked import BlockedMH
from treegram.bayes.driver import AnnealingSchedule, CheckpointConfig, SweepDriver
from treegram.bayes.gibbs import GibbsSampler
from treegram.errors import InputError

STATE_KINDS = ("sites", "items")


@attrs.frozen
class SamplerMove:
    """A registered sampler move: ``name`` (the ``--sampler`` value), one-line ``help``, the ``state_kind`` it
    needs from the formalism (``"sites"`` or ``"items"``) and the ``driver`` class (a `SweepDriver` subclass
    constructed as ``driver(state, seed=..., schedule=..., site_order=..., checkpoint=..., callback=...)`` and
    resumed with ``driver.resume(path, state, checkpoint=..., callback=...)``)."""

    name: str
    help: str
    state_kind: str
    driver: type[SweepDriver]

    def __attrs_post_init__(self):
        if self.state_kind not in STATE_KINDS:
            raise ValueError(f"sampler move {self.name!r}: state_kind must be one of {STATE_KINDS}")

    def start(self, state, *, seed: int, iterations: int, anneal_start: float = 1.0, anneal_end: float = 1.0,
              site_order: str = "random", checkpoint: Path | None = None, checkpoint_every: int = 1,
              resume: bool = False, callback: Callable[[dict], Any] | None = None) -> SweepDriver:
        """A driver over `state`, fresh or resumed from `checkpoint` (linear annealing when start != end)."""
        kind = "constant" if anneal_start == anneal_end else "linear"
        schedule = AnnealingSchedule(anneal_start, anneal_end, max(1, iterations), kind)
        ck = CheckpointConfig(checkpoint, every=checkpoint_every) if checkpoint else None
        if resume:
            if ck is None or not Path(ck.path).exists():
                raise InputError(f"no checkpoint to resume at {checkpoint}",
                                 hint="run without --resume first (checkpoints are written every "
                                      "--checkpoint-every iterations)")
            return self.driver.resume(ck.path, state, checkpoint=ck, callback=callback)
        return self.driver(state, seed=seed, schedule=schedule, site_order=site_order, checkpoint=ck,
                           callback=callback)


GIBBS = SamplerMove("gibbs", "collapsed node-flip Gibbs", "sites", GibbsSampler)
BLOCKED = SamplerMove("blocked", "whole-tree Metropolis-Hastings through a CFG transform", "items", BlockedMH)
CORE_MOVES = (GIBBS, BLOCKED)
