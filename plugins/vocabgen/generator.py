"""Constrained generation from a trained model: vocabulary only, or vocabulary + a required word.

`ConstrainedGenerator` prunes the model to the vocabulary (Algorithm 1 + FIXUP), estimates G(c), builds P_V
(eq. 2), and samples either top-down (vocabulary only) or by generating up (required word).  Every sentence it
returns is checked again at the surface: all tokens in the vocabulary, the required word present, and (unless
`safe=False`) nothing the classroom safety filter flags.
"""

from __future__ import annotations

import attrs
import numpy as np

from treegram.errors import InputError
from treegram.generation import GenerationModel
from treegram.generation.sampling import SampleFailure, as_generator, sample_entries

from treegram.generation.constraints import (GenerateUp, NoSentenceError, PruneReport, constrain,
                                                   expected_counts, goodness, oov_outcomes, prune_to_vocabulary)
from treegram.plugins.vocabgen.safety import is_safe
from treegram.plugins.vocabgen.spinedep import SpineDepSystem, surface
from treegram.plugins.vocabgen.vocab import Vocabulary


@attrs.frozen
class Sentence:
    """One sentence for a sheet or a `generate` run, with where it came from.

    ``source`` is ``"generated"`` (new, from the model) or ``"corpus"`` (a human-written sentence, shown with its
    ``provenance``, e.g. file and line); ``translation`` is the corpus's reference translation where it has one;
    ``score`` is the plausibility score a ranker gave it (higher is better), if any.
    """

    tokens: tuple[str, ...]
    text: str
    word: str | None = None
    source: str = "generated"
    provenance: str = ""
    translation: str | None = None
    score: float | None = None

    def to_json(self) -> dict:
        out = {"text": self.text, "tokens": list(self.tokens), "source": self.source}
        if self.word:
            out["word"] = self.word
        if self.provenance:
            out["provenance"] = self.provenance
        if self.translation is not None:
            out["translation"] = self.translation
        if self.score is not None:
            out["score"] = self.score
        return out


class ConstrainedGenerator:
    def __init__(self, model: GenerationModel, system, vocab: Vocabulary, *, method: str = "acyclic",
                 max_nodes: int = 300, safe: bool = True):
        self.base = model
        self.system = system
        self.vocab = vocab
        self.method = method
        self.max_nodes = max_nodes
        self.safe = safe  # reject sentences the classroom safety filter (safety.py) flags
        oov = oov_outcomes(model, vocab)
        self.pruned, self.report = prune_to_vocabulary(model, oov)
        self.g = goodness(self.pruned, method=method)
        if method == "uniform":
            raise InputError("use method='one' with uniform=True through constrain() for the uniform baseline")
        self.pv = constrain(self.pruned, self.g)
        self._expected: np.ndarray | None = None
        self._up: dict[str, GenerateUp] = {}
        self._extra: dict[str, ConstrainedGenerator] = {}
        self._ctx_words: np.ndarray | None = None

    @property
    def expected(self) -> np.ndarray:
        if self._expected is None:
            self._expected, _ = expected_counts(self.pv)
        return self._expected

    def sampler_for(self, word: str) -> GenerateUp:
        """The generating-up sampler for a required word (its C_w = contexts whose own word is `word`)."""
        w = word.lower()
        if w in self._up:
            return self._up[w]
        if w not in self.base.word_index:
            raise NoSentenceError(f"unknown word {word!r}: the model never generates it (it is absent from the "
                                  "training sentences, or only in context/outcome pairs seen once, which "
                                  "training discards)", hint="check the spelling, or train on more text that uses it")
        gen = self if w in self.vocab else self._extended(w)
        cw = gen.context_words() == w
        if not cw.any():
            raise NoSentenceError(f"no sentence of the model contains {word!r} with all other words in the "
                                  f"vocabulary {self.vocab.name}",
                                  hint="enlarge the vocabulary or the training data, or pick another word")
        up = GenerateUp(gen.pv, gen.expected, cw, max_nodes=self.max_nodes)
        self._up[w] = up
        return up

    def _extended(self, w: str) -> ConstrainedGenerator:
        """A generator whose vocabulary also allows the required word (a word to practise may be new)."""
        if w not in self._extra:
            self._extra[w] = ConstrainedGenerator(self.base, self.system, _with_word(self.vocab, w),
                                                  method=self.method, max_nodes=self.max_nodes, safe=self.safe)
        return self._extra[w]

    def context_words(self) -> np.ndarray:
        """The word of every P_V context (object array, computed once): C_w = context_words() == w."""
        if getattr(self, "_ctx_words", None) is None:
            self._ctx_words = np.asarray([_context_word(self.system, c) for c in self.pv.contexts], dtype=object)
        return self._ctx_words

    def sample(self, n: int, rng, *, word: str | None = None, unique: bool = False,
               max_attempts: int | None = None, patience: int | None = None,
               progress=None) -> tuple[list[Sentence], dict]:
        """n sentences (fewer if `unique` and the model cannot produce that many different ones within
        max_attempts draws, or finds no new one in `patience` draws in a row); returns (sentences, stats).
        `progress(k)` is called with the number of new sentences every 1000 draws and at the end."""
        if n < 0:
            raise InputError(f"-n {n} is negative", hint="ask for at least one sentence")
        rng = as_generator(rng)
        max_attempts = max_attempts if max_attempts is not None else 20 * n + 100
        w = word.lower() if word else None
        up = self.sampler_for(w) if w else None
        model = (self if (w is None or w in self.vocab) else self._extended(w)).pv
        allowed = self.vocab if w is None else _with_word(self.vocab, w)
        out: list[Sentence] = []
        seen: set[str] = set()
        stats = {"attempts": 0, "failed": 0, "rejected_by_check": 0, "duplicates": 0, "stopped_early": False}
        since_new = 0
        reported = 0
        while len(out) < n and stats["attempts"] < max_attempts:
            stats["attempts"] += 1
            if progress is not None and stats["attempts"] % 1000 == 0:
                progress(len(out) - reported)
                reported = len(out)
            if patience is not None and since_new >= patience:
                stats["stopped_early"] = True
                break
            since_new += 1
            ent = up.sample_entries(rng) if up is not None else sample_entries(model, rng, max_nodes=self.max_nodes)
            if isinstance(ent, SampleFailure):
                stats["failed"] += 1
                continue
            sent = self._check(model.decode_entries(ent), w, allowed)
            if sent is None:
                stats["rejected_by_check"] += 1
                continue
            if unique:
                if sent.text in seen:
                    stats["duplicates"] += 1
                    continue
                seen.add(sent.text)
            since_new = 0
            out.append(sent)
        if progress is not None:
            progress(len(out) - reported)
        return out, stats

    def _check(self, derivation, w: str | None, allowed: Vocabulary) -> Sentence | None:
        tagged = self.system.tagged_text(derivation) if isinstance(self.system, SpineDepSystem) \
            else self.system.text(derivation)
        tokens = tuple(t if isinstance(t, str) else t[1] for t in tagged)
        if not tokens or allowed.missing(tokens):
            return None
        if w is not None and w not in {t.lower() for t in tokens}:
            return None
        if self.safe and not is_safe(tokens):
            return None
        return Sentence(tokens, surface(tagged), w)

    def summary(self) -> dict:
        r: PruneReport = self.report
        return {"vocabulary": self.vocab.name, "vocabulary_words": len(self.vocab), "goodness": self.method,
                "model_contexts": self.base.n_contexts, "model_entries": self.base.n_entries,
                "pruned_contexts": r.contexts, "pruned_entries": r.entries, "oov_entries": r.oov_entries,
                "fixup_rounds": r.fixup_rounds, "root_goodness": float(self.g[self.pruned.root])}


def _context_word(system, context) -> str | None:
    fn = getattr(system, "context_word", None)
    if fn is not None:
        return fn(context)
    if isinstance(context, tuple) and context and isinstance(context[-1], str):
        return context[-1]  # n-gram style: the last word of the history
    return None


def _with_word(vocab: Vocabulary, word: str) -> Vocabulary:
    if word in vocab.words:
        return vocab
    return vocab.with_words([word])
