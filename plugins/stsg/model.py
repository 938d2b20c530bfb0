"""The Bayesian STSG of Yamangil & Shieber (2010), section 3: corpus arrays, base distribution and the Gibbs sampler.

Elementary tree pairs e = e_s/e_t are drawn from one DP per root pair c = c_s/c_t (c_t may be epsilon: deletion
rules).  Base distribution P0(e | c): each side is grown by expand (beta, then a rule of that side's PCFG, estimated
from the training trees) / stop (1 - beta) decisions at every non-root nonterminal, the root always expanding; the
target frontier is aligned uniformly with the source frontier (1 / (m! / (m-k)!) for m source and k target frontier
nodes); deletion rules are source TSG rules whose frontier is aligned with epsilon.  (A target side may be a bare
frontier node: two source nodes aligned with one target node; it has base probability 1 on the target side.)

The sampler state is the alignment of every source node (`kernels.UNAL`, `kernels.EPS` or a target node); a site
update removes the one or two rules that depend on a node and redraws its alignment from eqs (5)-(7) raised to 1/T.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from typing import Any

import numpy as np

from treegram.bayes import hashtable as ht
from treegram.errors import InputError, TreegramError
from treegram.trees import Tree

from treegram.plugins.stsg import kernels as K
from treegram.compression.treeprep import ROOT

__all__ = ["Vocab", "PairCorpus", "STSGSampler", "Fragment", "rule_string", "fragment_pair", "estimate_side_pcfg"]


class Vocab:
    """Dense ids for labels or words (ids 0 .. len(RESERVED) - 1 are held by RESERVED names, never looked up)."""

    RESERVED: tuple[str, ...] = ()

    def __init__(self, items=()):
        self.items: list[str] = list(self.RESERVED)
        self.ids: dict[str, int] = {}
        for x in items:
            self.add(x)

    def add(self, x: str) -> int:
        i = self.ids.get(x)
        if i is None:
            i = self.ids[x] = len(self.items)
            self.items.append(x)
        return i

    def __len__(self):
        return len(self.items)


def _production(node: Tree) -> tuple:
    if node.is_preterminal:
        return (node.label, node.children[0], True)
    return (node.label, tuple(c.label for c in node.children), False)


def estimate_side_pcfg(trees) -> dict[tuple, float]:
    """log relative frequency of every production (label -> child labels, or tag -> word) in `trees`."""
    counts: Counter = Counter()
    lhs: Counter = Counter()
    for t in trees:
        for node in t.subtrees():
            if node.children:
                p = _production(node)
                counts[p] += 1
                lhs[node.label] += 1
    return {p: math.log(c / lhs[p[0]]) for p, c in counts.items()}


class _Flat:
    """Preorder-flattened trees of one side, concatenated over the corpus."""

    def __init__(self):
        self.parent: list[int] = []
        self.label: list[int] = []
        self.word: list[int] = []
        self.children: list[list[int]] = []
        self.lp: list[float] = []
        self.span: list[tuple[int, int]] = []
        self.depth: list[int] = []
        self.nodes: list[Tree] = []

    def add_tree(self, tree: Tree, labels: Vocab, words: Vocab, pcfg: dict, word_pos=None) -> tuple[int, int]:
        """Add a tree; spans are in word positions mapped through word_pos (source -> target position or -1)."""
        first = len(self.label)
        stack = [(tree, -1, 0)]
        pos = 0
        order = []
        while stack:
            node, parent, depth = stack.pop()
            nid = len(self.label)
            self.parent.append(parent)
            self.label.append(labels.add(node.label))
            self.depth.append(depth)
            self.nodes.append(node)
            self.children.append([])
            if parent >= 0:
                self.children[parent].append(nid)
            if node.is_preterminal:
                self.word.append(words.add(node.children[0]))
                self.span.append((pos, pos + 1))
                pos += 1
            else:
                self.word.append(-1)
                self.span.append((-1, -1))
            self.lp.append(pcfg.get(_production(node), -30.0) if node.children else 0.0)
            order.append(nid)
            for c in reversed(node.children):
                if isinstance(c, Tree):
                    stack.append((c, nid, depth + 1))
        # spans of phrasal nodes (postorder over the preorder ids: children have larger ids)
        for nid in reversed(order):
            if self.word[nid] < 0:
                kids = self.children[nid]
                if kids:
                    self.span[nid] = (self.span[kids[0]][0], self.span[kids[-1]][1])
                else:
                    self.span[nid] = (0, 0) if nid == first else (self.span[nid - 1][1],) * 2
        return first, len(self.label)


class PairCorpus:
    """Integer-coded source/target trees of a training corpus with everything the kernels need."""

    def __init__(self, sources: list[Tree], targets: list[Tree], keeps: list, *, beta: float = 0.1,
                 labels: Vocab | None = None, words: Vocab | None = None):
        if not (len(sources) == len(targets) == len(keeps)):
            raise InputError("sources, targets and alignments differ in number")
        if not 0 < beta < 1:
            raise TreegramError(f"beta must be in (0, 1), got {beta}")
        self.sources = [t for t in sources]
        self.targets = [t for t in targets]
        self.keeps = [np.asarray(k, dtype=bool) for k in keeps]
        self.beta = beta
        self.labels = labels or Vocab()
        self.words = words or Vocab()
        self.pcfg_s = estimate_side_pcfg(self.sources)
        self.pcfg_t = estimate_side_pcfg(self.targets)
        S, T = _Flat(), _Flat()
        self.s_range, self.t_range = [], []
        cand_lists: list[list[int]] = []
        kept_lo, kept_hi = [], []
        for src, tgt, keep in zip(self.sources, self.targets, self.keeps):
            if src.label != ROOT or tgt.label != ROOT:
                raise InputError("trees must be ROOT-wrapped (treeprep.wrap_root)")
            if len(src.leaves()) != len(keep):
                raise InputError("source tree and alignment differ in length")
            s0, s1 = S.add_tree(src, self.labels, self.words, self.pcfg_s)
            t0, t1 = T.add_tree(tgt, self.labels, self.words, self.pcfg_t)
            self.s_range.append((s0, s1))
            self.t_range.append((t0, t1))
            tpos = np.cumsum(keep) - 1  # target position of each kept source word
            by_span: dict[tuple[int, int], list[int]] = {}
            for j in range(t0, t1):
                by_span.setdefault(T.span[j], []).append(j)
            for n in range(s0, s1):
                lo, hi = S.span[n]
                kk = keep[lo:hi]
                if kk.any():
                    idx = np.flatnonzero(kk) + lo
                    span = (int(tpos[idx[0]]), int(tpos[idx[-1]]) + 1)
                    kept_lo.append(span[0])
                    kept_hi.append(span[1])
                    cand_lists.append(sorted((j for j in by_span.get(span, []) if j != t0), key=lambda j: T.depth[j])
                                      if n != s0 else [])
                else:
                    kept_lo.append(0)
                    kept_hi.append(0)
                    cand_lists.append([])
        self.S, self.T = S, T
        i32 = lambda x: np.asarray(x, dtype=np.int64)  # noqa: E731
        self.s_parent = i32(S.parent)
        self.s_label = i32(S.label)
        self.s_word = i32(S.word)
        self.s_cstart = i32(np.concatenate([[0], np.cumsum([len(c) for c in S.children])]))
        self.s_children = i32([c for cs in S.children for c in cs])
        self.s_lp = np.asarray(S.lp, dtype=np.float64)
        self.s_kept_lo = i32(kept_lo)
        self.s_kept_hi = i32(kept_hi)
        self.cand_start = i32(np.concatenate([[0], np.cumsum([len(c) for c in cand_lists])]))
        self.cands = i32([c for cs in cand_lists for c in cs])
        self.t_label = i32(T.label)
        self.t_word = i32(T.word)
        self.t_cstart = i32(np.concatenate([[0], np.cumsum([len(c) for c in T.children])]))
        self.t_children = i32([c for cs in T.children for c in cs])
        self.t_lp = np.asarray(T.lp, dtype=np.float64)
        self.t_depth = i32(T.depth)
        self.roots = i32([r[0] for r in self.s_range])
        self.t_roots = i32([r[0] for r in self.t_range])
        n_s = len(S.label)
        is_root = np.zeros(n_s, dtype=bool)
        is_root[self.roots] = True
        has_cands = np.diff(self.cand_start) > 0
        deleted = self.s_kept_lo == self.s_kept_hi
        self.sites = np.flatnonzero(~is_root & (deleted | has_cands)).astype(np.int64)
        self.max_nodes = max(max(b - a for a, b in self.s_range), max(b - a for a, b in self.t_range)) + 8

    @property
    def n_labels(self) -> int:
        return len(self.labels)

    def G(self) -> tuple:
        return (self.s_parent, self.s_label, self.s_word, self.s_cstart, self.s_children, self.s_lp,
                self.s_kept_lo, self.s_kept_hi, self.cand_start, self.cands, self.t_label, self.t_word,
                self.t_cstart, self.t_children, self.t_lp, self.t_depth, math.log(self.beta),
                math.log1p(-self.beta), np.int64(self.n_labels))

# -- readable elementary tree pairs --------------------------------------------------------------------------------

class Fragment:
    """An elementary tree pair in the paper's notation, e.g. ``(S PP[] NP[1] VP[2]) / (S NP[1] VP[2])``."""

    __slots__ = ("source", "target", "cs", "ct")

    def __init__(self, source: Tree, target: Tree | None):
        self.source = source
        self.target = target  # None: aligned with epsilon (deletion rule)
        self.cs = source.label
        self.ct = None if target is None else _frontier_label(target.label) if not target.children else target.label

    @property
    def category(self) -> str:
        return f"{self.cs} / {self.ct if self.ct is not None else 'ε'}"

    def __str__(self) -> str:
        return rule_string(self.source, self.target)


_FRONT = re.compile(r"^(.*)\[(\d*)\]$")


def _frontier_label(label: str) -> str:
    m = _FRONT.match(label)
    return m.group(1) if m else label


def frontier_index(label: str) -> int | None:
    """1, 2, ... for target-aligned frontier labels like "NP[1]", 0 for "NP[]", None for other nodes."""
    m = _FRONT.match(label)
    if not m:
        return None
    return int(m.group(2)) if m.group(2) else 0


def _fmt(t) -> str:
    if isinstance(t, str):
        return t
    if not t.children:
        return t.label
    return "(" + t.label + " " + " ".join(_fmt(c) for c in t.children) + ")"


def rule_string(source: Tree, target: Tree | None) -> str:
    return f"{_fmt(source)} / {_fmt(target) if target is not None else 'ε'}"


def fragment_pair(corpus: PairCorpus, a: np.ndarray, r: int) -> Fragment:
    """The elementary tree pair rooted at aligned source node r under state a (Python, for grammars and tests)."""
    S, T = corpus.S, corpus.T
    ftgt: list[int] = []

    def build_s(v: int) -> Tree:
        if v != r and a[v] != K.UNAL:
            if a[v] >= 0:
                ftgt.append(int(a[v]))
                return Tree(f"{S.nodes[v].label}[{len(ftgt)}]", ())
            return Tree(f"{S.nodes[v].label}[]", ())
        node = S.nodes[v]
        if node.is_preterminal:
            return node
        return Tree(node.label, tuple(build_s(c) for c in S.children[v]))

    src = build_s(r)
    if a[r] < 0:
        return Fragment(src, None)
    ar = int(a[r])
    if len(ftgt) == 1 and ftgt[0] == ar:
        return Fragment(src, Tree(f"{T.nodes[ar].label}[1]", ()))

    def build_t(v: int) -> Tree:
        if v in ftgt:
            return Tree(f"{T.nodes[v].label}[{ftgt.index(v) + 1}]", ())
        node = T.nodes[v]
        if node.is_preterminal:
            return node
        return Tree(node.label, tuple(build_t(c) for c in T.children[v]))

    return Fragment(src, build_t(ar))


# -- the sampler -----------------------------------------------------------------------------------------------------

class STSGSampler:
    """GibbsModel over source-node alignments (use with `treegram.bayes.GibbsSampler`; whole sweeps run in numba)."""

    def __init__(self, corpus: PairCorpus, *, alpha: float = 100.0, seed: int = 0, init: str = "random"):
        if not (alpha > 0 and math.isfinite(alpha)):
            raise TreegramError(f"alpha must be positive, got {alpha}")
        self.corpus = corpus
        self.alpha = float(alpha)
        self._G = corpus.G()
        n = len(corpus.s_label)
        self.stack = np.zeros(4 * corpus.max_nodes + 16, dtype=np.int64)
        self.ftgt = np.zeros(corpus.max_nodes + 16, dtype=np.int64)
        self.n_cats = (corpus.n_labels + 1) * (corpus.n_labels + 1)
        size = 1 << max(10, int(math.ceil(math.log2(8 * n + 16))))
        self._alloc(size)
        self.a = np.full(n, K.UNAL, dtype=np.int64)
        self.a[corpus.roots] = corpus.t_roots
        if init == "random":
            self._random_init(np.random.default_rng(seed))
        elif init == "maximal":
            self.a = maximal_alignment(corpus)
        elif init != "none":
            raise TreegramError(f"unknown init {init!r}", hint="use random, maximal or none")
        self._recount()

    def _alloc(self, size: int) -> None:
        # the core hash table: (keys, counts, log P0, category, no example roots, [occupied slots, live rules])
        self.table = ht.new_table(size, examples=False)
        self.ncat = np.zeros(self.n_cats, dtype=np.int64)

    @property
    def num_rules(self) -> int:
        """Distinct elementary tree pairs of the current state (live table entries)."""
        return int(self.table[5][1])

    def _random_init(self, rng: np.random.Generator) -> None:
        """A random derivation: top-down, each site aligned with probability 1/2 to a random admissible value."""
        c = self.corpus
        opts = np.empty(64, dtype=np.int64)
        site_set = np.zeros(len(self.a), dtype=bool)
        site_set[c.sites] = True
        for n in range(len(self.a)):  # preorder: parents before children
            if not site_set[n]:
                continue
            k, _ = K.site_options(n, self.a, c.s_parent, c.s_kept_lo, c.s_kept_hi, c.cand_start, c.cands, c.t_depth,
                                  c.s_cstart, c.s_children, self.stack, opts)
            if k > 1 and rng.random() < 0.5:
                self.a[n] = opts[1 + rng.integers(k - 1)]

    def _recount(self) -> None:
        self._alloc(len(self.table[0]))
        aligned = np.flatnonzero(self.a != K.UNAL).astype(np.int64)
        if not K.add_all(self.a, self._G, aligned, self.table, self.ncat, self.stack, self.ftgt, 1):
            raise TreegramError("STSG sampler count tables became inconsistent (internal error)")

    def _maybe_rehash(self) -> None:
        """Between sweeps: drop the entries whose count fell to 0 once the table is 1/8 occupied (keeping probe
        chains short: the table is sized for 8 slots per source node and a sweep adds at most 2 rules per site),
        doubling it when the live rules alone fill 1/16."""
        size = len(self.table[0])
        occupied, live = int(self.table[5][0]), int(self.table[5][1])
        if occupied > size // 8:
            self.table = ht.rehash(*self.table, size * 2 if live > size // 16 else size)

    # -- GibbsModel protocol --------------------------------------------------------------------------------------
    def num_sites(self) -> int:
        return len(self.corpus.sites)

    def sweep(self, order: np.ndarray, rng: np.random.Generator, temperature: float) -> dict:
        self._maybe_rehash()
        uniforms = rng.random(len(order))
        changed = K.sweep_kernel(self.corpus.sites[order], uniforms, float(temperature), self.a, self._G, self.table,
                                 self.ncat, self.alpha, self.stack, self.ftgt)
        if changed < 0:
            raise TreegramError("STSG sampler count tables became inconsistent (internal error)")
        return {"changed": int(changed), "rules": self.num_rules,
                "aligned": int(np.count_nonzero(self.a != K.UNAL))}

    def resample_site(self, site: int, rng: np.random.Generator, temperature: float) -> bool:
        self._maybe_rehash()
        order = np.array([site], dtype=np.int64)
        changed = K.sweep_kernel(self.corpus.sites[order], rng.random(1), float(temperature), self.a, self._G,
                                 self.table, self.ncat, self.alpha, self.stack, self.ftgt)
        if changed < 0:
            raise TreegramError("STSG sampler count tables became inconsistent (internal error)")
        return bool(changed)

    def log_likelihood(self) -> float:
        return float(K.log_joint(self.table, self.ncat, self.alpha))

    def state_dict(self) -> dict[str, Any]:
        return {"alignment": self.a.copy(), "alpha": self.alpha}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        a = np.asarray(state["alignment"], dtype=np.int64)
        if a.shape != self.a.shape:
            raise TreegramError("checkpoint does not belong to this training corpus",
                                hint="resume with the same pairs, parser and settings")
        self.a = a.copy()
        self._recount()

    # -- inspection -----------------------------------------------------------------------------------------------
    def site_log_weights(self, site_node: int) -> tuple[list[int], np.ndarray]:
        """(admissible values, their unnormalised log conditional probabilities) of source node `site_node`, with
        the rest of the state fixed (for tests against the explicit joint).  The state is left unchanged."""
        G = self._G
        i0 = K.remove_site(site_node, self.a, G, *self.table, self.ncat, self.stack, self.ftgt)
        m = 64
        opts = np.empty(m, np.int64)
        logw = np.empty(m)
        hA, hB = np.empty(m, np.uint64), np.empty(m, np.uint64)
        lA, lB = np.empty(m), np.empty(m)
        cA, cB = np.empty(m, np.int64), np.empty(m, np.int64)
        n, _ = K.option_weights(site_node, self.a, G, self.table[0], self.table[1], self.ncat, self.alpha,
                                self.stack, self.ftgt, opts, logw, hA, lA, cA, hB, lB, cB)
        # put the current rules back
        k = int(np.flatnonzero(opts[:n] == self.a[site_node])[0])
        K.count_rule(*self.table, self.ncat, hA[k], lA[k], cA[k], i0, 1)
        if opts[k] != K.UNAL:
            K.count_rule(*self.table, self.ncat, hB[k], lB[k], cB[k], site_node, 1)
        return [int(x) for x in opts[:n]], logw[:n].copy()

    def fragment_info(self, r: int) -> tuple[int, float, int, int]:
        c = self.corpus
        h, lp, cat, nw = K.frag(r, self.a, c.s_label, c.s_word, c.s_cstart, c.s_children, c.s_lp, c.t_label,
                                c.t_word, c.t_cstart, c.t_children, c.t_lp, math.log(c.beta), math.log1p(-c.beta),
                                c.n_labels, self.stack, self.ftgt)
        return int(h), float(lp), int(cat), int(nw)

    def rules(self) -> Counter:
        """Counts of the elementary tree pairs of the current state, keyed by their readable string."""
        out: Counter = Counter()
        for r in np.flatnonzero(self.a != K.UNAL):
            out[str(fragment_pair(self.corpus, self.a, int(r)))] += 1
        return out

    def fragments(self) -> list[tuple[Fragment, int]]:
        return averaged_fragments(self.corpus, [self.a])

    def snapshot(self) -> dict[str, Any]:
        """The state for posterior averaging (`treegram.bayes.averaging`): the alignment."""
        return {"alignment": self.a.copy()}


def averaged_fragments(corpus: PairCorpus, alignments: list[np.ndarray]) -> list[tuple[Fragment, float]]:
    """The elementary tree pairs of the states `alignments` with their mean counts over the states (one state:
    its counts, as ints), in order of first occurrence."""
    seen: dict[str, list] = {}
    for a in alignments:
        for r in np.flatnonzero(a != K.UNAL):
            f = fragment_pair(corpus, a, int(r))
            key = str(f)
            if key in seen:
                seen[key][1] += 1
            else:
                seen[key] = [f, 1]
    k = len(alignments)
    return [(f, n if k == 1 else n / k) for f, n in seen.values()]


def maximal_alignment(corpus: PairCorpus) -> np.ndarray:
    """The most general derivation (Cohn & Lapata's minimal rules): top-down, every source node aligned whenever it
    can be -- deleted nodes with epsilon, others with the admissible target node of the same label if any, else the
    deepest admissible one."""
    c = corpus
    a = np.full(len(c.s_label), K.UNAL, dtype=np.int64)
    a[c.roots] = c.t_roots
    stack = np.zeros(4 * c.max_nodes + 16, dtype=np.int64)
    opts = np.empty(64, dtype=np.int64)
    site_set = np.zeros(len(a), dtype=bool)
    site_set[c.sites] = True
    for n in range(len(a)):
        if not site_set[n]:
            continue
        k, _ = K.site_options(n, a, c.s_parent, c.s_kept_lo, c.s_kept_hi, c.cand_start, c.cands, c.t_depth,
                              c.s_cstart, c.s_children, stack, opts)
        if k <= 1:
            continue
        choices = [int(x) for x in opts[1:k]]
        same = [j for j in choices if j >= 0 and c.t_label[j] == c.s_label[n]]
        a[n] = same[0] if same else choices[-1]
    return a
