"""The feature map Psi of the large-margin STSG (Cohn & Lapata 2007, section 3.3).

Every feature belongs to one synchronous rule; a derivation's vector is the sum over its rules (so the model score
decomposes over the tree chart, eq. 1 / Figure 1).  Features of a rule e = <gamma, alpha> (source side, target side):

    syntactic    rule identity: src=gamma, tgt=alpha, rule=gamma/alpha
                 relative frequencies: lp(t|s), lp(s|t), lp(s,t)  (log phi, from the induction counts; 0 if unseen)
                 target CFG productions: tprod=X -> Y Z   (one count per production of alpha, frontier nodes by label)
                 root categories: root_s=X, root_t=Y, roots=X/Y
    lexical      yields: ysrc=<words of gamma>, ytgt=<words of alpha>, yboth=<both>
                 words: keep=w (a source word alpha keeps), drop=w (a source word alpha drops)
    compression  yield subset: the target words are a subsequence of the source words (subset)
                 tree edits: tdel=X / tins=X per node label removed from / inserted into the elementary tree
                 yield edits: ydel=s / yins=s per yield symbol (word or frontier label) removed / inserted (LCS)
                 target words: n_words; rules: n_rules (1 per rule); dropped variables: n_dropped, dropped=X
                 unseen: 1 for the copy/deletion rules added for productions the induction never produced
                 deletion: 1 for rules whose target is epsilon

Version 2 (`treegram train stsg --method svm` from issue 24 on; version-1 model files keep their features):

    frequencies  unseen rules get the relative frequencies of half an occurrence (`InducedGrammar.
                 smoothed_log_frequencies`) instead of none: a missing log frequency reads as 0 = probability 1,
                 the *best* value, so the learner had to push rare rules up to keep unseen ones down
    generative   lp(e|c): the rule's Laplace-smoothed log probability given its root pair, as the Bayesian STSG's
                 finite grammar scores it (`grammar.FiniteSTSG.from_counts`); phi(t|s) conditions on the source
                 side only, so it charges every node of a deleted subtree for being deleted again

Features are indexed (`FeatureIndex`: name -> column, JSON) and a rule's vector is a sparse (columns, values) pair.
"""

from __future__ import annotations

from collections import Counter

import numpy as np

from treegram.trees import Tree

from treegram.plugins.stsg.model import Fragment, _fmt, _frontier_label, frontier_index

__all__ = ["rule_features", "FeatureIndex"]


def _yield_symbols(t: Tree) -> list[str]:
    """Words and frontier labels of an elementary tree, left to right (frontier nodes by category)."""
    return [c if isinstance(c, str) else "<" + _frontier_label(c.label) + ">" for c in t.frontier()]


def _labels(t: Tree) -> Counter:
    return Counter(_frontier_label(n.label) if not n.children else n.label for n in t.subtrees())


def _productions(t: Tree) -> list[str]:
    out = []
    for n in t.subtrees():
        if n.children:
            kids = " ".join(c if isinstance(c, str) else _frontier_label(c.label) if not c.children else c.label
                            for c in n.children)
            out.append(f"{n.label} -> {kids}")
    return out


def _lcs_kept(a: list[str], b: list[str]) -> list[bool]:
    """Which symbols of a one longest common subsequence with b keeps (small inputs: plain DP).  When b is a
    subsequence of a (every deletion rule), the earliest match is the DP's answer, found in one pass."""
    keep = [False] * len(a)
    j = 0
    for i, x in enumerate(a):
        if j < len(b) and x == b[j]:
            keep[i] = True
            j += 1
    if j == len(b):
        return keep
    n, m = len(a), len(b)
    t = [[0] * (m + 1) for _ in range(n + 1)]
    for i in range(n - 1, -1, -1):
        for j in range(m - 1, -1, -1):
            t[i][j] = t[i + 1][j + 1] + 1 if a[i] == b[j] else max(t[i + 1][j], t[i][j + 1])
    keep = [False] * n
    i = j = 0
    while i < n and j < m:
        if a[i] == b[j] and t[i][j] == t[i + 1][j + 1] + 1:
            keep[i] = True
            i += 1
            j += 1
        elif t[i + 1][j] >= t[i][j + 1]:
            i += 1
        else:
            j += 1
    return keep


def rule_features(frag: Fragment, lrf: tuple[float, float, float] | None, *, unseen: bool | None = None,
                  lp_root: float | None = None) -> dict[str, float]:
    """The features of one rule.  `lrf`: its log relative frequencies (version 1: None for a rule outside the
    induced grammar); `unseen`: whether the rule is outside the induced grammar (default: `lrf` is None);
    `lp_root`: the version-2 generative score lp(e|c)."""
    src, tgt = frag.source, frag.target
    text_s = _fmt(src)
    text_t = "ε" if tgt is None else _fmt(tgt)
    f: Counter = Counter()
    f["src=" + text_s] = 1.0
    f["tgt=" + text_t] = 1.0
    f["rule=" + text_s + " / " + text_t] = 1.0
    if lrf is None if unseen is None else unseen:
        f["unseen"] = 1.0
    if lrf is not None:
        f["lp(t|s)"], f["lp(s|t)"], f["lp(s,t)"] = lrf
    if lp_root is not None:
        f["lp(e|c)"] = lp_root
    ct = frag.ct if frag.ct is not None else "ε"
    f["root_s=" + frag.cs] = 1.0
    f["root_t=" + ct] = 1.0
    f["roots=" + frag.cs + "/" + ct] = 1.0
    f["n_rules"] = 1.0
    s_words = src.leaves()
    t_words = [] if tgt is None else tgt.leaves()
    if s_words:
        f["ysrc=" + " ".join(s_words)] = 1.0
    if t_words:
        f["ytgt=" + " ".join(t_words)] = 1.0
    if s_words or t_words:
        f["yboth=" + " ".join(s_words) + " / " + " ".join(t_words)] = 1.0
    kept = _lcs_kept(s_words, t_words)
    for w, k in zip(s_words, kept):
        f[("keep=" if k else "drop=") + w] += 1.0
    if sum(kept) == len(t_words):
        f["subset"] = 1.0
    if t_words:
        f["n_words"] = float(len(t_words))
    if tgt is None:
        f["deletion"] = 1.0
    else:
        for p in _productions(tgt):
            f["tprod=" + p] += 1.0
    # tree edits: node labels of the source elementary tree missing from the target, and vice versa
    ls = _labels(src)
    lt = _labels(tgt) if tgt is not None else Counter()
    for lab, n in (ls - lt).items():
        f["tdel=" + lab] += float(n)
    for lab, n in (lt - ls).items():
        f["tins=" + lab] += float(n)
    # yield edits: symbols of the source yield the target yield drops (LCS), and target symbols not matched
    ys = _yield_symbols(src)
    yt = _yield_symbols(tgt) if tgt is not None else []
    ks = _lcs_kept(ys, yt)
    for sym, k in zip(ys, ks):
        if not k:
            f["ydel=" + sym] += 1.0
    kt = _lcs_kept(yt, ys)
    for sym, k in zip(yt, kt):
        if not k:
            f["yins=" + sym] += 1.0
    # dropped variables: source frontier nodes aligned with nothing
    dropped = [n for n in src.subtrees() if not n.children and frontier_index(n.label) == 0]
    if dropped:
        f["n_dropped"] = float(len(dropped))
        for n in dropped:
            f["dropped=" + _frontier_label(n.label)] += 1.0
    return dict(f)


class FeatureIndex:
    """Feature names -> columns (append-only while `growing`; unknown names are ignored once frozen)."""

    def __init__(self, names: list[str] | None = None):
        self.names: list[str] = list(names or [])
        self.ids: dict[str, int] = {n: i for i, n in enumerate(self.names)}
        self.growing = True

    def __len__(self) -> int:
        return len(self.names)

    def vector(self, feats: dict[str, float]) -> tuple[np.ndarray, np.ndarray]:
        """Sorted columns and values of a feature dict (new names get columns while growing)."""
        cols, vals = [], []
        for name, v in feats.items():
            if v == 0.0:
                continue
            i = self.ids.get(name)
            if i is None:
                if not self.growing:
                    continue
                i = self.ids[name] = len(self.names)
                self.names.append(name)
            cols.append(i)
            vals.append(v)
        order = np.argsort(cols, kind="stable")
        return np.asarray(cols, dtype=np.int64)[order], np.asarray(vals, dtype=np.float64)[order]

    def to_json(self) -> list[str]:
        return list(self.names)

