"""The TIG sampler state and its blocked Metropolis-Hastings model (`treegram.bayes.BlockedMH`).

State: the derivation encoding of every tree (`sub`, `adir`, `afoot`, see `model`), the hyperparameters and the
hyperparameter RNG.  Type counts are a deterministic function of the encodings (rebuilt on load), so a checkpoint
stores only those and a resumed run is the uninterrupted one.

Collapsed joint of one DP with types e (counts n_e, total n): prod_e prod_{k<n_e} (k + alpha P0(e)) /
prod_{j<n} (j + alpha); the insertion parameters phi are explicit (Beta(1,1) prior, conjugate draw every sweep).
alpha (vague Gamma prior) and the base parameters beta / foot (uniform prior) are slice-sampled from the exact
collapsed joint.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from treegram.argtypes import seed_entropy

from treegram.bayes.blocked import Proposal
from treegram.elementary.data import TSGData
from treegram.elementary.types import TypeTableState

from treegram.plugins.tig.proposal import TreeGrammar, tig_counts
from treegram.plugins.tig.derivation import LEFT, RIGHT, Hyper, TIGSettings, TIGTables, decode, phi_log


class TIGState(TypeTableState):
    """Derivations of all training trees + hyperparameters + the counts built from them (the encoding, checkpoints,
    predictives and base-parameter resampling are the core `TypeTableState`'s)."""

    NAME = "TIG"
    ENCODING = (("sub", np.int8), ("adir", np.int8), ("afoot", np.int32))

    def __init__(self, data: TSGData, settings: TIGSettings, seed: int, *, init_sub: np.ndarray | None = None,
                 init_site_prob: float = 0.5):
        self._setup(data, settings, seed, TIGTables, Hyper)
        n = data.num_rows
        if init_sub is None:
            rng = np.random.default_rng([seed_entropy(self.seed), 1])
            sub = np.zeros(n, np.int8)
            sub[data.sites] = (rng.random(len(data.sites)) < init_site_prob).astype(np.int8)
        else:
            sub = np.asarray(init_sub, np.int8).copy()
            sub[data.is_word] = 0
        sub[data.is_root] = 1
        self.sub = sub
        self.adir = np.zeros(n, np.int8)
        self.afoot = np.full(n, -1, np.int32)
        self.rebuild()
        self._last: tuple[int, float] | None = None

    # -- counts ---------------------------------------------------------------------------------------------
    _new_counts = staticmethod(tig_counts)

    def _reset_decisions(self, nl: int) -> None:
        self.phi_yes = np.zeros((3, nl), np.int64)
        self.phi_no = np.zeros((3, nl), np.int64)

    def decode(self, item: int, enc):
        lo, hi = self.tree_rows(item)
        return decode(self.T, lo, hi, enc[0], enc[1], enc[2], self.settings.tig0)

    def _count_decisions(self, phis, by: int) -> None:
        for lab, side, yes, no in phis:
            self.phi_yes[side, lab] += by * yes
            self.phi_no[side, lab] += by * no

    def _decisions_log(self, phis) -> float:
        return phi_log(phis, self.hyper)

    def _proposal_log_z(self, item: int):
        return self.proposal(item)[1].chart().log_z

    def insertions(self) -> tuple[int, int]:
        return int(np.count_nonzero(self.adir == LEFT)), int(np.count_nonzero(self.adir == RIGHT))

    def _proposal_builder(self, lo: int, hi: int) -> TreeGrammar:
        return TreeGrammar(self.T, self.counts, self.hyper, lo, hi, self.settings.tig0)

    def _decision_joint(self):
        """The insertion decisions' terms of the log joint (Bernoulli phi per side and label)."""
        for side in (LEFT, RIGHT):
            p = self.hyper.phi[side]
            yield float((self.phi_yes[side] * np.log(p) + self.phi_no[side] * np.log1p(-p)).sum())

    # -- hyperparameters ------------------------------------------------------------------------------------
    def _resample_decisions(self) -> None:
        h = self.hyper
        for side in (LEFT, RIGHT):
            h.phi[side] = self._conjugate_draw(self.phi_yes[side], self.phi_no[side], h.phi[side])

    @staticmethod
    def _foot_family(o) -> int:
        return o.dp  # a foot coin per auxiliary family (left / right) and label

    def _base_params(self, which: int) -> np.ndarray:
        return self.hyper.beta if which == 0 else self.hyper.foot[which]


class BlockedTIG(TIGState):
    """`BlockedModel` for `treegram.bayes.BlockedMH`: items are trees, the proposal is the anchored TIG -> CFG
    transform (`proposal.TreeGrammar`) sampled exactly with the core charts."""

    def propose(self, item: int, rng: np.random.Generator) -> Proposal:
        tg, g = self.proposal(item)
        chart = g.chart()
        deriv, log_z = g.sample(rng, chart)
        enc = tg.encoding(np.unique(deriv.steps[:, 2]))
        self._last = (item, float(log_z))
        return Proposal(enc, self.log_q(item, enc))

    def sweep_stats(self) -> dict[str, Any]:
        # rebuild the count tables from the encodings: their iteration order (which orders floating-point sums and
        # proposal rules) then matches a state loaded from a checkpoint, so a resumed run is the uninterrupted one
        self.rebuild()
        self.resample_hyperparameters()
        ni, nl, nr = self.num_types()
        il, ir = self.insertions()
        return {"types": ni + nl + nr, "initial": ni, "left": nl, "right": nr, "ins_left": il, "ins_right": ir}
