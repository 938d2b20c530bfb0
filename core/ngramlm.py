"""An English word 3-gram language model that installs with treegram: CMU's generic US English model shipped inside
the `pocketsphinx` wheel (`model/en-us/en-us.lm.bin`, BSD licence), read with the package's own `NGramModel`.

Its vocabulary is lower-case words with clitics attached ("don't", "it's"), without punctuation, so PTB tokens are
mapped first (`lm_words`: lower-cased, clitics joined to the word before, punctuation dropped).  The model returns
log probabilities in its own log base; `NGramModel.prob([w, h1, h2])` is log P(w | h2 h1) -- the word first, then
its history from the most recent word back, at most three words per call.  A word outside the vocabulary costs a
fixed `OOV` (natural log) and starts a new history, so names and numbers weigh the same in every candidate.

>>> lm = english_lm()
>>> lm.logprob("the man was arrested .".split()) > lm.logprob("the was man arrested .".split())
True
"""

from __future__ import annotations

import functools
import math
from pathlib import Path
from typing import Sequence

from treegram.errors import TreegramError

__all__ = ["TrigramLM", "english_lm", "lm_words", "OOV"]

OOV = -12.0  # natural log: about a rare content word's cost
_LN_BASE = math.log(1.0001)  # pocketsphinx's default log base
_CLITICS = ("n't", "'s", "'re", "'ll", "'ve", "'d", "'m")
_PUNCT = set(",.:;!?-()[]{}\"'`") | {"--", "...", "``", "''", "-LRB-", "-RRB-", "-LSB-", "-RSB-", "-LCB-", "-RCB-"}


def lm_words(tokens: Sequence[str]) -> list[str]:
    """PTB tokens as the model's words: lower case, clitics joined ("do n't" -> "don't"), punctuation dropped."""
    out: list[str] = []
    for tok in tokens:
        if tok in _PUNCT:
            continue
        w = tok.lower()
        if out and w in _CLITICS:
            out[-1] += w
            continue
        out.append(w)
    return out


class TrigramLM:
    def __init__(self, path: str | Path):
        try:
            import pocketsphinx
            from pocketsphinx import NGramModel
        except ImportError:
            raise TreegramError("the English n-gram model needs pocketsphinx",
                                hint="pip install pocketsphinx==5.1.1") from None
        pocketsphinx.set_loglevel("FATAL")  # its INFO lines would go to the user's terminal
        self._lm = NGramModel.readfile(str(path))
        self._known: dict[str, bool] = {}
        self._memo: dict[tuple[str, ...], float] = {}

    def known(self, w: str) -> bool:
        got = self._known.get(w)
        if got is None:
            got = self._known[w] = self._lm.prob([w]) * _LN_BASE > -50.0
        return got

    def _cond(self, w: str, h1: str | None, h2: str | None) -> float:
        key = (w, h1 or "", h2 or "")
        got = self._memo.get(key)
        if got is None:
            hist = [w] + ([h1] if h1 else []) + ([h2] if h1 and h2 else [])
            got = self._memo[key] = self._lm.prob(hist) * _LN_BASE
            if len(self._memo) > 500_000:
                self._memo.clear()
        return got

    def word_logprobs(self, tokens: Sequence[str]) -> list[float]:
        """log P of each model word of the tokens and of the end of sentence (natural log)."""
        h1, h2 = "<s>", None
        out = []
        for w in lm_words(tokens) + ["</s>"]:
            if w != "</s>" and not self.known(w):
                out.append(OOV)
                h1, h2 = None, None
                continue
            out.append(self._cond(w, h1, h2))
            h1, h2 = w, h1
        return out

    def logprob(self, tokens: Sequence[str]) -> float:
        """log P(sentence) (natural log), end of sentence included."""
        return float(sum(self.word_logprobs(tokens)))


@functools.lru_cache(maxsize=1)
def english_lm() -> TrigramLM:
    """The pocketsphinx US English 3-gram model (loaded once per process; memory-mapped, ~0.1 s)."""
    try:
        import pocketsphinx
    except ImportError:
        raise TreegramError("the English n-gram model needs pocketsphinx", hint="pip install pocketsphinx==5.1.1") from None
    path = Path(pocketsphinx.__file__).resolve().parent / "model" / "en-us" / "en-us.lm.bin"
    if not path.is_file():
        raise TreegramError(f"{path}: the pocketsphinx English model is missing", hint="reinstall pocketsphinx==5.1.1")
    return TrigramLM(path)
