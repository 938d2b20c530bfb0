"""How to run an elementary-tree sampler (not part of the model definition): the run options TSG, TIG and
Bayesian OSTAG share, and `make_driver`, which hands them to a sampler move (`treegram.bayes.moves`:
`SamplerMove.start` is the one place that builds a driver, with its annealing schedule, checkpoints and exact
resume).  Each formalism subclasses `RunOptions` for its own extras (the TSG's sampler choice, the TIG's stored
inventory size, the OSTAG's adjunction prior) and may change a default."""

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

    def make_driver(self, move, state, callback: Callable[[dict], Any] | None = None, *,
                    site_order: str = "random"):
        """The driver of the sampler `move` (`treegram.bayes.moves.GIBBS` / `BLOCKED`) over `state`, built by the
        move from these options: resumed from the checkpoint with `resume` (exactly the uninterrupted run), else
        fresh with this seed and annealing schedule."""
        return move.start(state, seed=self.seed, iterations=self.iterations, anneal_start=self.anneal_start,
                          anneal_end=self.anneal_end, site_order=site_order, checkpoint=self.checkpoint,
                          checkpoint_every=self.checkpoint_every, resume=self.resume, callback=callback)
