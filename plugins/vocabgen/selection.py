"""Choosing the sentences a sheet shows for each practised word.

This is the one place that decides *which* sentences reach a teacher: the exercise builders (`exercises.py`, the
web page, `--from-corrections`) call `select_sentences(source, words, per_word, rng)` and only format what it
returns.  For every word:

1. **corpus items** — real graded sentences of the embedded excerpt containing a form of the word (`word_forms`)
   whose every other word is in the vocabulary, shown exactly, with provenance and the Japanese reference;
2. **generated items** — `candidates x per_word` (12 x) distinct sentences drawn by generating up from the word
   (SPINEDEP + P_V).  A draw that copies a training sentence *is* a corpus item (the excerpt's copy, with its
   provenance and translation, or — when the excerpt does not hold it — dropped, because it is neither new nor
   showable with its source).  The new ones are scored by the plausibility ranker (ranking.PlausibilityRanker:
   logistic regression over trigram SLOR, the worst single position and length, fitted on the judged set) and
   ranked; those below its calibrated threshold are used only when nothing else is left (below the SLOR floor,
   the 10th percentile of held-out real sentences, never), marked in their provenance and noted;
3. the sheet prefers corpus items (`corpus_share`, default 1: real graded sentences are judged 98% plausible,
   generated ones that pass the ranker ~87%, benchmarks/RESULTS.md `plausibility`), so generated items fill only
   what the corpus lacks for a word; every item that is unsafe (safety.py), not within the vocabulary (+ the
   practised word's forms; re-checked on every item), or a near-duplicate of an item already on the sheet
   (`near_duplicate`) is skipped;
4. each word's items are shuffled with the seed; `sheet_order` shuffles the whole sheet (so position never gives
   away the answer).

`source` is a `SheetSource` (generator + corpus + scorer); a bare `ConstrainedGenerator` gets the embedded corpus
items and scorer (`as_source`); `SheetSource(gen)` alone gives generated items only, unranked.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import attrs
import numpy as np

from treegram.generation.constraints import NoSentenceError

from treegram.plugins.vocabgen.generator import ConstrainedGenerator, Sentence
from treegram.plugins.vocabgen.safety import unsafe_reason
from treegram.plugins.vocabgen.vocab import Vocabulary, word_forms

#: the most sentences one word can get on a sheet (a larger --per-word is capped with a note)
MAX_PER_WORD = 50


@attrs.define
class SheetSource:
    """Everything sentence choice needs: the constrained generator, the corpus items, the plausibility scorer."""

    generator: ConstrainedGenerator
    corpus: object | None = None          # corpus.CorpusIndex
    scorer: object | None = None          # ranking.PlausibilityRanker (or a bare NgramScorer: SLOR); has .score
    threshold: float | None = None        # generated items scoring below this are not preferred
    floor: float | None = None            # ... and below this SLOR never shown (ranking.py; default-lm.npz)
    candidates: int = 12                  # generated draws per requested item
    corpus_share: float = 1.0             # wanted share of corpus items per word (benchmarks/RESULTS.md `sheets`)

    @property
    def vocab(self) -> Vocabulary:
        return self.generator.vocab

    @property
    def level(self) -> str | None:
        name = self.vocab.name
        return name.split(":", 1)[1] if name.startswith("cefr:") else None


def as_source(gen) -> SheetSource:
    """A SheetSource for `gen`: as given, or a bare generator with the embedded corpus items and scorer (they are
    real English and a model of it, useful whichever model generates)."""
    return gen if isinstance(gen, SheetSource) else default_source(gen)


def default_source(generator: ConstrainedGenerator) -> SheetSource:
    """A SheetSource with the embedded corpus items and plausibility ranker (those of the default graded-enja
    data; the bare trigram SLOR scorer when the ranker file is absent)."""
    from treegram.plugins.vocabgen.default import default_corpus, default_ranker, default_scorer

    ranker = default_ranker()
    scorer, threshold = default_scorer()
    if ranker is not None:
        return SheetSource(generator, default_corpus(), ranker, ranker.threshold, floor=threshold)
    return SheetSource(generator, default_corpus(), scorer, threshold)


# -- near duplicates ---------------------------------------------------------------------------------------------
_PUNCT = frozenset(".,!?;:'\"")


def _content(tokens) -> list[str]:
    return [t.lower() for t in tokens if t not in _PUNCT]


def near_duplicate(a, b) -> bool:
    """Whether two sentences (token sequences) are too alike for one sheet: identical up to case/punctuation, one
    word swapped/added/dropped, or the same sentence with another subject or ending (a shared beginning or end
    covering at least 60% of the shorter sentence and at least 3 words)."""
    x, y = _content(a), _content(b)
    if x == y:
        return True
    n = min(len(x), len(y))
    if _edit_distance_at_most_one(x, y):
        return True
    pre = 0
    while pre < n and x[pre] == y[pre]:
        pre += 1
    suf = 0
    while suf < n and x[-1 - suf] == y[-1 - suf]:
        suf += 1
    shared = max(pre, suf)
    return shared >= 3 and shared >= 0.6 * n


def _edit_distance_at_most_one(x: list[str], y: list[str]) -> bool:
    if abs(len(x) - len(y)) > 1:
        return False
    if len(x) == len(y):
        return sum(p != q for p, q in zip(x, y)) <= 1
    if len(x) > len(y):
        x, y = y, x
    i = 0
    while i < len(x) and x[i] == y[i]:
        i += 1
    return x[i:] == y[i + 1:]


# -- per-word pools ----------------------------------------------------------------------------------------------
def _allowed(vocab: Vocabulary, forms: frozenset[str]) -> Vocabulary:
    return vocab.with_words(forms - vocab.words) if not forms <= vocab.words else vocab


def _check(tokens, vocab: Vocabulary, forms: frozenset[str]) -> str | None:
    """Why an item cannot go on the sheet (None = it can)."""
    if not any(t.lower() in forms for t in tokens):
        return "does not contain the word"
    bad = vocab.missing(tokens)
    if bad:
        return f"outside the vocabulary: {', '.join(bad)}"
    return unsafe_reason(tokens)


def _corpus_items(src: SheetSource, word: str, forms: frozenset[str], allowed: Vocabulary) -> list[Sentence]:
    c = src.corpus
    if c is None:
        return []
    out = []
    for i in c.candidates(src.vocab, set(forms)):
        toks = c.tokens[i]
        if _check(toks, allowed, forms) is None:
            out.append(Sentence(toks, c.texts[i], word, "corpus", c.provenance(i), c.ja[i] or None,
                                _score(src, toks)))
    return out


def _score(src: SheetSource, tokens) -> float | None:
    return round(src.scorer.score(tokens), 3) if src.scorer is not None else None


def _generated_items(src: SheetSource, word: str, forms: frozenset[str], allowed: Vocabulary, want: int, rng,
                     stats: dict) -> tuple[list[Sentence], list[Sentence], list[Sentence]]:
    """(new generated items at or above the threshold, best first; new ones below it but above the SLOR floor,
    best first, marked in their provenance; corpus copies found by generation)."""
    gen = src.generator
    n = max(want * src.candidates, 20)
    sents, st = gen.sample(n, rng, word=word, unique=True, max_attempts=4 * n + 200)
    stats["draws"] += st["attempts"]
    new, below, copies = [], [], []
    c = src.corpus
    provenance = f"generated by SPINEDEP ({gen.vocab.name})"
    for s in sents:
        if _check(s.tokens, allowed, forms) is not None:
            stats["rejected"] += 1
            continue
        if c is not None:
            i = c.find_copy(s.tokens)
            if i is not None:
                copies.append(Sentence(c.tokens[i], c.texts[i], word, "corpus", c.provenance(i), c.ja[i] or None,
                                       _score(src, c.tokens[i])))
                continue
            if c.is_training_sentence(s.tokens):
                stats["copies_not_shown"] += 1
                continue
        score = _score(src, s.tokens)
        if score is not None and src.threshold is not None and score < src.threshold:
            stats["below_threshold"] += 1
            if src.floor is not None and src.scorer.slor(s.tokens) >= src.floor:
                below.append(attrs.evolve(s, word=word, source="generated", score=score,
                                          provenance=provenance + ", below the plausibility threshold"))
            continue
        new.append(attrs.evolve(s, word=word, source="generated", provenance=provenance, score=score))
    new.sort(key=lambda s: -(s.score if s.score is not None else 0.0))
    below.sort(key=lambda s: -s.score)
    return new, below, copies


def _take(pool: list[Sentence], k: int, chosen: list[Sentence], sheet: list[Sentence]) -> int:
    got = 0
    for s in pool:
        if got >= k:
            break
        if any(near_duplicate(s.tokens, t.tokens) for t in sheet):
            continue
        chosen.append(s)
        sheet.append(s)
        got += 1
    return got


def select_sentences(gen, words: list[str], per_word: int, rng, *, progress: Callable[[int], None] | None = None,
                     stats: dict | None = None) -> tuple[dict[str, list[Sentence]], list[str]]:
    """Up to `per_word` different sentences for each word, and a note for each word that fell short.

    Returns ``(groups, problems)``: ``groups[word]`` lists the chosen sentences (words with none are left out),
    ``problems`` holds one human-readable line per word that got fewer than asked.  `progress(1)` is called after
    each word; `stats` (a dict) receives counts of draws and rejections.
    """
    src = as_source(gen)
    rng = np.random.default_rng(rng) if not isinstance(rng, np.random.Generator) else rng
    groups: dict[str, list[Sentence]] = {}
    problems: list[str] = []
    st = stats if stats is not None else {}
    for k in ("draws", "rejected", "copies_not_shown", "below_threshold", "below_shown", "corpus", "generated"):
        st.setdefault(k, 0)
    if per_word > MAX_PER_WORD:
        problems.append(f"--per-word {per_word} capped at {MAX_PER_WORD} sentences per word")
        per_word = MAX_PER_WORD
    sheet: list[Sentence] = []
    for w in words:
        forms = word_forms(w, src.level)
        allowed = _allowed(src.vocab, forms)
        corpus = _corpus_items(src, w, forms, allowed)
        order = rng.permutation(len(corpus)) if corpus else []
        corpus = [corpus[int(i)] for i in order]
        want_c = math.ceil(per_word * src.corpus_share) if corpus else 0
        error = None
        chosen: list[Sentence] = []
        got_c = _take(corpus, want_c, chosen, sheet)
        if got_c < per_word:  # generation only for what the corpus items do not cover
            try:
                new, below, copies = _generated_items(src, w, forms, allowed, per_word, rng, st)
            except NoSentenceError as exc:
                new, below, copies, error = [], [], [], str(exc)
            seen = {c.text for c in corpus}
            copies = [c for c in copies if c.text not in seen and not seen.add(c.text)]
            got_c += _take(copies, want_c - got_c, chosen, sheet)
            got_g = _take(new, per_word - got_c, chosen, sheet)
            if got_c + got_g < per_word:  # too few new sentences: more corpus items
                got_c += _take([c for c in corpus + copies if c not in chosen], per_word - got_c - got_g, chosen,
                               sheet)
            if got_c + got_g < per_word:  # still short: the best below the threshold, marked and noted
                low = _take(below, per_word - got_c - got_g, chosen, sheet)
                st["below_shown"] += low
                if low:
                    problems.append(f"{w}: {low} generated sentence(s) below the plausibility threshold "
                                    "(marked in the key; check them)")
        st["corpus"] += sum(s.source == "corpus" for s in chosen)
        st["generated"] += sum(s.source == "generated" for s in chosen)
        if progress is not None:
            progress(1)
        if not chosen:
            problems.append(f"{w}: {error}" if error else
                            f"{w}: no sentence found with all other words in the vocabulary {src.vocab.name}")
            continue
        if len(chosen) < per_word:
            problems.append(f"{w}: only {len(chosen)} different sentence(s) under this vocabulary")
        groups[w] = [chosen[int(i)] for i in rng.permutation(len(chosen))]
    return groups, problems


def sheet_order(groups: dict[str, list[Sentence]], rng) -> list[Sentence]:
    """Every chosen sentence in one seeded random order (items of one word are not kept together)."""
    flat = [s for sents in groups.values() for s in sents]
    return [flat[int(i)] for i in np.random.default_rng(rng).permutation(len(flat))] \
        if not isinstance(rng, np.random.Generator) else [flat[int(i)] for i in rng.permutation(len(flat))]


def names_used(groups: dict[str, list[Sentence]], vocab: Vocabulary) -> list[str]:
    """The proper names (allowed only as names, e.g. Tom, Japan) the sheet's sentences use, for a note on it."""
    out: dict[str, str] = {}
    for sents in groups.values():
        for s in sents:
            for n in vocab.names_in(s.tokens):
                out.setdefault(n.lower(), n if n[:1].isupper() else n[:1].upper() + n[1:])
    return sorted(out.values())
