"""The TSG's blocked sampler: `BlockedTSG`, whole-tree Metropolis-Hastings over the core substitution-site state
(`treegram.elementary.gibbs.TSGState`) with the TSG's tree-anchored Goodman-transform proposal
(`treegram.plugins.tsg.proposal`)."""

from __future__ import annotations

from typing import Any

import numpy as np

from treegram.bayes.blocked import Proposal
from treegram.elementary import kernels as K
from treegram.elementary.data import TSGData, TSGSettings
from treegram.elementary.gibbs import TSGState
from treegram.errors import TreegramError


class BlockedTSG(TSGState):
    """`BlockedModel` for `treegram.bayes.BlockedMH` (Cohn & Blunsom 2010): items are trees; the proposal is the
    tree-anchored Goodman transform of the cached elementary trees plus the base distribution
    (`treegram.plugins.tsg.proposal`), sampled exactly through the core chart decoders."""

    def __init__(self, data: TSGData, settings: TSGSettings, seed: int):
        super().__init__(data, settings, seed, prefixes=True)
        self._last: tuple[int, float] | None = None

    def num_items(self) -> int:
        return self.data.num_trees

    def current(self, item: int) -> np.ndarray:
        lo, hi = self.data.tree_rows(item)
        return self.flags[lo:hi].copy()

    def _apply(self, item: int, by: int) -> None:
        ks, lps, cs, roots = self.tree_fragments(item)
        if K.add_frags(ks, lps, cs, roots, by, self.keys, self.cnt, self.logb, self.cat, self.rep, self.size,
                       self.total) < 0:
            raise TreegramError("TSG count table inconsistent (an elementary tree was removed twice)")
        if by > 0:
            d = self.data
            for r in roots.tolist():
                K.frag_prefixes(r, self.flags, d.is_word, d.subtree_end, d.tok_int, d.tok_front, self.pkeys)

    def remove(self, item: int) -> None:
        self._apply(item, -1)

    def add(self, item: int, derivation: np.ndarray) -> None:
        lo, hi = self.data.tree_rows(item)
        if self._capacity_left < hi - lo:
            self.rebuild()
        self._capacity_left -= hi - lo
        self.flags[lo:hi] = derivation
        self._apply(item, 1)

    def propose(self, item: int, rng: np.random.Generator) -> Proposal:
        from treegram.plugins.tsg.proposal import TreeProposal

        proposal = TreeProposal.build(self, item)
        flags, log_z = proposal.sample(rng)
        self._last = (item, log_z)
        return Proposal(flags, self.log_q(item, flags))

    def log_q(self, item: int, derivation: np.ndarray) -> float:
        if self._last is None or self._last[0] != item:
            from treegram.plugins.tsg.proposal import TreeProposal

            self._last = (item, TreeProposal.build(self, item).log_z())
        ks, lps, cs, _ = self.tree_fragments(item, derivation)
        return float(K.indep_log_pred(ks, lps, cs, self.keys, self.cnt, self.total, self.alpha)) - self._last[1]

    def log_p(self, item: int, derivation: np.ndarray) -> float:
        ks, lps, cs, _ = self.tree_fragments(item, derivation)
        return float(K.seq_log_pred(ks, lps, cs, self.keys, self.cnt, self.total, self.alpha))

    def sweep_stats(self) -> dict[str, Any]:
        self.resample_hyperparameters()  # also rebuilds the table and prefix set for the next sweep
        if not (self.settings.resample_alpha or self.settings.resample_beta):
            self.rebuild()
        return {"types": self.num_types()}
