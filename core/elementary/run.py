"""How to run an elementary-tree sampler (not part of the model definition): the run options TSG, TIG and
Bayesian OSTAG share, and the one place that turns them into a core driver (annealing schedule, checkpoints,
exact resume).  Each formalism subclasses `RunOptions` for its own extras (the TSG's sampler choice, the TIG's
stored inventory size, the OSTAG's adjunction prior) and may change a default."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

import attrs

from treegram.errors import InputError


@attrs.frozen
class RunOptions:
    """Sweeps, seed, annealing, checkpoint/resume, the TSG Gibbs start and what the extracted grammar keeps."""

    iterations: int = 10  # sampler sweeps
    seed: int = 0
    tsg_init: int = 0  # TSG collapsed-Gibbs sweeps whose final cuts start the sampler (0: random cuts)
    anneal_start: float = 1.0
    anneal_end: float = 1.0
    checkpoint: Path | None = None
    checkpoint_every: int = 1
    resume: bool = False
    min_count: int = 1  # elementary trees kept in the parsing grammar
    prune_threshold: float = 1e-5  # coarse-to-fine pruning posterior of the parsing model

    def __attrs_post_init__(self):
        if self.iterations < 0:
            raise InputError("--iterations must be >= 0")
        if self.tsg_init < 0:
            raise InputError("--tsg-init must be >= 0")

    def schedule(self):
        """The annealing schedule over `iterations` sweeps (constant unless start and end differ)."""
        from treegram.bayes import AnnealingSchedule

        kind = "constant" if self.anneal_start == self.anneal_end else "linear"
        return AnnealingSchedule(self.anneal_start, self.anneal_end, max(1, self.iterations), kind)

    def checkpoint_config(self):
        from treegram.bayes import CheckpointConfig

        return CheckpointConfig(self.checkpoint, every=self.checkpoint_every) if self.checkpoint else None

    def make_driver(self, driver_cls, state, callback: Callable[[dict], Any] | None = None, **options):
        """A `GibbsSampler` / `BlockedMH` (`driver_cls`) over `state`: resumed from the checkpoint with `resume`
        (exactly the uninterrupted run), else fresh with this seed and schedule (`options`: e.g. site_order)."""
        ck = self.checkpoint_config()
        if self.resume:
            if ck is None or not Path(ck.path).exists():
                raise InputError(f"no checkpoint to resume at {self.checkpoint}",
                                 hint="run without --resume first (checkpoints are written every --checkpoint-every "
                                      "iterations)")
            return driver_cls.resume(ck.path, state, checkpoint=ck, callback=callback)
        return driver_cls(state, seed=self.seed, schedule=self.schedule(), checkpoint=ck, callback=callback,
                          **options)
