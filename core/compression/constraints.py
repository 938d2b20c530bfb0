"""What a deletion may not do: hard constraints every compressor can apply to its decoder, and the clean-up of
punctuation a deletion leaves behind.

Grammatical compressions keep every constituent's head and its obligatory dependents (Clarke & Lapata 2008 state
such constraints over dependency arcs; Filippova & Strube 2008 prune dependency trees the same way).  Over a source
tree analysed by `treegram.compression.syntax.AnalysedTree` they are expressed as costs (log scale; `inf` = never)
that a decoder adds when a surviving node drops children:

- `drop_costs(t)[c]`: the cost of dropping node c while its parent survives.  Protected: the head child (no
  constituent survives without its head), dependents whose relation is an argument (`ARGUMENT_RELATIONS`: subjects,
  objects, clausal complements, the object of a preposition, auxiliaries, negation, determiners, markers, ...),
  negation words and wh-words (and every phrase holding one, up to its clause: "n't yet", "how long"), and the
  predicate of a copula (the first dependent after a form of *be*), and the parts of a name ("[St.] Louis").
  Conjuncts are arguments too: deleting "and I don't kick down doors" loses as much as deleting the first clause
  would; so is the conjunction before a conjunct (no "A B"), while a conjunction without one ("And ..." opening a
  sentence) may go.  A punctuation mark is never dropped on its own (`keep_punctuation`): it goes with the constituent it
  belongs to, or in `clean_punctuation` when a deletion left it dangling.

Relations come from dependency-projected trees (`treegram.trees.depproject`, ``NP-nsubj``); on PTB trees without
relations only the head, negation and wh-word constraints apply.

`clean_punctuation(tokens, keep)` then repairs what word deletion leaves: punctuation at the start, runs of
punctuation (", ," and ", ."), a bracket or quote whose partner or content was deleted; `agree_articles` undoes a
deletion that left "a" before a vowel ("a [big] apple"); `tidy` does both.
"""

from __future__ import annotations

import math

import attrs
import numpy as np

from treegram.compression.syntax import AnalysedTree, dependency_relation

__all__ = ["ARGUMENT_RELATIONS", "NEGATION", "WH_WORDS", "BE_FORMS", "Constraints", "clean_punctuation",
           "agree_articles", "tidy", "PUNCTUATION"]

ARGUMENT_RELATIONS = frozenset({
    "nsubj", "nsubjpass", "csubj", "csubjpass", "expl",  # subjects
    "dobj", "iobj", "dative", "attr", "acomp", "oprd", "xcomp", "ccomp", "pcomp", "pobj",  # complements
    "aux", "auxpass", "neg", "prt", "case", "det", "predet", "mark", "poss",
    "conj",  # a conjunct carries as much as the first one: annotators keep both ("I don't use guns and I don't ...")
})
NEGATION = frozenset({"not", "n't", "never", "no", "nothing", "nobody", "none", "neither", "nor", "nowhere",
                      "cannot", "without"})
WH_WORDS = frozenset({"what", "which", "who", "whom", "whose", "when", "where", "why", "how", "whether",
                      "however", "whatever", "whoever", "whenever", "wherever", "whichever"})
BE_FORMS = frozenset({"be", "am", "is", "are", "was", "were", "been", "being", "'s", "'re", "'m"})
PUNCTUATION = frozenset({",", ".", ":", ";", "!", "?", "-", "--", "...", "``", "''", '"', "'", "`", "(", ")",
                         "-LRB-", "-RRB-", "[", "]", "-LSB-", "-RSB-", "{", "}", "-LCB-", "-RCB-"})
_OPEN = {"(": ")", "-LRB-": "-RRB-", "[": "]", "-LSB-": "-RSB-", "{": "}", "-LCB-": "-RCB-", "``": "''"}
_CLOSE = {v: k for k, v in _OPEN.items()}
_FINAL = frozenset({".", "?", "!"})
_TRAILING = frozenset({",", ":", ";", "-", "--"})
# a deleted clause they open was a sentence-level modifier: the comma before it closed the clause before ("As he put
# it , [when ...] , it does")
_SUBORDINATORS = frozenset({"when", "if", "because", "although", "though", "while", "since", "after", "before",
                            "unless", "until", "as", "once", "whereas"})
_PREDICATE = frozenset({"acomp", "attr", "prep", "advmod", "npadvmod", "oprd", "ccomp", "xcomp"})

INF = math.inf


@attrs.frozen
class Constraints:
    """Hard deletion constraints (see the module docstring); `cost` is what breaking one costs (inf = never)."""

    arguments: frozenset = ARGUMENT_RELATIONS
    negation: frozenset = NEGATION
    wh_words: frozenset = WH_WORDS
    keep_punctuation: bool = True
    cost: float = INF

    def drop_costs(self, t: AnalysedTree) -> np.ndarray:
        """Per node: the cost of dropping it while its parent survives (0 for the root)."""
        n = len(t)
        out = np.zeros(n)
        for u in range(n):
            kids = t.children[u]
            if not kids:
                continue
            out[kids[t.head_child(u, kids)]] = self.cost
            head_tag = t.tags[t.head[u]]
            for c in kids:
                rel = dependency_relation(t.labels[c])
                if rel in self.arguments:
                    out[c] = self.cost
                elif rel == "compound" and head_tag.startswith("NNP") and t.tags[t.head[c]].startswith("NNP"):
                    out[c] = self.cost  # part of a name: "[St.] Louis", "[McDonnell] Douglas"
                elif self.keep_punctuation and t.word_pos[c] >= 0 and t.words[t.word_pos[c]] in PUNCTUATION:
                    out[c] = self.cost  # punctuation goes with what it separates: `clean_punctuation`
            hw = t.words[t.head[u]].lower()
            if hw in BE_FORMS and t.tags[t.head[u]].startswith(("VB", "AUX")):
                self._protect_predicate(t, u, out)
        # a conjunction stays with the conjunct after it; dependents of one head word may sit at different nodes
        # (binarized trees), so they are grouped by the head word's position
        conj_after: dict[int, int] = {}
        for c in range(1, n):
            if dependency_relation(t.labels[c]) == "conj":
                h = t.head[t.parent[c]]
                conj_after[h] = max(conj_after.get(h, -1), t.span[c][0])
        for c in range(1, n):
            if dependency_relation(t.labels[c]) == "cc" and t.span[c][0] < conj_after.get(t.head[t.parent[c]], -1):
                out[c] = self.cost
        for u in range(n):
            if t.word_pos[u] < 0:
                continue
            w = t.words[t.word_pos[u]].lower()
            if w in self.negation or w in self.wh_words:
                # the word and every phrase holding it up to its clause: "n't" inside "n't yet", "how long"
                v = u
                out[v] = self.cost
                while t.parent[v] > 0 and not t.tags[t.head[t.parent[v]]].startswith(("VB", "MD")):
                    v = t.parent[v]
                    out[v] = self.cost
        out[0] = 0.0
        return out

    def _protect_predicate(self, t: AnalysedTree, u: int, out: np.ndarray) -> None:
        """The predicate of a copula: its first complement after the verb ("He 's [down to earth]", "they 're still
        [in Europe]"), an adverb only when nothing else follows it ("it is [here]")."""
        h = t.head[u]
        after = [c for c in t.children[u] if t.span[c][0] > h and dependency_relation(t.labels[c]) in _PREDICATE]
        strong = [c for c in after if dependency_relation(t.labels[c]) != "advmod"]
        if strong or after:
            out[(strong or after)[0]] = self.cost


def clean_punctuation(tokens: list[str], keep) -> np.ndarray:
    """The keep mask with dangling punctuation removed (never adds a word):

    - punctuation before the first kept word (but a kept opening bracket or quote whose partner survives);
    - the two commas around deleted material (an appositive or parenthetical between commas; one stays before a
      capitalised word or a number, or when the deleted material was a clause opened by a subordinator);
    - in a run of kept punctuation marks the ones before the last (", , ," -> ","; ", ." -> "."), brackets and
      quotes excepted;
    - a bracket or quote pair with nothing kept between them, and one whose partner was deleted;
    - a comma, colon or dash at the end;
    - a sentence-final . ? ! is kept when any word is.

    >>> toks = "The man , a teacher , was arrested .".split()
    >>> keep = [True, True, True, False, False, True, True, True, True]
    >>> " ".join(w for w, k in zip(toks, clean_punctuation(toks, keep)) if k)
    'The man was arrested .'
    """
    keep = np.asarray(keep, dtype=bool).copy()
    n = len(tokens)
    is_p = np.array([w in PUNCTUATION for w in tokens], dtype=bool)
    if not (keep & ~is_p).any():
        return keep
    # bracket / quote pairs: partner deleted, or nothing kept inside -> drop both
    stack: list[int] = []
    for i, w in enumerate(tokens):
        if w in _OPEN:
            stack.append(i)
        elif w in _CLOSE and stack and tokens[stack[-1]] == _CLOSE[w]:
            j = stack.pop()
            inside = keep[j + 1:i] & ~is_p[j + 1:i]
            if not (keep[j] and keep[i]) or not inside.any():
                keep[j] = keep[i] = False
    paired = {w for w in _OPEN} | set(_CLOSE)
    # leading punctuation
    for i in range(n):
        if keep[i] and not is_p[i]:
            break
        if keep[i] and tokens[i] not in paired:
            keep[i] = False
    # a comma pair around deleted material ("The man , [a teacher] , was") goes with it -- unless a name or a
    # number follows, as in a sign-off or a list of places ("Lisa Price , [for CNN] , Chicago"): then one stays
    kept_idx = [i for i in range(n) if keep[i]]
    for a, b in zip(kept_idx, kept_idx[1:]):
        if b > a + 1 and tokens[a] == "," and tokens[b] == "," and not keep[a + 1:b].any():
            nxt = next((tokens[j] for j in range(b + 1, n) if keep[j]), "")
            keep[a] = False
            if not (nxt[:1].isupper() or nxt[:1].isdigit() or tokens[a + 1].lower() in _SUBORDINATORS):
                keep[b] = False
    # runs of kept punctuation: keep the last (a final . ? ! wins over a comma before it)
    kept_idx = [i for i in range(n) if keep[i]]
    for a, b in zip(kept_idx, kept_idx[1:]):
        if is_p[a] and is_p[b] and tokens[a] not in paired and tokens[b] not in paired:
            keep[a] = False
    # a comma, colon or dash left at the end
    for i in range(n - 1, -1, -1):
        if keep[i]:
            if tokens[i] in _TRAILING:
                keep[i] = False
                continue
            break
    # sentence-final punctuation
    last = n - 1
    if tokens[last] in _FINAL and not keep[last]:
        keep[last] = True
        for i in range(last - 1, -1, -1):  # a comma or dash left right before it goes
            if keep[i]:
                if is_p[i] and tokens[i] not in paired:
                    keep[i] = False
                break
    return keep


_AN_EXCEPTIONS = ("uni", "use", "usu", "uti", "eu", "ewe", "one", "once", "ubi", "ura", "uro", "ufo")
_AN_H = ("hour", "honest", "honor", "honour", "heir", "herb")
_LETTER_AN = set("AEFHILMNORSX")  # letters whose name starts with a vowel sound: "an F-18", "an MRI"


def _takes_an(word: str) -> bool:
    """Whether "an" goes before `word` (spelling heuristics: vowels, silent h, initialisms, numbers 8/11/18)."""
    w = word.strip("`'\"")
    if not w:
        return False
    if w[0].isdigit():
        return w.startswith(("8", "11", "18")) and not w.startswith(("110", "111", "1100"))
    if len(w) > 1 and (w[:2].isupper() or "-" in w[:3] and w[0].isupper() and len(w.split("-")[0]) == 1):
        return w[0] in _LETTER_AN  # an initialism or a letter-number name: "an FBI", "an F-18"
    lw = w.lower()
    if lw.startswith(_AN_H):
        return True
    if lw.startswith(_AN_EXCEPTIONS):
        return False
    return lw[0] in "aeiou"


def agree_articles(tokens: list[str], keep) -> np.ndarray:
    """The keep mask with "a" / "an" agreeing again with the word after it: where a deletion put a word of the
    other kind after the article ("a [big] apple"), the deleted words between them are restored (never a change
    of the source's words; only a deletion undone).

    >>> toks = "She was an old and very able teacher .".split()
    >>> keep = [True, True, True, False, False, False, False, True, True]
    >>> " ".join(w for w, k in zip(toks, agree_articles(toks, keep)) if k)
    'She was an old and very able teacher .'
    """
    keep = np.asarray(keep, dtype=bool).copy()
    n = len(tokens)
    for i, w in enumerate(tokens):
        if not keep[i] or w.lower() not in ("a", "an") or i + 1 >= n:
            continue
        j = i + 1
        while j < n and (not keep[j] or tokens[j] in PUNCTUATION):
            j += 1
        if j >= n or j == i + 1 or keep[i + 1]:
            continue
        if _takes_an(tokens[j]) != (w.lower() == "an") and _takes_an(tokens[i + 1]) == (w.lower() == "an"):
            keep[i + 1:j] = True
    return keep


def tidy(tokens: list[str], keep) -> np.ndarray:
    """Everything a deletion-only output is repaired with: articles (`agree_articles`), then punctuation
    (`clean_punctuation`)."""
    return clean_punctuation(tokens, agree_articles(tokens, keep))
