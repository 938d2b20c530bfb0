"""The default correction typer: CLC codes from the edit itself, with no training data.

No model trained on FCE may ship with treegram, so `treegram corrections` without ``--model`` types each
correction by rules over what changed (the trimmed span: the student's words ``wrong`` and the teacher's words
``right``) and the Penn tags of both sides (spaCy):

1. the same words in another order                                   -> W
2. only case or punctuation changed                                  -> RP  (CLC codes capitals as punctuation)
3. words only inserted                                               -> M + POS letter of the inserted word(s)
4. words only removed                                                -> U + POS letter of the removed word(s)
5. ``not``/``n't``/``no`` added or removed (with other changes)      -> X
6. one word for one word:
   a. the student's word is not in WordNet (nor a closed-class word), the teacher's is, and they are close in
      spelling (character distance <= 2, or <= a third of the length)                       -> S
   b. same lemma/stem (or two forms of be/have/do), verbs: tense changed (past <-> present)      -> TV
                                              person/number changed (VBP <-> VBZ, is <-> are)  -> AGV
                                              other verb form (ing/to/participle)              -> FV
   c. same lemma/stem, both nouns, number changed                                              -> AGN
   d. same lemma/stem, different word class                    -> D + POS letter of the teacher's word
   e. same lemma/stem otherwise (pronoun case, comparatives)   -> F + POS letter
   f. two dictionary words of the same word class, a letter or two apart (5+ letters)  -> S  (than/then)
   g. otherwise                                                -> R + POS letter of the teacher's word
7. several words: a verb of the same lemma on both sides with a different tense -> TV; otherwise R + the POS
   letter the changed words share (or plain R).

POS letters (labels.POS_LETTERS): T preposition (IN, TO, RP), D determiner, Q quantifier (some, many, ...),
A pronoun, V verb, N noun, J adjective, Y adverb, C conjunction, P punctuation.  benchmarks/bench_corrections.py
measures this typer against the trained classifier on FCE dev.
"""

from __future__ import annotations

from treegram.plugins.corrections.features import char_distance, same_stem
from treegram.plugins.corrections.resources import in_dictionary

_QUANT = frozenset("some any all each every much many few little several both enough no lot lots plenty "
                   "more most less least fewer".split())
_SUBORD = frozenset("because although though if unless while whereas whether since so that as when".split())
_NEG = frozenset({"not", "n't", "no", "never"})
_PAST = {"VBD", "VBN"}
_FAMILIES = [frozenset("am is are was were be been being 's 're 'm".split()),
             frozenset("has have had having 've 'd".split()), frozenset("do does did done doing".split())]


def _same_lemma(w1: str, w2: str) -> bool:
    """Same stem or WordNet lemma (features.same_stem), or two forms of be / have / do."""
    a, b = w1.lower(), w2.lower()
    return same_stem(a, b)[0] or any(a in f and b in f for f in _FAMILIES)
_PRESENT = {"VBP", "VBZ"}


def pos_letter(word: str, tag: str) -> str:
    w = word.lower()
    if not any(ch.isalnum() for ch in word):
        return "P"
    if w in _QUANT and tag in ("DT", "JJ", "PDT", "RB", "NN", "JJR", "JJS", "RBR", "RBS", "CD"):
        return "Q"
    if tag in ("IN",):
        return "C" if w in _SUBORD else "T"
    if tag in ("TO", "RP"):
        return "T"
    if tag in ("DT", "PDT", "WDT"):
        return "D"
    if tag in ("PRP", "PRP$", "WP", "WP$", "EX"):
        return "A"
    if tag.startswith("VB") or tag == "MD":
        return "V"
    if tag.startswith("NN"):
        return "N"
    if tag.startswith("JJ"):
        return "J"
    if tag.startswith("RB") or tag == "WRB":
        return "Y"
    if tag == "CC":
        return "C"
    if tag == "CD":
        return "Q"
    return ""


def _shared_letter(words, tags) -> str:
    letters = {pos_letter(w, t) for w, t in zip(words, tags)}
    letters.discard("P") if len(letters) > 1 else None
    if len(letters) == 1:
        return letters.pop()
    content = [pos_letter(w, t) for w, t in zip(words, tags) if pos_letter(w, t) in ("V", "N", "J", "Y")]
    return content[0] if len(set(content)) == 1 else ""


def _tense(tags: list[str], words: list[str]) -> str | None:
    lw = [w.lower() for w in words]
    if any(w in ("will", "'ll", "would") for w in lw):
        return "future/cond"
    if any(w in ("have", "has", "had", "'ve") for w in lw) and any(t == "VBN" for t in tags):
        return "perfect"
    for t in tags:
        if t in _PAST:
            return "past"
        if t in _PRESENT:
            return "present"
    return None


def _base(tag: str) -> str | None:
    """A bare verb (VB) or a mis-tagged finite verb counts as present when compared with a past form."""
    return "present" if tag in ("VB", "NN", "NNS", "JJ") else None


def rule_code(wrong: list[str], right: list[str], wrong_tags: list[str], right_tags: list[str],
              *, reorder: bool = False) -> str:
    if reorder:
        return "W"
    if wrong and right and len(wrong) == len(right) and sorted(w.lower() for w in wrong) == sorted(
            w.lower() for w in right) and [w.lower() for w in wrong] != [w.lower() for w in right]:
        return "W"
    if [w.lower() for w in wrong] == [w.lower() for w in right] and wrong:
        return "RP"
    if all(not any(c.isalnum() for c in w) for w in wrong + right):
        return ("M" if not wrong else "U" if not right else "R") + "P"
    if not wrong:
        return "M" + _shared_letter(right, right_tags)
    if not right:
        return "U" + _shared_letter(wrong, wrong_tags)
    lw, lr = {w.lower() for w in wrong}, {w.lower() for w in right}
    if (lw ^ lr) & _NEG or any(w.endswith("n't") for w in lw ^ lr):
        return "X"
    if len(wrong) == 1 and len(right) == 1:
        w1, w2, t1, t2 = wrong[0], right[0], wrong_tags[0], right_tags[0]
        d = char_distance(w1.lower(), w2.lower())
        if not in_dictionary(w1) and in_dictionary(w2) and (d <= 2 or d * 3 <= max(len(w1), len(w2))):
            return "S"
        same = _same_lemma(w1, w2)
        l1, l2 = pos_letter(w1, t1), pos_letter(w2, t2)
        if same:
            if l2 == "V" and (l1 == "V" or t2 == "VBD"):
                tense1, tense2 = _tense([t1], [w1]) or _base(t1), _tense([t2], [w2]) or _base(t2)
                if tense1 and tense2 and tense1 != tense2 and "past" in (tense1, tense2):
                    return "TV"
                if {t1, t2} in ({"VBP", "VBZ"}, {"VB", "VBZ"}) or {w1.lower(), w2.lower()} in (
                        {"is", "are"}, {"was", "were"}, {"has", "have"}, {"does", "do"}, {"am", "is"}):
                    return "AGV"
                return "FV"
            if l1 == "N" and l2 == "N" and (t1.endswith("S")) != (t2.endswith("S")):
                return "AGN"
            if l1 != l2 and l2 in ("N", "V", "J", "Y"):
                return "D" + l2
            return "F" + l2
        if not in_dictionary(w1) and d <= 3:
            return "S"
        if d <= 2 and min(len(w1), len(w2)) >= 5 and l1 == l2:
            return "S"   # two real words a letter or two apart: a spelling confusion (SX) or variant (SA)
        return "R" + l2
    # several words
    verbs_w = [(w, t) for w, t in zip(wrong, wrong_tags) if t.startswith("VB") or t == "MD"]
    verbs_r = [(w, t) for w, t in zip(right, right_tags) if t.startswith("VB") or t == "MD"]
    if verbs_w and verbs_r and any(_same_lemma(a, b) for a, _ in verbs_w for b, _ in verbs_r):
        tw, tr = _tense([t for _, t in verbs_w], [w for w, _ in verbs_w]), _tense([t for _, t in verbs_r],
                                                                               [w for w, _ in verbs_r])
        if tw != tr:
            return "TV"
        return "FV"
    return "R" + _shared_letter(right, right_tags)
