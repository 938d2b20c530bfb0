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

import math
from typing import Any

import numpy as np

from treegram.cli.argtypes import seed_entropy
from treegram.schema import Arr, Dict, check_file

from treegram.bayes.blocked import Proposal
from treegram.bayes.driver import rng_from_json, rng_to_json
from treegram.bayes.hyper import slice_sample_logit
from treegram.bayes.types import TypeTableState, log_rising_sum
from treegram.errors import ModelFileError, TreegramError

from treegram.plugins.tig.anchored import Counts, TreeGrammar
from treegram.plugins.tig.model import (LEFT, RIGHT, Hyper, Invalid, TIGSettings, Tables, decode,
                                        phi_log)
from treegram.plugins.tsg.data import TSGData


class _Terms:
    def __init__(self, alpha, groups):
        self.alpha = alpha
        self.num_categories = len(alpha)
        self._groups = groups

    def grouped_terms(self):
        return self._groups


class TIGState(TypeTableState):
    """Derivations of all training trees + hyperparameters + the counts built from them."""

    def __init__(self, data: TSGData, settings: TIGSettings, seed: int, *, init_sub: np.ndarray | None = None,
                 init_site_prob: float = 0.5):
        self.data = data
        self.settings = settings
        self.seed = int(seed)
        self.T = Tables(data)
        nl = data.num_labels
        self.hyper = Hyper(nl, settings)
        self.hyper_rng = np.random.default_rng([seed_entropy(self.seed), 2])
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
    def rebuild(self) -> None:
        nl = self.data.num_labels
        self.counts = Counts(nl)
        self.types: dict[tuple, Any] = {}  # (dp, key) -> an Occurrence (P0 pieces)
        self.phi_yes = np.zeros((3, nl), np.int64)
        self.phi_no = np.zeros((3, nl), np.int64)
        for t in range(self.data.num_trees):
            self._apply(t, self.current(t), 1)

    def tree_rows(self, t: int) -> tuple[int, int]:
        return self.data.tree_rows(t)

    def current(self, item: int):
        lo, hi = self.tree_rows(item)
        return (self.sub[lo:hi].copy(), self.adir[lo:hi].copy(), self.afoot[lo:hi].copy())

    def decode(self, item: int, enc):
        lo, hi = self.tree_rows(item)
        return decode(self.T, lo, hi, enc[0], enc[1], enc[2], self.settings.tig0)

    def _apply(self, item: int, enc, by: int) -> None:
        try:
            occs, phis = self.decode(item, enc)
        except Invalid as e:
            raise TreegramError(f"tree {item}: invalid TIG derivation ({e})") from None
        self._count_occurrences(occs, by)
        for lab, side, yes, no in phis:
            self.phi_yes[side, lab] += by * yes
            self.phi_no[side, lab] += by * no

    def num_types(self) -> tuple[int, int, int]:
        out = [0, 0, 0]
        for dp, _ in self.counts.count:
            out[dp] += 1
        return tuple(out)

    def insertions(self) -> tuple[int, int]:
        return int(np.count_nonzero(self.adir == LEFT)), int(np.count_nonzero(self.adir == RIGHT))

    # -- probabilities --------------------------------------------------------------------------------------
    def log_p(self, item: int, enc) -> float:
        try:
            occs, phis = self.decode(item, enc)
        except Invalid:
            return -math.inf
        return self._log_pred(occs, True) + phi_log(phis, self.hyper)

    def log_q(self, item: int, enc) -> float:
        if self._last is None or self._last[0] != item:
            self._last = (item, self._grammar(item)[1].chart().log_z)
        try:
            occs, phis = self.decode(item, enc)
        except Invalid:
            return -math.inf
        return self._log_pred(occs, False) + phi_log(phis, self.hyper) - float(self._last[1])

    def _grammar(self, item: int):
        lo, hi = self.tree_rows(item)
        tg = TreeGrammar(self.T, self.counts, self.hyper, lo, hi, self.settings.tig0)
        g = tg.build()
        if g is None:
            raise TreegramError(f"tree {item}: the TIG proposal grammar derives nothing")
        return tg, g

    def log_likelihood(self) -> float:
        """Exact collapsed log joint of all elementary trees and insertion decisions given the hyperparameters."""
        h = self.hyper
        total = self._types_log_joint()
        for side in (LEFT, RIGHT):
            p = h.phi[side]
            total += float((self.phi_yes[side] * np.log(p) + self.phi_no[side] * np.log1p(-p)).sum())
        return total

    # -- hyperparameters ------------------------------------------------------------------------------------
    def resample_hyperparameters(self) -> None:
        s = self.settings
        if not s.resample:
            return
        rng = self.hyper_rng
        h = self.hyper
        for side in (LEFT, RIGHT):
            seen = (self.phi_yes[side] + self.phi_no[side]) > 0
            draw = rng.beta(1.0 + self.phi_yes[side], 1.0 + self.phi_no[side])
            h.phi[side] = np.where(seen, np.clip(draw, 1e-6, 1 - 1e-6), h.phi[side])
        self._resample_base(rng)
        self._resample_concentrations(rng, s.hyper_iterations)

    def _resample_base(self, rng) -> None:
        """Slice-sample beta[c] and foot[side][c] per label from the exact collapsed joint of the live types."""
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
                    param = (0, c) if code < 2 else (o.dp, c)
                    uses.setdefault(param, {}).setdefault(i, [0, 0])[0 if code in (0, 2) else 1] += 1
        for (which, c), per in uses.items():
            idx = np.fromiter(per.keys(), np.int64, len(per))
            yes = np.array([v[0] for v in per.values()], np.float64)
            no = np.array([v[1] for v in per.values()], np.float64)
            b0 = float(h.beta[c] if which == 0 else h.foot[which][c])
            l0, m0 = math.log(b0), math.log1p(-b0)
            base = lp0[idx] - yes * l0 - no * m0
            nn, aa = n[idx], la[idx]

            def logpdf(b: float) -> float:
                return log_rising_sum(nn, aa + base + yes * math.log(b) + no * math.log1p(-b))

            b = b0
            for _ in range(self.settings.hyper_iterations):
                b = slice_sample_logit(logpdf, b, rng)
            b = min(max(b, 1e-6), 1 - 1e-6)
            lp0[idx] = base + yes * math.log(b) + no * math.log1p(-b)
            if which == 0:
                h.beta[c] = b
            else:
                h.foot[which][c] = b

    # -- checkpoints ----------------------------------------------------------------------------------------
    def state_dict(self) -> dict[str, Any]:
        return {"sub": self.sub.copy(), "adir": self.adir.copy(), "afoot": self.afoot.copy(),
                **{f"hyper_{k}": v for k, v in self.hyper.to_dict().items()},
                "hyper_rng": rng_to_json(self.hyper_rng), "seed": self.seed, "settings": self.settings.to_dict(),
                "data": self.data.signature()}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        if state.get("data") != self.data.signature():
            raise ModelFileError("the checkpoint was written for different training data or preparation settings",
                                 hint="resume with the same --treebank, --limit and markovization options")
        n = self.data.num_rows
        check_file("checkpoint", state, Dict({"sub": Arr("iub", shape=(n,), values=(0, 1)),
                                              "adir": Arr("iub", shape=(n,), min=0, max=2),
                                              "afoot": Arr("iu", shape=(n,), min=-1, max=n - 1)}),
                   "model", what="checkpoint")
        self.sub = np.asarray(state["sub"], np.int8).copy()
        self.adir = np.asarray(state["adir"], np.int8).copy()
        self.afoot = np.asarray(state["afoot"], np.int32).copy()
        self.hyper.copy_from({k: state[f"hyper_{k}"] for k in ("alpha", "beta", "foot", "phi")})
        self.hyper_rng = rng_from_json(state["hyper_rng"])
        self.rebuild()


class BlockedTIG(TIGState):
    """`BlockedModel` for `treegram.bayes.BlockedMH`: items are trees, the proposal is the anchored TIG -> CFG
    transform (`anchored.TreeGrammar`) sampled exactly with the core charts."""

    def num_items(self) -> int:
        return self.data.num_trees

    def remove(self, item: int) -> None:
        self._apply(item, self.current(item), -1)
        self._last = None

    def add(self, item: int, enc) -> None:
        lo, hi = self.tree_rows(item)
        self.sub[lo:hi], self.adir[lo:hi], self.afoot[lo:hi] = enc
        self._apply(item, enc, 1)
        self._last = None

    def propose(self, item: int, rng: np.random.Generator) -> Proposal:
        tg, g = self._grammar(item)
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
