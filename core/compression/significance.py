"""How much a word matters to what a sentence says: the significance score of a kept word, a reward the decoders
add per kept word (log scale, times a weight) so that rare content words are the last to go.

Clarke & Lapata (2008, after Hori & Furui 2004) weight nouns and verbs by their inverse corpus frequency.  Here the
corpus frequency is `wordfreq`'s Zipf frequency (log10 occurrences per billion words over many English sources; PyPI
`wordfreq`, data CC BY-SA 4.0, installed with treegram) and the content classes are read off the part-of-speech tag:

    sig(w) = max(0, 7 - zipf(w))   for nouns, verbs, adjectives, numbers and foreign words (tags NN*, VB*, JJ*, CD, FW)
    sig(w) = UNSEEN (5)            for such a word wordfreq has never seen (names, numbers, typos)
    sig(w) = 0                     otherwise (function words, punctuation, adverbs)

and, with `floor`, every noun, verb and number at least `floor`: a common verb ("make sure", "get advice") carries
a clause's content as much as a rare one, and annotators keep it.

Zipf 7 is "the"; a word with Zipf 3 (about one in a million) scores 4.  Tags may carry a dependency relation
(``NN-nsubj``: `treegram.trees.depproject`); it is ignored.

>>> s = word_significance(["the", "senator", "said", "it", "Hutchison"], ["DT", "NN", "VBD", "PRP", "NNP"])
>>> float(s[0]), bool(s[1] > s[2] > 0), float(s[3]), bool(s[4] >= 3)
(0.0, True, 0.0, True)
"""

from __future__ import annotations

import functools
from typing import Sequence

import numpy as np

__all__ = ["word_significance", "CONTENT_TAGS", "UNSEEN"]

CONTENT_TAGS = ("NN", "VB", "JJ", "CD", "FW")
_FLOORED = ("NN", "VB", "CD")
UNSEEN = 5.0
_TOP = 7.0


@functools.lru_cache(maxsize=200_000)
def _zipf(word: str) -> float:
    from wordfreq import zipf_frequency

    return zipf_frequency(word, "en")


def word_significance(words: Sequence[str], tags: Sequence[str], floor: float = 0.0) -> np.ndarray:
    """sig(w) for every word (see the module docstring)."""
    out = np.zeros(len(words))
    for i, (w, tag) in enumerate(zip(words, tags)):
        if not tag.startswith(CONTENT_TAGS):
            continue
        z = _zipf(w.lower())
        out[i] = max(0.0, _TOP - z) if z > 0 else UNSEEN
        if floor and tag.startswith(_FLOORED):
            out[i] = max(out[i], floor)
    return out
