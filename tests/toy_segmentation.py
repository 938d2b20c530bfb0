"""A tiny reference model implementing both sampler protocols: DP unigram word segmentation.

It has the shape of a TSG sampler in miniature -- binary flags between adjacent units decide whether two
fragments are joined or split, fragments are counted in per-category DPs with a geometric base distribution --
but its state space is small enough to enumerate, so tests can compare the samplers' empirical distributions with
the exact posterior.  It also documents, in running code, how a plugin uses `DPCounts` with `GibbsSampler`
(sites = boundaries) and `BlockedMH` (items = strings, derivations = boundary tuples).
"""

from __future__ import annotations

import itertools
import math
from typing import Any, Sequence

import numpy as np

from treegram.bayes.blocked import Proposal
from treegram.bayes.dp import DPCounts
from treegram.bayes.driver import tempered_binary
from treegram.errors import TreegramError

__all__ = ["ToySegmentation"]


class ToySegmentation:
    """Segment each string into words; a word's category is the index of its first letter in `alphabet`.

    P0(w | c) = p_stop (1 - p_stop)^(|w| - 1) / |alphabet|^(|w| - 1).  State: one flag per gap between adjacent
    letters (1 = word boundary).  `proposal_boundary` is the per-gap boundary probability of the deliberately
    crude independent proposal used by `propose` (blocked MH).
    """

    def __init__(self, strings: Sequence[str], *, alphabet: str = "ab", alphas: Sequence[float] = (1.0, 0.5),
                 p_stop: float = 0.5, proposal_boundary: float = 0.3, init: str = "split"):
        if len(alphas) != len(alphabet):
            raise TreegramError("need one concentration per alphabet letter")
        self.strings = list(strings)
        self.alphabet = alphabet
        self.p_stop = p_stop
        self.q_boundary = proposal_boundary
        self.offsets = [0, *itertools.accumulate(len(s) - 1 for s in self.strings)]
        self.site_string = [i for i, s in enumerate(self.strings) for _ in range(len(s) - 1)]
        self.flags = np.full(int(self.offsets[-1]), 1 if init == "split" else 0, dtype=np.int8)
        self.dp = DPCounts(alphas)
        self._word_id: dict[str, int] = {}
        self._derivation_ids: dict[tuple, list[int]] = {}
        for i in range(len(self.strings)):
            for w in self.words(i, self.derivation_of(i)):
                self.dp.increment(self._id(w))

    # -- helpers ---------------------------------------------------------------------------------------------

    def _log_base(self, word: str) -> float:
        n = len(word)
        return math.log(self.p_stop) + (n - 1) * (math.log1p(-self.p_stop) - math.log(len(self.alphabet)))

    def _id(self, word: str) -> int:
        kid = self._word_id.get(word)
        if kid is None:
            kid = self.dp.intern(word, self.alphabet.index(word[0]), self._log_base(word))
            self._word_id[word] = kid
        return kid

    def _ids(self, item: int, derivation: tuple[int, ...]) -> list[int]:
        """Key ids of the words of `derivation` (memoised: derivations repeat constantly in MH)."""
        memo = self._derivation_ids.get((item, derivation))
        if memo is None:
            memo = self._derivation_ids[(item, derivation)] = [self._id(w) for w in self.words(item, derivation)]
        return memo

    def derivation_of(self, item: int) -> tuple[int, ...]:
        return tuple(self.flags[self.offsets[item]: self.offsets[item + 1]].tolist())

    def words(self, item: int, flags: Sequence[int]) -> list[str]:
        s = self.strings[item]
        out, start = [], 0
        for gap, f in enumerate(flags):
            if f:
                out.append(s[start: gap + 1])
                start = gap + 1
        out.append(s[start:])
        return out

    def all_states(self) -> list[tuple[int, ...]]:
        """Every flag configuration of the whole corpus (for exact enumeration in tests)."""
        return [tuple(c) for c in itertools.product((0, 1), repeat=len(self.flags))]

    def state(self) -> tuple[int, ...]:
        return tuple(self.flags.tolist())

    def exact_posterior(self, temperature: float = 1.0) -> dict[tuple[int, ...], float]:
        """p(state)^(1/T) normalised over all states, by brute force with fresh count tables."""
        logs = {}
        for state in self.all_states():
            dp = DPCounts(self.dp.alpha)
            flags = np.array(state, dtype=np.int8)
            for i, s in enumerate(self.strings):
                for w in self.words(i, flags[self.offsets[i]: self.offsets[i + 1]]):
                    dp.increment(dp.intern(w, self.alphabet.index(w[0]), self._log_base(w)))
            logs[state] = dp.log_joint() / temperature
        m = max(logs.values())
        z = sum(math.exp(v - m) for v in logs.values())
        return {k: math.exp(v - m) / z for k, v in logs.items()}

    # -- Gibbs protocol ----------------------------------------------------------------------------------------

    def num_sites(self) -> int:
        return len(self.flags)

    def resample_site(self, site: int, rng: np.random.Generator, temperature: float) -> bool:
        item = int(self.site_string[site])
        lo, hi = int(self.offsets[item]), int(self.offsets[item + 1])
        s = self.strings[item]
        gap = site - lo
        left = gap  # word containing letter `gap` starts after the previous boundary
        while left > 0 and not self.flags[lo + left - 1]:
            left -= 1
        right = gap + 1  # word containing letter gap+1 ends at the next boundary
        while lo + right < hi and not self.flags[lo + right]:
            right += 1
        w1, w2, joined = s[left: gap + 1], s[gap + 1: right + 1], s[left: right + 1]
        id1, id2, idj = self._id(w1), self._id(w2), self._id(joined)
        old = int(self.flags[site])
        if old:
            self.dp.decrement(id1)
            self.dp.decrement(id2)
        else:
            self.dp.decrement(idj)
        new = tempered_binary(self.dp.log_predictive(idj), self.dp.log_predictive_sequence((id1, id2)), rng,
                              temperature)
        if new:
            self.dp.increment(id1)
            self.dp.increment(id2)
        else:
            self.dp.increment(idj)
        self.flags[site] = new
        return new != old

    def log_likelihood(self) -> float:
        return self.dp.log_joint()

    def state_dict(self) -> dict[str, Any]:
        return {"flags": self.flags.copy(), "dp": self.dp.state_dict()}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        flags = np.asarray(state["flags"], dtype=np.int8)
        if flags.shape != self.flags.shape:
            raise TreegramError("state does not belong to this corpus")
        self.flags = flags.copy()
        self.dp = DPCounts.from_state_dict(state["dp"])
        self._word_id = {w: self.dp.key_id(w) for w in self.dp.keys.keys()}
        self._derivation_ids = {}

    # -- blocked MH protocol -----------------------------------------------------------------------------------

    def num_items(self) -> int:
        return len(self.strings)

    def current(self, item: int) -> tuple[int, ...]:
        return self.derivation_of(item)

    def remove(self, item: int) -> None:
        for kid in self._ids(item, self.derivation_of(item)):
            self.dp.decrement(kid)

    def add(self, item: int, derivation: tuple[int, ...]) -> None:
        for kid in self._ids(item, derivation):
            self.dp.increment(kid)
        self.flags[self.offsets[item]: self.offsets[item + 1]] = derivation

    def propose(self, item: int, rng: np.random.Generator) -> Proposal:
        n = int(self.offsets[item + 1] - self.offsets[item])
        d = tuple(int(x) for x in (rng.random(n) < self.q_boundary))
        return Proposal(d, self.log_q(item, d))

    def log_q(self, item: int, derivation: tuple[int, ...]) -> float:
        k = sum(derivation)
        return k * math.log(self.q_boundary) + (len(derivation) - k) * math.log1p(-self.q_boundary)

    def log_p(self, item: int, derivation: tuple[int, ...]) -> float:
        return self.dp.log_predictive_sequence(self._ids(item, derivation))
