"""Phrase-structure trees from dependency trees by head projection (in the spirit of Collins 1999 / Xia & Palmer
2001): every word with dependents projects one phrase holding its dependents' phrases and its own preterminal in
surface order; a word without dependents is a bare preterminal.

The phrase is labelled by the head's part of speech (NN* -> NP, VB*/MD -> VP, or S when the verb has a subject,
IN/TO/RP -> PP, JJ* -> ADJP, RB* -> ADVP, UH -> INTJ, otherwise XP).  With ``relations_in_labels`` every dependent
(phrase or preterminal) also carries its lower-case dependency relation after a hyphen, so the tree says what each
constituent is to its head:

>>> from treegram.corpora.dependency import DepSentence
>>> s = DepSentence(["Police", "arrested", "him", "."], ["NNS", "VBD", "PRP", "."], [2, 0, 2, 2],
...                 ["nsubj", "ROOT", "dobj", "punct"])
>>> project(s).to_bracket()
'(S (NNS-nsubj Police) (VBD arrested) (PRP-dobj him) (.-punct .))'

The head child of such a phrase is its one child without a relation (`treegram.compression.syntax` reads heads
that way), which makes these trees what deletion-based compression needs: a constituent per dependent, deletable
as a whole, labelled with its grammatical function.  PTB function tags are upper case (``NP-SBJ``), so the two
conventions never collide.  Traversal is iterative (deep chains of dependents cannot overflow the stack).
"""

from __future__ import annotations

from treegram.trees.tree import Tree

__all__ = ["project", "projective_heads", "phrase_label", "SUBJECT_RELATIONS"]

SUBJECT_RELATIONS = frozenset({"nsubj", "nsubjpass", "csubj", "csubjpass", "expl"})
_NOUNISH = ("PRP", "CD", "EX", "WP", "DT", "PDT", "PRP$", "WDT", "FW", "POS")


def phrase_label(tag: str, relations) -> str:
    """The category a head with part-of-speech `tag` projects, given its dependents' relations."""
    if tag.startswith("VB") or tag == "MD":
        return "S" if set(relations) & SUBJECT_RELATIONS else "VP"
    if tag.startswith("NN") or tag in _NOUNISH:
        return "NP"
    if tag in ("IN", "TO", "RP"):
        return "PP"
    if tag.startswith("JJ"):
        return "ADJP"
    if tag.startswith("RB") or tag == "WRB":
        return "ADVP"
    if tag == "UH":
        return "INTJ"
    return "XP"


def project(sent, *, relations_in_labels: bool = True, root: str | None = None, binarize: bool = False) -> Tree:
    """The projected tree of a dependency parse (`treegram.corpora.dependency.DepSentence`: 1-based heads, 0 =
    root).  Several roots (or a bare word) are gathered under an ``XP``; `root` wraps the result in one more node
    (e.g. ``"ROOT"``).  Non-projective arcs are first lifted (`projective_heads`), so the tree's words are the
    sentence's in order.

    `binarize`: every phrase takes its dependents one at a time, head-outward -- right dependents first, nearest
    first, then left ones -- through intermediate ``@``-nodes (``@S``), so each node holds the head part and one
    dependent and a grammar over these trees decides dependent by dependent (what to keep never depends on how many
    siblings a head happens to have):

    >>> from treegram.corpora.dependency import DepSentence
    >>> project(DepSentence(["Police", "arrested", "him", "."], ["NNS", "VBD", "PRP", "."], [2, 0, 2, 2],
    ...                     ["nsubj", "ROOT", "dobj", "punct"]), binarize=True).to_bracket()
    '(S (NNS-nsubj Police) (@S (@S (VBD arrested) (PRP-dobj him)) (.-punct .)))'
    """
    n = len(sent.words)
    heads = projective_heads(sent.heads)
    kids: list[list[int]] = [[] for _ in range(n + 1)]
    for i, h in enumerate(heads, start=1):
        kids[h].append(i)
    rels = sent.relations or ("",) * n
    with_rel = relations_in_labels and sent.relations is not None

    def label(i: int, base: str) -> str:
        r = rels[i - 1]
        return f"{base}-{r.lower()}" if with_rel and r and r.upper() != "ROOT" and kids[0].count(i) == 0 else base

    built: dict[int, tuple[int, Tree]] = {}
    # post-order without recursion: a word is built once all its dependents are
    stack = [(h, False) for h in kids[0]]
    while stack:
        i, expanded = stack.pop()
        if not expanded:
            stack.append((i, True))
            stack.extend((k, False) for k in kids[i])
            continue
        tag = sent.tags[i - 1]
        if not kids[i]:
            built[i] = (i, Tree(label(i, tag), (sent.words[i - 1],)))
            continue
        parts = [built.pop(k) for k in kids[i]] + [(i, Tree(tag, (sent.words[i - 1],)))]
        parts.sort(key=lambda p: p[0])
        base = phrase_label(tag, (rels[k - 1] for k in kids[i]))
        cat = label(i, base)
        if not binarize or len(parts) <= 2:
            built[i] = (parts[0][0], Tree(cat, tuple(t for _, t in parts)))
            continue
        h = next(j for j, (pos, _t) in enumerate(parts) if pos == i)
        cur = parts[h][1]
        steps = [(False, t) for _p, t in parts[h + 1:]] + [(True, t) for _p, t in reversed(parts[:h])]
        for k, (left, dep) in enumerate(steps):
            lab = cat if k == len(steps) - 1 else "@" + base
            cur = Tree(lab, (dep, cur) if left else (cur, dep))
        built[i] = (parts[0][0], cur)
    tops = sorted(built[r] for r in kids[0])
    if len(tops) == 1 and not tops[0][1].is_preterminal:
        tree = tops[0][1]
    else:
        tree = Tree("XP", tuple(t for _, t in tops))
    return Tree(root, (tree,)) if root else tree


def projective_heads(heads) -> list[int]:
    """The heads (1-based, 0 = root) with every non-projective arc lifted to the head's head until none is left
    (Kahane et al. 1998; the lifting of Nivre & Nilsson's pseudo-projective parsing): an arc h -> d is projective
    when h dominates every word between them.  The shortest non-projective arc is lifted first.

    >>> projective_heads([2, 0, 2])                 # "He left ." is projective
    [2, 0, 2]
    >>> projective_heads([4, 3, 0, 3])              # "what they want do": do -> what crosses want; lift it
    [3, 3, 0, 3]
    """
    h = [0] + [int(x) for x in heads]
    n = len(h) - 1
    while True:
        worst = None
        for d in range(1, n + 1):
            g = h[d]
            if g == 0:
                continue
            lo, hi = (g, d) if g < d else (d, g)
            for w in range(lo + 1, hi):
                v = w  # does g dominate w?
                while v != 0 and v != g:
                    v = h[v]
                if v != g:
                    if worst is None or hi - lo < worst[0]:
                        worst = (hi - lo, d)
                    break
        if worst is None:
            return h[1:]
        d = worst[1]
        h[d] = h[h[d]]
