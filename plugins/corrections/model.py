"""The log-linear correction classifier (section 3): multinomial logistic regression (scikit-learn's
LogisticRegression, L2, lbfgs) over the binary Figure-2 features, one model for the 75 CLC codes and one for
the 15 collapsed classes.

Training needs scikit-learn; a trained model is *data*: the feature vocabulary (JSON) and the coefficient and
intercept matrices (NPZ, float32) in a treegram model bundle.  Prediction is a sum of coefficient columns in
numpy, so loading and using a model needs neither scikit-learn nor pickle.  score(c | x, y) = b_c + sum_{f in
F(x, y)} w_{c,f}; the predicted code is the argmax (the log-linear model's MAP class).
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import numpy as np

from treegram.errors import InputError
from treegram.formalism import save_model
from treegram.plugins.corrections.labels import collapse

FORMALISM = "corrections"


def _sklearn():
    try:
        from sklearn.feature_extraction import DictVectorizer
        from sklearn.linear_model import LogisticRegression
    except ImportError:
        raise InputError("training a corrections model needs scikit-learn",
                         hint="pip install scikit-learn==1.9.1") from None
    return DictVectorizer, LogisticRegression


class _Head:
    """One linear classifier: classes, coefficient matrix (classes x features), intercepts."""

    def __init__(self, classes: list[str], coef: np.ndarray, intercept: np.ndarray):
        self.classes = list(classes)
        self.coef = np.ascontiguousarray(coef, dtype=np.float32)
        self.intercept = np.asarray(intercept, dtype=np.float32)

    def scores(self, rows: list[list[int]]) -> np.ndarray:
        out = np.tile(self.intercept, (len(rows), 1))
        for r, idx in enumerate(rows):
            if idx:
                out[r] += self.coef[:, idx].sum(axis=1)
        return out

    def predict(self, rows: list[list[int]]) -> list[str]:
        if not rows:
            return []
        best = self.scores(rows).argmax(axis=1)
        return [self.classes[k] for k in best]


def fit_head(X, labels: list[str], *, C: float, max_iter: int, seed: int) -> _Head:
    _, LogisticRegression = _sklearn()
    classes = sorted(set(labels))
    if len(classes) == 1:
        return _Head(classes, np.zeros((1, X.shape[1])), np.zeros(1))
    import warnings

    from sklearn.exceptions import ConvergenceWarning

    clf = LogisticRegression(C=C, max_iter=max_iter, random_state=seed, tol=1e-4)
    from threadpoolctl import threadpool_limits

    # One thread: sklearn's OpenMP loss threads spin-wait on a busy machine (6x slower on a loaded 2-core box).
    with warnings.catch_warnings(), threadpool_limits(1):
        # max_iter bounds the run time (FCE dev: 90.3% / 86.5% at 100 iterations, 90.6% / 86.4% at 300)
        warnings.simplefilter("ignore", ConvergenceWarning)
        clf.fit(X, labels)
    coef, icpt = clf.coef_, clf.intercept_
    if len(clf.classes_) == 2:  # binary: sklearn keeps one row; expand to the two-class softmax form
        coef = np.vstack([-coef[0] / 2, coef[0] / 2])
        icpt = np.array([-icpt[0] / 2, icpt[0] / 2])
    return _Head([str(c) for c in clf.classes_], coef, icpt)


class CorrectionsModel:
    formalism = FORMALISM

    def __init__(self, vocab: list[str], head75: _Head, head15: _Head, *, lexical: bool = True,
                 info: dict[str, Any] | None = None):
        self.vocab = list(vocab)
        self.index = {f: k for k, f in enumerate(self.vocab)}
        self.head75 = head75
        self.head15 = head15
        self.lexical = lexical
        self.info = dict(info or {})

    # -- training ---------------------------------------------------------------------------------
    @classmethod
    def train(cls, feats: list[dict[str, float]], codes: list[str], *, C: float = 1.0, max_iter: int = 100,
              seed: int = 0, lexical: bool = True, min_count: int = 1, progress=None) -> "CorrectionsModel":
        """Fit the 75-code and the 15-class model; `progress(info)` (e.g. a `UI.task` advance) after each."""
        if not feats:
            raise InputError("no training instances", hint="the FCE files hold no usable corrections")
        DictVectorizer, _ = _sklearn()
        if min_count > 1:
            from collections import Counter

            cnt = Counter(k for f in feats for k in f)
            feats = [{k: v for k, v in f.items() if cnt[k] >= min_count} for f in feats]
        vec = DictVectorizer(sparse=True)
        X = vec.fit_transform(feats)
        start = time.perf_counter()
        h75 = fit_head(X, codes, C=C, max_iter=max_iter, seed=seed)
        if progress is not None:
            progress(f"75 codes: {time.perf_counter() - start:.0f}s")
        h15 = fit_head(X, [collapse(c) for c in codes], C=C, max_iter=max_iter, seed=seed)
        if progress is not None:
            progress(f"15 classes: {time.perf_counter() - start:.0f}s")
        info = {"instances": len(codes), "features": int(X.shape[1]), "C": C, "max_iter": max_iter,
                "fit_seconds": round(time.perf_counter() - start, 2)}
        return cls(list(vec.get_feature_names_out()), h75, h15, lexical=lexical, info=info)

    # -- prediction -------------------------------------------------------------------------------
    def rows(self, feats: list[dict[str, float]]) -> list[list[int]]:
        idx = self.index
        return [[idx[k] for k in f if k in idx] for f in feats]

    def predict(self, feats: list[dict[str, float]]) -> tuple[list[str], list[str]]:
        """(75-codes, 15-class labels) for feature dicts."""
        rows = self.rows(feats)
        return self.head75.predict(rows), self.head15.predict(rows)

    # -- the Model protocol -----------------------------------------------------------------------
    def describe(self, *, top: int = 20) -> dict[str, Any]:
        out = {"formalism": FORMALISM, "features": len(self.vocab), "codes": len(self.head75.classes),
               "classes15": len(self.head15.classes), "lexical": self.lexical, **self.info}
        if top:
            w = np.abs(self.head15.coef).max(axis=0)
            out["top_features"] = [self.vocab[k] for k in np.argsort(-w)[:top]]
        return out

    def save(self, path: str | Path) -> None:
        meta = {"vocab": self.vocab, "classes75": self.head75.classes, "classes15": self.head15.classes,
                "lexical": self.lexical, "info": self.info}
        arrays = {"coef75": self.head75.coef, "intercept75": self.head75.intercept,
                  "coef15": self.head15.coef, "intercept15": self.head15.intercept}
        save_model(path, self, meta, arrays)

    @classmethod
    def from_bundle(cls, meta: dict[str, Any], arrays: dict[str, np.ndarray]) -> "CorrectionsModel":
        vocab = meta["vocab"]
        h75 = _Head(meta["classes75"], arrays["coef75"], arrays["intercept75"])
        h15 = _Head(meta["classes15"], arrays["coef15"], arrays["intercept15"])
        for h in (h75, h15):
            if h.coef.shape != (len(h.classes), len(vocab)) or h.intercept.shape != (len(h.classes),):
                raise ValueError("coefficient shapes do not match the vocabulary and classes")
        return cls(vocab, h75, h15, lexical=meta.get("lexical", True), info=meta.get("info") or {})


def _distinct_labels(meta: dict[str, Any]) -> str | None:
    for key in ("vocab", "classes75", "classes15"):
        if len(set(meta[key])) != len(meta[key]):
            return f"{key} lists a name twice"
    return None


def corrections_schema():
    """What a corrections model file holds (checked by the core before loading and before writing): the feature
    names, the two heads' class labels (distinct, non-empty), finite coefficients and intercepts shaped by them,
    a real boolean `lexical`."""
    from treegram.schema import COMMON_OPTIONAL, AllOf, Arr, Bool, Bundle, Dict, List, Str, Where

    meta = AllOf((Dict({"vocab": List(Str(), length="features"),
                        "classes75": List(Str(nonempty=True), min_len=1, length="codes"),
                        "classes15": List(Str(nonempty=True), min_len=1, length="classes"),
                        "lexical": Bool()}, optional=COMMON_OPTIONAL), Where(_distinct_labels)))
    arrays = Dict({"coef75": Arr("f", shape=("codes", "features"), finite=True),
                   "intercept75": Arr("f", shape=("codes",), finite=True),
                   "coef15": Arr("f", shape=("classes", "features"), finite=True),
                   "intercept15": Arr("f", shape=("classes",), finite=True)})
    return Bundle(meta=meta, arrays=arrays)
