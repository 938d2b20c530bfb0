"""Off-spine TAG (Swanson et al. 2013): elementary trees, Goodman-indexed nodes and the reduction to a weighted CFG.

Elementary trees are plain `Tree`s.  A frontier nonterminal (a leaf node with no children) is a substitution
site; in an auxiliary tree exactly one frontier node is the *foot*, written with a trailing `*` and the root's
label (`(NP (`` ``) (NP*) ('' ''))`).  The foot may sit anywhere, so wrapping trees are allowed.

Adjunction is allowed at every internal node that is not on the spine of an auxiliary tree (the path from its
root to its foot) and not a frontier node; with `spine_levels=k > 0` nodes on spines below the root accept
adjunction too, up to k nested levels (section 4.2).  Several adjunctions at one node are stacked (each one is an
adjunction at the root of the previous auxiliary tree), so the number of adjunctions at a node is geometric.

The reduction (section 3) works on Goodman-indexed nodes: every internal node of every elementary tree is
identified by its subtree (a spine node's subtree includes the foot), so equal subtrees share one CFG symbol.
CFG symbols are

    site[X]       a substitution site labelled X (also the start symbol's form)
    node[n]       an off-spine node n (before its adjunction decision)
    pair[s, t]    spine node s of an auxiliary tree adjoined at the site symbol t (t a node, or with k > 0 a pair)

and the rules are the paper's types:

    (5) site[X]   -> node[root(e)]                     P_sub(e | X)             e an initial tree rooted X
    (1) node[n]   -> children of n                     1 - P_adj(ctx(n))        (1 if no aux tree is rooted X)
    (3) node[n]   -> pair[root(a), node[n]]            P_adj(ctx(n)) P_aux(a | X)
    (2) pair[s,t] -> children of s, the spine child c as pair[c, t]                 (deterministic)
    (4) the foot: the spine child of the lowest spine node is t itself (the rule is inlined into type 2)

With a TSG's base route (`OSTAG(base=...)`, `treegram train ostag --from-tsg M --tsg-weights base`; the route is
read off the TSG model's Goodman grammar by `treegram.elementary.base_route`) there is also one symbol base[X]
per label, and the TSG's own smoothing rules with their fixed weights:

    (7) site[X]   -> base[X]                           alpha_X / (n_X + alpha_X)  (the TSG's `X -> X~base`)
    (8) base[X]   -> Y1 Y2 | w                         P_pcfg(X -> Y1 Y2) prod_i (beta_Yi: Yi = site[Yi] stops,
                                                       1 - beta_Yi: Yi = base[Yi] expands); P_pcfg(X -> w)

and the substitutions (5) of label X share the rest: P_sub(e | X) = (1 - alpha_X / (n_X + alpha_X)) times e's
relative count.  With the TSG's fragments at their counts and no auxiliary trees this is the TSG's grammar
(the same probability for every derivation, so the same chart and parses); base nodes are not adjunction sites.

A child that is a frontier nonterminal becomes site[label] (substitution), a word a lexical rule.  Type (3) and
(4) rules at frontier nodes are never created (the paper's fix for the spurious ambiguity between adjoining at a
substitution site and at the root of the tree substituted there).  Nodes with more than two children, or words
mixed with nonterminals, are binarized internally with *virtual* nodes that are spliced out of derived trees.

The number of pair symbols is (#spine nodes with foot X) x (#sites labelled X) per label, so parsing builds the
CFG per sentence from the elementary trees whose words all occur in it (`build_cfg(words=...)`) - an exact filter.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import attrs
import numpy as np

from treegram.elementary.base_route import BaseRoute
from treegram.errors import InputError
from treegram.grammar.cfg import WeightedCFG
from treegram.grammar.symbols import SymbolTable
from treegram.trees.tree import Tree

FOOT_MARK = "*"
VIRTUAL_PREFIX = "<v>"
# child reference kinds in the node table
REF_NONE, REF_WORD, REF_SITE, REF_NODE, REF_FOOT = -1, 0, 1, 2, 3
# node kinds
KIND_LEX, KIND_UNARY, KIND_BINARY = 0, 1, 2
# rule types (paper numbering); 6 = lexical expansion of a preterminal node (a type 1 rule with a word)
MODELS = ("ostag1", "ostag2", "ostag3")
NEG = -1e300


# -- elementary trees -------------------------------------------------------------------------------------------

def is_foot_label(label: str) -> bool:
    return label.endswith(FOOT_MARK) and len(label) > 1


def foot_path(tree: Tree) -> tuple[int, ...] | None:
    """Child-index path from the root to the foot of an auxiliary tree, or None for an initial tree.

    Raises InputError for two feet, a foot with children, or a foot whose label is not the root's."""
    found: list[tuple[int, ...]] = []
    stack: list[tuple[Tree, tuple[int, ...]]] = [(tree, ())]
    while stack:
        node, path = stack.pop()
        if is_foot_label(node.label):
            if node.children:
                raise InputError(f"foot node {node.label} has children in {tree.to_bracket()}",
                                 hint="a foot is a frontier node: write it as (X*)")
            found.append(path)
        for i, c in enumerate(node.children):
            if isinstance(c, Tree):
                stack.append((c, path + (i,)))
    if not found:
        return None
    if len(found) > 1:
        raise InputError(f"auxiliary tree {tree.to_bracket()} has {len(found)} feet", hint="mark exactly one foot")
    if found[0] == ():
        raise InputError(f"{tree.to_bracket()}: the root cannot be the foot")
    foot = subtree_at(tree, found[0])
    if foot.label[:-1] != tree.label:
        raise InputError(f"auxiliary tree {tree.to_bracket()}: foot {foot.label} does not match root {tree.label}",
                         hint="root and foot of an auxiliary tree carry the same label")
    return found[0]


def subtree_at(tree: Tree, path: Sequence[int]) -> Tree:
    node = tree
    for i in path:
        node = node.children[i]  # type: ignore[assignment]
    return node


def aux_direction(tree: Tree) -> str:
    """'left' (all other leaves left of the foot), 'right' (all right of it) or 'wrap' (both sides)."""
    left = right = 0
    seen_foot = False
    stack: list[Any] = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, str):
            right += seen_foot
            left += not seen_foot
            continue
        if not node.children:
            if is_foot_label(node.label):
                seen_foot = True
            else:
                right += seen_foot
                left += not seen_foot
            continue
        stack.extend(reversed(node.children))
    if left and right:
        return "wrap"
    return "left" if left else "right"


# -- the node table ---------------------------------------------------------------------------------------------

@attrs.frozen(eq=False)
class NodeTable:
    """Goodman-indexed nodes (all int arrays of length #nodes; children as (kind, ref) pairs)."""

    label: np.ndarray  # label id (virtual nodes: id of a '<v>...' label)
    kind: np.ndarray  # KIND_LEX / KIND_UNARY / KIND_BINARY
    ck: np.ndarray  # (m, 2) child ref kinds
    cr: np.ndarray  # (m, 2) child refs: word id / label id / node id / foot label id
    spine: np.ndarray  # bool: the foot is below (or is a child)
    spine_pos: np.ndarray  # which child is on the spine (-1 off spine)
    virtual: np.ndarray  # bool: internal binarization node (spliced out of derived trees, never adjoinable)
    aux_root: np.ndarray  # bool: the root node of an auxiliary tree
    foot_label: np.ndarray  # spine nodes: label id of the foot (= root label of the aux tree), else -1
    words_ptr: np.ndarray  # CSR over the distinct word ids of each node's subtree
    words: np.ndarray

    def __len__(self) -> int:
        return int(self.label.shape[0])


class OSTAG:
    """An OSTAG: initial and auxiliary trees with counts, their node table, and (after `set_params`) weights.

    `initial` / `auxiliary`: sequences of (Tree, count).  Labels and words are interned in `labels` / `words`.
    Parameters: P_sub(e | root label) per initial tree, P_aux(a | root label) per auxiliary tree, and an
    adjunction Bernoulli per context: label (ostag1), label + leftmost child (ostag2), Goodman node (ostag3).
    """

    def __init__(self, initial: Iterable[tuple[Tree, float]], auxiliary: Iterable[tuple[Tree, float]] = (), *,
                 start: str, model: str = "ostag3", spine_levels: int = 0, base: BaseRoute | None = None):
        if model not in MODELS:
            raise InputError(f"unknown OSTAG model {model!r}", hint="use ostag1, ostag2 or ostag3")
        if spine_levels < 0:
            raise InputError("spine_levels must be >= 0")
        self.model = model
        self.spine_levels = int(spine_levels)
        self.start = start
        self.initial: list[Tree] = []
        self.initial_count: list[float] = []
        self.auxiliary: list[Tree] = []
        self.aux_count: list[float] = []
        for t, c in initial:
            if foot_path(t) is not None:
                raise InputError(f"initial tree {t.to_bracket()} has a foot node", hint="pass it as auxiliary")
            if not t.children:
                raise InputError(f"elementary tree {t.to_bracket()} is a bare frontier node")
            self.initial.append(t)
            self.initial_count.append(float(c))
        for t, c in auxiliary:
            if foot_path(t) is None:
                raise InputError(f"auxiliary tree {t.to_bracket()} has no foot", hint="mark the foot as (X*)")
            if len(t.frontier()) < 2:
                raise InputError(f"auxiliary tree {t.to_bracket()} has nothing besides its foot",
                                 hint="such trees adjoin without adding words (a unary cycle); drop them")
            self.auxiliary.append(t)
            self.aux_count.append(float(c))
        if not self.initial:
            raise InputError("an OSTAG needs at least one initial tree")
        self.labels = SymbolTable()
        self.words = SymbolTable()
        self.labels.add(start)
        self.base = base
        if base is not None:  # intern the base route's labels and words first (ids stay fixed from here on)
            self.base_label = np.array([self.labels.add(c) for c in base.labels], np.int64)
            self.base_word = np.array([self.words.add(w) for w in base.words], np.int64)
        self._build_nodes()
        self._build_base()
        self._build_contexts()
        self.init_params()

    # -- node table ---------------------------------------------------------------------------------------------
    def _build_nodes(self) -> None:
        keys: dict[tuple, int] = {}
        rows: list[tuple] = []  # (label, kind, (k0, r0), (k1, r1), virtual, aux_root)
        labels, words = self.labels, self.words

        def intern(key: tuple, row: tuple) -> int:
            nid = keys.get(key)
            if nid is None:
                nid = keys[key] = len(rows)
                rows.append(row)
            return nid

        def child_ref(c) -> tuple[int, int]:
            if isinstance(c, str):
                return REF_WORD, words.add(c)
            if not c.children:
                if is_foot_label(c.label):
                    return REF_FOOT, labels.add(c.label[:-1])
                return REF_SITE, labels.add(c.label)
            return REF_NODE, done[id(c)]

        def make(label_id: int, refs: list[tuple[int, int]], aux_root: bool, virtual: bool) -> int:
            """Intern a node with these children, binarizing internally (right-factored virtual nodes)."""
            if len(refs) == 1 and refs[0][0] == REF_WORD:
                return intern(("L", label_id, refs[0]), (label_id, KIND_LEX, refs[0], (REF_NONE, -1), virtual,
                                                          aux_root))
            # words mixed with nonterminals: wrap each in a virtual preterminal
            fixed = []
            for k, r in refs:
                if k == REF_WORD:
                    vl = labels.add(VIRTUAL_PREFIX + words.symbol(r))
                    fixed.append((REF_NODE, intern(("L", vl, (k, r)), (vl, KIND_LEX, (k, r), (REF_NONE, -1),
                                                                       True, False))))
                else:
                    fixed.append((k, r))
            while len(fixed) > 2:  # right-factor the tail into virtual nodes
                vl = labels.add(VIRTUAL_PREFIX + labels.symbol(label_id))
                tail = fixed[-2:]
                vid = intern(("B", vl, tuple(tail), False), (vl, KIND_BINARY, tail[0], tail[1], True, False))
                fixed = fixed[:-2] + [(REF_NODE, vid)]
            if len(fixed) == 1:
                return intern(("U", label_id, fixed[0], aux_root), (label_id, KIND_UNARY, fixed[0], (REF_NONE, -1),
                                                                    virtual, aux_root))
            return intern(("B", label_id, tuple(fixed), aux_root), (label_id, KIND_BINARY, fixed[0], fixed[1],
                                                                    virtual, aux_root))

        self.initial_root = np.zeros(len(self.initial), np.int64)
        self.aux_root = np.zeros(len(self.auxiliary), np.int64)
        for group, roots, is_aux in ((self.initial, self.initial_root, False),
                                     (self.auxiliary, self.aux_root, True)):
            for i, t in enumerate(group):
                done: dict[int, int] = {}
                for node in t.postorder():
                    if not node.children:
                        continue
                    refs = [child_ref(c) for c in node.children]
                    done[id(node)] = make(labels.add(node.label), refs, is_aux and node is t, False)
                roots[i] = done[id(t)]
        m = len(rows)
        label = np.array([r[0] for r in rows], np.int64)
        kind = np.array([r[1] for r in rows], np.int64)
        ck = np.array([[r[2][0], r[3][0]] for r in rows], np.int64).reshape(m, 2)
        cr = np.array([[r[2][1], r[3][1]] for r in rows], np.int64).reshape(m, 2)
        virtual = np.array([r[4] for r in rows], bool)
        aux_root = np.array([r[5] for r in rows], bool)
        # spine and word sets bottom-up (node ids are topologically ordered: children are interned first)
        spine = np.zeros(m, bool)
        spine_pos = np.full(m, -1, np.int64)
        foot_label = np.full(m, -1, np.int64)
        wsets: list[frozenset] = []
        for n in range(m):
            ws: set[int] = set()
            for j in range(2):
                k, r = ck[n, j], cr[n, j]
                if k == REF_WORD:
                    ws.add(int(r))
                elif k == REF_NODE:
                    ws |= wsets[r]
                    if spine[r]:
                        spine[n], spine_pos[n], foot_label[n] = True, j, foot_label[r]
                elif k == REF_FOOT:
                    spine[n], spine_pos[n], foot_label[n] = True, j, r
            wsets.append(frozenset(ws))
        ptr = np.zeros(m + 1, np.int64)
        ptr[1:] = np.cumsum([len(w) for w in wsets])
        flat = np.fromiter((w for s in wsets for w in sorted(s)), np.int64, count=int(ptr[-1]))
        self.nodes = NodeTable(label=label, kind=kind, ck=ck, cr=cr, spine=spine, spine_pos=spine_pos,
                               virtual=virtual, aux_root=aux_root, foot_label=foot_label, words_ptr=ptr,
                               words=flat)
        self.initial_label = label[self.initial_root]
        self.aux_label = label[self.aux_root]
        self.aux_dir = [aux_direction(t) for t in self.auxiliary]
        # labels that some auxiliary tree is rooted in: only their nodes make adjunction decisions
        self.has_aux = np.zeros(len(self.labels), bool)
        self.has_aux[self.aux_label] = True

    def _build_base(self) -> None:
        """Per label: log P(site -> base) (the hop, NEG without a base route) and log(1 - that), the share the
        initial trees of the label divide among themselves."""
        nlab = len(self.labels)
        self.hop_logp = np.full(nlab, NEG)
        self.log_rest = np.zeros(nlab)
        if self.base is None:
            return
        b = self.base
        lab = self.base_label[b.hop_label]
        self.hop_logp[lab] = b.hop_logp
        with np.errstate(divide="ignore"):
            rest = np.log1p(-np.exp(np.minimum(b.hop_logp, 0.0)))
        self.log_rest[lab] = np.maximum(rest, NEG)
        # the fixed weights of the base route's rules, in one array: hops, binary, unary, lexical
        self.fixed_logp = np.concatenate([b.hop_logp, b.bin_logp, b.un_logp, b.lex_logp])

    def _build_contexts(self) -> None:
        """Adjunction context id of every node (-1 where no decision is made)."""
        nd = self.nodes
        m = len(nd)
        decides = ~nd.virtual & self.has_aux[nd.label]
        ctx = np.full(m, -1, np.int64)
        names: dict[Any, int] = {}
        for n in np.flatnonzero(decides).tolist():
            if self.model == "ostag1":
                key: Any = self.labels.symbol(int(nd.label[n]))
            elif self.model == "ostag2":
                key = (self.labels.symbol(int(nd.label[n])), self._leftmost_symbol(n))
            else:
                key = n
            ctx[n] = names.setdefault(key, len(names))
        self.ctx = ctx
        self.ctx_names = list(names)
        self.num_ctx = len(names)

    def _leftmost_symbol(self, n: int) -> str:
        nd = self.nodes
        while True:
            k, r = int(nd.ck[n, 0]), int(nd.cr[n, 0])
            if k == REF_WORD:
                return self.words.symbol(r)
            if k == REF_SITE:
                return self.labels.symbol(r)
            if k == REF_FOOT:
                return self.labels.symbol(r) + FOOT_MARK
            if not nd.virtual[r]:
                return self.labels.symbol(int(nd.label[r]))
            n = r  # a virtual node stands for the first children of its parent

    # -- parameters ---------------------------------------------------------------------------------------------
    def init_params(self, adj_prob: float = 0.1, *, uniform: bool = False) -> None:
        """Relative frequencies of the counts (`uniform`: equal weights per root label) for substitution and
        auxiliary choice; P_adj = adj_prob."""
        sub = np.ones(len(self.initial_count)) if uniform else np.asarray(self.initial_count, float)
        aux = np.ones(len(self.aux_count)) if uniform else np.asarray(self.aux_count, float)
        self.sub_logp = self._with_rest(_normalize_by(sub, self.initial_label, len(self.labels)))
        self.aux_logp = _normalize_by(aux, self.aux_label, len(self.labels))
        self.adj_logp = np.full(self.num_ctx, np.log(adj_prob))
        self.noadj_logp = np.full(self.num_ctx, np.log1p(-adj_prob))

    def set_params(self, sub_counts: np.ndarray, aux_counts: np.ndarray, adj_counts: np.ndarray,
                   noadj_counts: np.ndarray, *, smoothing: float = 0.0) -> None:
        """M-step: relative frequencies of (expected) counts, pooled as the model's contexts say."""
        self.sub_logp = self._with_rest(_normalize_by(np.asarray(sub_counts, float) + smoothing, self.initial_label,
                                                      len(self.labels)))
        self.aux_logp = _normalize_by(np.asarray(aux_counts, float) + smoothing, self.aux_label, len(self.labels))
        a = np.asarray(adj_counts, float) + smoothing
        b = np.asarray(noadj_counts, float) + smoothing
        tot = a + b
        with np.errstate(divide="ignore", invalid="ignore"):
            self.adj_logp = np.where(tot > 0, np.log(a) - np.log(tot), np.log(0.5))
            self.noadj_logp = np.where(tot > 0, np.log(b) - np.log(tot), np.log(0.5))
        self.adj_logp = np.maximum(self.adj_logp, NEG)
        self.noadj_logp = np.maximum(self.noadj_logp, NEG)

    def _with_rest(self, sub_logp: np.ndarray) -> np.ndarray:
        """With a base route, P_sub(e | X) = (1 - P(X -> X~base)) x the relative weight of e among X's initial trees
        (the base keeps the TSG's share alpha_X / (n_X + alpha_X); EM re-estimates only the rest)."""
        if self.base is None:
            return sub_logp
        return np.maximum(sub_logp + self.log_rest[self.initial_label], NEG)

    # -- per-sentence CFG ---------------------------------------------------------------------------------------
    def usable_nodes(self, words: Iterable[str] | None) -> np.ndarray:
        """Nodes whose subtree's words all occur in `words` (None: every node)."""
        nd = self.nodes
        if words is None:
            return np.ones(len(nd), bool)
        ok = np.zeros(len(self.words) + 1, bool)
        ids = np.array(self.words.ids(list(words)), np.int64).reshape(-1)
        ok[ids[ids >= 0]] = True
        bad = np.zeros(nd.words.shape[0] + 1, np.int64)
        np.cumsum(~ok[nd.words], out=bad[1:])  # prefix counts (reduceat fails on empty trailing groups)
        return bad[nd.words_ptr[1:]] == bad[nd.words_ptr[:-1]]

    def nodes_matching(self, tree: Tree) -> np.ndarray:
        """Nodes whose subtree matches some node of `tree` (frontier and foot children match any node of their
        label; a child may also be matched at a same-label descendant, where it sits when auxiliary trees are
        adjoined at it): a superset of the nodes a derivation of `tree` can use.  Grammars with internally
        binarized (virtual) nodes fall back to the word filter."""
        if self.nodes.virtual.any():
            return self.usable_nodes(tree.leaves())
        if not hasattr(self, "_match_index"):
            nd = self.nodes
            idx: dict[tuple, int] = {}
            for n in range(len(nd)):
                idx[(int(nd.label[n]), int(nd.ck[n, 0]), int(nd.cr[n, 0]), int(nd.ck[n, 1]), int(nd.cr[n, 1]))] = n
            self._match_index = idx
        idx = self._match_index
        lab, wrd = self.labels.get, self.words.get
        usable = np.zeros(len(self.nodes), bool)
        # below[id(x)]: label -> grammar nodes matching some node of that label in x's subtree (x included).  A
        # grammar node m adjoined into sits below the auxiliary trees' spines, at a same-label descendant of the
        # tree node that takes m's place in its parent (the outermost auxiliary root), at any depth.
        below: dict[int, dict[int, dict[tuple[int, int], None]]] = {}
        for x in tree.postorder():
            lx = lab(x.label)
            opts = []
            merged: dict[int, dict[tuple[int, int], None]] = {}
            for c in x.children:
                if isinstance(c, str):
                    opts.append([(REF_WORD, wrd(c))])
                else:
                    lc = lab(c.label)
                    sub = below.pop(id(c))
                    opts.append([(REF_SITE, lc), (REF_FOOT, lc)] + list(sub.get(lc, ())))
                    for key, entries in sub.items():
                        merged.setdefault(key, {}).update(entries)
            found: list[tuple[int, int]] = []
            if lx >= 0 and len(opts) == 1:
                for k, r in opts[0]:
                    n = idx.get((lx, k, r, REF_NONE, -1))
                    if n is not None:
                        found.append((REF_NODE, n))
            elif lx >= 0 and len(opts) == 2:
                for k0, r0 in opts[0]:
                    for k1, r1 in opts[1]:
                        n = idx.get((lx, k0, r0, k1, r1))
                        if n is not None:
                            found.append((REF_NODE, n))
            for _k, n in found:
                usable[n] = True
            merged.setdefault(lx, {}).update(dict.fromkeys(found))
            below[id(x)] = merged
        return usable

    def build_cfg_for_tree(self, tree: Tree) -> OSTAGCFG:
        """The reduction restricted to the nodes that can take part in a derivation of `tree` (for EM)."""
        return _build_cfg(self, self.nodes_matching(tree))

    def build_cfg(self, words: Iterable[str] | None = None, *, usable: np.ndarray | None = None,
                  site_ok: np.ndarray | None = None) -> OSTAGCFG:
        """The reduction restricted to elementary trees whose words all occur in `words` (None: all).

        `usable` (bool per node) replaces the word filter: only these nodes get symbols (a spine node outside it
        gets no pair symbols); `site_ok` (bool per node) limits the nodes that can be adjunction sites (level 0).
        Rules that would mention a node without a symbol are dropped.  `restrict.coarse_filter` computes both
        from a site-agnostic chart so that no derivation of the sentence is lost."""
        return _build_cfg(self, self.usable_nodes(words) if usable is None else usable, site_ok)

    # -- summaries ----------------------------------------------------------------------------------------------
def _normalize_by(counts: np.ndarray, group: np.ndarray, ngroups: int) -> np.ndarray:
    tot = np.bincount(group, weights=counts, minlength=ngroups) if counts.size else np.zeros(ngroups)
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.log(counts) - np.log(tot[group])
    out[~np.isfinite(out)] = NEG
    return out


# -- the reduction ------------------------------------------------------------------------------------------------

SYM_SITE, SYM_NODE, SYM_PAIR, SYM_BASE = 0, 1, 2, 3


@attrs.frozen(eq=False)
class OSTAGCFG:
    """A reduction: the WeightedCFG plus, for every rule, what it means in the OSTAG.

    Per rule (arrays aligned with the cfg's binary / unary / lexical arrays, in dicts keyed by kind):
      rtype: paper rule type (1, 2, 3, 5; 1 also for lexical expansions)
      init: initial tree id for type 5 (else -1)     aux: auxiliary tree id for type 3 (else -1)
      ctx: adjunction context of the decision the rule takes (type 3 = adjoin, types 1/2 = do not), else -1
    Per symbol: sym_kind (site / node / pair), sym_node (node id, the spine node for pairs, -1 for sites),
    sym_site (for pairs: the site symbol it is adjoined at), sym_level (0 for sites and nodes).
    """

    grammar: OSTAG
    cfg: WeightedCFG
    rtype: dict[str, np.ndarray]
    init: dict[str, np.ndarray]
    aux: dict[str, np.ndarray]
    ctx: dict[str, np.ndarray]
    fixed: dict[str, np.ndarray]  # base-route rules (types 7, 8): index into grammar.fixed_logp, else -1
    sym_kind: np.ndarray
    sym_node: np.ndarray
    sym_site: np.ndarray
    sym_level: np.ndarray
    node_sym: np.ndarray  # node id -> node symbol (-1 if the node has none)

    def reweighted(self) -> OSTAGCFG:
        """The same reduction with the grammar's current parameters."""
        g = self.grammar
        c = self.cfg
        logps = {k: _rule_logp(g, self.init[k], self.aux[k], self.ctx[k], self.rtype[k], self.fixed[k])
                 for k in self.rtype}
        cfg = WeightedCFG(nonterminals=c.nonterminals, words=c.words, start=c.start,
                          bin_parent=c.bin_parent, bin_left=c.bin_left, bin_right=c.bin_right,
                          bin_logp=logps["binary"], un_parent=c.un_parent, un_child=c.un_child,
                          un_logp=logps["unary"], lex_parent=c.lex_parent, lex_word=c.lex_word,
                          lex_logp=logps["lexical"], categories=c.categories, category=c.category)
        return attrs.evolve(self, cfg=cfg)

    def without_symbols(self, keep: np.ndarray, words: np.ndarray | None = None) -> OSTAGCFG:
        """The reduction without the rules that mention a symbol with keep[s] False (symbol ids unchanged);
        `words` (word ids): also drop lexical rules for other words."""
        c = self.cfg
        kb = keep[c.bin_parent] & keep[c.bin_left] & keep[c.bin_right]
        ku = keep[c.un_parent] & keep[c.un_child]
        kl = keep[c.lex_parent]
        if words is not None:
            kl &= np.isin(c.lex_word, words)
        sel = {"binary": kb, "unary": ku, "lexical": kl}
        cfg = WeightedCFG(nonterminals=c.nonterminals, words=c.words, start=c.start,
                          bin_parent=c.bin_parent[kb], bin_left=c.bin_left[kb], bin_right=c.bin_right[kb],
                          bin_logp=c.bin_logp[kb], un_parent=c.un_parent[ku], un_child=c.un_child[ku],
                          un_logp=c.un_logp[ku], lex_parent=c.lex_parent[kl], lex_word=c.lex_word[kl],
                          lex_logp=c.lex_logp[kl], categories=c.categories, category=c.category)
        pick = lambda d: {k: v[sel[k]] for k, v in d.items()}  # noqa: E731
        return attrs.evolve(self, cfg=cfg, rtype=pick(self.rtype), init=pick(self.init), aux=pick(self.aux),
                            ctx=pick(self.ctx), fixed=pick(self.fixed))

    def param_counts(self, bin_counts, un_counts, lex_counts) -> tuple[np.ndarray, ...]:
        """Expected rule counts -> (substitution, auxiliary choice, adjoin, no-adjoin) counts of the grammar."""
        g = self.grammar
        sub = np.zeros(len(g.initial))
        aux = np.zeros(len(g.auxiliary))
        adj = np.zeros(g.num_ctx)
        noadj = np.zeros(g.num_ctx)
        for kind, cnt in (("binary", bin_counts), ("unary", un_counts), ("lexical", lex_counts)):
            cnt = np.asarray(cnt, float)
            i, a, cx, rt = self.init[kind], self.aux[kind], self.ctx[kind], self.rtype[kind]
            np.add.at(sub, i[i >= 0], cnt[i >= 0])
            np.add.at(aux, a[a >= 0], cnt[a >= 0])
            isadj = (rt == 3) & (cx >= 0)
            np.add.at(adj, cx[isadj], cnt[isadj])
            isno = (rt != 3) & (cx >= 0)
            np.add.at(noadj, cx[isno], cnt[isno])
        return sub, aux, adj, noadj


def _rule_logp(g: OSTAG, init, aux, ctx, rtype, fixed) -> np.ndarray:
    lp = np.zeros(init.shape[0])
    m = fixed >= 0
    if m.any():
        lp[m] += g.fixed_logp[fixed[m]]
    m = init >= 0
    lp[m] += g.sub_logp[init[m]]
    m = aux >= 0
    lp[m] += g.aux_logp[aux[m]]
    m = (ctx >= 0) & (rtype == 3)
    lp[m] += g.adj_logp[ctx[m]]
    m = (ctx >= 0) & (rtype != 3)
    lp[m] += g.noadj_logp[ctx[m]]
    return np.maximum(lp, NEG)


class _Rules:
    """Growing rule arrays of one kind (lists of numpy chunks)."""

    def __init__(self, width: int):
        self.cols: list[list[np.ndarray]] = [[] for _ in range(width + 5)]  # symbols, rtype, init, aux, ctx, fixed

    def add(self, *cols, fixed=-1) -> None:
        cols = cols + (fixed,)
        sizes = [np.size(c) for c in cols if np.ndim(c) > 0]
        n = sizes[0] if sizes else 1
        for store, c in zip(self.cols, cols):
            store.append(np.full(n, int(c), np.int64) if np.ndim(c) == 0 else np.asarray(c, np.int64))

    def arrays(self) -> list[np.ndarray]:
        return [np.concatenate(c) if c else np.zeros(0, np.int64) for c in self.cols]


def _build_cfg(g: OSTAG, usable: np.ndarray, site_ok: np.ndarray | None = None) -> OSTAGCFG:
    nd = g.nodes
    nlab = len(g.labels)
    # binary: parent, left, right, rtype, init, aux, ctx ; unary: parent, child, ... ; lexical: parent, word, ...
    B, U, L = _Rules(3), _Rules(2), _Rules(2)
    sym_kind = [np.full(nlab, SYM_SITE)]
    sym_node = [np.full(nlab, -1)]
    sym_site = [np.full(nlab, -1)]
    sym_level = [np.zeros(nlab, np.int64)]
    nsym = nlab

    # the TSG's base route (types 7 and 8, fixed weights): base[X] symbols right after the sites
    base_sym = np.full(nlab, -1, np.int64)
    if g.base is not None:
        b = g.base
        nb = len(b.labels)
        base_sym[g.base_label] = nlab + np.arange(nb)
        nsym += nb
        sym_kind.append(np.full(nb, SYM_BASE))
        sym_node.append(np.full(nb, -1))
        sym_site.append(np.full(nb, -1))
        sym_level.append(np.zeros(nb, np.int64))
        off = 0
        lab = g.base_label
        U.add(lab[b.hop_label], nlab + b.hop_label, 7, -1, -1, -1, fixed=off + np.arange(b.hop_label.size))
        off += b.hop_label.size

        def child(kind, x):
            return np.where(kind == 1, nlab + x, lab[x])  # CHILD_BASE: base[Y] (expand), else site[Y] (stop)

        B.add(nlab + b.bin_parent, child(b.bin_lkind, b.bin_left), child(b.bin_rkind, b.bin_right), 8, -1, -1, -1,
              fixed=off + np.arange(b.bin_parent.size))
        off += b.bin_parent.size
        U.add(nlab + b.un_parent, child(b.un_kind, b.un_child), 8, -1, -1, -1, fixed=off + np.arange(b.un_parent.size))
        off += b.un_parent.size
        L.add(nlab + b.lex_parent, g.base_word[b.lex_word], 8, -1, -1, -1, fixed=off + np.arange(b.lex_parent.size))

    # node symbols for usable off-spine nodes
    offs = np.flatnonzero(usable & ~nd.spine)
    node_sym = np.full(len(nd), -1, np.int64)
    node_sym[offs] = nsym + np.arange(offs.size)
    nsym += offs.size
    sym_kind.append(np.full(offs.size, SYM_NODE))
    sym_node.append(offs)
    sym_site.append(np.full(offs.size, -1))
    sym_level.append(np.zeros(offs.size, np.int64))

    # (5) substitution
    ini = np.flatnonzero(usable[g.initial_root])
    U.add(g.initial_label[ini], node_sym[g.initial_root[ini]], 5, ini, -1, -1)

    def child_syms(n: np.ndarray, j: int) -> np.ndarray:
        k, r = nd.ck[n, j], nd.cr[n, j]
        out = np.full(n.shape[0], -1, np.int64)
        m = k == REF_SITE
        out[m] = r[m]
        m = k == REF_NODE
        out[m] = node_sym[r[m]]
        return out

    # (1) expansions of node symbols
    ctx_of = g.ctx
    for kind, store in ((KIND_BINARY, B), (KIND_UNARY, U), (KIND_LEX, L)):
        n = offs[nd.kind[offs] == kind]
        if not n.size:
            continue
        if kind == KIND_LEX:
            store.add(node_sym[n], nd.cr[n, 0], 1, -1, -1, ctx_of[n])
        elif kind == KIND_UNARY:
            store.add(node_sym[n], child_syms(n, 0), 1, -1, -1, ctx_of[n])
        else:
            store.add(node_sym[n], child_syms(n, 0), child_syms(n, 1), 1, -1, -1, ctx_of[n])

    # auxiliary trees usable here with non-zero probability (exact: the others only build zero-probability
    # derivations), and the spine nodes they reach
    alive = NEG / 2
    aux_ok = np.flatnonzero(usable[g.aux_root] & (g.aux_logp > alive))
    reach = np.zeros(len(nd), bool)
    cur = g.aux_root[aux_ok]
    while cur.size:
        cur = cur[usable[cur]]  # with an explicit node filter a spine can stop early (its pairs are dropped)
        reach[cur] = True
        j = nd.spine_pos[cur]
        k, r = nd.ck[cur, j], nd.cr[cur, j]
        cur = r[(k == REF_NODE)]
        cur = cur[~reach[cur]]
    spine_nodes = np.flatnonzero(reach)
    # sites of level 0: node symbols of adjoinable nodes (decision context set, label has aux trees, and a
    # non-zero adjunction probability)
    live_ctx = g.adj_logp > alive
    adj_ok = offs[(ctx_of[offs] >= 0)]
    adj_ok = adj_ok[live_ctx[ctx_of[adj_ok]]]
    if site_ok is not None:
        adj_ok = adj_ok[site_ok[adj_ok]]
    site_sym = node_sym[adj_ok]
    site_node = adj_ok
    level = 0
    while site_sym.size:
        level += 1
        site_label = nd.label[site_node]
        new_syms, new_nodes, new_sites = [], [], []
        for X in np.unique(site_label).tolist():
            S = spine_nodes[nd.foot_label[spine_nodes] == X]
            A = aux_ok[g.aux_label[aux_ok] == X]
            if not S.size or not A.size:
                continue
            T = site_sym[site_label == X]
            nS, nT = S.size, T.size
            base = nsym
            nsym += nS * nT
            pos = np.full(len(nd), -1, np.int64)
            pos[S] = np.arange(nS)
            s_rep = np.repeat(S, nT)  # pair (i, j) at base + i * nT + j
            t_til = np.tile(T, nS)
            pair = base + np.arange(nS * nT)
            new_syms.append(pair)
            new_nodes.append(s_rep)
            new_sites.append(t_til)
            # (3) adjunction: site -> pair[root(a), site]
            A = A[reach[g.aux_root[A]] & usable[g.aux_root[A]]]
            roots = g.aux_root[A]
            U.add(np.tile(T, A.size), base + np.repeat(pos[roots], nT) * nT + np.tile(np.arange(nT), A.size), 3,
                  -1, np.repeat(A, nT), -1)  # the site's context is filled in below
            # (2) spine expansions
            adjoinable = (level <= g.spine_levels) & ~nd.aux_root[s_rep] & ~nd.virtual[s_rep]
            dec = np.where(adjoinable, ctx_of[s_rep], -1)
            cols = []
            for j in range(2):
                k, r = nd.ck[s_rep, j], nd.cr[s_rep, j]
                on = nd.spine_pos[s_rep] == j
                out = np.full(s_rep.shape[0], -1, np.int64)
                m = ~on & (k == REF_SITE)
                out[m] = r[m]
                m = ~on & (k == REF_NODE)
                out[m] = node_sym[r[m]]
                m = on & (k == REF_FOOT)
                out[m] = t_til[m]
                m = on & (k == REF_NODE)
                pr = pos[r[m]]
                out[m] = np.where(pr >= 0, base + pr * nT + (pair[m] - base) % nT, -1)
                cols.append(out)
            bi = nd.kind[s_rep] == KIND_BINARY
            B.add(pair[bi], cols[0][bi], cols[1][bi], 2, -1, -1, dec[bi])
            un = ~bi
            U.add(pair[un], cols[0][un], 2, -1, -1, dec[un])
        if not new_syms:
            break
        syms = np.concatenate(new_syms)
        s_nodes = np.concatenate(new_nodes)
        sites = np.concatenate(new_sites)
        sym_kind.append(np.full(syms.size, SYM_PAIR))
        sym_node.append(s_nodes)
        sym_site.append(sites)
        sym_level.append(np.full(syms.size, level))
        if level > g.spine_levels:
            break
        nxt = ~nd.aux_root[s_nodes] & ~nd.virtual[s_nodes] & (ctx_of[s_nodes] >= 0)
        nxt[nxt] = live_ctx[ctx_of[s_nodes[nxt]]]
        site_sym, site_node = syms[nxt], s_nodes[nxt]

    sym_kind_a = np.concatenate(sym_kind)
    sym_node_a = np.concatenate(sym_node)
    sym_site_a = np.concatenate(sym_site)
    sym_level_a = np.concatenate(sym_level)
    assert sym_kind_a.shape[0] == nsym
    # the decision context of type 3 rules is the site's: fill it from the parent symbol
    bp, bl, br, brt, bin_, bax, bcx, bfx = B.arrays()
    up, uc, urt, uin, uax, ucx, ufx = U.arrays()
    ok = (bl >= 0) & (br >= 0)  # a child without a symbol (explicit node filters): the rule cannot be used
    if not ok.all():
        bp, bl, br, brt, bin_, bax, bcx, bfx = (x[ok] for x in (bp, bl, br, brt, bin_, bax, bcx, bfx))
    ok = uc >= 0
    if not ok.all():
        up, uc, urt, uin, uax, ucx, ufx = (x[ok] for x in (up, uc, urt, uin, uax, ucx, ufx))
    lp_, lw, lrt, lin, lax, lcx, lfx = L.arrays()
    t3 = urt == 3
    site_nodes = sym_node_a[up[t3]]
    ucx = ucx.copy()
    ucx[t3] = ctx_of[site_nodes]
    cats, category = _categories(g, sym_kind_a, sym_node_a)
    names = _Names(nsym)
    cfg_words = g.words if len(g.words) else SymbolTable(["<none>"])
    zero = lambda a: np.zeros(a.shape[0])  # noqa: E731
    cfg = WeightedCFG(nonterminals=names, words=cfg_words, start=g.labels[g.start],
                      bin_parent=bp, bin_left=bl, bin_right=br, bin_logp=zero(bp),
                      un_parent=up, un_child=uc, un_logp=zero(up), lex_parent=lp_, lex_word=lw,
                      lex_logp=zero(lp_), categories=cats, category=category)
    red = OSTAGCFG(grammar=g, cfg=cfg, rtype={"binary": brt, "unary": urt, "lexical": lrt},
                   init={"binary": bin_, "unary": uin, "lexical": lin}, aux={"binary": bax, "unary": uax,
                                                                             "lexical": lax},
                   ctx={"binary": bcx, "unary": ucx, "lexical": lcx},
                   fixed={"binary": bfx, "unary": ufx, "lexical": lfx}, sym_kind=sym_kind_a, sym_node=sym_node_a,
                   sym_site=sym_site_a, sym_level=sym_level_a, node_sym=node_sym)
    return red.reweighted()


def _categories(g: OSTAG, sym_kind: np.ndarray, sym_node: np.ndarray) -> tuple[SymbolTable, np.ndarray]:
    """Category of a symbol = the label of the tree node it stands for (virtual nodes keep their '<v>' label)."""
    cat = np.where(sym_kind == SYM_SITE, np.arange(sym_kind.shape[0]), 0)
    m = (sym_kind != SYM_SITE) & (sym_kind != SYM_BASE)
    cat[m] = g.nodes.label[sym_node[m]]
    if g.base is not None:  # base[X] symbols sit right after the sites, in base-label order
        nlab = len(g.labels)
        cat[nlab:nlab + len(g.base.labels)] = g.base_label
    return g.labels, cat


class _Names(SymbolTable):
    """Symbol names 's0', 's1', ... without a dict per grammar (WeightedCFG only needs len/symbol/ids)."""

    def __init__(self, n: int):  # noqa: D107  (deliberately skips SymbolTable.__init__)
        self._n = n

    def __len__(self) -> int:
        return self._n

    def __iter__(self):
        return (f"s{i}" for i in range(self._n))

    def __contains__(self, name) -> bool:
        return isinstance(name, str) and name[:1] == "s" and name[1:].isdigit() and int(name[1:]) < self._n

    def symbol(self, i: int) -> str:
        return f"s{int(i)}"

    def __getitem__(self, name):
        if name in self:
            return int(name[1:])
        raise KeyError(name)

    def ids(self, names):
        return [int(n[1:]) if n in self else -1 for n in names]

    def add(self, name):
        raise TypeError("read-only symbol table")

    def freeze(self):
        return self

    def to_list(self) -> list[str]:
        return list(self)
