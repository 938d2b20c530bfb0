"""The substitution-site layer's sampler: the TSG state (substitution-site flags + hyperparameters) and its
collapsed Gibbs sampler `GibbsTSG` -- the basic move of the elementary-tree layer (the TSG plugin trains with it;
the TIG and Bayesian OSTAG samplers start from its cuts, `gibbs_cuts`).

State = one int8 flag per tree row, the concentrations alpha_c and stop probabilities beta_c (one per label of the
binarized, annotated trees), and the hyperparameter RNG.  The elementary-tree count table is a deterministic
function of the flags, so a checkpoint stores only these and resuming rebuilds the table: a resumed run is
bit-for-bit the uninterrupted one.

Model (Cohn et al. 2009; Post & Gildea 2009): an elementary tree e with root label c is drawn from a DP,
G_c ~ DP(alpha_c, P0(. | c)), with P0(e | c) = prod over e's CFG rules of the treebank PCFG's probability
x prod over e's frontier nonterminals of beta_label x prod over e's non-root internal nonterminals of
(1 - beta_label).  The G_c are integrated out (collapsed).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from treegram.argtypes import seed_entropy

from treegram.bayes.driver import rng_from_json, rng_to_json
from treegram.bayes.hyper import Beta, Gamma, resample_concentrations, slice_sample_logit
from treegram.errors import ModelFileError, TreegramError
from treegram.trees import Tree

from treegram.elementary import kernels as K
from treegram.elementary.data import KIND_LEX, TSGData, TSGSettings
from treegram.elementary.types import GroupedTerms


def _pow2(n: int) -> int:
    return 1 << max(10, int(n - 1).bit_length())


class TSGState:
    """Flags, hyperparameters and the count table built from them (see the module docstring)."""

    def __init__(self, data: TSGData, settings: TSGSettings, seed: int, *, prefixes: bool = False):
        self.data = data
        self.settings = settings
        self.seed = int(seed)
        nl = data.num_labels
        self.alpha = np.full(nl, float(settings.alpha))
        self.beta = np.full(nl, float(settings.beta))
        self.hyper_rng = np.random.default_rng([seed_entropy(self.seed), 2])
        self.use_prefixes = prefixes
        self.flags = self._initial_flags()
        self.rebuild()

    # -- state -----------------------------------------------------------------------------------------------
    def _initial_flags(self) -> np.ndarray:
        d = self.data
        flags = np.zeros(d.num_rows, np.int8)
        nt = ~d.is_word
        s = self.settings
        if s.init == "minimal":
            flags[nt] = 1
        elif s.init == "random":
            rng = np.random.default_rng([seed_entropy(self.seed), 1])
            flags[d.sites] = (rng.random(len(d.sites)) < s.init_site_prob).astype(np.int8)
        flags[d.is_root] = 1
        return flags

    @property
    def log_stop(self) -> np.ndarray:
        return np.log(self.beta)

    @property
    def log_expand(self) -> np.ndarray:
        return np.log1p(-self.beta)

    def rebuild(self, extra_inserts: int | None = None) -> None:
        """Recount every elementary tree of the current flags into a fresh table with room for
        `extra_inserts` more insertions (default: one per row, enough for any sweep)."""
        d = self.data
        extra = d.num_rows if extra_inserts is None else int(extra_inserts)
        live = int(self.flags.sum())
        cap = _pow2(2 * (live + extra) + 16)
        self.keys = np.zeros(cap, np.uint64)
        self.cnt = np.zeros(cap, np.int64)
        self.logb = np.zeros(cap, np.float64)
        self.cat = np.zeros(cap, np.int32)
        self.rep = np.zeros(cap, np.int64)
        self.size = np.zeros(1, np.int64)
        self.total = np.zeros(d.num_labels, np.int64)
        self._ls, self._le = self.log_stop, self.log_expand
        if self.use_prefixes:
            self.pkeys = np.zeros(_pow2(4 * d.num_rows + 16), np.uint64)
        else:
            self.pkeys = np.zeros(2, np.uint64)
        K.rebuild(self.flags, d.is_word, d.parent, d.subtree_end, d.label, d.tok_int, d.tok_front,
                  d.node_logrule, self._ls, self._le, self.keys, self.cnt, self.logb, self.cat, self.rep,
                  self.size, self.total, self.pkeys, self.use_prefixes)
        self._capacity_left = cap // 2 - int(self.size[0])

    def log_likelihood(self) -> float:
        """Exact collapsed log joint of all elementary trees given the hyperparameters."""
        return float(K.log_joint(self.keys, self.cnt, self.logb, self.cat, self.total, self.alpha))

    def live_slots(self) -> np.ndarray:
        return np.flatnonzero(self.cnt > 0)

    def num_types(self) -> int:
        return int(np.count_nonzero(self.cnt > 0))

    def state_dict(self) -> dict[str, Any]:
        return {"flags": self.flags.copy(), "alpha": self.alpha.copy(), "beta": self.beta.copy(),
                "hyper_rng": rng_to_json(self.hyper_rng), "seed": self.seed,
                "settings": self.settings.to_dict(), "data": self.data.signature()}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        if state.get("data") != self.data.signature():
            raise ModelFileError("the checkpoint was written for different training data or preparation settings",
                                 hint="resume with the same --treebank, --limit and markovization options")
        from treegram.schema import Arr, Dict, check_file

        check_file("checkpoint", state, Dict({"flags": Arr("iub", shape=self.flags.shape, values=(0, 1)),
                                              "alpha": Arr("f", min=0, finite=True), "beta": Arr("f", min=0, max=1)}),
                   "model", what="checkpoint")
        flags = np.asarray(state["flags"], dtype=np.int8)
        self.flags = flags.copy()
        self.alpha = np.asarray(state["alpha"], dtype=np.float64).copy()
        self.beta = np.asarray(state["beta"], dtype=np.float64).copy()
        self.hyper_rng = rng_from_json(state["hyper_rng"])
        self.rebuild()

    # -- hyperparameters -------------------------------------------------------------------------------------
    def resample_hyperparameters(self) -> None:
        """Slice-sample alpha_c (vague Gamma prior) and beta_c (uniform prior) from the exact collapsed joint."""
        s = self.settings
        if not (s.resample_alpha or s.resample_beta):
            return
        self.rebuild(0)  # fresh example roots for every live type
        rng = self.hyper_rng
        slots = self.live_slots()
        n = self.cnt[slots]
        cats = self.cat[slots].astype(np.int64)
        logb = self.logb[slots].copy()
        if s.resample_beta:
            prior = Beta(1.0, 1.0)
            for c, (idx, kf, mi) in self.beta_groups(slots).items():
                la = np.log(self.alpha[cats[idx]])
                lb0 = logb[idx]
                nn = n[idx]
                b0 = float(self.beta[c])
                ls0, le0 = math.log(b0), math.log1p(-b0)

                def logpdf(b: float) -> float:
                    return prior.logpdf(b) + K.beta_group_loglik(la, lb0, nn, kf, mi, math.log(b) - ls0,
                                                                 math.log1p(-b) - le0)

                b = b0
                for _ in range(s.hyper_iterations):
                    b = slice_sample_logit(logpdf, b, rng)
                b = min(max(b, 1e-6), 1 - 1e-6)
                logb[idx] = lb0 + kf * (math.log(b) - ls0) + mi * (math.log1p(-b) - le0)
                self.beta[c] = b
        if s.resample_alpha:
            order = np.argsort(cats, kind="stable")
            bounds = np.searchsorted(cats[order], np.arange(len(self.alpha) + 1))
            groups = [(int(n[order[bounds[c]:bounds[c + 1]]].sum()), n[order[bounds[c]:bounds[c + 1]]],
                       logb[order[bounds[c]:bounds[c + 1]]]) for c in range(len(self.alpha))]
            resample_concentrations(GroupedTerms(self.alpha, groups), rng, prior=Gamma(),
                                    iterations=s.hyper_iterations, min_alpha=1e-3, max_alpha=1e7)
        self.rebuild()

    def beta_groups(self, slots: np.ndarray) -> dict[int, tuple[np.ndarray, np.ndarray, np.ndarray]]:
        """For every label c: (indexes into `slots` of the live types with c-nodes below their root, number of
        c frontier nodes, number of c internal nodes) -- how beta_c enters each type's log P0.
        Needs example roots that are current (call right after `rebuild`)."""
        d = self.data
        if len(slots) == 0:
            return {}
        t_idx, t_lab, t_front = K.type_label_counts(slots, self.rep, self.flags, d.is_word, d.subtree_end, d.label)
        key = t_lab * len(slots) + t_idx
        uniq, inv = np.unique(key, return_inverse=True)
        k_front = np.bincount(inv, weights=t_front).astype(np.float64)
        m_int = np.bincount(inv, weights=1 - t_front).astype(np.float64)
        g_lab, g_idx = uniq // len(slots), uniq % len(slots)
        bounds = np.searchsorted(g_lab, np.arange(d.num_labels + 1))
        return {int(c): (g_idx[bounds[c]:bounds[c + 1]], k_front[bounds[c]:bounds[c + 1]],
                         m_int[bounds[c]:bounds[c + 1]]) for c in np.unique(g_lab).tolist()}

    # -- elementary trees --------------------------------------------------------------------------------------
    def fragment_tree(self, root: int, flags: np.ndarray | None = None) -> Tree:
        """The elementary tree rooted at row `root` (binarized labels, signature-mapped words)."""
        d = self.data
        flags = self.flags if flags is None else flags
        labels, words = d.labels, d.words

        def build(i: int) -> Tree:
            if d.kind[i] == KIND_LEX:
                return Tree(labels[d.label[i]], (words[d.word[d.child1[i]]],))
            kids = []
            for c in (d.child1[i], d.child2[i]):
                if c < 0:
                    continue
                kids.append(Tree(labels[d.label[c]], ()) if flags[c] else build(int(c)))
            return Tree(labels[d.label[i]], tuple(kids))

        # iterative enough: elementary trees are shallow compared with Python's recursion limit
        return build(int(root))

    def types(self) -> list[tuple[int, int, float, int]]:
        """(count, example root row, log P0, table slot) of every live elementary tree type, most frequent first."""
        self.rebuild(0)
        slots = self.live_slots()
        order = np.lexsort((slots, -self.cnt[slots]))
        slots = slots[order]
        return [(int(self.cnt[s]), int(self.rep[s]), float(self.logb[s]), int(s)) for s in slots]

    def snapshot(self) -> dict[str, Any]:
        """This state as one posterior sample for `treegram.bayes.averaging`: the live elementary-tree types
        (64-bit keys, counts, example root rows; in `types()` order), the flags those rows are read under, and
        the hyperparameters."""
        # `types()` recounts into a fresh table; the sampler's own table (its slot layout and example rows) is put
        # back afterwards, so taking snapshots never changes the chain
        table = ("keys", "cnt", "logb", "cat", "rep", "size", "total", "pkeys", "_capacity_left", "_ls", "_le")
        saved = {name: getattr(self, name) for name in table}
        try:
            t = self.types()
            slots = np.array([s for *_, s in t], dtype=np.int64)
            keys = self.keys[slots].copy()
        finally:
            for name, value in saved.items():
                setattr(self, name, value)
        return {"keys": keys, "counts": np.array([c for c, *_ in t], dtype=np.int64),
                "reps": np.array([r for _, r, *_ in t], dtype=np.int64), "flags": self.flags.copy(),
                "alpha": self.alpha.copy(), "beta": self.beta.copy()}

    def check_collisions(self) -> int:
        """Rebuild every live type's bracket string from every occurrence; raise if two differ under one key.

        Returns the number of types checked."""
        d = self.data
        seen: dict[int, str] = {}
        ks, _, _, roots = K.tree_frags(0, d.num_rows, self.flags, d.is_word, d.subtree_end, d.label, d.tok_int,
                                       d.tok_front, d.node_logrule, self.log_stop, self.log_expand)
        for k, r in zip(ks.tolist(), roots.tolist()):
            text = self.fragment_tree(r).to_bracket()
            prev = seen.setdefault(k, text)
            if prev != text:
                raise TreegramError(f"64-bit key collision between elementary trees {prev} and {text}",
                                    hint="rerun with another seed (collisions are ~1e-8 events)")
        return len(seen)

    def tree_fragments(self, t: int, flags: np.ndarray | None = None):
        """Kernel view of tree t's elementary trees under `flags` (its rows) or the current state."""
        d = self.data
        lo, hi = d.tree_rows(t)
        if flags is None:
            return K.tree_frags(lo, hi, self.flags, d.is_word, d.subtree_end, d.label, d.tok_int, d.tok_front,
                                d.node_logrule, self._ls, self._le)
        saved = self.flags[lo:hi].copy()
        self.flags[lo:hi] = flags
        try:
            return K.tree_frags(lo, hi, self.flags, d.is_word, d.subtree_end, d.label, d.tok_int, d.tok_front,
                                d.node_logrule, self._ls, self._le)
        finally:
            self.flags[lo:hi] = saved


class GibbsTSG(TSGState):
    """`GibbsModel` for `treegram.bayes.GibbsSampler`: one site per non-root nonterminal row; whole sweeps run in
    the numba kernel through the `sweep` escape hatch."""

    def num_sites(self) -> int:
        return int(self.data.sites.shape[0])

    def _kernel(self, sites: np.ndarray, u: np.ndarray, temperature: float) -> int:
        d = self.data
        changed = K.gibbs_sweep(sites, u, float(temperature), self.flags, d.is_word, d.parent, d.subtree_end,
                                d.label, d.tok_int, d.tok_front, d.node_logrule, self._ls, self._le, self.keys,
                                self.cnt, self.logb, self.cat, self.rep, self.size, self.total, self.alpha)
        if changed < 0:
            raise TreegramError("TSG count table inconsistent (an elementary tree was removed twice)")
        return int(changed)

    def resample_site(self, site: int, rng: np.random.Generator, temperature: float) -> bool:
        if self._capacity_left < 2:
            self.rebuild()
        self._capacity_left -= 2
        return self._kernel(self.data.sites[[site]], rng.random(1), temperature) > 0

    def sweep(self, order: np.ndarray, rng: np.random.Generator, temperature: float) -> dict[str, Any]:
        self.rebuild()
        u = rng.random(len(order))
        changed = self._kernel(self.data.sites[np.asarray(order, dtype=np.int64)], u, temperature)
        self.resample_hyperparameters()
        return {"changed": changed}

    def sweep_stats(self) -> dict[str, Any]:
        return {"types": self.num_types()}


def gibbs_cuts(data: TSGData, settings: TSGSettings, iterations: int, seed: int, callback=None) -> np.ndarray:
    """The cut flags (int8 per prepared row) after `iterations` TSG collapsed-Gibbs sweeps on `data`: the starting
    derivations of the TIG and Bayesian OSTAG blocked samplers."""
    from treegram.bayes import GibbsSampler

    state = GibbsTSG(data, settings, seed)
    GibbsSampler(state, seed=seed, callback=callback).run(iterations)
    return state.flags.astype(np.int8)
