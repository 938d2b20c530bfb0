"""Where an OSTAG's elementary trees come from.

The interface to a TSG is deliberately small: **a list of (elementary tree, count)**, each tree a `Tree` whose
frontier nonterminals are leaf nodes with no children, over the same prepared (binarized, rare-word-mapped,
TOP-rooted) trees the OSTAG is trained on.  Sources:

* `tsg_model_elementary_trees(model)`: the fragments of a trained TSG model of the tsg plugin
  (`model.fragments`: [{"tree": bracket string, "count": n, ...}]).
* `TSGPosterior(model)`: the same fragments weighted by the TSG model's own posterior predictive (count scale,
  n_e + alpha_c P0(e)), read off the model's Goodman grammar; also weighs trees the TSG never saw (alpha_c P0(e)).
* `depth_fragments(trees, max_depth)`: a deterministic stand-in (every node's complete fragments of depth
  1..max_depth, deeper ones kept when seen at least `min_count` times).

`ostag_from_tsg` is the paper's heuristic (section 5): every root/foot pair (same label, foot strictly below
root) inside a TSG rule gives the auxiliary tree between them and the TSG rule left behind when that adjunction
is undone; `tsg_prime` is the expanded TSG (TSG rules + rules left behind), the fair baseline.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

import numpy as np

from treegram.elementary.base_route import BASE_SUFFIX
from treegram.trees import Tree, binarize, parse_brackets
from treegram.trees.signatures import RareWordMapper

from treegram.plugins.ostag.grammar import FOOT_MARK

START = "TOP"


def prepare_tree(tree: Tree, mapper: RareWordMapper | None, *, horizontal: int | None = 0, vertical: int = 1,
                 mark_unary: bool = True) -> Tree:
    """Binarize (the paper's @HEAD-PARENT scheme: h=0, v=1, -U on unary nodes), map rare words, root in TOP."""
    b = binarize(tree, horizontal=horizontal, vertical=vertical, mark_unary=mark_unary)
    if mapper is not None:
        b = mapper.map_training_tree(b)
    return b if b.label == START else Tree(START, (b,))


# -- sources of TSG elementary trees -------------------------------------------------------------------------------

def _cut(node: Tree, depth: int) -> Tree:
    """The fragment of `node` down to `depth` levels (a preterminal above the cut keeps its word)."""
    if depth == 0:
        return Tree(node.label, ())
    if node.is_preterminal:
        return node
    return Tree(node.label, tuple(c if isinstance(c, str) else _cut(c, depth - 1) for c in node.children))


def depth_fragments(trees: Iterable[Tree], max_depth: int = 2, min_count: int = 2) -> list[tuple[Tree, int]]:
    """Every node's complete fragments of depth 1..max_depth; depth >= 2 kept if seen >= min_count times."""
    counts: Counter[Tree] = Counter()
    deep: Counter[Tree] = Counter()
    for t in trees:
        for node in t.subtrees():
            counts[_cut(node, 1)] += 1
            for d in range(2, max_depth + 1):
                f = _cut(node, d)
                if f != _cut(node, d - 1):
                    deep[f] += 1
    out = list(counts.items())
    out += [(f, c) for f, c in deep.items() if c >= min_count]
    return out


def tsg_model_elementary_trees(model) -> list[tuple[Tree, int]]:
    """(tree, count) of a trained tsg-plugin model (its `fragments` list)."""
    out = []
    for f in model.fragments:
        (tree,) = parse_brackets(f["tree"], source="tsg fragment")
        out.append((tree, int(f["count"])))
    return out


class TSGPosterior:
    """The posterior weights of a trained tsg-plugin model (`treegram train tsg`), in count scale.

    The TSG's parsing grammar (plugins/tsg/model.py, read here only through the model's public `cfg` and
    `fragments`) gives an elementary tree e with root c the DP posterior predictive
    P(e | c) = (n_e + alpha_c P0(e)) / (n_c + alpha_c), with n_e the fragment's (mean) count, n_c their sum over
    root c and P0 the base (PCFG rule at every internal node, times beta / 1 - beta for stopping / expanding each
    non-root node).  Its rules hold exactly these pieces: `c -> c~base` has weight alpha_c / (n_c + alpha_c), and
    `c~base -> X1 X2` (a word, a site symbol `Y` = stop, a base symbol `Y~base` = expand) the base's factor of one
    node.  So alpha_c = n_c p_c / (1 - p_c) with p_c the `c -> c~base` probability, and

        weight(e) = n_e + alpha_c * P0(e)

    is the TSG's pseudo-count of e: the same relative weights within a root label as the TSG's grammar gives the
    trees in a finite set, on one scale across labels (the OSTAG extraction sums weights of trees with different
    roots into one auxiliary tree).  A tree the TSG never saw (a treebank depth-1 rule) weighs alpha_c P0(e)."""

    def __init__(self, model):
        cfg = model.cfg
        nts = cfg.nonterminals
        self._nts, self._words = nts, cfg.words
        # the base rules (parent `c~base`) and the site -> base hops, keyed by symbol ids
        self._bin = {(int(p), int(a), int(b)): float(w) for p, a, b, w in
                     zip(cfg.bin_parent, cfg.bin_left, cfg.bin_right, cfg.bin_logp)
                     if nts.symbol(int(p)).endswith(BASE_SUFFIX)}
        self._un = {(int(p), int(c)): float(w) for p, c, w in zip(cfg.un_parent, cfg.un_child, cfg.un_logp)
                    if nts.symbol(int(p)).endswith(BASE_SUFFIX) or nts.symbol(int(c)).endswith(BASE_SUFFIX)}
        self._lex = {(int(p), int(x)): float(w) for p, x, w in zip(cfg.lex_parent, cfg.lex_word, cfg.lex_logp)
                     if nts.symbol(int(p)).endswith(BASE_SUFFIX)}
        self.fragments: list[tuple[Tree, float]] = []
        n_c: Counter[str] = Counter()
        for f in model.fragments:
            (tree,) = parse_brackets(f["tree"], source="tsg fragment")
            n = float(f.get("mean_count", f["count"]))  # an averaged grammar uses the mean count over its samples
            self.fragments.append((tree, n))
            n_c[tree.label] += n
        self.alpha: dict[str, float] = {}
        for c, n in n_c.items():
            p = self._prob_base(c)
            self.alpha[c] = n * p / (1.0 - p) if 0.0 < p < 1.0 else 1.0

    def _sym(self, name: str) -> int:
        return self._nts.get(name)

    def _prob_base(self, c: str) -> float:
        w = self._un.get((self._sym(c), self._sym(c + BASE_SUFFIX)))
        return 0.0 if w is None else float(np.exp(w))

    def log_p0(self, tree: Tree) -> float:
        """log P0(tree) under the TSG's base (-inf if the base cannot derive it)."""
        total = 0.0
        stack = [tree]
        while stack:
            node = stack.pop()
            parent = self._sym(node.label + BASE_SUFFIX)
            kids = node.children
            if len(kids) == 1 and isinstance(kids[0], str):
                w = self._lex.get((parent, self._words.get(kids[0])))
            else:
                syms = []
                for k in kids:
                    if isinstance(k, str):
                        return -np.inf  # a word under a non-preterminal: not a tree of the base
                    syms.append(self._sym(k.label + BASE_SUFFIX) if k.children else self._sym(k.label))
                    if k.children:
                        stack.append(k)
                w = (self._un.get((parent, syms[0])) if len(syms) == 1 else
                     self._bin.get((parent, syms[0], syms[1])) if len(syms) == 2 else None)
            if w is None or parent < 0:
                return -np.inf
            total += w
        return total

    def weight(self, tree: Tree, count: float = 0.0) -> float:
        """count + alpha_c P0(tree): the TSG's pseudo-count of `tree` (count = its fragment count, 0 if unseen)."""
        alpha = self.alpha.get(tree.label)
        if alpha is None:  # a label no fragment is rooted in: the TSG derives it from the base alone
            alpha = 1.0 if self._prob_base(tree.label) > 0 else 0.0
        lp = self.log_p0(tree)
        return count + (alpha * float(np.exp(lp)) if lp > -np.inf else 0.0)

    def rule_weight(self, tree: Tree) -> float:
        """alpha_c times the base's total mass of the trees whose root rule is this depth-1 `tree`'s rule (its
        PCFG probability: each child stopped or expanded, beta + (1 - beta) = 1): the weight the TSG's base route
        gives, summed over every continuation, to derivations starting with that rule (`--tsg-weights
        posterior-rules`: the depth-1 rules stand in for the base; `weight` gives them only the all-stop part)."""
        alpha = self.alpha.get(tree.label, 1.0)
        parent = self._sym(tree.label + BASE_SUFFIX)
        kids = tree.children
        if len(kids) == 1 and isinstance(kids[0], str):
            w = self._lex.get((parent, self._words.get(kids[0])))
            return alpha * float(np.exp(w)) if w is not None and parent >= 0 else 0.0
        if any(isinstance(k, str) or k.children for k in kids) or len(kids) > 2:
            return self.weight(tree)  # not a depth-1 rule over nonterminals
        options = [(self._sym(k.label), self._sym(k.label + BASE_SUFFIX)) for k in kids]
        total = 0.0
        if len(kids) == 1:
            for a in options[0]:
                w = self._un.get((parent, a))
                total += 0.0 if w is None else float(np.exp(w))
        else:
            for a in options[0]:
                for b in options[1]:
                    w = self._bin.get((parent, a, b))
                    total += 0.0 if w is None else float(np.exp(w))
        return alpha * total

    def elementary_trees(self) -> list[tuple[Tree, float]]:
        """(fragment, n_e + alpha_c P0(e)) for every fragment of the model."""
        return [(t, self.weight(t, n)) for t, n in self.fragments]


# -- the paper's heuristic ---------------------------------------------------------------------------------------

def _paths(tree: Tree):
    stack = [(tree, ())]
    while stack:
        node, path = stack.pop()
        yield node, path
        for i, c in enumerate(node.children):
            if isinstance(c, Tree):
                stack.append((c, path + (i,)))


def _replace(tree: Tree, path: tuple[int, ...], new: Tree) -> Tree:
    if not path:
        return new
    i = path[0]
    kids = list(tree.children)
    kids[i] = _replace(kids[i], path[1:], new)  # type: ignore[arg-type]
    return Tree(tree.label, tuple(kids))


def root_foot_pairs(rule: Tree) -> list[tuple[Tree, Tree]]:
    """(auxiliary tree, TSG rule left behind) for every root/foot pair inside `rule`."""
    out = []
    nodes = list(_paths(rule))
    for r, rp in nodes:
        if not r.children:
            continue
        for f, fp in nodes:
            if len(fp) <= len(rp) or fp[: len(rp)] != rp or f.label != r.label:
                continue
            aux = _replace(r, fp[len(rp):], Tree(r.label + FOOT_MARK, ()))
            if len(aux.frontier()) < 2:
                continue  # a unary chain back to the same label adds nothing
            left = _replace(rule, rp, f)
            if not left.children:
                continue  # the rule would shrink to a bare frontier node
            out.append((aux, left))
    return out


def ostag_from_tsg(elementary: Iterable[tuple[Tree, float]]) -> tuple[list[tuple[Tree, float]],
                                                                      list[tuple[Tree, float]]]:
    """The paper's extraction: (initial trees = TSG rules + rules left behind, auxiliary trees), with counts
    summed over the TSG rules they came from."""
    init: Counter[Tree] = Counter()
    aux: Counter[Tree] = Counter()
    for rule, count in elementary:
        init[rule] += count
        for a, left in root_foot_pairs(rule):
            aux[a] += count
            init[left] += count
    return list(init.items()), list(aux.items())


def tsg_prime(elementary: Iterable[tuple[Tree, float]]) -> list[tuple[Tree, float]]:
    """TSG': the TSG rules plus every rule left behind by the extraction (no auxiliary trees)."""
    init, _aux = ostag_from_tsg(elementary)
    return init
