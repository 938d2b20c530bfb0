"""Classroom fitness: would a teacher of beginners hand this sentence out as it is? (issue 25)

Plausibility (ranking.py) asks whether a sentence is grammatical and sensible; real corpus sentences almost always
are (97% judged plausible), yet blind judges outside the team found only 68-71% of the sentences a sheet printed fit
for an A1-A2 worksheet: idioms ("He is here to stay."), dated or formal phrasing ("Grandmother makes a practice of
keeping early hours."), sentences that need context ("That's the other reason I'm here."), words above the level,
topics a teacher avoids (smoking, death, crime).  This module scores that second judgement so that sheets can prefer
the sentences most likely to fit and leave out the least likely.

The score is a logistic regression (log-odds of "classroom-fit", both judges saying yes), fitted on every judged
sentence we may train on (benchmarks/judged/: the team's sets and the blind kits judged outside the team) by
`benchmarks/bench_fitness.py --write-model`, stored as JSON (`data/classroom-fitness.json`: feature names,
standardization, coefficients, thresholds; never pickle), over features that do not name words or sentences:

* **provenance** — whether the sentence has a Tatoeba id (`has_tatoeba`; graded-enja rows without one are old
  Tanaka-corpus and basic-sentence rows Tatoeba no longer holds, judged fit far less often), the id's order of
  magnitude (`log_tatoeba_id`: newer sentences were written for learners), graded-enja only (`graded_only`), generated
  (`generated`);
* **plausibility** — the shipped scorer's log-odds (`plausibility`) and the in-domain trigram model's SLOR and worst
  position (`slor`, `min_local`): stilted and garbled sentences score low;
* **vocabulary** — the rarest and the mean word frequency of the words that are not names (`zipf_min`,
  `zipf_mean`, `zipf_low`: words below Zipf 4), the highest CEFR level of a word form and how many are above A1 or
  A2 (`level_max`, `above_a1`, `above_a2`), WordNet multiword expressions (idioms and phrasal verbs: `mwe`) and
  those CEFR-J does not list at A1-A2 (`mwe_above`);
* **form** — length, commas, a question or exclamation, negation, hypothetical modals (would, might, shall ...),
  *whom*/*whose*, definite articles, a first word that points to earlier talk (`context_start`: besides, anyway,
  so, but ...), capitalized names (`names`), and words of topics a beginners' teacher avoids (`sensitive`: death,
  crime, alcohol, smoking, romance, violence — the safety filter already removes what is unsafe).

`features` and `feature_matrix` compute them; `FitnessModel.score_batch` scores sentences with their provenance;
the corpus's scores are precomputed (`data/default-fitness.npz`, aligned with `default-corpus.npz` and checked by
a hash of its texts; `python -m treegram.plugins.vocabgen.fitness --write-scores` rebuilds it, ~2 minutes) because
a common word has thousands of candidate sentences and sheets order them all.

How sheets use it (selection.py): sentences below `floor` never reach a sheet; the rest are taken band by band —
first those scoring at least `bands[0]`, then `bands[1]`, ... (each band in the seeded random order), so a word with
many candidates gets its likeliest-fit sentences yet varies from seed to seed, and a word with few still gets what
is above the floor.  The thresholds and the coverage they cost are measured in benchmarks/RESULTS.md `fitness`.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Sequence
from functools import lru_cache

import attrs
import numpy as np

from treegram.plugins.vocabgen.embedded import DEFAULTS, data_dir

#: every feature `feature_matrix` computes, in column order
FEATURES = ("length", "commas", "zipf_min", "zipf_mean", "zipf_low", "level_max", "above_a1", "above_a2", "mwe",
            "mwe_above", "sensitive", "context_start", "question", "exclamation", "hypothetical", "negation",
            "the", "whom", "names", "has_tatoeba", "log_tatoeba_id", "graded_only", "generated", "plausibility",
            "slor", "min_local")

#: topics a teacher of beginners avoids on a worksheet although they are not unsafe (safety.py removes those):
#: death, crime and violence, alcohol and smoking, romance, illness, insults about people
SENSITIVE = frozenset("""die dies died dying dead death deaths kill kills killed killing murder murdered blood bloody
gun guns shoot shoots shot shooting smoke smokes smoked smoking cigarette cigarettes tobacco wine beer beers whisky
drunk alcohol bar bars pub kiss kissed kisses kissing sexy romantic lover lovers divorce divorced steal steals stole
stolen thief thieves rob robbed robber crime crimes criminal prison jail war wars soldier soldiers bomb bombs fight
fights fought hate hates hated ugly fat stupid idiot eaten attack attacked cancer suicide enemy enemies weapon
weapons knife knives poison devil hell funeral grave""".split())
#: a first word that continues earlier talk: the sentence needs what came before it
CONTEXT_START = frozenset("""besides anyway then so but and still also too actually certainly however otherwise
instead though yet well oh now""".split())
_HYPOTHETICAL = frozenset({"would", "might", "could", "shall", "ought", "may"})
_NEGATION = frozenset({"not", "n't", "never", "no"})
_TATOEBA = re.compile(r"tatoeba\.org #(\d+)")


@lru_cache(maxsize=1)
def _mwes() -> frozenset[str]:
    """WordNet's multiword lemmas ("come_to_life", "carry_out", "in_detail")."""
    from treegram.plugins.vocabgen.choice import _wn_index

    out: set[str] = set()
    for part in ("noun", "verb", "adj", "adv"):
        out |= {k for k in _wn_index(part) if "_" in k}
    return frozenset(out)


@lru_cache(maxsize=1)
def _profile_phrases() -> dict[str, int]:
    """CEFR-J multiword headwords ("look_for") -> their lowest level (1..6)."""
    from treegram.plugins.vocabgen.vocab import cefrj_entries

    out: dict[str, int] = {}
    for hw, _pos, lv in cefrj_entries():
        for alt in hw.split("/"):
            parts = alt.strip().lower().split()
            if len(parts) > 1:
                k = "_".join(parts)
                out[k] = min(out.get(k, 9), lv)
    return out


@lru_cache(maxsize=65536)
def _level(form: str) -> int:
    """The lowest CEFR level (1..6) whose vocabulary allows the form; 7 when none does."""
    from treegram.plugins.vocabgen.vocab import LEVELS, level_of

    lv = level_of(form)
    return LEVELS.index(lv) + 1 if lv else 7


@lru_cache(maxsize=65536)
def _zipf(word: str) -> float:
    from wordfreq import zipf_frequency

    return zipf_frequency(word, "en")


@lru_cache(maxsize=1)
def _names() -> frozenset[str]:
    from treegram.plugins.vocabgen.vocab import PROPER_NAMES

    return frozenset(n.lower() for n in PROPER_NAMES)


def _mwe_counts(low: list[str]) -> tuple[int, int]:
    """(WordNet multiword expressions in the sentence, those CEFR-J does not list at A1-A2); the first word of an
    expression may be inflected ("carried out")."""
    from treegram.plugins.vocabgen.choice import lemmas

    mw, prof = _mwes(), _profile_phrases()
    found = above = 0
    for n in (2, 3, 4):
        for i in range(len(low) - n + 1):
            rest = low[i + 1:i + n]
            for head in sorted(lemmas(low[i])):
                k = "_".join([head, *rest])
                if k in mw:
                    found += 1
                    above += prof.get(k, 9) > 2
                    break
    return found, above


def provenance_features(provenance: str, source: str) -> tuple[float, float, float, float]:
    """(has_tatoeba, log_tatoeba_id, graded_only, generated) from an item's provenance line and source."""
    m = _TATOEBA.search(provenance or "")
    gen = source == "generated"
    return (float(bool(m)), float(np.log10(int(m[1]))) if m else 0.0, float(not m and not gen), float(gen))


def text_features(tokens: Sequence[str]) -> list[float]:
    """The features of the tokens alone (every column of FEATURES before `has_tatoeba`)."""
    toks = list(tokens)
    low = [t.lower() for t in toks]
    names = _names()
    alpha = [k for k, t in enumerate(toks) if t[:1].isalpha()]
    named = [k for k in alpha if (k > 0 and toks[k][:1].isupper() and toks[k] != "I") or low[k] in names]
    content = [low[k] for k in alpha if k not in named]
    z = [_zipf(w) for w in content] or [7.0]
    lv = [_level(w) for w in content] or [1]
    mwe, mwe_above = _mwe_counts(low)
    return [float(len(alpha)), float(low.count(",")), min(z), float(np.mean(z)), float(sum(x < 4.0 for x in z)),
            float(max(lv)), float(sum(x >= 2 for x in lv)), float(sum(x >= 3 for x in lv)), float(mwe),
            float(mwe_above), float(sum(w in SENSITIVE for w in low)),
            float(bool(low) and low[0] in CONTEXT_START), float(bool(toks) and toks[-1] == "?"),
            float(bool(toks) and toks[-1] == "!"), float(sum(w in _HYPOTHETICAL for w in low)),
            float(sum(w in _NEGATION for w in low)), float(low.count("the")),
            float("whom" in low or "whose" in low), float(len(named))]


def feature_matrix(items: Sequence[tuple[Sequence[str], str, str]], ranker=None) -> np.ndarray:
    """One row of FEATURES per (tokens, provenance, source) item; `ranker` (ranking.PlausibilityRanker, default
    the embedded one) gives the plausibility columns."""
    if ranker is None:
        from treegram.plugins.vocabgen.ranking import embedded_ranker

        ranker = embedded_ranker()
    toks = [tuple(t) for t, _p, _s in items]
    plaus = ranker.score_batch(toks) if toks else np.zeros(0)
    from treegram.plugins.vocabgen.ranking import feature_matrix as lm_features

    lm = lm_features(ranker.res, toks, ("slor", "min_local")) if toks else np.zeros((0, 2))
    rows = [text_features(t) + list(provenance_features(p, s)) + [float(pl), *map(float, f)]
            for (t, p, s), pl, f in zip(items, plaus, lm)]
    out = np.asarray(rows, dtype=np.float64).reshape(len(rows), len(FEATURES))
    return np.where(np.isfinite(out), out, -10.0)  # an empty sentence: very unfit, never NaN


@attrs.define
class FitnessModel:
    """The fitted logistic regression (`data/classroom-fitness.json`):

        score(s) = b + sum_k c_k (f_k(s) - mean_k) / scale_k        (log-odds that s is classroom-fit)

    `floor`: below it a sentence never reaches a sheet; `bands`: descending thresholds, a sheet takes the
    sentences of a higher band first."""

    spec: dict

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(self.spec["features"])

    @property
    def floor(self) -> float:
        return float(self.spec["floor"])

    @property
    def bands(self) -> tuple[float, ...]:
        return tuple(float(b) for b in self.spec["bands"])

    def band(self, scores) -> np.ndarray:
        """Per score: 0 for the best band (>= bands[0]), 1 for the next, ..., len(bands) for the floor's band,
        -1 below the floor (never shown)."""
        s = np.asarray(scores, dtype=np.float64)
        out = np.full(s.shape, len(self.bands), dtype=np.int64)
        for k, b in reversed(list(enumerate(self.bands))):
            out[s >= b] = k
        out[s < self.floor] = -1
        return out

    def score_matrix(self, X: np.ndarray) -> np.ndarray:
        cols = [FEATURES.index(n) for n in self.names]
        mean = np.asarray(self.spec["mean"], dtype=np.float64)
        scale = np.asarray(self.spec["scale"], dtype=np.float64)
        coef = np.asarray(self.spec["coef"], dtype=np.float64)
        return float(self.spec["intercept"]) + ((X[:, cols] - mean) / scale) @ coef

    def score_batch(self, items: Sequence[tuple[Sequence[str], str, str]], ranker=None) -> np.ndarray:
        """Scores of (tokens, provenance, source) items."""
        if not len(items):
            return np.zeros(0)
        return self.score_matrix(feature_matrix(items, ranker))

    def score(self, tokens: Sequence[str], provenance: str = "", source: str = "corpus") -> float:
        return float(self.score_batch([(tokens, provenance, source)])[0])

    @staticmethod
    def spec_from_sklearn(names: Sequence[str], pipeline, floor: float, bands: Sequence[float], **extra) -> dict:
        sc, lr = pipeline[0], pipeline[-1]
        return {"format": "treegram-vocabgen-fitness", "version": 1, "features": list(names),
                "mean": [float(x) for x in sc.mean_], "scale": [float(x) for x in sc.scale_],
                "coef": [float(x) for x in lr.coef_[0]], "intercept": float(lr.intercept_[0]),
                "floor": float(floor), "bands": [float(b) for b in bands], **extra}


def corpus_digest(corpus) -> str:
    """A hash of the corpus texts in order: the precomputed scores belong to exactly this corpus."""
    h = hashlib.blake2b(digest_size=16)
    for t in corpus.texts:
        h.update(t.encode("utf-8") + b"\n")
    return h.hexdigest()


def corpus_items(corpus, ids=None) -> list[tuple[tuple[str, ...], str, str]]:
    ids = range(len(corpus)) if ids is None else ids
    return [(corpus.tokens[i], corpus.provenance(i), "corpus") for i in ids]


#: precomputed scores are stored as int16 hundredths of a log-odds unit
_SCALE = 100.0


def compute_corpus_scores(corpus, model: FitnessModel, progress=None, batch: int = 2000) -> np.ndarray:
    out = np.zeros(len(corpus), dtype=np.float64)
    for a in range(0, len(corpus), batch):
        ids = range(a, min(a + batch, len(corpus)))
        out[a:a + len(ids)] = model.score_batch(corpus_items(corpus, ids))
        if progress is not None:
            progress(len(ids))
    return out


def write_corpus_scores(path, corpus, model: FitnessModel, progress=None, scores=None) -> np.ndarray:
    """Save the corpus's scores under `model` (computed unless given) with the digests that tie them to both."""
    from treegram.io import save_bundle

    scores = compute_corpus_scores(corpus, model, progress) if scores is None else scores
    q = np.clip(np.round(scores * _SCALE), -32000, 32000).astype(np.int16)
    save_bundle(path, {"format": "treegram-vocabgen-fitness-scores", "version": 1,
                       "corpus_digest": corpus_digest(corpus), "model_digest": model_digest(model),
                       "sentences": len(corpus)}, {"score": q})
    return q / _SCALE


def model_digest(model: FitnessModel) -> str:
    return hashlib.blake2b(json.dumps(model.spec, sort_keys=True).encode("utf-8"), digest_size=8).hexdigest()


def stored_corpus_scores(path, corpus, model: FitnessModel) -> np.ndarray | None:
    """The corpus's precomputed fitness scores stored at `path` (None when they belong to another corpus or model:
    then the sheet scores its candidates as it meets them).  `embedded_corpus_scores` keeps the embedded
    corpus's."""
    from treegram.io import load_bundle

    meta, arrays = load_bundle(path)
    if meta.get("sentences") != len(corpus) or meta.get("model_digest") != model_digest(model) \
            or meta.get("corpus_digest") != corpus_digest(corpus):
        return None
    return np.asarray(arrays["score"], dtype=np.float64) / _SCALE


# -- the embedded fitness model (data/: classroom-fitness.json, default-fitness.npz; kept by embedded.DEFAULTS) ----
def _load_fitness(data):
    path = data.path("classroom-fitness.json")
    return FitnessModel(json.loads(path.read_text(encoding="utf-8"))) if path else None


def _load_corpus_scores(data):
    path = data.path("default-fitness.npz")
    model = embedded_fitness(data)
    if path is None or model is None or data.corpus is None:
        return None
    return stored_corpus_scores(path, data.corpus, model)


def embedded_fitness(data=None):
    """The embedded classroom-fitness model of `data` (default `embedded.DEFAULTS`), or None without its file."""
    return (DEFAULTS if data is None else data).part("fitness", _load_fitness)


def embedded_corpus_scores(data=None):
    """The embedded corpus's precomputed fitness scores (of `data`, default `embedded.DEFAULTS`), or None."""
    return (DEFAULTS if data is None else data).part("corpus_scores", _load_corpus_scores)


def main(argv=None) -> None:
    """`python -m treegram.plugins.vocabgen.fitness --write-scores`: precompute the embedded corpus's scores."""
    import argparse

    ap = argparse.ArgumentParser(description=main.__doc__)
    ap.add_argument("--write-scores", action="store_true", help="write data/default-fitness.npz")
    ap.add_argument("--out", default=None, help="another path for the scores file")
    args = ap.parse_args(argv)
    if not args.write_scores:
        ap.error("nothing to do (--write-scores)")
    model = embedded_fitness()
    if model is None:
        raise SystemExit("no data/classroom-fitness.json: fit it first (benchmarks/bench_fitness.py --write-model)")
    corpus = DEFAULTS.corpus
    path = args.out or str(data_dir() / "default-fitness.npz")
    s = write_corpus_scores(path, corpus, model)
    print(f"{path}: {len(s)} scores; >= floor {np.mean(s >= model.floor):.1%}, "
          + ", ".join(f">= {b:g} {np.mean(s >= b):.1%}" for b in model.bands))


if __name__ == "__main__":
    main()
