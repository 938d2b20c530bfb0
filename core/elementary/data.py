"""Tree preparation for the elementary-tree samplers (TSG, TIG, Bayesian OSTAG): binarized, rare words mapped to
signatures, wrapped in TOP, coded as `TreebankArrays` plus the per-row columns the kernels need (subtree ends,
node kinds, tokens, base-PCFG rule log-probs).

`TSGSettings` are the settings of the substitution-site layer every elementary-tree formalism shares: tree
preparation (markovization, rare words) and the TSG collapsed-Gibbs sampler's priors and initialisation (the TIG
and OSTAG samplers start from its cuts)."""

from __future__ import annotations

from typing import Any

import attrs
import numba
import numpy as np

from treegram.errors import InputError
from treegram.options import SettingsRecord
from treegram.trees import TreebankArrays, Tree, binarize
from treegram.trees.binarize import check_markovization
from treegram.trees.signatures import RareWordMapper

from treegram.elementary import kernels as K

START = "TOP"

KIND_LEX, KIND_UNARY, KIND_BINARY = 0, 1, 2


@attrs.frozen
class TSGSettings(SettingsRecord):
    """Everything that defines the model (not the run): tree preparation, priors, initialisation."""

    horizontal: int | None = 1  # horizontal markovization of the binarization (None = infinite)
    vertical: int = 2  # vertical markovization (2 = parent annotation)
    rare_threshold: int = 2  # words seen fewer times become signature classes
    alpha: float = 1.0  # initial DP concentration of every category
    beta: float = 0.5  # initial stop probability of every category
    resample_alpha: bool = True
    resample_beta: bool = True
    hyper_iterations: int = 2  # slice-sampling steps per parameter per sweep
    init: str = "random"  # random | minimal (every node a site: the PCFG) | maximal (whole trees)
    init_site_prob: float = 0.5

    def __attrs_post_init__(self):
        if self.init not in ("random", "minimal", "maximal"):
            raise InputError(f"unknown TSG initialisation {self.init!r}", hint="use random, minimal or maximal")
        if not (self.alpha > 0 and 0 < self.beta < 1):
            raise InputError(f"need alpha > 0 and 0 < beta < 1 (got alpha={self.alpha}, beta={self.beta})")
        check_markovization(self.vertical, self.horizontal)


def prepare_tree(tree: Tree, settings: TSGSettings, mapper: RareWordMapper) -> Tree:
    b = binarize(tree, horizontal=settings.horizontal, vertical=settings.vertical)
    b = mapper.map_training_tree(b)
    return b if b.label == START else Tree(START, (b,))


@numba.njit(cache=True)
def _subtree_end(parent):
    n = parent.shape[0]
    size = np.ones(n, np.int64)
    for i in range(n - 1, 0, -1):
        p = parent[i]
        if p >= 0:
            size[p] += size[i]
    return np.arange(n) + size


class TSGData:
    """Integer-coded training trees and base-PCFG quantities shared by the samplers and grammar extraction."""

    def __init__(self, trees: list[Tree], labels: list[str] | None = None, words: list[str] | None = None):
        if not trees:
            raise InputError("no training trees", hint="check the --treebank paths")
        lab_map: dict[str, int] = {START: 0} if labels is None else {s: i for i, s in enumerate(labels)}
        word_map: dict[str, int] = {} if words is None else {s: i for i, s in enumerate(words)}
        arrays = TreebankArrays.from_trees(trees, lab_map, word_map)
        self.arrays = arrays
        self.labels = list(lab_map)
        self.words = list(word_map)
        self.num_trees = len(arrays)
        self.offsets = arrays.offsets
        label = arrays.label.astype(np.int64)
        self.label = label
        self.word = arrays.word.astype(np.int64)
        self.parent = arrays.parent.astype(np.int64)
        self.is_word = label < 0
        self.start = arrays.start.astype(np.int64)
        nc = arrays.num_children.astype(np.int64)
        fc = arrays.first_child.astype(np.int64)
        ns = arrays.next_sibling.astype(np.int64)
        nt = ~self.is_word
        if np.any(nt & (nc == 0)):
            raise InputError("a nonterminal has no children", hint="elementary-tree sampling needs complete trees")
        if np.any(nc > 2):
            raise InputError("trees must be binarized (a node has more than two children)")
        first = np.where(fc >= 0, fc, 0)
        second = np.where(nt & (nc == 2), ns[first], -1)
        first_is_word = nt & (fc >= 0) & self.is_word[first]
        if np.any(first_is_word & (nc != 1)):
            raise InputError("a node mixes words and subtrees", hint="words must sit under preterminals")
        if np.any((second >= 0) & self.is_word[np.maximum(second, 0)]):
            raise InputError("a node mixes words and subtrees", hint="words must sit under preterminals")
        self.subtree_end = _subtree_end(self.parent)
        self.child1 = np.where(nt, first, -1)
        self.child2 = second
        kind = np.full(len(label), -1, np.int64)
        kind[nt & first_is_word] = KIND_LEX
        kind[nt & ~first_is_word & (nc == 1)] = KIND_UNARY
        kind[nt & (nc == 2)] = KIND_BINARY
        self.kind = kind
        # base PCFG: relative frequency of each node's rule
        a = np.where(kind == KIND_LEX, self.word[first], np.where(nt, label[first], -1))
        b = np.where(kind == KIND_BINARY, label[np.maximum(second, 0)], -1)
        rows = np.flatnonzero(nt)
        key = np.stack([label[rows], kind[rows], a[rows], b[rows]], axis=1)
        uniq, inv, counts = np.unique(key, axis=0, return_inverse=True, return_counts=True)
        inv = inv.reshape(-1)
        parent_total = np.bincount(uniq[:, 0], weights=counts, minlength=len(self.labels))
        rule_logp = np.log(counts) - np.log(parent_total[uniq[:, 0]])
        self.rules = uniq  # (parent label, kind, a, b)
        self.rule_logp = rule_logp
        self.node_rule = np.full(len(label), -1, np.int64)
        self.node_rule[rows] = inv
        self.node_logrule = np.zeros(len(label), np.float64)
        self.node_logrule[rows] = rule_logp[inv]
        # tokens
        t_int, t_front, t_word = K.token_tables(len(self.labels), max(1, len(self.words)))
        safe_label = np.maximum(label, 0)
        arity = np.where(kind == KIND_BINARY, 2, 1)
        self.tok_int = np.where(nt, t_int[safe_label, arity], t_word[np.maximum(self.word, 0)]).astype(np.uint64)
        self.tok_front = np.where(nt, t_front[safe_label], np.uint64(0)).astype(np.uint64)
        roots = self.offsets[:-1]
        self.is_root = np.zeros(len(label), bool)
        self.is_root[roots] = True
        self.sites = np.flatnonzero(nt & ~self.is_root).astype(np.int64)
        self.nonterminal_rows = rows

    @property
    def num_rows(self) -> int:
        return int(self.label.shape[0])

    @property
    def num_labels(self) -> int:
        return len(self.labels)

    def tree_rows(self, t: int) -> tuple[int, int]:
        return int(self.offsets[t]), int(self.offsets[t + 1])

    def signature(self) -> dict[str, Any]:
        """What a checkpoint must agree with to be resumed on this data."""
        return {"trees": int(self.num_trees), "rows": int(self.num_rows), "labels": len(self.labels),
                "words": len(self.words), "label_hash": int(np.bitwise_xor.reduce(self.tok_int) & ((1 << 52) - 1))}


def prepare(trees, settings: TSGSettings, mapper: RareWordMapper | None = None) -> tuple[TSGData, RareWordMapper]:
    trees = list(trees)
    if not trees:
        raise InputError("no training trees", hint="check the --treebank paths")
    if mapper is None:
        mapper = RareWordMapper()
        mapper.fit(trees, min_count=settings.rare_threshold)
    prepared = [prepare_tree(t, settings, mapper) for t in trees]
    return TSGData(prepared), mapper
