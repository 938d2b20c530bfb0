"""The dependency analysis of a sheet sentence that the exercise kinds (exercises.py, kinds/) and the sheet checks
(quality.py) share: the spaCy pipeline's PTB tags, heads and labels of a tokenized sentence (`analyse`), lemmas by
PyPI `lemminflect` (`lemma_of`), and where the practised word is (`target_index`).  It sits below both, so the
checks need not import the exercise module.
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import lru_cache

from treegram.errors import InputError

_UPOS = {"N": "NOUN", "V": "VERB", "M": "AUX", "J": "ADJ", "R": "ADV"}


@lru_cache(maxsize=1)
def _nlp():
    """The spaCy pipeline (None when spaCy or its model is missing: reorder falls back to word tiles)."""
    try:
        from treegram.plugins.vocabgen.parsing import load_spacy

        return load_spacy()
    except InputError:
        return None


def _display_tokens(tokens: Iterable[str]) -> list[str]:
    toks = ["I" if t == "i" else t for t in tokens]
    if toks and toks[0][:1].isalpha():
        toks[0] = toks[0][:1].upper() + toks[0][1:]
    return toks


@lru_cache(maxsize=4096)
def analyse(tokens: tuple[str, ...]) -> tuple[tuple[str, ...], tuple[int, ...], tuple[str, ...]] | None:
    """(PTB tags, 0-based heads with -1 for the root, dependency labels) of a tokenized sentence, or None."""
    nlp = _nlp()
    if nlp is None or not tokens:
        return None
    from spacy.tokens import Doc

    doc = Doc(nlp.vocab, words=_display_tokens(tokens))
    for _, proc in nlp.pipeline:
        doc = proc(doc)
    return (tuple(t.tag_ for t in doc), tuple(-1 if t.head.i == t.i else t.head.i for t in doc),
            tuple(t.dep_ for t in doc))


def _lemmas(form: str) -> dict[str, tuple[str, ...]]:
    try:
        from lemminflect import getAllLemmas
    except ImportError:  # pragma: no cover - lemminflect is a pinned dependency
        return {}
    return getAllLemmas(form.lower())


def lemma_of(form: str, word: str | None = None, tag: str | None = None) -> str:
    """The lemma of `form` (lemminflect): the practised `word` when it is one of its lemmas, else the lemma of the
    part of speech `tag` names, else the first one lemminflect knows, else the form itself."""
    lemmas = _lemmas(form)
    if word and any(word.lower() in v for v in lemmas.values()):
        return word.lower()
    upos = _UPOS.get((tag or "")[:1])
    if upos and lemmas.get(upos):
        return lemmas[upos][0]
    for v in lemmas.values():
        return v[0]
    return form.lower()


def target_index(tokens: tuple[str, ...], word: str) -> int | None:
    """Where the practised word is: the first exact (case-insensitive) match, else the first token whose lemma is
    the word (an inflected form), else None."""
    w = word.lower()
    low = [t.lower() for t in tokens]
    if w in low:
        return low.index(w)
    from treegram.plugins.vocabgen.vocab import word_forms

    forms = word_forms(w)  # the precomputed inflection table first: no 3-second lemminflect import
    for i, t in enumerate(low):
        if t in forms:
            return i
    for i, t in enumerate(low):
        if any(w in v for v in _lemmas(t).values()):
            return i
    return None
