"""Prediction (section 3.3): a finite STSG and Viterbi decoding over a source tree (Cohn & Lapata 2007, Figure 1) on
the core tree chart (`treegram.charts.treechart`; `SentenceChart` enumerates the rule applications).

The grammar holds elementary tree pairs with log probabilities P(e | c_s/c_t).  Every source tree is parseable: for
each node, the zero-count copy rule  X/X -> (X Y1[1] .. Yn[n]) / (X Y1[1] .. Yn[n])  and deletion rule
X/eps -> (X Y1[] .. Yn[]) / eps  of its CFG production (and the copy/delete rules of its word) are always available
with the smoothed probability of an unseen rule of that root pair.  A per-word reward lambda (log scale) added for
every kept word trades grammar probability against length; `compress(..., rate=r)` searches lambda per sentence for
the requested share of kept words.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from typing import Any, Iterable

import numpy as np

from treegram.charts.treechart import TreeChart
from treegram.compression.compressor import RATE_TOLERANCE, Compression, TreeChartDecoder, rate_search
from treegram.errors import InputError
from treegram.trees import Tree

from treegram.plugins.stsg.model import Fragment, frontier_index, rule_string, _frontier_label

__all__ = ["Rule", "FiniteSTSG", "SentenceChart", "Compression", "fragment_to_json", "fragment_from_json"]

_WORD = "\x00"


def _child_key(c) -> str:
    if isinstance(c, str):
        return _WORD + c
    return _frontier_label(c.label) if not c.children else c.label


class Rule:
    __slots__ = ("source", "target", "cs", "ct", "logp", "count", "prod", "text", "frontier_ct", "target_words",
                 "n_words", "pattern")

    def __init__(self, frag: Fragment, logp: float, count: float = 0.0):
        self.source, self.target = frag.source, frag.target
        self.cs, self.ct = frag.cs, frag.ct
        self.logp = float(logp)
        self.count = float(count)
        self.prod = (self.cs, tuple(_child_key(c) for c in self.source.children))
        self.text = str(frag)
        self.pattern = _pattern(self.source)
        # target category of each frontier index (index 0 = epsilon -> None)
        self.frontier_ct: dict[int, str] = {}
        words = 0
        if self.target is not None:
            for node in self.target.subtrees():
                k = frontier_index(node.label) if not node.children else None
                if k:
                    self.frontier_ct[k] = _frontier_label(node.label)
            words = len(self.target.leaves())
        self.n_words = words

    @property
    def category(self) -> str:
        return f"{self.cs} / {self.ct if self.ct is not None else 'ε'}"


def fragment_to_json(t) -> Any:
    if isinstance(t, str):
        return t
    if not t.children:
        return [t.label]
    return [t.label, [fragment_to_json(c) for c in t.children]]


def fragment_from_json(obj) -> Tree | str:
    if isinstance(obj, str):
        return obj
    if len(obj) == 1:
        return Tree(obj[0], ())
    return Tree(obj[0], tuple(fragment_from_json(c) for c in obj[1]))


class FiniteSTSG:
    """Rules indexed by their source root production, plus the smoothed log probability of an unseen rule per root
    pair (used for the always-available copy/delete rules)."""

    def __init__(self, rules: Iterable[Rule], unseen_logp: dict[str, float], default_unseen: float):
        self.rules: list[Rule] = list(rules)
        self.unseen_logp = dict(unseen_logp)
        self.default_unseen = float(default_unseen)
        self.by_prod: dict[tuple, list[Rule]] = defaultdict(list)
        self.texts: set[str] = set()
        self._cand_cache: dict[tuple, list[Rule]] = {}  # candidate rules per source production (see _candidates)
        self._cat_ids: dict[str | None, int] = {None: 0}  # target categories of the tree charts (0 = epsilon)
        self._rule_cat_cache: dict[int, tuple] = {}
        self._cand2_cache: dict[tuple, list[Rule]] = {}
        for r in self.rules:
            self.by_prod[r.prod].append(r)
            self.texts.add(r.text)

    # -- construction -------------------------------------------------------------------------------------------
    @classmethod
    def from_counts(cls, counts: Iterable[tuple[Fragment, float]], cfg_trees: Iterable[Tree], *,
                    pseudo: float = 1.0) -> "FiniteSTSG":
        """Normalised counts with add-`pseudo` smoothing (Laplace: 1) over the rules seen in `counts` plus the copy
        and delete rules of every CFG production of `cfg_trees` (the training sources)."""
        counts = list(counts)
        seen = {str(f) for f, _ in counts}
        extra: list[Fragment] = []
        for t in cfg_trees:
            for node in t.subtrees():
                if not node.children:
                    continue
                for f in copy_delete_rules(node):
                    s = str(f)
                    if s not in seen:
                        seen.add(s)
                        extra.append(f)
        total: Counter = Counter()
        size: Counter = Counter()
        for f, n in counts:
            total[f.category] += n
            size[f.category] += 1
        for f in extra:
            size[f.category] += 1
        denom = {c: total[c] + pseudo * size[c] for c in size}
        rules = [Rule(f, math.log((n + pseudo) / denom[f.category]), n) for f, n in counts]
        rules += [Rule(f, math.log(pseudo / denom[f.category]), 0.0) for f in extra]
        unseen = {c: math.log(pseudo / (d + pseudo)) for c, d in denom.items()}
        return cls(rules, unseen, math.log(0.5))

    @classmethod
    def from_logprobs(cls, items: Iterable[tuple[Fragment, float, float]], *, unseen: dict[str, float],
                      default_unseen: float) -> "FiniteSTSG":
        return cls([Rule(f, lp, n) for f, lp, n in items], unseen, default_unseen)

    # -- persistence --------------------------------------------------------------------------------------------
    def to_json(self) -> dict:
        return {"rules": [[fragment_to_json(r.source), None if r.target is None else fragment_to_json(r.target),
                           r.logp, r.count] for r in self.rules],
                "unseen": self.unseen_logp, "default_unseen": self.default_unseen}

    @classmethod
    def from_json(cls, d: dict) -> "FiniteSTSG":
        rules = [Rule(Fragment(fragment_from_json(s), None if t is None else fragment_from_json(t)), lp, n)
                 for s, t, lp, n in d["rules"]]
        return cls(rules, d["unseen"], d["default_unseen"])

    def num_rules(self, *, seen_only: bool = True) -> int:
        return sum(1 for r in self.rules if r.count > 0) if seen_only else len(self.rules)

    # -- decoding -----------------------------------------------------------------------------------------------
    def _unseen(self, category: str) -> float:
        return self.unseen_logp.get(category, self.default_unseen)

    def _candidates(self, node: Tree, prod: tuple | None = None) -> list[Rule]:
        """The rules whose source side starts with the node's production, then its copy/delete rules if the
        grammar lacks them (memoised per production: they depend on nothing else)."""
        if prod is None:
            prod = (node.label, tuple(_child_key(c) for c in node.children))
        cached = self._cand_cache.get(prod)
        if cached is not None:
            return cached
        out = list(self.by_prod.get(prod, ()))
        for f in copy_delete_rules(node):
            if str(f) not in self.texts:
                out.append(self._unseen_rule(f))
        self._cand_cache[prod] = out
        return out

    def _unseen_rule(self, f: Fragment) -> Rule:
        """A copy/delete rule the grammar lacks, scored as an unseen rule of its root pair (subclasses with
        feature-based scores override this)."""
        return Rule(f, self._unseen(f.category))

    def _candidates2(self, node: Tree, prod: tuple, child_prods: tuple) -> list[Rule]:
        """`_candidates` narrowed by the productions of the node's children: rules whose internal source nodes just
        below the root have other productions cannot match (memoised; order kept)."""
        key = (prod, child_prods)
        got = self._cand2_cache.get(key)
        if got is None:
            got = []
            for r in self._candidates(node, prod):
                q = 0
                for kind, x, _k in r.pattern[1]:
                    if kind == 0:
                        continue
                    if kind == 2 and x[0] != child_prods[q]:
                        break
                    q += 1
                else:
                    got.append(r)
            self._cand2_cache[key] = got
        return got

    def _rule_cats(self, r: Rule) -> tuple[int, list[int]]:
        """Chart category ids of a rule's target root and of its frontier nodes in frontier (pattern) order."""
        got = self._rule_cat_cache.get(id(r))
        if got is None or got[0] is not r:
            ids = self._cat_ids

            def cid(label):
                c = ids.get(label)
                if c is None:
                    c = ids[label] = len(ids)
                return c

            got = (r, cid(r.ct), [cid(r.frontier_ct.get(k) if k else None) for k in _frontier_indices(r.pattern)])
            self._rule_cat_cache[id(r)] = got
        return got[1], got[2]

    def chart(self, source: Tree, policy=None) -> "SentenceChart":
        """The tree chart of a (ROOT-wrapped) source tree: every rule application at every node, built once and
        decoded for any per-word reward.  `policy` (`treegram.compression.policy.DeletionPolicy`): applications its
        constraints forbid are left out, its drop costs and word scores are added."""
        return SentenceChart(self, source, policy)

    def decode(self, source: Tree, reward: float = 0.0) -> tuple[Tree | None, np.ndarray, float]:
        """Best derivation of a (ROOT-wrapped) source tree: (target tree, keep mask over the words, score)."""
        return self.chart(source).decode(reward)

    def decoder(self, source: Tree, tokens: list[str], policy=None) -> TreeChartDecoder:
        """The sentence's decoding problem for the core's compressor contract (`treegram.compression.compressor`):
        Viterbi at any reward, and exact lengths from the stratified chart (rate control), under a deletion
        `policy` (`treegram.compression.policy.DeletionPolicy`) if given."""
        active = policy is not None and policy.active
        return self.chart(source, policy if active else None).decoder(tokens, policy)

    def compress(self, source: Tree, tokens: list[str], *, reward: float = 0.0, rate: float | None = None,
                 tolerance: float = RATE_TOLERANCE, policy=None) -> Compression:
        dec = self.decoder(source, tokens, policy)
        return dec.decode(reward) if rate is None else rate_search(dec, len(tokens), rate, tolerance=tolerance)


class SentenceChart:
    """Figure 1 of Cohn & Lapata (2007) for one source tree, on the core tree chart (`treegram.charts.treechart`).

    Source nodes are numbered in pre-order; the target categories are the rules' target root labels (0 = epsilon,
    a deleted node).  Every rule of the grammar whose source side matches at a node, followed by the node's
    copy/delete rules when the grammar lacks them, is one application scored log P(rule); the per-word reward of
    `decode` enters through the chart's extra-score hook (reward x target words of the rule)."""

    def __init__(self, grammar: FiniteSTSG, source: Tree, policy=None):
        nodes: list[Tree] = []
        kids: list[list] = []  # per node: child node numbers, or the word itself for word children
        stack: list[tuple[Tree, int]] = [(source, -1)]
        while stack:
            node, parent = stack.pop()
            i = len(nodes)
            nodes.append(node)
            kids.append([])
            if parent >= 0:
                kids[parent].append(i)
            for c in reversed(node.children):
                if isinstance(c, Tree):
                    stack.append((c, i))
        for i, node in enumerate(nodes):  # words in place, children in order
            it = iter(kids[i])
            kids[i] = [c if isinstance(c, str) else next(it) for c in node.children]
        word_pos: dict[int, int] = {}
        for i, node in enumerate(nodes):
            if node.is_preterminal:
                word_pos[i] = len(word_pos)
        self.source, self.nodes, self.n_words = source, nodes, len(word_pos)
        self.cats = cats = grammar._cat_ids  # target category ids (grammar-wide, append-only; 0 = epsilon)
        self.apps: list[tuple[Rule, list, list]] = []
        head_node: list[int] = []
        head_cat: list[int] = []
        scores: list[float] = []
        n_target_words: list[float] = []
        tail_ptr = [0]
        tail_node: list[int] = []
        tail_cat: list[int] = []
        prods = [(node.label, tuple(_child_key(c) for c in node.children)) for node in nodes]
        analysed = drop_cost = word_score = None
        if policy is not None:
            from treegram.compression.syntax import analyse

            analysed = analyse(source)  # the same pre-order node numbering as `nodes`
            drop_cost = policy.drop_costs(analysed)
            word_score = policy.word_scores(analysed)
        extra: list[float] = []
        for i, node in enumerate(nodes):
            if not node.children:
                continue
            for r in grammar._candidates2(node, prods[i], tuple(prods[c] for c in kids[i] if c.__class__ is int)):
                binding: list = []
                words: list = []
                if not _match(r.pattern, i, prods, kids, binding, words, word_pos):
                    continue
                if policy is not None:
                    cost, kept_words = _policy_cost(r, i, kids, binding, words, word_pos, analysed, drop_cost, policy)
                    if cost == math.inf:
                        continue  # the policy's constraints forbid this deletion
                    extra.append(float(sum(word_score[k] for k in kept_words)) - cost)
                hc, tcs = grammar._rule_cats(r)
                head_node.append(i)
                head_cat.append(hc)
                scores.append(r.logp)
                tail_node.extend([u for u, _k in binding])
                tail_cat.extend(tcs)
                tail_ptr.append(len(tail_node))
                self.apps.append((r, binding, words))
                n_target_words.append(r.n_words)
        self.chart = TreeChart.from_arrays(head_node, head_cat, range(len(self.apps)), scores, tail_ptr, tail_node,
                                           tail_cat, n_nodes=len(nodes), n_cats=len(cats))
        self.n_target_words = np.asarray(n_target_words, dtype=np.float64)
        self.policy_extra = np.asarray(extra, dtype=np.float64) if policy is not None else 0.0

    def decoder(self, tokens: list[str], policy=None) -> TreeChartDecoder:
        """This chart as the core's `SentenceDecoder` (the same root choice as `decode`; `policy`: its default
        reward, reranking and tidying)."""
        ct = self.cats.get(self.source.label)
        roots = [(0, ct)] if ct is not None and ct < self.chart.n_cats else None
        extra = self.policy_extra if isinstance(self.policy_extra, np.ndarray) else None
        return TreeChartDecoder(self.chart, self.n_target_words, tokens, self.output, roots, extra, policy)

    def decode(self, reward: float = 0.0) -> tuple[Tree | None, np.ndarray, float]:
        """The best compression for a per-word reward: (target tree, keep mask, score)."""
        vit = self.chart.viterbi(reward * self.n_target_words + self.policy_extra)
        ct = self._root_cat(vit)
        tree, keep = self.output(vit.derivation(0, ct))
        return tree, keep, vit.score(0, ct)

    def _root_cat(self, vit) -> int:
        """The target category of the root: the source's own label when derivable, else the best."""
        root_cats = vit.cats(0)
        if not root_cats:
            raise InputError("no derivation for the source tree (internal error: copy rules should always apply)")
        label = self.source.label
        if label in self.cats and self.cats[label] in root_cats:
            return self.cats[label]
        return max(root_cats, key=lambda c: vit.score(0, c))

    def kept_positions(self, e: int) -> list[int]:
        """Source word positions application e keeps: its target words are a subsequence of its source words."""
        rule, _binding, words = self.apps[e]
        if rule.target is None or not rule.target.children:
            return []
        return _kept_words(rule, words)

    def word_increments(self, gold_keep) -> np.ndarray:
        """Per application, (kept words the gold compression keeps, kept words it deletes): the (true positive,
        false positive) increments of a loss-augmented chart (`TreeChart.stratified_viterbi`, bounds = the number
        of words)."""
        gold = np.asarray(gold_keep, dtype=bool)
        out = np.zeros((len(self.apps), 2), dtype=np.int64)
        for e in range(len(self.apps)):
            for k in self.kept_positions(e):
                out[e, 0 if gold[k] else 1] += 1
        return out

    def output(self, derivation: list[int]) -> tuple[Tree | None, np.ndarray]:
        """(target tree, keep mask) of a derivation given as applications top-down, tails left to right (as the
        chart's `derivation` methods return them)."""
        keep = np.zeros(self.n_words, dtype=bool)
        it = iter(derivation)

        def build() -> Tree | None:
            e = next(it)
            rule, binding, _words = self.apps[e]
            subs = {k: build() for _u, k in binding}  # every tail, deleted ones included, in frontier order
            if rule.target is None:
                return None
            keep[self.kept_positions(e)] = True

            def inst(t):
                if isinstance(t, str):
                    return t
                if not t.children:
                    return subs[frontier_index(t.label)]
                return Tree(t.label, tuple(inst(c) for c in t.children))

            return inst(rule.target)

        return build(), keep


def _kept_words(rule: Rule, words: list) -> list:
    """The source word positions (`words`: the rule's source leaves' positions) that the rule's target keeps: its
    target words are a subsequence of its source words, matched left to right."""
    tgt_words = rule.target.leaves()
    out, j = [], 0
    for k, w in enumerate(rule.source.leaves()):
        if j < len(tgt_words) and tgt_words[j] == w:
            out.append(words[k])
            j += 1
    return out


def _policy_cost(rule: Rule, i: int, kids: list, binding: list, words: list, word_pos: dict, t, drop_cost,
                 policy) -> tuple[float, list[int]]:
    """What a deletion policy charges one rule application at source node i, and the word positions it keeps.

    Inside the rule's source fragment a node survives when a kept word or a non-deleted frontier node lies below
    it; every fragment node that is dropped while its parent survives costs `drop_cost` (the top of each deleted
    region is charged once: deeper deletions lie inside deletion rules, whose whole target is empty), and every
    surviving fragment node pays the policy's cost of its choice of surviving children."""
    if rule.target is None:
        return 0.0, []
    kept_words = _kept_words(rule, words)
    kept_pos = set(kept_words)
    frontier = {u: k for u, k in binding}
    alive: dict[int, bool] = {}
    children: dict[int, list[int]] = {}

    def walk(pattern, node) -> bool:  # the fragment below `node` (its pattern), post-order
        ks = kids[node]
        sub = []
        live = False
        for (kind, x, k), c in zip(pattern[1], ks):
            if kind == 0:
                a = word_pos[node] in kept_pos
            elif kind == 1:
                a = frontier[c] != 0
                sub.append(c)
                alive[c] = a
            else:
                a = walk(x, c)
                sub.append(c)
            live = live or a
        children[node] = sub
        alive[node] = live
        return live

    walk(rule.pattern, i)
    cost = 0.0
    for node, sub in children.items():
        if not alive[node]:
            continue
        kept = [c for c in sub if alive[c]]
        for c in sub:
            if not alive[c]:
                cost += drop_cost[c]
    return cost, kept_words


def copy_delete_rules(node: Tree) -> list[Fragment]:
    """The copy and the deletion rule of one CFG production (a node and its children)."""
    if node.is_preterminal:
        return [Fragment(node, node), Fragment(node, None)]
    kids = [c for c in node.children if isinstance(c, Tree)]
    src_copy = Tree(node.label, tuple(Tree(f"{c.label}[{k + 1}]", ()) for k, c in enumerate(kids)))
    src_del = Tree(node.label, tuple(Tree(f"{c.label}[]", ()) for c in kids))
    return [Fragment(src_copy, src_copy), Fragment(src_del, None)]


def _pattern(t: Tree) -> tuple:
    """A rule's source side for matching: (production key, children) with each child (0, word, 0) for a word,
    (1, label, variable index; 0 = deleted) for a frontier node, (2, pattern, 0) for an internal node.  The
    production key (label, child keys) is compared with the source node's in one go."""
    kids = []
    for c in t.children:
        if isinstance(c, str):
            kids.append((0, c, 0))
        elif not c.children:
            kids.append((1, _frontier_label(c.label), frontier_index(c.label) or 0))
        else:
            kids.append((2, _pattern(c), 0))
    return ((t.label, tuple(_child_key(c) for c in t.children)), tuple(kids))


def _frontier_indices(pattern: tuple) -> list[int]:
    """Variable indices (0 = deleted) of a pattern's frontier nodes, in the order `_match` binds them."""
    out = []
    for kind, x, k in pattern[1]:
        if kind == 1:
            out.append(k)
        elif kind == 2:
            out += _frontier_indices(x)
    return out


def _match(pattern: tuple, i: int, prods: list, kids: list, binding: list, words: list, word_pos: dict) -> bool:
    """Match a rule's source side (its `pattern`) at source node i (`prods`: each node's production key): frontier
    nodes go to `binding` as (node number, variable index; 0 = deleted) in frontier order, matched words to
    `words` as word positions."""
    prod, children = pattern
    if prod != prods[i]:
        return False
    ks = kids[i]
    for j in range(len(children)):
        kind, x, k = children[j]
        if kind == 1:
            binding.append((ks[j], k))
        elif kind == 0:
            words.append(word_pos[i])
        elif not _match(x, ks[j], prods, kids, binding, words, word_pos):
            return False
    return True


__all__ += ["copy_delete_rules", "rule_string"]
