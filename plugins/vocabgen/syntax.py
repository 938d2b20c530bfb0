"""treegram's own phrase-structure parse of sheet sentences: the embedded PCFG, its inside log-probability (a
plausibility feature, ranking.py) and its Viterbi tree (the constituents behind reorder tiles, exercises.py).

Training trees.  No treebank that allows shipping a derived model holds graded classroom English (the PTB sample
is LDC-licensed; GUM's texts are partly non-commercial), so the grammar is read off the graded-enja sentences
(CC BY-SA 4.0) themselves: their spaCy dependency parses, which vocabgen already makes for SPINEDEP, are turned
into flat phrase-structure trees by head projection (`dep_to_tree`, in the spirit of Collins 1999 / Xia & Palmer
2001): a word with dependents projects one phrase holding its dependents' phrases and itself in surface order,
labelled by the head's part of speech (NN* -> NP, VB*/MD -> VP, or S when the verb has a subject, IN -> PP, JJ ->
ADJP, RB -> ADVP, ...); a word without dependents is a bare preterminal.  `treegram train pcfg` machinery
(`PCFGModel.train`: markovized binarization h=2, parent annotation v=2, rare words as signature classes) estimates
the grammar; `build_default.py` writes it as `data/default-pcfg.npz`.

Inside score.  For tokens w_1..w_n the chart gives log P_G(w) = log sum over trees (treegram.charts.chart.inside);
`ranking.py` uses SLOR_G(w) = (log P_G(w) - sum_i log P_uni(w_i)) / (n + 1), the same normalization as the n-gram
SLOR.
"""

from __future__ import annotations

from collections.abc import Sequence

from treegram.trees.depproject import phrase_label
from treegram.trees.tree import Tree

PCFG_FILE = "default-pcfg.npz"

def dep_to_tree(sent) -> Tree:
    """A flat phrase-structure tree of a projective dependency parse (`treegram.corpora.DepSentence`): every word
    with dependents projects a phrase over its dependents' phrases and its own preterminal, in surface order.
    Non-projective arcs are attached in surface order too (the phrase's children are sorted by first word)."""
    n = len(sent.words)
    kids: list[list[int]] = [[] for _ in range(n + 1)]
    for i, h in enumerate(sent.heads, start=1):
        kids[h].append(i)
    rels = sent.relations or ("",) * n

    def build(i: int) -> tuple[int, Tree]:
        pre = Tree(sent.tags[i - 1], (sent.words[i - 1],))
        if not kids[i]:
            return i, pre
        parts = [build(k) for k in kids[i]] + [(i, pre)]
        parts.sort(key=lambda p: p[0])
        label = phrase_label(sent.tags[i - 1], {rels[k - 1] for k in kids[i]})
        return min(p[0] for p in parts), Tree(label, tuple(t for _, t in parts))

    roots = kids[0]
    if len(roots) == 1:
        _, t = build(roots[0])
        return t if not t.is_preterminal else Tree("XP", (t,))
    parts = sorted(build(r) for r in roots)
    return Tree("XP", tuple(t for _, t in parts))


def default_pcfg():
    """The embedded PCFG (`data/default-pcfg.npz`), or None when the file is missing (`embedded.DEFAULTS.pcfg`)."""
    from treegram.plugins.vocabgen.embedded import DEFAULTS

    return DEFAULTS.pcfg


def inside_logprob(pcfg, tokens: Sequence[str]) -> float:
    """log P_G(tokens) summed over all trees (natural log); -inf when the grammar derives no tree."""
    from treegram.charts.chart import inside

    if not tokens:
        return float("-inf")
    return inside(pcfg.cfg, pcfg.lexical_input(list(tokens))).log_z


def parse_tree(pcfg, tokens: Sequence[str]) -> Tree | None:
    """The most probable (Viterbi) tree of the tokens, unbinarized, or None when there is none."""
    from treegram.charts.chart import viterbi

    if not tokens:
        return None
    toks = list(tokens)
    inp = pcfg.chart_input(toks)
    best = viterbi(pcfg.cfg, inp.lex, toks)
    if best is None:
        return None
    return pcfg.category_tree(best.tree)
