"""Plausibility scores for sheet sentences: an interpolated Kneser-Ney trigram model of the graded corpus, SLOR.

SPINEDEP generates each dependent given only its head and grandparent, so its failures are local incoherence
("My father is how tall.", "This student traveled was.") that a word-order model of real sentences sees.  The score
is SLOR (Pauls & Klein 2012; Lau, Clark & Lappin 2017 found it the best acceptability measure of an LM):

    SLOR(s) = (log P_KN(s) - sum_i log P_uni(w_i)) / |s|

with P_KN the trigram (interpolated Kneser-Ney, one discount D per order, n-grams seen fewer than `min_count` times
pruned after estimation so their mass falls to the lower order) over lowercased tokens with <s> </s>, and P_uni
the add-one unigram.  Dividing by the unigram probability keeps rare-but-fine words (the practised word) from
looking implausible; dividing by length keeps short and long sentences comparable.

Arrays (all numpy, saved inside the default data bundle, never pickle): sorted int64 keys of the kept bigrams
(u*V+v) and trigrams ((u*V+v)*V+w) with their discounted probabilities `alpha`, the leftover interpolation weight
`gamma` of every history, the continuation unigram and the plain unigram.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Sequence

import attrs
import numpy as np

from treegram.plugins.vocabgen.embedded import DEFAULTS

BOS, EOS, UNK = "<s>", "</s>", "<unk>"


class NgramScorer:
    def __init__(self, words: Sequence[str], arrays: dict[str, np.ndarray], info: dict | None = None):
        self.words = list(words)
        self.index = {w: i for i, w in enumerate(self.words)}
        self.V = len(self.words)
        for k in ("uni_cont", "uni_ml", "big_keys", "big_alpha", "big_gamma", "tri_keys", "tri_alpha",
                  "tri_hist_keys", "tri_gamma"):
            setattr(self, k, np.asarray(arrays[k]))
        self.info = dict(info or {})

    # -- estimation ---------------------------------------------------------------------------------------------
    @staticmethod
    def train(sentences: Iterable[Sequence[str]], *, min_count: int = 2, discount: float = 0.75) -> NgramScorer:
        uni: Counter = Counter()
        big: Counter = Counter()
        tri: Counter = Counter()
        n_sent = 0
        for s in sentences:
            toks = [BOS, BOS] + [t.lower() for t in s] + [EOS]
            n_sent += 1
            uni.update(toks[2:])
            big.update(zip(toks[1:-1], toks[2:]))
            tri.update(zip(toks[:-2], toks[1:-1], toks[2:]))
        words = [UNK, BOS] + sorted(w for w in uni if w not in (BOS, EOS)) + [EOS]
        idx = {w: i for i, w in enumerate(words)}
        V = len(words)
        D = discount
        # unigram: continuation counts N1+(. w) interpolated with uniform
        cont = Counter(v for (_u, v) in big)
        tot = sum(cont.values())
        uni_cont = np.full(V, 1.0 / V)
        for w, c in cont.items():
            uni_cont[idx[w]] = 0.9 * c / tot + 0.1 / V
        uni_cont[idx[BOS]] = 1e-9
        uni_ml = np.full(V, 1.0 / (sum(uni.values()) + V))
        n_uni = sum(uni.values()) + V
        for w, c in uni.items():
            uni_ml[idx[w]] = (c + 1) / n_uni
        # bigram level from continuation counts N1+(. v w), histories v
        cont2 = Counter((v, w) for (_u, v, w) in tri)
        for (v, w), c in big.items():  # sentence starts have one left context (<s>): use their plain counts
            if v == BOS:
                cont2[(v, w)] = c
        hist2 = Counter()
        types2 = Counter()
        for (v, w), c in cont2.items():
            hist2[v] += c
            types2[v] += 1
        big_items = sorted(((idx[v] * V + idx[w], max(c - D, 0.0) / hist2[v]) for (v, w), c in cont2.items()
                            if big[(v, w)] >= min_count))
        big_gamma = np.ones(V)
        kept2 = Counter()
        for (v, w), c in cont2.items():
            if big[(v, w)] >= min_count:
                kept2[v] += max(c - D, 0.0) / hist2[v]
        for v in hist2:
            big_gamma[idx[v]] = 1.0 - kept2[v]
        # trigram level from plain counts, histories (u, v)
        hist3 = Counter()
        for (u, v, w), c in tri.items():
            hist3[(u, v)] += c
        tri_items = []
        kept3 = Counter()
        for (u, v, w), c in tri.items():
            if c >= min_count:
                a = max(c - D, 0.0) / hist3[(u, v)]
                tri_items.append(((idx[u] * V + idx[v]) * V + idx[w], a))
                kept3[(u, v)] += a
        tri_items.sort()
        hist_items = sorted((idx[u] * V + idx[v], 1.0 - kept3[(u, v)]) for (u, v) in hist3 if kept3[(u, v)] > 0)
        arrays = {
            "uni_cont": uni_cont.astype(np.float32), "uni_ml": uni_ml.astype(np.float32),
            "big_keys": np.asarray([k for k, _ in big_items], dtype=np.int64),
            "big_alpha": np.asarray([a for _, a in big_items], dtype=np.float32),
            "big_gamma": big_gamma.astype(np.float32),
            "tri_keys": np.asarray([k for k, _ in tri_items], dtype=np.int64),
            "tri_alpha": np.asarray([a for _, a in tri_items], dtype=np.float32),
            "tri_hist_keys": np.asarray([k for k, _ in hist_items], dtype=np.int64),
            "tri_gamma": np.asarray([g for _, g in hist_items], dtype=np.float32),
        }
        return NgramScorer(words, arrays, {"sentences": n_sent, "min_count": min_count, "discount": D,
                                           "bigrams": len(big_items), "trigrams": len(tri_items)})

    # -- bundle -------------------------------------------------------------------------------------------------
    _KEYS = ("big_keys", "tri_keys", "tri_hist_keys")

    def to_bundle(self, prefix: str = "lm_") -> tuple[dict, dict[str, np.ndarray]]:
        """Sorted keys are stored as gaps and interpolation weights as float16 (the file is ~2x smaller)."""
        out = {}
        for k in ("uni_cont", "uni_ml"):
            out[prefix + k] = getattr(self, k).astype(np.float32)
        for k in ("big_alpha", "big_gamma", "tri_alpha", "tri_gamma"):
            out[prefix + k] = getattr(self, k).astype(np.float16)
        for k in self._KEYS:
            out[prefix + k] = np.diff(getattr(self, k), prepend=0)
        return {"words": self.words, "info": self.info}, out

    @staticmethod
    def from_bundle(meta: dict, arrays: dict[str, np.ndarray], prefix: str = "lm_") -> NgramScorer:
        got = {k[len(prefix):]: v for k, v in arrays.items() if k.startswith(prefix)}
        for k in NgramScorer._KEYS:
            got[k] = np.cumsum(np.asarray(got[k], dtype=np.int64))
        for k, v in got.items():
            if v.dtype == np.float16:
                got[k] = v.astype(np.float32)
        return NgramScorer(meta["words"], got, meta.get("info"))

    # -- scoring ------------------------------------------------------------------------------------------------
    @staticmethod
    def _lookup(keys: np.ndarray, values: np.ndarray, q: np.ndarray, default: float) -> np.ndarray:
        if len(keys) == 0:
            return np.full(len(q), default)
        pos = np.searchsorted(keys, q)
        pos_c = np.minimum(pos, len(keys) - 1)
        hit = keys[pos_c] == q
        return np.where(hit, values[pos_c], default)

    def token_logprobs(self, tokens: Sequence[str]) -> np.ndarray:
        """log P_KN of every token and of </s> (natural log)."""
        V = self.V
        ids = np.asarray([self.index[BOS]] * 2 + [self.index.get(t.lower(), 0) for t in tokens]
                         + [self.index[EOS]], dtype=np.int64)
        u, v, w = ids[:-2], ids[1:-1], ids[2:]
        p1 = self.uni_cont[w].astype(np.float64)
        a2 = self._lookup(self.big_keys, self.big_alpha, v * V + w, 0.0)
        p2 = a2 + self.big_gamma[v] * p1
        a3 = self._lookup(self.tri_keys, self.tri_alpha, (u * V + v) * V + w, 0.0)
        g3 = self._lookup(self.tri_hist_keys, self.tri_gamma, u * V + v, 1.0)
        return np.log(a3 + g3 * p2)

    def slor(self, tokens: Sequence[str]) -> float:
        if not tokens:
            return float("-inf")
        ids = np.asarray([self.index.get(t.lower(), 0) for t in tokens] + [self.index[EOS]], dtype=np.int64)
        lp = self.token_logprobs(tokens)
        return float((lp.sum() - np.log(self.uni_ml[ids].astype(np.float64)).sum()) / (len(tokens) + 1))

    def local_slor(self, tokens: Sequence[str]) -> np.ndarray:
        """log P_KN(w_i | w_i-2 w_i-1) - log P_uni(w_i) for every token and </s>: SLOR before the sum."""
        ids = np.asarray([self.index.get(t.lower(), 0) for t in tokens] + [self.index[EOS]], dtype=np.int64)
        return self.token_logprobs(tokens) - np.log(self.uni_ml[ids].astype(np.float64))

    def score(self, tokens: Sequence[str]) -> float:
        """The plausibility score of a bare n-gram scorer: SLOR."""
        return self.slor(tokens)


# -- a general-English trigram model: pocketsphinx's ----------------------------------------------------------------
_CLITICS = ("n't", "'s", "'re", "'m", "'ll", "'ve", "'d", "'")


class GeneralLM:
    """The US-English trigram model inside the `pocketsphinx` wheel (`model/en-us/en-us.lm.bin`, BSD licence: CMU
    Sphinx / Alpha Cephei), read with the package's own `NGramModel`, which answers one n-gram (at most 3 words) per
    call: ``prob([w, h1, h2])`` = log P(w | h2 h1) in its log base.  A broad model of spoken/written English beside
    the in-domain one: it knows word sequences the graded corpus never has, and lacks punctuation and digits.

    Words for it: lowercased, clitics glued back ("do n't" -> "don't", "Tom 's" -> "tom's", when it knows the glued
    form), hyphenated words glued when known, punctuation dropped; a word it does not know is skipped (counted by
    `oov`).  `local(tokens)` gives ln P3(w_i | w_i-2 w_i-1) - ln P1(w_i) for every known word and </s>."""

    def __init__(self, path: str | None = None):
        import os

        from pocketsphinx import Config, LogMath, NGramModel, get_model_path

        path = path or os.path.join(get_model_path(), "en-us", "en-us.lm.bin")
        self.logmath = LogMath()
        self.model = NGramModel(Config(), self.logmath, path)
        self._ln = float(self.logmath.log_to_ln(-100000)) / -100000.0  # ln per log unit (a constant base)
        self._uni: dict[str, float | None] = {}

    def unigram(self, w: str) -> float | None:
        """ln P1(w), None when w is not in the model."""
        if w not in self._uni:
            v = self.model.prob([w])
            self._uni[w] = None if v < -400_000_000 else v * self._ln
        return self._uni[w]

    def words(self, tokens: Sequence[str]) -> tuple[list[str], int]:
        """(the model's words for the tokens, how many were unknown and skipped)."""
        out: list[str] = []
        glue_next = False
        for t in tokens:
            w = t.lower()
            if out and (w in _CLITICS or glue_next):
                g = out[-1] + w
                if self.unigram(g) is not None:
                    out[-1] = g
                    glue_next = False
                    continue
            glue_next = False
            if w == "-" and out:
                glue_next = True
                out[-1] = out[-1] + "-"
                continue
            if any(ch.isalnum() for ch in w):
                out.append(w)
        out = [w.rstrip("-") for w in out]
        known = [w for w in out if self.unigram(w) is not None]
        return known, len(out) - len(known)

    def local(self, tokens: Sequence[str]) -> tuple[np.ndarray, int]:
        ws, oov = self.words(tokens)
        seq = ["<s>"] + ws + ["</s>"]
        vals = []
        for i in range(1, len(seq)):
            hist = seq[max(0, i - 2):i][::-1]
            lp = self.model.prob([seq[i], *hist]) * self._ln
            vals.append(lp - self.unigram(seq[i]))
        return np.asarray(vals, dtype=np.float64), oov


def wordfreq_zipf(tokens: Sequence[str]) -> np.ndarray:
    """Zipf frequencies (log10 per billion words + 3) from the `wordfreq` package of the alphabetic tokens."""
    from wordfreq import zipf_frequency

    return np.asarray([zipf_frequency(t.lower(), "en") for t in tokens if t[:1].isalpha()] or [0.0])


# -- the shipped ranker -------------------------------------------------------------------------------------------
#: every feature `feature_matrix` computes; a ranker uses the ones its file names
FEATURES = ("slor", "min_local", "length", "pcfg_slor", "ps_slor", "ps_min", "ps_oov", "wf_min", "wf_mean",
            "nn_slor", "nn_min", "nn_mean")


@attrs.define
class Resources:
    """The models the features read: the in-domain trigram model (always), treegram's PCFG, pocketsphinx's general
    trigram model and the LSTM (each optional: a feature whose model is absent cannot be asked for)."""

    lm: NgramScorer
    pcfg: object | None = None
    general: GeneralLM | None = None
    lstm: object | None = None        # nnlm.LSTMScorer


def feature_matrix(res: Resources, batch: Sequence[Sequence[str]], names: Sequence[str] = FEATURES) -> np.ndarray:
    """Plausibility features of token sequences, one row per sentence, one column per name:

    * `slor`      — SLOR under the in-domain trigram model (above);
    * `min_local` — the worst single position, min_i [log P_KN(w_i | h_i) - log P_uni(w_i)] over the tokens and
      </s>: SPINEDEP's sentences are spliced from frequent fragments, and one bad join is what a mean hides;
    * `length`    — the number of tokens;
    * `pcfg_slor` — SLOR under treegram's own PCFG (syntax.py): (log inside P_G(w) - sum log P_uni(w_i)) / (n+1);
    * `ps_slor`, `ps_min`, `ps_oov` — mean and worst local SLOR under pocketsphinx's general English trigram
      model (`GeneralLM`), and the share of words it does not know;
    * `wf_min`, `wf_mean` — the rarest and the mean Zipf frequency (`wordfreq`) of the words;
    * `nn_slor`, `nn_min`, `nn_mean` — SLOR, worst local SLOR and mean log-probability under the LSTM (nnlm.py).
    An empty sentence gets -inf everywhere."""
    names = tuple(names)
    out = np.full((len(batch), len(names)), -np.inf)
    col = {k: j for j, k in enumerate(names)}
    live = [i for i, t in enumerate(batch) if t]
    if "nn_slor" in col or "nn_min" in col or "nn_mean" in col:
        if res.lstm is None:
            raise ValueError("LSTM features asked for without the LSTM model")
        locs = res.lstm.local_slor_batch([batch[i] for i in live])
        lps = None
        if "nn_mean" in col:
            lps = [lp for part in range(0, len(live), 256)
                   for lp in res.lstm.token_logprobs_batch([batch[i] for i in live[part:part + 256]])]
        for k, i in enumerate(live):
            if "nn_slor" in col:
                out[i, col["nn_slor"]] = locs[k].mean()
            if "nn_min" in col:
                out[i, col["nn_min"]] = locs[k].min()
            if lps is not None:
                out[i, col["nn_mean"]] = lps[k].mean()
    for i in live:
        tokens = batch[i]
        loc = res.lm.local_slor(tokens) if ("slor" in col or "min_local" in col) else None
        f = {}
        if loc is not None:
            f["slor"], f["min_local"] = float(loc.mean()), float(loc.min())
        f["length"] = float(len(tokens))
        if "pcfg_slor" in col:
            if res.pcfg is None:
                raise ValueError("pcfg_slor asked for without the PCFG")
            from treegram.plugins.vocabgen.syntax import inside_logprob

            ids = np.asarray([res.lm.index.get(t.lower(), 0) for t in tokens], dtype=np.int64)
            lu = np.log(res.lm.uni_ml[ids].astype(np.float64)).sum()
            f["pcfg_slor"] = float((inside_logprob(res.pcfg, tokens) - lu) / (len(tokens) + 1))
        if "ps_slor" in col or "ps_min" in col or "ps_oov" in col:
            if res.general is None:
                raise ValueError("pocketsphinx features asked for without its model")
            ploc, oov = res.general.local(tokens)
            f["ps_slor"], f["ps_min"] = float(ploc.mean()), float(ploc.min())
            f["ps_oov"] = oov / max(1, sum(1 for t in tokens if any(ch.isalnum() for ch in t)))
        if "wf_min" in col or "wf_mean" in col:
            z = wordfreq_zipf(tokens)
            f["wf_min"], f["wf_mean"] = float(z.min()), float(z.mean())
        for k, v in f.items():
            if k in col:
                out[i, col[k]] = v
    return out


def features(lm: NgramScorer, tokens: Sequence[str], pcfg=None, names: Sequence[str] = FEATURES[:4]) -> dict[str, float]:
    """The features of one sentence as a dict (`feature_matrix` with the trigram model and the PCFG only)."""
    names = [k for k in names if k != "pcfg_slor" or pcfg is not None]
    row = feature_matrix(Resources(lm, pcfg), [tokens], names)[0]
    return dict(zip(names, (float(x) for x in row)))


class PlausibilityRanker:
    """Logistic regression over a few `features`, fitted on the judged set (benchmarks/bench_plausibility.py) and
    stored as JSON (`data/plausibility-ranker.json`: feature names, standardization, coefficients, threshold):

        score(s) = b + sum_k c_k (f_k(s) - mean_k) / scale_k        (log-odds that s is plausible)

    `threshold` is the score a generated sentence needs to reach a sheet, calibrated in nested cross-validation so
    that what passes is as plausible as the judged set allows (see the file's `calibration`)."""

    def __init__(self, lm: NgramScorer | Resources, spec: dict, pcfg=None):
        self.res = lm if isinstance(lm, Resources) else Resources(lm, pcfg)
        self.lm = self.res.lm
        self.pcfg = self.res.pcfg
        self.spec = spec
        self.names = tuple(spec["features"])
        self.mean = np.asarray(spec["mean"], dtype=np.float64)
        self.scale = np.asarray(spec["scale"], dtype=np.float64)
        self.coef = np.asarray(spec["coef"], dtype=np.float64)
        self.intercept = float(spec["intercept"])
        self.threshold = float(spec["threshold"])
        self._cache: dict[tuple[str, ...], float] = {}
        self.cache_max = 200_000  # sentences whose scores are kept

    def vector(self, tokens: Sequence[str]) -> np.ndarray:
        return feature_matrix(self.res, [tokens], self.names)[0]

    def score_batch(self, batch: Sequence[Sequence[str]]) -> np.ndarray:
        """Scores of many token sequences at once (the LSTM runs them as one batch); cached per sentence."""
        keys = [tuple(t) for t in batch]
        todo = list(dict.fromkeys(k for k in keys if k not in self._cache))
        if todo:
            X = feature_matrix(self.res, todo, self.names)
            ok = np.isfinite(X).all(axis=1)
            vals = np.where(ok, self.intercept + ((np.where(ok[:, None], X, 0.0) - self.mean) / self.scale)
                            @ self.coef, -np.inf)
            if len(self._cache) + len(todo) > self.cache_max:  # keep what this batch still reads
                self._cache = {k: self._cache[k] for k in keys if k in self._cache}
            self._cache.update(zip(todo, (float(v) for v in vals)))
        return np.asarray([self._cache[k] for k in keys], dtype=np.float64)

    def score(self, tokens: Sequence[str]) -> float:
        return float(self.score_batch([tokens])[0])

    def slor(self, tokens: Sequence[str]) -> float:
        return self.lm.slor(tokens)

    @staticmethod
    def spec_from_sklearn(names: Sequence[str], pipeline, threshold: float, **extra) -> dict:
        """The JSON spec of a fitted `make_pipeline(StandardScaler(), LogisticRegression())`."""
        sc, lr = pipeline[0], pipeline[-1]
        return {"format": "treegram-vocabgen-ranker", "version": 1, "features": list(names),
                "mean": [float(x) for x in sc.mean_], "scale": [float(x) for x in sc.scale_],
                "coef": [float(x) for x in lr.coef_[0]], "intercept": float(lr.intercept_[0]),
                "threshold": float(threshold), **extra}


# -- the public scorer: what sheets, distractor checks and generators call -----------------------------------------
_TOKEN = re.compile(r"(?i)(?:can(?=not\b)|ca(?=n't\b)|wo(?=n't\b)|sha(?=n't\b)|\w+(?=n't\b)|n't\b|'(?:s|re|m|ll|ve|d)\b"
                    r"|(?:mr|mrs|ms|dr|st)\.|\d+(?:[.,:]\d+)*|\w+|[^\w\s])")


def tokenize(text: str) -> list[str]:
    """Tokens as the training parses have them (spaCy's English rules for what sheets contain): clitics split
    ("don't" -> do n't, "Tom's" -> Tom 's, "cannot" -> can not), punctuation and hyphens apart, "Mr." whole."""
    return _TOKEN.findall(text.replace("\u2019", "'"))


def _tokens(sentence) -> list[str]:
    return tokenize(sentence) if isinstance(sentence, str) else list(sentence)


def plausibility(sentence) -> float:
    """The embedded scorer's log-odds that a sentence (text or tokens) is plausible — grammatical and sensible as
    judged blind (benchmarks/RESULTS.md `plausibility`).  Higher is better; compare with `sheet_threshold()`."""
    return float(plausibility_batch([sentence])[0])


def plausibility_batch(sentences) -> np.ndarray:
    """`plausibility` of many sentences at once (much faster than one by one: the LSTM runs them as a batch)."""
    ranker = embedded_ranker()
    if ranker is None:
        raise RuntimeError("the embedded plausibility scorer is missing: reinstall treegram")
    return ranker.score_batch([_tokens(s) for s in sentences])


def sheet_threshold() -> float:
    """The score a generated sentence needs to reach a sheet (the embedded ranker's calibrated threshold)."""
    return embedded_ranker().threshold


# -- the embedded scorer (data/: default-lm.npz, plausibility-ranker.json; kept by embedded.DEFAULTS) ---------------
def _load_scorer(data):
    from treegram.io import load_bundle

    path = data.path("default-lm.npz")
    if path is None:
        return None, None
    meta, arrays = load_bundle(path)
    return NgramScorer.from_bundle(meta, arrays), float(meta["threshold"])


def _load_lstm(data):
    from treegram.io import load_bundle
    from treegram.plugins.vocabgen.nnlm import from_bundle

    path = data.path("default-lstm.npz")
    if path is None:
        return None
    meta, arrays = load_bundle(path)
    return from_bundle(meta, arrays)


def _load_ranker(data):
    import json

    lm, _ = embedded_scorer(data)
    path = data.path("plausibility-ranker.json")
    if lm is None or path is None:
        return None
    spec = json.loads(path.read_text(encoding="utf-8"))
    names = set(spec["features"])
    res = Resources(lm)
    if "pcfg_slor" in names:
        res.pcfg = data.pcfg
    if names & {"ps_slor", "ps_min", "ps_oov"}:
        res.general = GeneralLM()
    if names & {"nn_slor", "nn_min", "nn_mean"}:
        res.lstm = data.part("lstm", _load_lstm)
        if res.lstm is None:
            return None
    return PlausibilityRanker(res, spec)


def embedded_scorer(data=None):
    """(NgramScorer, SLOR threshold) of the embedded data (`data`, default `embedded.DEFAULTS`), or (None, None)."""
    return _data(data).part("scorer", _load_scorer)


def embedded_ranker(data=None):
    """The embedded plausibility ranker (logistic regression over the scorer's features, with its calibrated
    threshold) of `data` (default `embedded.DEFAULTS`), or None when a data file is absent."""
    return _data(data).part("ranker", _load_ranker)


def _data(data):
    return DEFAULTS if data is None else data
