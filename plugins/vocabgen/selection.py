"""Choosing the sentences a sheet shows for each practised word.

This is the one place that decides *which* sentences reach a teacher: the exercise builders (`exercises.py`, the
web page, `--from-corrections`) call `select_sentences(source, words, per_word, rng)` and only format what it
returns.  For every word:

1. **corpus items** — real graded sentences of the embedded excerpt containing a form of the word (`word_forms`)
   whose every other word is in the vocabulary, shown exactly, with provenance and the Japanese reference;
2. **generated items** — drawn by generating up from the word (SPINEDEP + P_V) until the wanted number of distinct
   new ones pass the ranker, at most `draw_cap` draws (200 per wanted item, at least 2000; `draw_passing`; when
   the cap is hit the sheet's note says how many passed in how many draws).  A draw that copies a training sentence *is* a corpus item (the excerpt's copy, with its
   provenance and translation, or — when the excerpt does not hold it — dropped, because it is neither new nor
   showable with its source).  The new ones are scored by the plausibility ranker (ranking.PlausibilityRanker:
   logistic regression over trigram SLOR, the worst single position and length, fitted on the judged set) and
   ranked; those below its calibrated threshold are never shown unless asked (`allow_unchecked`, the CLI's
   `--allow-unchecked`), and then only when nothing else is left, at most `max_below` (2) per word (below the SLOR
   floor, the 10th percentile of held-out real sentences, never), marked in their provenance and noted;
3. the sheet prefers corpus items (`corpus_share`, default 1: real graded sentences are judged 98% plausible,
   generated ones that pass the ranker ~87%, benchmarks/RESULTS.md `plausibility`), so generated items fill only
   what the corpus lacks for a word; every item that is unsafe (safety.py), not within the vocabulary (+ the
   practised word's forms; re-checked on every item), or a near-duplicate of an item already on the sheet
   (`near_duplicate`), a fragment, or a use of the word in a sense above the level (quality.py: "water" as a
   verb on an A1 sheet) is skipped;
   with a classroom-fitness model (fitness.py, the default source has the embedded one) sentences below its floor
   are left out and a word's sentences are taken band by band, the likeliest to suit a beginners' class first;
4. each word's items are shuffled with the seed; `sheet_order` shuffles the whole sheet (so position never gives
   away the answer).

`source` is a `SheetSource` (generator + corpus + scorer); a bare `ConstrainedGenerator` gets the embedded corpus
items and scorer (`as_source`); `SheetSource(gen)` alone gives generated items only, unranked.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable

import attrs
import numpy as np

from treegram.errors import InputError
from treegram.generation.constraints import NoSentenceError

from treegram.plugins.vocabgen.generator import ConstrainedGenerator, Sentence
from treegram.plugins.vocabgen.safety import unsafe_reason
from treegram.plugins.vocabgen.vocab import Vocabulary, word_forms

#: the most sentences one word can get on a sheet (a larger --per-word is capped with a note)
MAX_PER_WORD = 50
#: the ranker score (log-odds of "plausible") a new generated sentence needs to be preferred on a sheet; None = the
#: ranker file's own threshold (1.26, its best fifth).  A lower one (0.5) includes more words (every 20th headword:
#: 6 / 31 of 53 against 8 / 28) but its extra items were judged 70% plausible (benchmarks/RESULTS.md `sheets`), so
#: sheets keep the ranker's
SHEET_THRESHOLD: float | None = None


@attrs.define
class SheetSource:
    """Everything sentence choice needs: the constrained generator, the corpus items, the plausibility scorer."""

    generator: ConstrainedGenerator
    corpus: object | None = None          # corpus.CorpusIndex
    scorer: object | None = None          # ranking.PlausibilityRanker (or a bare NgramScorer: SLOR); has .score
    threshold: float | None = None        # generated items scoring below this are not preferred
    floor: float | None = None            # ... and below this SLOR never shown (ranking.py; default-lm.npz)
    draws_per_item: int = 200             # draw cap per wanted generated item (draw_passing)
    min_draws: int = 2000                 # ... but at least this many draws per word
    margin: int = 2                       # passing items drawn beyond those wanted (near-duplicates get skipped)
    max_below: int = 2                    # at most this many below-threshold items per word (the last resort)
    corpus_share: float = 1.0             # wanted share of corpus items per word (benchmarks/RESULTS.md `sheets`)
    corpus_floor: float | None = None     # corpus items (and copies) scoring below this are skipped as odd
    fallbacks: tuple = ()                 # ConstrainedGenerators (or LazyGenerators) for poorly covered words
    editor: object | None = None          # edits.EditGenerator (or a LazyEditor): edits of real sentences, first
    fitness: object | None = None         # fitness.FitnessModel: classroom fitness (floor + preference bands)
    corpus_fitness: object | None = None  # ... its precomputed scores of every corpus sentence (np.ndarray)
    probe: int = 1000                     # draws of the primary that decide whether a word is poorly covered
    min_distinct: int = 20                # ... fewer distinct new sentences passing the ranker than this
    _coverage: dict = attrs.field(factory=dict, init=False, repr=False)

    def draw_cap(self, want: int) -> int:
        """Most candidates drawn for one word when `want` generated items should pass the ranker."""
        return max(self.min_draws, self.draws_per_item * want)

    @property
    def vocab(self) -> Vocabulary:
        return self.generator.vocab

    @property
    def level(self) -> str | None:
        return self.vocab.level


class LazyGenerator:
    """A fallback ConstrainedGenerator built on first use: constraining a model to the vocabulary takes a fraction
    of a second, and sheets whose words the corpus or the primary model cover never need it."""

    def __init__(self, model, vocab: Vocabulary):
        self.model, self.vocab, self._gen, self._error = model, vocab, None, None

    def get(self) -> ConstrainedGenerator:
        if self._error is not None:  # built once: a model with no sentence in this vocabulary stays unusable
            raise self._error
        if self._gen is None:
            try:
                self._gen = ConstrainedGenerator(self.model.generation, self.model.system, self.vocab)
            except (NoSentenceError, InputError) as exc:
                self._error = exc
                raise
        return self._gen


class LazyEditor:
    """The derivation-edit generator (edits.EditGenerator) over the embedded corpus, built on first use: joining
    the edit data to the corpus takes a second or two, and sheets whose words the corpus covers never need it."""

    def __init__(self, vocab: Vocabulary, level: str | None):
        self.vocab, self.level, self._gen, self._tried = vocab, level, None, False

    def get(self):
        if not self._tried:
            self._tried = True
            from treegram.plugins.vocabgen.edits import EditGenerator, default_edit_data

            data = default_edit_data()
            self._gen = EditGenerator(data, self.vocab, self.level) if data is not None else None
        return self._gen


def as_source(gen) -> SheetSource:
    """A SheetSource for `gen`: as given, or a bare generator with the embedded corpus items and scorer (they are
    real English and a model of it, useful whichever model generates)."""
    return gen if isinstance(gen, SheetSource) else default_source(gen)


def default_source(generator: ConstrainedGenerator) -> SheetSource:
    """A SheetSource with the embedded corpus items and plausibility ranker (those of the default graded-enja
    data; the bare trigram SLOR scorer when the ranker file is absent)."""
    from treegram.plugins.vocabgen.embedded import DEFAULTS
    from treegram.plugins.vocabgen.fitness import embedded_corpus_scores, embedded_fitness
    from treegram.plugins.vocabgen.ranking import embedded_ranker, embedded_scorer

    ranker = embedded_ranker()
    scorer, threshold = embedded_scorer()
    fit = {"fitness": embedded_fitness(), "corpus_fitness": embedded_corpus_scores()}
    fb = DEFAULTS.fallback_model
    fallbacks = (LazyGenerator(fb, generator.vocab),) if fb is not None else ()
    editor = LazyEditor(generator.vocab, generator.vocab.level)
    if ranker is not None:
        return SheetSource(generator, DEFAULTS.corpus, ranker,
                           SHEET_THRESHOLD if SHEET_THRESHOLD is not None else ranker.threshold, floor=threshold,
                           fallbacks=fallbacks, editor=editor, **fit)
    return SheetSource(generator, DEFAULTS.corpus, scorer, threshold, fallbacks=fallbacks, **fit)


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


class CorpusPool:
    """A word's corpus items in a seeded random order, scored lazily in small batches as a sheet takes them: items
    the scorer rates below `src.corpus_floor` (odd or broken real sentences) are skipped, and a common word's
    thousands of candidates are never all scored.  Iterating again replays the items already scored.

    With a classroom-fitness model (`src.fitness`, fitness.py) candidates below its floor are left out (`unfit`)
    and the rest come band by band, the likeliest-fit band first, each in the seeded random order."""

    def __init__(self, src: SheetSource, word: str, forms: frozenset[str], allowed: Vocabulary, rng):
        c = src.corpus
        ids = c.candidates(src.vocab, set(forms)) if c is not None else []
        self.src, self.word, self.forms, self.allowed = src, word, forms, allowed
        self.todo = [ids[int(i)] for i in rng.permutation(len(ids))] if ids else []
        self.unfit = 0
        if src.fitness is not None and self.todo:
            band = src.fitness.band(corpus_fitness(src, self.todo))
            self.unfit = int((band < 0).sum())
            order = np.argsort(band, kind="stable")  # bands in order, the random order inside each
            self.todo = [self.todo[int(k)] for k in order if band[k] >= 0]
        self.items: list[Sentence] = []
        self.pos = 0
        self.skipped = 0

    def __len__(self) -> int:  # the candidates (an upper bound on the items)
        return len(self.todo)

    def _more(self, k: int = 16) -> bool:
        c, src = self.src.corpus, self.src
        if self.pos >= len(self.todo):
            return False
        batch = [i for i in self.todo[self.pos:self.pos + k] if _check(c.tokens[i], self.allowed, self.forms) is None]
        self.pos += k
        scores = _scores(src, [c.tokens[i] for i in batch])
        for i, sc in zip(batch, scores):
            if src.corpus_floor is not None and sc is not None and sc < src.corpus_floor:
                self.skipped += 1
                continue
            self.items.append(Sentence(c.tokens[i], c.texts[i], self.word, "corpus", c.provenance(i),
                                       c.ja[i] or None, sc))
        return True

    def __iter__(self):
        k = 0
        while True:
            while k >= len(self.items):
                if not self._more():
                    return
            yield self.items[k]
            k += 1


def corpus_fitness(src: SheetSource, ids) -> np.ndarray:
    """Classroom-fitness scores of corpus sentences `ids`: the precomputed ones of the embedded corpus, else
    computed now (a custom corpus)."""
    if src.corpus_fitness is not None and len(src.corpus_fitness) == len(src.corpus):
        return np.asarray(src.corpus_fitness)[np.asarray(ids, dtype=np.int64)]
    from treegram.plugins.vocabgen.fitness import corpus_items

    return src.fitness.score_batch(corpus_items(src.corpus, ids))


def fit_order(src: SheetSource, sentences: list[Sentence], st: dict | None = None, *,
              drop: bool = True) -> list[Sentence]:
    """Sentences (generated ones, corpus copies) without those below the fitness floor (kept last with
    ``drop=False``), the likeliest-fit band first (a stable sort: the order inside a band is kept); unchanged
    without a fitness model."""
    if src.fitness is None or not sentences:
        return sentences
    band = src.fitness.band(src.fitness.score_batch([(s.tokens, s.provenance, s.source) for s in sentences]))
    if st is not None and drop:
        st["unfit"] = st.get("unfit", 0) + int((band < 0).sum())
    order = np.argsort(np.where(band < 0, np.iinfo(np.int64).max, band), kind="stable")
    return [sentences[int(k)] for k in order if band[k] >= 0 or not drop]


def _scores(src: SheetSource, batch) -> list[float | None]:
    if src.scorer is None:
        return [None] * len(batch)
    if hasattr(src.scorer, "score_batch"):
        return [round(float(x), 3) for x in src.scorer.score_batch(batch)]
    return [_score(src, t) for t in batch]


def _score(src: SheetSource, tokens) -> float | None:
    return round(src.scorer.score(tokens), 3) if src.scorer is not None else None


@attrs.define
class Draws:
    """What generating up from one word gave (draw_passing): the showable outputs in draw order, and the rest."""

    passed: list[Sentence]               # new sentences at or above the ranker threshold (or every new one, unranked)
    copies: list[Sentence]               # draws that copy a sentence of the corpus excerpt (shown as corpus items)
    below: list[Sentence]                # new ones below the threshold but above the SLOR floor, best first
    draws: int = 0                       # candidates drawn (every model)
    capped: bool = False                 # the draw cap was hit before `want` outputs passed
    fallback_used: bool = False          # some outputs came from a fallback model


def draw_passing(src: SheetSource, word: str, want: int, rng, *, forms: frozenset[str] | None = None,
                 allowed: Vocabulary | None = None, unique: bool = True, count_copies: bool = False,
                 max_draws: int | None = None, stats: dict | None = None) -> Draws:
    """Draw generation candidates for `word` until `want` of them pass the plausibility ranker — the sampler behind
    sheets, so "1000 samples" of the hybrid (benchmarks/bench_sheets.py) are what a sheet really shows.

    Every candidate is re-checked (vocabulary + the word's forms, safety); one that copies a training sentence is
    a corpus item (the excerpt's copy, or dropped when the excerpt lacks it); a new one counts when the ranker
    scores it at or above its threshold.  `unique` keeps only the first draw of each sentence; `count_copies`
    counts excerpt copies towards `want` (a copy is as showable as a corpus draw).  Draws stop after `max_draws`
    (default `src.draw_cap(want)`; `capped` says so); when the primary model is capped or cannot generate the
    word, each model of `src.fallbacks` (e.g. one that keeps once-seen pairs) continues with what is left of the
    same budget.  Raises NoSentenceError when no model generates the word at all."""
    forms = forms if forms is not None else word_forms(word, src.level)
    allowed = allowed if allowed is not None else _allowed(src.vocab, forms)
    budget = max_draws if max_draws is not None else src.draw_cap(want)
    st = stats if stats is not None else {}
    for k in ("draws", "rejected", "copies_not_shown", "below_threshold"):
        st.setdefault(k, 0)
    out = Draws([], [], [])
    seen: dict[str, object] = {}   # text -> its class; scores are computed once per distinct sentence
    errors = []
    if src.editor is not None and src.scorer is not None:
        _draw_edits(src, word, want, rng, forms, allowed, budget, out, seen, st, count_copies)
    fbs = _fallbacks(src) if src.fallbacks and poorly_covered(src, word, forms, allowed) else []
    gens = [(f, True) for f in fbs] + [(src.generator, False)]  # a poorly covered word: the fallbacks first
    for gen, is_fb in gens:
        provenance = f"generated by SPINEDEP ({gen.vocab.name})" + (", fallback model" if is_fb else "")
        batch = max(4 * want, 50)
        while _count(out, count_copies) < want and out.draws < budget:
            try:
                k = min(batch, budget - out.draws)
                sents, info = gen.sample(k, rng, word=word, max_attempts=k)
            except NoSentenceError as exc:
                errors.append(str(exc))
                break
            out.draws += info["attempts"]
            st["draws"] += info["attempts"]
            if src.scorer is not None and hasattr(src.scorer, "score_batch"):  # one batch: the LSTM is fast so
                src.scorer.score_batch([s.tokens for s in sents if s.text not in seen])
            for s in sents:
                if _count(out, count_copies) >= want:
                    break
                kind = seen.get(s.text)
                if kind is None:
                    kind = seen[s.text] = _classify(src, s, word, forms, allowed, provenance, st)
                    if kind[0] == "below":
                        out.below.append(kind[1])
                elif unique:
                    continue
                if kind[0] == "pass":
                    out.passed.append(kind[1])
                    out.fallback_used |= is_fb
                elif kind[0] == "copy":
                    out.copies.append(kind[1])
            if info["attempts"] == 0:
                break
        if _count(out, count_copies) >= want:
            break
    out.capped = _count(out, count_copies) < want and out.draws >= budget
    if out.draws == 0 and errors:
        raise NoSentenceError(errors[0])
    out.below.sort(key=lambda s: -s.score)
    return out


def _draw_edits(src: SheetSource, word: str, want: int, rng, forms, allowed, budget: int, out: Draws, seen: dict,
                st: dict, count_copies: bool) -> None:
    """The edit generator's part of draw_passing: its candidate edits of real sentences for `word` in a seeded
    random order, each one draw, scored in batches against their hosts (edits.acceptable); those that pass are new
    generated items, the others below the threshold (shown only with --allow-unchecked)."""
    ed = src.editor.get() if hasattr(src.editor, "get") else src.editor
    if ed is None:
        return
    from treegram.plugins.vocabgen.edits import acceptable

    edits = ed.edits(word)
    if not edits:
        return
    order = [edits[int(i)] for i in rng.permutation(len(edits))]
    st.setdefault("edits", 0)
    batch = max(2 * want, 16)
    for a in range(0, len(order), batch):
        if _count(out, count_copies) >= want or out.draws >= budget:
            break
        part = order[a:a + min(batch, budget - out.draws)]
        scores = src.scorer.score_batch([e.tokens for e in part] + [ed.corpus.tokens[e.item] for e in part])
        for e, sc, host in zip(part, scores[:len(part)], scores[len(part):]):
            if _count(out, count_copies) >= want:
                break
            out.draws += 1
            st["draws"] += 1
            if e.text in seen:
                continue
            item = ed.sentence(e, word, round(float(sc), 3))
            if _check(item.tokens, allowed, forms) is not None:
                seen[e.text] = ("drop",)
                st["rejected"] += 1
                continue
            if acceptable(e, float(sc), float(host)):
                seen[e.text] = ("pass", item)
                out.passed.append(item)
                st["edits"] += 1
            else:
                st["below_threshold"] += 1
                low = attrs.evolve(item, provenance=item.provenance + "; below the plausibility threshold")
                seen[e.text] = ("below", low)
                out.below.append(low)


def _fallbacks(src: SheetSource) -> list[ConstrainedGenerator]:
    """The source's fallback generators that can serve its vocabulary (a fallback model that has no sentence
    within a custom vocabulary is skipped, not an error: the primary model still answers)."""
    out = []
    for f in src.fallbacks:
        try:
            out.append(f.get() if isinstance(f, LazyGenerator) else f)
        except (NoSentenceError, InputError):
            continue
    return out


def poorly_covered(src: SheetSource, word: str, forms=None, allowed=None) -> bool:
    """Whether the primary model covers `word` poorly: fewer than `src.min_distinct` distinct new sentences pass
    the ranker in `src.probe` draws (a fixed seed per word, so the answer does not depend on the caller's rng; cached
    per source).  Such words are generated from the fallback models (e.g. one that keeps once-seen pairs), whose
    sentences pass the same ranker and the same checks."""
    w = word.lower()
    if w not in src._coverage:
        forms = forms if forms is not None else word_forms(w, src.level)
        allowed = allowed if allowed is not None else _allowed(src.vocab, forms)
        seed = int.from_bytes(w.encode("utf-8")[:8].ljust(8, b"\0"), "little")
        try:
            sents, _ = src.generator.sample(src.probe, np.random.default_rng(seed), word=w, unique=True,
                                            max_attempts=src.probe)
        except NoSentenceError:
            sents = []
        st = {"rejected": 0, "copies_not_shown": 0, "below_threshold": 0}
        ok = sum(_classify(src, s, w, forms, allowed, "", st)[0] == "pass" for s in sents)
        src._coverage[w] = ok < src.min_distinct
    return src._coverage[w]


def _count(d: Draws, count_copies: bool) -> int:
    return len(d.passed) + (len(d.copies) if count_copies else 0)


def _classify(src: SheetSource, s: Sentence, word: str, forms, allowed, provenance: str, st: dict) -> tuple:
    """("pass", item) | ("copy", corpus item) | ("below", marked item) | ("drop",) for one distinct candidate."""
    if _check(s.tokens, allowed, forms) is not None:
        st["rejected"] += 1
        return ("drop",)
    c = src.corpus
    if c is not None:
        i = c.find_copy(s.tokens)
        if i is not None:
            sc = _score(src, c.tokens[i])
            if src.corpus_floor is not None and sc is not None and sc < src.corpus_floor:
                st["rejected"] += 1
                return ("drop",)
            return ("copy", Sentence(c.tokens[i], c.texts[i], word, "corpus", c.provenance(i), c.ja[i] or None, sc))
        if c.is_training_sentence(s.tokens):
            st["copies_not_shown"] += 1
            return ("drop",)
    score = _score(src, s.tokens)
    if score is not None and src.threshold is not None and score < src.threshold:
        st["below_threshold"] += 1
        if src.floor is not None and src.scorer.slor(s.tokens) >= src.floor:
            return ("below", attrs.evolve(s, word=word, source="generated", score=score,
                                          provenance=provenance + ", below the plausibility threshold"))
        return ("drop",)
    return ("pass", attrs.evolve(s, word=word, source="generated", provenance=provenance, score=score))


def _generated_items(src: SheetSource, word: str, forms: frozenset[str], allowed: Vocabulary, want: int, rng,
                     stats: dict) -> tuple[list[Sentence], list[Sentence], list[Sentence], Draws]:
    """(new generated items at or above the threshold, best first; new ones below it but above the SLOR floor,
    best first, marked in their provenance; corpus copies found by generation; the Draws).  Draws until `want`
    distinct items pass (+ a margin for near-duplicates on the sheet), at most src.draw_cap(want) draws."""
    d = draw_passing(src, word, want + src.margin, rng, forms=forms, allowed=allowed, stats=stats)
    from treegram.plugins.vocabgen.edits import is_edit

    # edits of real sentences first (judged more plausible than SPINEDEP's sentences), then by score
    new = sorted(d.passed, key=lambda s: (not is_edit(s), -(s.score if s.score is not None else 0.0)))
    return new, d.below, d.copies, d


def _not_from(items: list[Sentence], forms: frozenset[str]) -> list[Sentence]:
    """`items` without the edits whose host sentence holds one of `forms`."""
    from treegram.plugins.vocabgen.edits import edit_host

    def from_other(s: Sentence) -> bool:
        host = edit_host(s)
        return host is not None and any(t in forms for t in re.findall(r"[a-z']+", host.lower()))

    return [s for s in items if not from_other(s)]


def _take(pool: list[Sentence], k: int, chosen: list[Sentence], sheet: list[Sentence],
          reject: Callable[[Sentence], str | None] | None = None) -> int:
    """Move up to k sentences of `pool` onto the sheet, skipping near-duplicates of what is on it and those
    `reject` gives a reason for (quality.sheet_reason: fragments, the word in a sense above the level)."""
    got = 0
    for s in pool:
        if got >= k:
            break
        if any(near_duplicate(s.tokens, t.tokens) for t in sheet):
            continue
        if reject is not None and reject(s) is not None:
            continue
        chosen.append(s)
        sheet.append(s)
        got += 1
    return got


def select_sentences(gen, words: list[str], per_word: int, rng, *, progress: Callable[[int], None] | None = None,
                     stats: dict | None = None, allow_unchecked: bool = False,
                     checks: bool = True) -> tuple[dict[str, list[Sentence]], list[str]]:
    """Up to `per_word` different sentences for each word, and a note for each word that fell short.

    Returns ``(groups, problems)``: ``groups[word]`` lists the chosen sentences (words with none are left out),
    ``problems`` holds one human-readable line per word that got fewer than asked.  `progress(1)` is called after
    each word; `stats` (a dict) receives counts of draws and rejections.  Generated sentences below the ranker's
    threshold fill a short word only with `allow_unchecked` (marked in the key); `checks` (default) drops
    fragments and sentences that use the word in a sense above the level (quality.sheet_reason).
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
    st.setdefault("rejected_quality", 0)
    sheet_forms = {w: word_forms(w, src.level) for w in words}
    for w in words:
        forms = sheet_forms[w]
        reject = _quality_check(w, src.level, st) if checks else None
        allowed = _allowed(src.vocab, forms)
        corpus = CorpusPool(src, w, forms, allowed, rng)
        want_c = math.ceil(per_word * src.corpus_share) if len(corpus) else 0
        error = capped_note = None
        chosen: list[Sentence] = []
        got_c = _take(corpus, want_c, chosen, sheet, reject)
        if got_c < per_word:  # generation only for what the corpus items do not cover
            need = per_word - got_c
            try:
                new, below, copies, d = _generated_items(src, w, forms, allowed, need, rng, st)
                if d.capped:
                    capped_note = (f"{w}: {len(d.passed)} of {need + src.margin} generated sentence(s) passed "
                                   f"the plausibility ranker in {d.draws} draws (the cap: "
                                   f"{src.draw_cap(need + src.margin)})")
            except NoSentenceError as exc:
                new, below, copies, error = [], [], [], str(exc)
            seen = {c.text for c in corpus.items}
            copies = fit_order(src, [c for c in copies if c.text not in seen and not seen.add(c.text)], st)
            # --allow-unchecked shows unchecked sentences, marked: those below the fitness floor too (last)
            new, below = fit_order(src, new, st), fit_order(src, below, st, drop=not allow_unchecked)
            if len(sheet_forms) > 1:  # an edit of another practised word's real sentence ("She's a dog." -> cat):
                # that sentence is the other word's item, and the two would be near-duplicates on one sheet
                others = frozenset().union(*(f for o, f in sheet_forms.items() if o != w))
                new, below = _not_from(new, others), _not_from(below, others)
            got_c += _take(copies, want_c - got_c, chosen, sheet, reject)
            got_g = _take(new, per_word - got_c, chosen, sheet, reject)
            if got_c + got_g < per_word:  # too few new sentences: more corpus items
                got_c += _take([c for c in [*corpus, *copies] if c not in chosen], per_word - got_c - got_g,
                               chosen, sheet, reject)
            if got_c + got_g < per_word and allow_unchecked:  # still short: below the threshold, marked, noted
                # bounded: drawing until items pass finds many below the threshold, and they are judged far
                # less plausible (benchmarks/RESULTS.md `sheets`), so a short sheet beats a sheet of them
                low = _take(below, min(per_word - got_c - got_g, src.max_below), chosen, sheet, reject)
                st["below_shown"] += low
                if low:
                    problems.append(f"{w}: {low} generated sentence(s) below the plausibility threshold "
                                    "(marked in the key; check them)")
            elif got_c + got_g < per_word and below:
                problems.append(f"{w}: {len(below)} generated sentence(s) below the plausibility threshold left "
                                "out (--allow-unchecked shows them, marked in the key)")
        st["unfit"] = st.get("unfit", 0) + corpus.unfit
        st["corpus"] += sum(s.source == "corpus" for s in chosen)
        st["generated"] += sum(s.source == "generated" for s in chosen)
        if progress is not None:
            progress(1)
        unfit = (f"; {corpus.unfit} corpus sentence(s) left out as unlikely to suit a beginners' class"
                 if corpus.unfit else "")
        if not chosen:
            problems.append(f"{w}: {error}" if error else
                            f"{w}: no sentence found with all other words in the vocabulary {src.vocab.name}"
                            + (f" ({capped_note.split(': ', 1)[1]})" if capped_note else "") + unfit)
            continue
        if len(chosen) < per_word:
            problems.append(f"{w}: only {len(chosen)} different sentence(s) under this vocabulary"
                            + (f" ({capped_note.split(': ', 1)[1]})" if capped_note else "") + unfit)
        groups[w] = [chosen[int(i)] for i in rng.permutation(len(chosen))]
    return groups, problems


def _quality_check(word: str, level: str | None, st: dict) -> Callable[[Sentence], str | None]:
    from treegram.plugins.vocabgen.quality import sheet_reason

    def reject(s: Sentence) -> str | None:
        why = sheet_reason(s.tokens, word, level)
        if why is not None:
            st["rejected_quality"] += 1
        return why
    return reject


def sheet_order(groups: dict[str, list[Sentence]], rng) -> list[Sentence]:
    """Every chosen sentence in one seeded random order (items of one word are not kept together)."""
    flat = [s for sents in groups.values() for s in sents]
    return [flat[int(i)] for i in np.random.default_rng(rng).permutation(len(flat))] \
        if not isinstance(rng, np.random.Generator) else [flat[int(i)] for i in rng.permutation(len(flat))]


def spare_factor(kind, hints, focus) -> int:
    """Sentences drawn per wanted item: spares replace a sentence that makes no good item (each kind says how many
    it needs: a choice blank that admits more than one option, a cloze blank that admits another word of the
    word box, ...), and with `focus` (--from-corrections) a word used as another part of speech than the one
    practised ("the likes of you")."""
    from treegram.exercises import get_kind

    kinds = {get_kind(k).name for k in (kind.values() if isinstance(kind, dict) else [kind])}
    hinted = any(hints.values()) if isinstance(hints, dict) else bool(hints)
    factor = max(get_kind(k).spare_factor(hinted, bool(focus)) for k in kinds)
    return max(factor, 2) if focus else factor
