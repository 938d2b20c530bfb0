"""The feature templates of Figure 2 (Swanson & Yamangil 2012, section 3), over the minimum edit-distance path
between the student's sentence x and the teacher's sentence y (editpath.edit_path).

For every non-Equal operation of the path:

=================  =====================================================================================
Insert             ``I`` (indicator), ``I:w=<w>`` (the word; lexical), POS context: the Penn tags of the
                   corrected sentence just before and after (``I:ctx=DT_NN``, ``I:prev=DT``, ``I:next=NN``)
                   and the tag of the inserted word itself (``I:pos=IN``)
Delete             ``D``, ``D:w=<w>`` (lexical), POS context ``D:ctx`` / ``D:prev`` / ``D:next`` (tags of y
                   around the gap; y has no tag for the deleted word -- only y's tags are used, as in the paper)
Substitution       ``S``, ``S:w=<w1>><w2>`` (lexical), character edit distance ``S:ced=k`` (1..5, 6+),
                   common prefix length ``S:cpl=k`` (0..4, 5+), in dictionary ``S:dict=10`` (w1 in WordNet,
                   w2 not, ...), previous word ``S:prev=<w>`` (lexical), POS of the substitution ``S:pos=VBD``,
                   same stem ``S:samestem`` (Snowball stems or WordNet lemmas agree) and then the suffixes
                   left after the stem ``S:suf=ed_ing``; also ``S:case`` for a change of case only
Global             ``G:edits=k`` (number of non-Equal operations, 1..5, 6+) and ``G:reorder`` when y is a
                   re-ordering of x's words (the paper's "Same Words?")
=================  =====================================================================================

``lexical=False`` drops the strongly lexicalised templates (the words themselves and the previous word) for the
ablation of section 3.1.  Features are binary; a sentence's feature dict is what `DictVectorizer` /
`CorrectionsModel` take.
"""

from __future__ import annotations

from treegram.plugins.corrections.editpath import Op, edit_path
from treegram.plugins.corrections.resources import in_dictionary, lexicon, stem

LEXICAL_PREFIXES = ("I:w=", "D:w=", "S:w=", "S:prev=")


def char_distance(a: str, b: str) -> int:
    prev = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        cur = [i] + [0] * len(b)
        for j, cb in enumerate(b, 1):
            cur[j] = min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (ca != cb))
        prev = cur
    return prev[-1]


def common_prefix(a: str, b: str) -> int:
    k = 0
    while k < len(a) and k < len(b) and a[k] == b[k]:
        k += 1
    return k


def same_stem(w1: str, w2: str) -> tuple[bool, str]:
    """(same stem?, stem) by the Snowball stemmer, or by shared WordNet lemmas (went/go)."""
    a, b = w1.lower(), w2.lower()
    s1, s2 = stem(a), stem(b)
    if s1 == s2 and s1:
        return True, s1
    lex = lexicon()
    shared = lex.lemmas(a) & lex.lemmas(b)
    if shared:
        return True, min(shared)
    return False, ""


def suffix_after(word: str, st: str) -> str:
    w = word.lower()
    k = common_prefix(w, st)
    return w[k:] or "-"


def _bucket(k: int, top: int) -> str:
    return str(k) if k < top else f"{top}+"


def _tag(tags, j: int) -> str:
    if j < 0:
        return "<s>"
    if j >= len(tags):
        return "</s>"
    return tags[j]


def _context(f: dict[str, float], op: str, prev: str, nxt: str) -> None:
    """The tag context of an insertion or deletion: the tags on both sides, the one before, the one after."""
    f[f"{op}:ctx={prev}_{nxt}"] = 1.0
    f[f"{op}:prev={prev}"] = 1.0
    f[f"{op}:next={nxt}"] = 1.0


def features(x, y, ytags, *, lexical: bool = True, path: list[Op] | None = None) -> dict[str, float]:
    x, y = list(x), list(y)
    if path is None:
        path = edit_path(x, y)
    f: dict[str, float] = {}
    n_edits = 0
    for o in path:
        if o.op == "E":
            continue
        n_edits += 1
        if o.op == "I":
            f["I"] = 1.0
            f[f"I:w={y[o.j].lower()}"] = 1.0
            f[f"I:pos={_tag(ytags, o.j)}"] = 1.0
            _context(f, "I", _tag(ytags, o.j - 1), _tag(ytags, o.j + 1))
        elif o.op == "D":
            f["D"] = 1.0
            f[f"D:w={x[o.i].lower()}"] = 1.0
            _context(f, "D", _tag(ytags, o.j - 1), _tag(ytags, o.j))
        else:
            w1, w2 = x[o.i], y[o.j]
            f["S"] = 1.0
            f[f"S:w={w1.lower()}>{w2.lower()}"] = 1.0
            if w1.lower() == w2.lower():
                f["S:case"] = 1.0
            f[f"S:ced={_bucket(char_distance(w1.lower(), w2.lower()), 6)}"] = 1.0
            f[f"S:cpl={_bucket(common_prefix(w1.lower(), w2.lower()), 5)}"] = 1.0
            f[f"S:dict={int(in_dictionary(w1))}{int(in_dictionary(w2))}"] = 1.0
            f[f"S:prev={y[o.j - 1].lower() if o.j > 0 else '<s>'}"] = 1.0
            f[f"S:pos={_tag(ytags, o.j)}"] = 1.0
            f[f"S:ctx={_tag(ytags, o.j - 1)}_{_tag(ytags, o.j + 1)}"] = 1.0
            same, st = same_stem(w1, w2)
            if same:
                f["S:samestem"] = 1.0
                f[f"S:suf={suffix_after(w1, st)}_{suffix_after(w2, st)}"] = 1.0
    f[f"G:edits={_bucket(n_edits, 6)}"] = 1.0
    if n_edits and sorted(x) == sorted(y):
        f["G:reorder"] = 1.0
    if not lexical:
        f = {k: v for k, v in f.items() if not k.startswith(LEXICAL_PREFIXES)}
    return f
