"""Syntax shared by the compressors: the long tree analysed for deletion, its projection on a keep mask, and a
syntactic language model over compressed trees.

- `AnalysedTree` / `analyse`: a (ROOT-wrapped) tree flattened in pre-order with word spans and Collins heads, and
  `short_heads(keep)`: which nodes survive a deletion and their heads in the short tree.
- `project(tree, keep)`: the short tree (dropped words and emptied constituents removed, no re-bracketing).
- `SyntaxModel`: a PCFG over (short) trees with Witten-Bell back-off, optionally head-lexicalized (Charniak 1997
  style).  It is the noisy channel's source model p(s) (Knight & Marcu 2000; Yamangil & Nelken 2008, sec. 3.3) and,
  trained on a treebank, the syntactic language model any compressor's output can be scored with
  (`treegram.compression.quality`):

    p(s) = p(w_root | tag, ROOT, TOP)  x  prod_{nodes n} p(rule(n) | cat(n), head word(n))
                                       x  prod_{non-head children c of n} p(head word(c) | tag, cat(c), cat(n), head word(n))

    rule:  (cat, head word) -> (cat) -> prod_i q(B_i | cat) q(STOP | cat) -> uniform over categories + STOP
    word:  (tag, cat(c), cat(n), head word(n)) -> (tag, cat(c), cat(n)) -> (tag) -> uniform over the vocabulary + 1

- `WittenBell`: Witten-Bell (1991) interpolation, p_k(o | c) = (C(c, o) + T(c) p_{k+1}(o | c)) / (C(c) + T(c)),
  T(c) the number of distinct outcomes seen in context c.
"""

from __future__ import annotations

import math
from collections import defaultdict

from treegram.errors import InputError
from treegram.trees import Tree
from treegram.trees.heads import base_category, head_child_by_category

__all__ = ["WittenBell", "SyntaxModel", "AnalysedTree", "analyse", "project", "SEP", "TOP", "STOP", "context_key",
           "dependency_relation"]

SEP = "\t"  # tokens never contain whitespace, so tab-joined keys are unambiguous
TOP = "<TOP>"
STOP = "<STOP>"


def context_key(*parts: str) -> str:
    return SEP.join(parts)


def dependency_relation(label: str) -> str | None:
    """The dependency relation a dependency-projected tree writes after a label (``NP-nsubj`` -> ``nsubj``), or
    None (PTB function tags are upper case: ``NP-SBJ`` has none)."""
    base, sep, rel = label.rpartition("-")
    if not sep or not base or not rel or not rel[0].islower():
        return None
    return rel


class WittenBell:
    """Counts of outcomes per context and the Witten-Bell interpolated estimate against a back-off probability."""

    def __init__(self, table: dict[str, dict[str, float]] | None = None):
        self.table: dict[str, dict[str, float]] = table if table is not None else defaultdict(dict)
        self._stats: dict[str, tuple[float, int]] | None = None

    def add(self, ctx: str, outcome: str, n: float = 1.0) -> None:
        row = self.table[ctx]
        row[outcome] = row.get(outcome, 0.0) + n
        self._stats = None

    def stats(self, ctx: str) -> tuple[float, int]:
        """(C(c), T(c)): total count and number of distinct outcomes of the context."""
        if self._stats is None:
            self._stats = {c: (float(sum(r.values())), len(r)) for c, r in self.table.items()}
        return self._stats.get(ctx, (0.0, 0))

    def prob(self, ctx: str, outcome: str, backoff: float) -> float:
        total, types = self.stats(ctx)
        if total <= 0:
            return backoff
        return (self.table[ctx].get(outcome, 0.0) + types * backoff) / (total + types)

    def logprob(self, ctx: str, outcome: str, log_backoff: float) -> float:
        """log of `prob` with the back-off given as a log (no underflow for long rules' tiny back-offs)."""
        total, types = self.stats(ctx)
        if total <= 0:
            return log_backoff
        c = self.table[ctx].get(outcome, 0.0)
        if c > 0:
            return math.log(c + types * math.exp(log_backoff)) - math.log(total + types)
        return math.log(types) + log_backoff - math.log(total + types)

    def seen(self, ctx: str) -> bool:
        return self.stats(ctx)[0] > 0

    def to_json(self) -> list:
        return [[c, sorted(r.items())] for c, r in sorted(self.table.items())]

    @classmethod
    def from_json(cls, rows) -> "WittenBell":
        if not isinstance(rows, list):
            raise ValueError("a Witten-Bell table is a list of [context, [[outcome, count], ...]]")
        table: dict[str, dict[str, float]] = defaultdict(dict)
        for ctx, items in rows:
            table[str(ctx)] = {str(o): float(n) for o, n in items}
        return cls(table)


class AnalysedTree:
    """A (ROOT-wrapped) tree flattened in pre-order: labels, children, word spans, preterminal positions, the
    words and tags, and every node's long-tree (Collins) lexical head position."""

    def __init__(self, tree: Tree):
        self.tree = tree
        self.labels: list[str] = []
        self.children: list[list[int]] = []
        self.parent: list[int] = []
        self.span: list[tuple[int, int]] = []
        self.word_pos: list[int] = []  # -1 for internal nodes
        self.words: list[str] = []
        self.tags: list[str] = []
        self._build(tree, -1)
        self.head: list[int] = [0] * len(self.labels)  # long head word position
        for u in range(len(self.labels) - 1, -1, -1):
            if self.word_pos[u] >= 0:
                self.head[u] = self.word_pos[u]
            else:
                kids = self.children[u]
                self.head[u] = self.head[kids[self.head_child(u, kids)]]

    def _build(self, node: Tree, parent: int) -> int:
        u = len(self.labels)
        self.labels.append(node.label)
        self.children.append([])
        self.parent.append(parent)
        self.span.append((0, 0))
        self.word_pos.append(-1)
        lo = len(self.words)
        if node.is_preterminal:
            self.word_pos[u] = len(self.words)
            self.words.append(node.children[0])
            self.tags.append(node.label)
        else:
            if not node.children or any(isinstance(c, str) for c in node.children):
                raise InputError(f"malformed tree node {node.label!r}: a constituent needs constituent children",
                                 hint="give parser output trees (every word under a part-of-speech tag)")
            for c in node.children:
                self.children[u].append(self._build(c, u))
        self.span[u] = (lo, len(self.words))
        return u

    def __len__(self) -> int:
        return len(self.labels)

    def head_child(self, u: int, kids: list[int]) -> int:
        """Index (into `kids`) of the head among the given children of node u: in a dependency-projected tree
        (`treegram.trees.dependency`: every dependent's label carries its lower-case relation, ``NP-nsubj``) the one
        child without a relation; otherwise the Collins head."""
        bare = [i for i, c in enumerate(kids) if dependency_relation(self.labels[c]) is None]
        if len(bare) == 1 and len(kids) > 1:
            return bare[0]
        return head_child_by_category(base_category(self.labels[u]), [base_category(self.labels[c]) for c in kids])

    def short_heads(self, keep) -> tuple[list[bool], list[int], list[list[int]]]:
        """(survives, short head position, surviving children) per node for a keep mask over the words."""
        n = len(self.labels)
        alive = [False] * n
        head = [-1] * n
        kept_kids: list[list[int]] = [[] for _ in range(n)]
        for u in range(n - 1, -1, -1):
            if self.word_pos[u] >= 0:
                alive[u] = bool(keep[self.word_pos[u]])
                head[u] = self.word_pos[u] if alive[u] else -1
            else:
                kk = [c for c in self.children[u] if alive[c]]
                kept_kids[u] = kk
                if kk:
                    alive[u] = True
                    head[u] = head[kk[self.head_child(u, kk)]]
        return alive, head, kept_kids


def analyse(tree: Tree) -> AnalysedTree:
    return AnalysedTree(tree)



def project(tree: Tree, keep) -> Tree:
    """The short tree: the long tree minus the dropped words and the constituents left empty (no re-bracketing)."""
    keep = list(map(bool, keep))
    pos = [0]

    def build(node: Tree):
        if node.is_preterminal:
            k = keep[pos[0]]
            pos[0] += 1
            return node if k else None
        kids = [x for x in (build(c) for c in node.children) if x is not None]
        return Tree(node.label, tuple(kids)) if kids else None

    return build(tree) or Tree(tree.label, ())



class SyntaxModel:
    """p(rule | cat, head word) and p(dependent head word | tag, cat, parent cat, parent head word), Witten-Bell
    back-off chains as in the module docstring; `lexicalized=False` drops the head-word contexts (a PCFG)."""

    def __init__(self, lexicalized: bool = True):
        self.lexicalized = lexicalized
        self.rule_lex = WittenBell()  # (cat, head word) -> children
        self.rule = WittenBell()  # (cat) -> children
        self.child = WittenBell()  # (cat) -> child category or STOP (the sequence base of unseen rules)
        self.word_lex = WittenBell()  # (tag, cat, parent cat, parent head word) -> word
        self.word_cat = WittenBell()  # (tag, cat, parent cat) -> word
        self.word = WittenBell()  # (tag) -> word
        self.categories: set[str] = set()
        self.vocab: set[str] = set()
        self._memo: dict = {}

    # -- counting ---------------------------------------------------------------------------------------------
    def count_rule(self, cat: str, hw: str, kids: list[str]) -> None:
        out = " ".join(kids)
        if self.lexicalized:
            self.rule_lex.add(context_key(cat, hw), out)
        self.rule.add(cat, out)
        for k in kids:
            self.child.add(cat, k)
        self.child.add(cat, STOP)
        self.categories.add(cat)
        self.categories.update(kids)

    def count_word(self, w: str, tag: str, cat: str, pcat: str, phw: str) -> None:
        if self.lexicalized:
            self.word_lex.add(context_key(tag, cat, pcat, phw), w)
            self.word_cat.add(context_key(tag, cat, pcat), w)
        self.word.add(tag, w)
        self.vocab.add(w)

    # -- probabilities ----------------------------------------------------------------------------------------
    def base_rule_logp(self, cat: str, kids: tuple[str, ...]) -> float:
        u = 1.0 / (len(self.categories) + 1)
        lp = math.log(self.child.prob(cat, STOP, u))
        for k in kids:
            lp += math.log(self.child.prob(cat, k, u))
        return lp

    def rule_logp(self, cat: str, hw: str, kids: tuple[str, ...]) -> float:
        key = ("r", cat, hw if self.lexicalized else "", kids)
        got = self._memo.get(key)
        if got is None:
            out = " ".join(kids)
            lp = self.rule.logprob(cat, out, self.base_rule_logp(cat, kids))
            if self.lexicalized:
                lp = self.rule_lex.logprob(context_key(cat, hw), out, lp)
            got = self._memo[key] = lp
        return got

    def word_logp(self, w: str, tag: str, cat: str, pcat: str, phw: str) -> float:
        key = ("w", w, tag, cat, pcat, phw) if self.lexicalized else ("w", w, tag)
        got = self._memo.get(key)
        if got is None:
            p = self.word.prob(tag, w, 1.0 / (len(self.vocab) + 1))
            if self.lexicalized:
                p = self.word_cat.prob(context_key(tag, cat, pcat), w, p)
                p = self.word_lex.prob(context_key(tag, cat, pcat, phw), w, p)
            got = self._memo[key] = math.log(p)
        return got

    # -- trees ------------------------------------------------------------------------------------------------
    def events(self, t: AnalysedTree, alive, head, kept_kids, root: int = 0, *, root_word: bool = True):
        """The (kind, args) events generating the surviving part of t below `root`: its rules, the head words of
        non-head children and (root_word) the root's own head word as a dependent of TOP."""
        out = []
        if root_word:
            h = head[root]
            out.append(("w", (t.words[h], t.tags[h], t.labels[root], TOP, TOP)))
        stack = [root]
        while stack:
            u = stack.pop()
            if t.word_pos[u] >= 0:
                continue
            kk = kept_kids[u]
            hw = t.words[head[u]]
            out.append(("r", (t.labels[u], hw, tuple(t.labels[c] for c in kk))))
            for c in kk:
                if head[c] != head[u]:
                    out.append(("w", (t.words[head[c]], t.tags[head[c]], t.labels[c], t.labels[u], hw)))
            stack.extend(kk)
        return out

    def count(self, events) -> None:
        for kind, a in events:
            if kind == "r":
                self.count_rule(a[0], a[1], list(a[2]))
            else:
                self.count_word(*a)

    def logp(self, events) -> float:
        return sum(self.rule_logp(*a) if kind == "r" else self.word_logp(*a) for kind, a in events)

    def to_json(self) -> dict:
        return {"lexicalized": self.lexicalized, "rule_lex": self.rule_lex.to_json(), "rule": self.rule.to_json(),
                "child": self.child.to_json(), "word_lex": self.word_lex.to_json(),
                "word_cat": self.word_cat.to_json(), "word": self.word.to_json(),
                "categories": sorted(self.categories), "vocab": sorted(self.vocab)}

    @classmethod
    def from_json(cls, d: dict) -> "SyntaxModel":
        m = cls(bool(d["lexicalized"]))
        for name in ("rule_lex", "rule", "child", "word_lex", "word_cat", "word"):
            setattr(m, name, WittenBell.from_json(d[name]))
        m.categories = set(d["categories"])
        m.vocab = set(d["vocab"])
        return m


def witten_bell_schema():
    """A saved `WittenBell` table: ``[[context, [[outcome, count], ...]], ...]`` with finite counts >= 0."""
    from treegram.schema import CountRows

    return CountRows()


def syntax_model_schema():
    """A saved `SyntaxModel`: real booleans, Witten-Bell tables of finite counts >= 0, label and word lists."""
    from treegram.schema import Bool, Dict, List, Str

    table = witten_bell_schema()
    return Dict({"lexicalized": Bool(), **{name: table for name in ("rule_lex", "rule", "child", "word_lex",
                                                                     "word_cat", "word")},
                 "categories": List(Str()), "vocab": List(Str())}, extra=False)
