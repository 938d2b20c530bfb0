"""Checks a sentence must pass to reach a sheet beyond its words: a finite main clause, and the practised word used
in a sense (part of speech) the sheet's level has.

Both read the dependency parse the plugin already has (`analysis.analyse`: the spaCy pipeline that parses the
training text; PTB tags, heads, labels):

* **fragments** — a sheet sentence needs a finite main clause.  The root must be a finite verb (VBD/VBZ/VBP/MD),
  carry a finite auxiliary, or be an imperative (a bare verb without a subject: "Open the door.").  A root that is
  a subordinate clause ("Because the train did not wait for me.": the root has a subordinating *mark*) or no verb
  at all ("Swimming in the river.", "A glass of water, please.") is a fragment.
* **sense by level** — CEFR-J lists a headword per part of speech and level: *water* is a noun at A1 and a verb at
  B2.  The target token's part of speech in the sentence (the tag; a noun-tagged token with its own subject is a
  verb the tagger missed: "The smoke made our eyes water.") must be one the profile lists for the word at or below
  the sheet's level; a part of speech the profile lists only above the level rejects the sentence ("water" as a
  verb on an A1 sheet).  A part of speech the profile does not list at all is left alone (tagger noise on a
  one-class word is no reason to drop a real sentence).
"""

from __future__ import annotations

from functools import lru_cache

#: conjunctions that make the clause they mark subordinate (a sentence whose root carries one is a fragment)
SUBORDINATORS = frozenset("""because if when whenever although though while unless since until till before after
as whereas whether once so that""".split())
_FINITE = frozenset({"VBD", "VBZ", "VBP", "MD"})
_SUBJECT = frozenset({"nsubj", "nsubjpass", "csubj", "expl"})

#: CEFR-J part of speech -> the coarse class a PTB tag maps to (`tag_class`)
_PROFILE_CLASS = {"noun": "noun", "verb": "verb", "vern": "verb", "be-verb": "verb", "do-verb": "verb",
                  "have-verb": "verb", "modal auxiliary": "verb", "adjective": "adjective", "adverb": "adverb",
                  "preposition": "preposition", "determiner": "determiner", "pronoun": "pronoun",
                  "conjunction": "conjunction", "number": "number", "interjection": "interjection"}


def _parse(tokens):
    from treegram.plugins.vocabgen.analysis import analyse

    return analyse(tuple(tokens))


def fragment_reason(tokens, parsed=None) -> str | None:
    """Why the sentence is a fragment (None: it has a finite main clause, or there is no parser to tell)."""
    parsed = parsed if parsed is not None else _parse(tokens)
    if parsed is None:
        return None
    tags, heads, deps = parsed
    roots = [i for i, h in enumerate(heads) if h < 0]
    if len(roots) != 1:
        return None
    r = roots[0]
    kids = [i for i, h in enumerate(heads) if h == r]
    question = tokens[-1] == "?"
    if any(deps[i] == "mark" and tokens[i].lower() in SUBORDINATORS for i in kids) \
            or (not question and any(deps[i] == "advmod" and tokens[i].lower() in ("when", "whenever")
                                     and i < r for i in kids)):
        return "a subordinate clause alone (no main clause)"
    first = tokens[0].lower() if tokens else ""
    if (first in ("what", "how") and tokens[-1] == "!") or (question and first in ("how", "what")
                                                             and len(tokens) > 1 and tokens[1].lower() == "about"):
        return None  # exclamatives and suggestions: "What a nice day!", "How about some tea?"
    finite = tags[r] in _FINITE or any(deps[i] in ("aux", "auxpass") and tags[i] in _FINITE for i in kids)
    imperative = tags[r] == "VB" and not any(deps[i] in _SUBJECT for i in kids)
    if not (finite or imperative):
        return "no finite main clause"
    return None


def tag_class(tag: str | None, index: int | None = None, parsed=None) -> str | None:
    """The coarse part of speech of a PTB tag (noun, verb, adjective, adverb, ...); a noun-tagged token with a
    subject of its own is a verb ("our eyes water")."""
    if not tag:
        return None
    if tag.startswith("NN") and tag not in ("NNP", "NNPS"):
        if parsed is not None and index is not None:
            _t, heads, deps = parsed
            if any(h == index and d in ("nsubj", "nsubjpass") for h, d in zip(heads, deps)):
                return "verb"
        return "noun"
    if tag.startswith("VB") or tag == "MD":
        return "verb"
    if tag.startswith("JJ"):
        return "adjective"
    if tag.startswith("RB") or tag == "WRB":
        return "adverb"
    return {"IN": "preposition", "DT": "determiner", "PRP": "pronoun", "PRP$": "determiner", "CD": "number",
            "UH": "interjection", "CC": "conjunction"}.get(tag)


@lru_cache(maxsize=8192)
def profile_classes(word: str) -> dict[str, int]:
    """word -> {coarse part of speech: the lowest CEFR level (1..6) the profile lists it at}."""
    from treegram.plugins.vocabgen.vocab import cefrj_entries

    w = word.lower()
    out: dict[str, int] = {}
    for hw, pos, lv in cefrj_entries():
        if w in (a.strip().lower() for a in hw.split("/")):
            c = _PROFILE_CLASS.get(pos)
            if c is not None:
                out[c] = min(out.get(c, 9), lv)
    return out


def sense_reason(tokens, index: int, word: str, level: str | None, parsed=None) -> str | None:
    """Why the practised `word` at `index` is used above the sheet's `level` ("water used as a verb: CEFR-J lists
    that at B2"), or None."""
    from treegram.plugins.vocabgen.vocab import LEVELS

    if level is None or level.upper() not in LEVELS:
        return None
    classes = profile_classes(word)
    parsed = parsed if parsed is not None else _parse(tokens)
    if parsed is None or len(parsed[0]) != len(tokens):
        return None
    if parsed[0][index] in ("NNP", "NNPS") and index > 0 and tokens[index][:1].isupper():
        from treegram.plugins.vocabgen.vocab import common_words

        if word.lower() in common_words():
            return f"{word} used as a name"  # "Miss Red taught me Japanese."
    c = tag_class(parsed[0][index], index, parsed)
    lim = LEVELS.index(level.upper()) + 1
    if c in classes and classes[c] > lim:
        return f"{word} used as a {c}: CEFR-J lists that at {LEVELS[classes[c] - 1]}"
    return None


def sheet_reason(tokens, word: str, level: str | None) -> str | None:
    """Why a sentence cannot practise `word` on a sheet of `level` (fragment or sense above the level), or None."""
    from treegram.plugins.vocabgen.analysis import target_index

    parsed = _parse(tokens)
    if parsed is None:
        return None
    why = fragment_reason(tokens, parsed)
    if why:
        return why
    idx = target_index(tuple(tokens), word)
    return sense_reason(tokens, idx, word, level, parsed) if idx is not None else None
