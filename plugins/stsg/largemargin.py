"""Large-margin STSG compression (Cohn & Lapata 2007, section 3.3): structured SVM over synchronous derivations.

Model.  score(x, y; w) = <w, Psi(x, y)>, Psi the sum of the rule features (`features.rule_features`) over the rules
of derivation y; prediction (eq. 2) is the Viterbi derivation of the source tree's chart (Figure 1) with every rule
scored by w (`SVMGrammar`: a `grammar.FiniteSTSG` whose rule scores are w . psi(rule); copy/delete rules of unseen
productions are scored the same way, flagged unseen).

Training (eq. 4, n-slack, cutting planes of Tsochantaridis et al. 2005, Algorithm 1 with one QP per pass):

    min 1/2 |w|^2 + C/n sum_i xi_i   s.t.  for all i, y != y_i:  <w, dPsi_i(y)> >= 1 - xi_i / Delta(y_i, y)   (slack)
                                                                  <w, dPsi_i(y)> >= Delta(y_i, y) - xi_i       (margin)

Each pass asks, for every example, for the most violated constraint

    slack:   argmax_y  H(y) = Delta(y_i, y) (1 - <w, dPsi_i(y)>)          (eq. 5)
    margin:  argmax_y  H(y) = Delta(y_i, y) - <w, dPsi_i(y)>

and adds it to the working set when H exceeds the example's current slack by more than epsilon; the dual of the
working-set QP is then re-solved from the previous solution (`qp.solve_dual`).  The pass ends the run when it adds no
constraint.  Reported per pass: working-set size, the primal objective at the pass's w (exact: every example's
H max is computed at that w), the dual objective after the QP (non-decreasing: the working set only grows and the
solver ascends from the previous, still feasible, solution), and the training loss of the pass's predictions.

Loss-augmented decoding.  Delta depends on the output only through the numbers of true and false positive words
(tp, fp): position-independent unigram precision Prec = tp / c and the brevity penalties of eq. 6 with c = tp + fp
and r = the gold length,

    prec:    Delta = 1 - Prec             bp1:  Delta = 1 - Prec BP1,  BP1 = exp(1 - max(1, r/c))
    bp2:     Delta = 1 - Prec BP2,        BP2 = exp(1 - max(c/r, r/c))
    hamming: Delta = (fp + r - tp) / n    (kept/deleted disagreements per source word)

so the chart is stratified by (tp, fp) (Joachims 2005; `TreeChart.stratified_viterbi` with the per-application
increments `SentenceChart.word_increments`): it keeps the best model score F(s) of every final state s, and
max_y H(y) = max_s Delta(s) (1 + F(s) - score(y_i)) (slack) or max_s Delta(s) + F(s) - score(y_i) (margin) is exact.

Gold derivation.  The unique derivation of the gold compression with the smallest rules: the same stratified chart
restricted to fp = 0 and read at tp = r, with +1 per rule (the most rules = the smallest ones; ties go to the
induced rules, which are listed before the copy rules).

Length calibration (issue 24).  The learner fits the rate of its training pairs through their own rules, but a new
sentence lacks many of the deletions it would need (the induced grammar can derive the gold compression of about
half of the dev sentences) while copying is always possible, so the raw model keeps 10-15 points more words than
the annotators on new text.  `calibrate_length_bias` trains the same model without every 5th pair and bisects a
score per kept word until those pairs keep their gold share of words; the trained model carries it as its deletion
policy's default reward (`treegram.compression.policy`; `treegram train stsg --method svm`, unless
--no-calibrate).  Measurements: benchmarks/RESULTS.md `stsg-svm`.
"""

from __future__ import annotations

import math
import time
from pathlib import Path
from typing import Any

import numpy as np

from treegram.compression.policy import DeletionPolicy
from treegram.errors import InputError, ModelFileError
from treegram.io import load_bundle, save_bundle

from treegram.plugins.stsg import SVM_C, SVM_LOSS
from treegram.plugins.stsg.compressor import STSGModel, embed_parser, embedded_parser
from treegram.plugins.stsg.features import FeatureIndex, rule_features
from treegram.plugins.stsg.grammar import FiniteSTSG, Rule
from treegram.plugins.stsg.induce import InducedGrammar, induce_grammar
from treegram.plugins.stsg.model import Fragment
from treegram.plugins.stsg.qp import primal_objective, solve_dual

__all__ = ["LOSSES", "RESCALINGS", "loss_table", "SVMGrammar", "Example", "prepare_examples", "most_violated",
           "CuttingPlane", "Prepared", "prepare_training", "train_svm", "calibrate_length_bias", "check_weights",
           "SVMSTSGModel"]

LOSSES = ("prec", "bp1", "bp2", "hamming")
RESCALINGS = ("slack", "margin")
CHECKPOINT_FORMAT = "treegram-stsg-svm-checkpoint"


def check_loss(loss: str) -> str:
    if loss not in LOSSES:
        raise InputError(f"unknown loss {loss!r}", hint=f"use one of: {', '.join(LOSSES)}")
    return loss


def loss_table(loss: str, r: int, n: int) -> np.ndarray:
    """Delta for every state (tp, fp) with 0 <= tp <= r, 0 <= fp <= n - r: shape (r + 1, n - r + 1)."""
    check_loss(loss)
    tp = np.arange(r + 1, dtype=np.float64)[:, None]
    fp = np.arange(n - r + 1, dtype=np.float64)[None, :]
    c = tp + fp
    if loss == "hamming":
        return np.broadcast_to((fp + r - tp) / max(n, 1), c.shape).copy()
    with np.errstate(divide="ignore", invalid="ignore"):
        prec = np.where(c > 0, tp / np.where(c > 0, c, 1), 1.0 if r == 0 else 0.0)
        if loss == "prec":
            bp = np.ones_like(c)
        elif r == 0:
            bp = np.where(c == 0, 1.0, 1.0 if loss == "bp1" else 0.0)
        else:
            ratio_rc = np.where(c > 0, r / np.where(c > 0, c, 1), np.inf)
            if loss == "bp1":
                bp = np.exp(1.0 - np.maximum(1.0, ratio_rc))
            else:
                bp = np.exp(1.0 - np.maximum(c / r, ratio_rc))
    return np.clip(1.0 - prec * bp, 0.0, 1.0)


# ================================================================================================================
# The weighted grammar
# ================================================================================================================
class SVMGrammar(FiniteSTSG):
    """The induced rules scored by w . psi(rule) (`weights` None: all scores 0, for training, where the scores enter
    the charts as extra scores).  Copy/delete rules the induction lacks are scored from their features too.

    `version` 2 (the default): the version-2 features (`features` module: frequencies of unseen rules below those of
    seen ones, the generative lp(e|c)); version 1: the issue-13 features, kept so that its model files decode as
    before."""

    VERSION = 2

    def __init__(self, induced: InducedGrammar, index: FeatureIndex, weights: np.ndarray | None = None,
                 rule_scores: np.ndarray | None = None, *, version: int = VERSION):
        """`rule_scores`: w . psi of the induced rules as saved with the model (skips recomputing their features;
        the copy/delete rules of unseen productions are always scored from their features)."""
        if version not in (1, 2):
            raise ModelFileError(f"unknown SVM grammar version {version}", hint="upgrade treegram")
        self.version = version
        self.induced = induced
        self.index = index
        self.weights = None if weights is None else np.asarray(weights, dtype=np.float64)
        self._rows: dict[str, int] = {}
        self._row_cols: list[np.ndarray] = []
        self._row_vals: list[np.ndarray] = []
        if rule_scores is not None:
            rules = [Rule(r.fragment, float(sc), r.count) for r, sc in zip(induced.rules, rule_scores.tolist())]
        else:
            rules = [Rule(r.fragment, self.score(r.fragment), r.count) for r in induced.rules]
        super().__init__(rules, {}, 0.0)

    def features(self, frag: Fragment, text: str | None = None) -> dict[str, float]:
        g = self.induced
        if self.version == 1:
            return rule_features(frag, g.log_relative_frequencies(frag))
        text = text if text is not None else str(frag)
        return rule_features(frag, g.smoothed_log_frequencies(frag, text), unseen=not g.is_seen(text),
                             lp_root=g.log_prob_given_roots(frag, text))

    def row(self, frag: Fragment, text: str | None = None) -> int:
        """Row id of a rule in the feature matrix (features computed once per rule)."""
        text = text if text is not None else str(frag)
        i = self._rows.get(text)
        if i is None:
            cols, vals = self.index.vector(self.features(frag, text))
            i = self._rows[text] = len(self._row_cols)
            self._row_cols.append(cols)
            self._row_vals.append(vals)
        return i

    def rule_row(self, rule: Rule) -> int:
        i = self._rows.get(rule.text)
        return i if i is not None else self.row(Fragment(rule.source, rule.target), rule.text)

    def score(self, frag: Fragment) -> float:
        if self.weights is None:
            return 0.0
        i = self.row(frag)
        cols, vals = self._row_cols[i], self._row_vals[i]
        ok = cols < len(self.weights)
        return float(vals[ok] @ self.weights[cols[ok]])

    def _unseen_rule(self, f: Fragment) -> Rule:
        return Rule(f, self.score(f))

    def feature_matrix(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """CSR (indptr, indices, data) of every rule row created so far."""
        lens = [len(c) for c in self._row_cols]
        indptr = np.zeros(len(lens) + 1, dtype=np.int64)
        np.cumsum(lens, out=indptr[1:])
        cat = (lambda xs, dt: np.concatenate(xs).astype(dt) if xs else np.zeros(0, dt))  # noqa: E731
        return indptr, cat(self._row_cols, np.int64), cat(self._row_vals, np.float64)


# ================================================================================================================
# Training examples, gold derivations, loss-augmented decoding
# ================================================================================================================
class Example:
    """One training pair on its chart: rule row per application, (tp, fp) increments, the gold derivation."""

    __slots__ = ("chart", "app_row", "inc", "r", "n", "root", "gold_rows", "gold_apps")

    def __init__(self, chart, app_row, inc, r, n, root, gold_apps):
        self.chart, self.app_row, self.inc, self.r, self.n, self.root = chart, app_row, inc, r, n, root
        self.gold_apps = gold_apps
        self.gold_rows = app_row[np.asarray(gold_apps, dtype=np.int64)]


def gold_derivation(sc, inc: np.ndarray, r: int, root: int) -> list[int] | None:
    """The derivation of the gold compression with the most (so the smallest) rules, or None if the grammar has
    none: the (tp, fp) chart restricted to fp = 0, read at tp = r, +1 per application."""
    sv = sc.chart.stratified_viterbi(inc, (r, 0), np.ones(len(sc.apps)))
    if not np.isfinite(sv.root_scores(0, root)[r, 0]):
        return None
    return sv.derivation(0, root, (r, 0))


def prepare_examples(grammar: SVMGrammar, sources, keeps, progress=None) -> tuple[list[Example], list[int]]:
    """Charts and gold derivations of the training pairs; returns (examples, indices of pairs without a gold
    derivation, which are left out)."""
    examples, skipped = [], []
    items = list(zip(sources, keeps))
    for k, (src, keep) in enumerate(progress(items) if progress else items):
        keep = np.asarray(keep, dtype=bool)
        sc = grammar.chart(src)
        root = grammar._cat_ids.get(src.label)
        app_row = np.fromiter((grammar.rule_row(rule) for rule, _b, _w in sc.apps), dtype=np.int64,
                              count=len(sc.apps))
        inc = sc.word_increments(keep)
        r, n = int(keep.sum()), len(keep)
        gold = gold_derivation(sc, inc, r, root) if root is not None else None
        if gold is None:
            skipped.append(k)
            continue
        examples.append(Example(sc.chart, app_row, inc, r, n, root, gold))
    return examples, skipped


def rule_scores_of(R: tuple, w: np.ndarray) -> np.ndarray:
    """w . psi(rule) for every row of the CSR feature matrix R."""
    indptr, indices, data = R
    n = len(indptr) - 1
    return np.bincount(np.repeat(np.arange(n), np.diff(indptr)), weights=data * w[indices], minlength=n)


def most_violated(ex: Example, rule_scores: np.ndarray, loss: str, rescaling: str = "slack") -> dict:
    """The loss-augmented argmax for one example: {"H", "loss", "apps", "pred_loss", "state"}."""
    extra = rule_scores[ex.app_row]
    sv = ex.chart.stratified_viterbi(ex.inc, (ex.r, ex.n - ex.r), extra)
    F = sv.root_scores(0, ex.root)
    f_gold = float(extra[ex.gold_apps].sum())
    L = loss_table(loss, ex.r, ex.n)
    finite = np.isfinite(F)
    Fm = np.where(finite, F, 0.0)
    H = L * (1.0 + Fm - f_gold) if rescaling == "slack" else L + Fm - f_gold
    H = np.where(finite, H, -np.inf)
    s = np.unravel_index(int(np.argmax(H)), H.shape)
    p = np.unravel_index(int(np.argmax(np.where(finite, F, -np.inf))), F.shape)
    return {"H": float(H[s]), "loss": float(L[s]), "state": (int(s[0]), int(s[1])),
            "apps": sv.derivation(0, ex.root, s), "pred_loss": float(L[p])}


# ================================================================================================================
# Cutting planes
# ================================================================================================================
class CuttingPlane:
    """The n-slack cutting-plane loop over prepared examples, with checkpoint/resume after every pass."""

    def __init__(self, examples: list[Example], R: tuple, n_features: int, *, C: float = SVM_C, loss: str = SVM_LOSS,
                 rescaling: str = "slack", epsilon: float = 0.01, qp_tol: float = 1e-6,
                 checkpoint: Path | None = None, fingerprint: str = ""):
        check_loss(loss)
        if rescaling not in RESCALINGS:
            raise InputError(f"unknown rescaling {rescaling!r}", hint="use slack or margin")
        if not (C > 0 and math.isfinite(C)):
            raise InputError(f"--C must be a positive number, got {C}")
        if not examples:
            raise InputError("no training pair has a derivation of its gold compression",
                             hint="check the pairs and the parser")
        self.examples, self.R, self.dim = examples, R, int(n_features)
        self.C, self.loss, self.rescaling, self.epsilon, self.qp_tol = float(C), loss, rescaling, epsilon, qp_tol
        self.cap = self.C / len(examples)
        self.checkpoint = Path(checkpoint) if checkpoint else None
        self.fingerprint = fingerprint
        # working set (CSR rows) and the dual solution
        self.ws_cols: list[np.ndarray] = []
        self.ws_vals: list[np.ndarray] = []
        self.b: list[float] = []
        self.block: list[int] = []
        self.alpha = np.zeros(0)
        self.w = np.zeros(self.dim)
        self.trace: list[dict] = []
        self.converged = False

    # -- the working set ------------------------------------------------------------------------------------------
    def _csr(self):
        lens = [len(c) for c in self.ws_cols]
        indptr = np.zeros(len(lens) + 1, dtype=np.int64)
        np.cumsum(lens, out=indptr[1:])
        cols = np.concatenate(self.ws_cols).astype(np.int64) if lens else np.zeros(0, np.int64)
        vals = np.concatenate(self.ws_vals) if lens else np.zeros(0)
        return indptr, cols, vals

    def _slacks(self) -> np.ndarray:
        """xi_i = max(0, max over example i's constraints of b_k - <w, a_k>)."""
        xi = np.zeros(len(self.examples))
        for k, (c, v) in enumerate(zip(self.ws_cols, self.ws_vals)):
            m = self.b[k] - float(v @ self.w[c])
            if m > xi[self.block[k]]:
                xi[self.block[k]] = m
        return xi

    def constraint(self, ex: Example, got: dict) -> tuple[np.ndarray, np.ndarray, float]:
        """(columns, values, offset) of the constraint of a loss-augmented derivation."""
        rows = np.concatenate([ex.gold_rows, ex.app_row[np.asarray(got["apps"], dtype=np.int64)]])
        signs = np.r_[np.ones(len(ex.gold_rows)), -np.ones(len(got["apps"]))]
        indptr, indices, data = self.R
        starts, ends = indptr[rows], indptr[rows + 1]
        lens = ends - starts
        idx = np.repeat(starts - np.r_[0, np.cumsum(lens)[:-1]], lens) + np.arange(int(lens.sum()))
        u, inv = np.unique(indices[idx], return_inverse=True)
        vals = np.bincount(inv, weights=data[idx] * np.repeat(signs, lens), minlength=len(u))
        nz = np.abs(vals) > 1e-12
        cols, vals = u[nz], vals[nz]
        d = got["loss"]
        if self.rescaling == "slack":
            vals = vals * d
        return cols, vals, d

    # -- one pass -------------------------------------------------------------------------------------------------
    def iterate(self, advance=None) -> dict:
        t0 = time.perf_counter()
        indptr, indices, data = self.R
        rule_scores = rule_scores_of(self.R, self.w)
        xi = self._slacks()
        added = 0
        h_sum = 0.0
        pred_loss = 0.0
        for i, ex in enumerate(self.examples):
            got = most_violated(ex, rule_scores, self.loss, self.rescaling)
            h_sum += max(0.0, got["H"])
            pred_loss += got["pred_loss"]
            if got["loss"] > 0 and got["H"] > xi[i] + self.epsilon:
                cols, vals, b = self.constraint(ex, got)
                self.ws_cols.append(cols)
                self.ws_vals.append(vals)
                self.b.append(b)
                self.block.append(i)
                added += 1
            if advance:
                advance(1)
        primal = 0.5 * float(self.w @ self.w) + self.cap * h_sum
        oracle_s = time.perf_counter() - t0
        alpha0 = np.r_[self.alpha, np.zeros(len(self.b) - len(self.alpha))]
        if added:
            indptr_w, cols_w, vals_w = self._csr()
            self.alpha, self.w, info = solve_dual(indptr_w, cols_w, vals_w, np.asarray(self.b),
                                                  np.asarray(self.block), len(self.examples), self.cap, self.dim,
                                                  alpha0, tol=self.qp_tol)
        else:
            self.converged = True
            info = {"epochs": 0, "kkt_gap": 0.0, "dual": float(self.alpha @ np.asarray(self.b) - 0.5 * self.w @ self.w)
                    if len(self.b) else 0.0}
        rec = {"iteration": len(self.trace) + 1, "added": added, "working_set": len(self.b),
               "primal": primal, "dual": info["dual"], "train_loss": pred_loss / len(self.examples),
               "qp_epochs": info["epochs"], "kkt_gap": info["kkt_gap"], "oracle_seconds": oracle_s,
               "seconds": time.perf_counter() - t0}
        self.trace.append(rec)
        return rec

    def working_set_primal(self) -> float:
        indptr, cols, vals = self._csr()
        return primal_objective(indptr, cols, vals, np.asarray(self.b), np.asarray(self.block), len(self.examples),
                                self.cap, self.w)

    def run(self, iterations: int, advance=None, callback=None) -> list[dict]:
        while len(self.trace) < iterations and not self.converged:
            rec = self.iterate(advance)
            if self.checkpoint is not None:
                self.save_checkpoint(self.checkpoint)
            if callback:
                callback(rec)
        return self.trace

    # -- checkpoints ----------------------------------------------------------------------------------------------
    def _settings(self) -> dict:
        return {"C": self.C, "loss": self.loss, "rescaling": self.rescaling, "epsilon": self.epsilon,
                "examples": len(self.examples), "features": self.dim, "fingerprint": self.fingerprint}

    def save_checkpoint(self, path: Path) -> None:
        indptr, cols, vals = self._csr()
        meta = {"format": CHECKPOINT_FORMAT, "version": 1, "settings": self._settings(), "trace": self.trace,
                "converged": self.converged}
        save_bundle(path, meta, {"indptr": indptr, "cols": cols, "vals": vals, "b": np.asarray(self.b, np.float64),
                                 "block": np.asarray(self.block, np.int64), "alpha": self.alpha, "w": self.w})

    def _check_checkpoint(self, path: Path, meta: dict, arrays: dict) -> None:
        """The checkpoint's schema (`treegram.schema`): finite weights and duals (alpha >= 0), the working set's
        constraints as a CSR matrix over this run's features, a real boolean `converged`."""
        from treegram.schema import AllOf, Arr, Bool, Bundle, Dict, List, Where, check_file

        def csr(a):
            ptr, n = a["indptr"], len(a["cols"])
            if len(ptr) != len(a["b"]) + 1 or (len(ptr) and (ptr[0] != 0 or ptr[-1] != n or np.any(np.diff(ptr) < 0))):
                return "indptr is not a CSR pointer over the working set"
            return None

        arrays_spec = AllOf((Dict({"indptr": Arr("iu", ndim=1, min=0), "cols": Arr("iu", shape=("nnz",), min=0,
                                                                                   max=max(self.dim - 1, 0)),
                                   "vals": Arr("f", shape=("nnz",), finite=True),
                                   "b": Arr("f", shape=("ws",), finite=True), "block": Arr("iu", shape=("ws",), min=0),
                                   "alpha": Arr("f", shape=("ws",), min=0, finite=True),
                                   "w": Arr("f", shape=(self.dim,), finite=True)}), Where(csr)))
        spec = Bundle(meta=Dict({"converged": Bool()}, optional={"trace": List(Dict())}), arrays=arrays_spec)
        check_file(path, {"meta": meta, "arrays": arrays}, spec, "model", what="checkpoint")

    def load_checkpoint(self, path: Path) -> None:
        meta, arrays = load_bundle(path)
        if meta.get("format") != CHECKPOINT_FORMAT:
            raise ModelFileError(f"{path}: not an STSG SVM checkpoint", hint="pass the file --checkpoint wrote")
        if meta.get("settings") != self._settings():
            raise InputError(f"{path}: checkpoint of a different run ({meta.get('settings')})",
                             hint="resume with the same pairs, parser and --loss/--C/--rescaling, or drop --resume")
        self._check_checkpoint(path, meta, arrays)
        try:
            indptr, cols, vals = arrays["indptr"], arrays["cols"], arrays["vals"]
            self.ws_cols = [cols[indptr[k]:indptr[k + 1]].astype(np.int64) for k in range(len(indptr) - 1)]
            self.ws_vals = [vals[indptr[k]:indptr[k + 1]].astype(np.float64) for k in range(len(indptr) - 1)]
            self.b = arrays["b"].astype(float).tolist()
            self.block = arrays["block"].astype(int).tolist()
            self.alpha = arrays["alpha"].astype(np.float64)
            self.w = arrays["w"].astype(np.float64)
        except KeyError as exc:
            raise ModelFileError(f"{path}: corrupt checkpoint (missing {exc})",
                                 hint="delete it and train again without --resume") from None
        if self.w.shape != (self.dim,) or len(self.alpha) != len(self.b) or len(self.block) != len(self.b):
            raise ModelFileError(f"{path}: corrupt checkpoint (array sizes disagree)",
                                 hint="delete it and train again without --resume")
        self.trace = list(meta.get("trace") or [])
        self.converged = bool(meta.get("converged"))


# ================================================================================================================
# End to end
# ================================================================================================================
class Prepared:
    """What training needs before the first pass, shared by runs with different losses / C: the induced grammar,
    the feature index, the examples (charts + gold derivations) and the rule feature matrix."""

    def __init__(self, induced, index, examples, skipped, R, seconds, *, version: int = 2):
        self.induced, self.index, self.examples, self.skipped, self.R = induced, index, examples, skipped, R
        self.seconds, self.version = seconds, version


def prepare_training(corpus, *, min_count: int = 2, max_vars: int = 3, version: int = SVMGrammar.VERSION,
                     progress=None) -> Prepared:
    """Induce the grammar of a `PairCorpus` (section 3.2), build every pair's chart and gold derivation."""
    t0 = time.perf_counter()
    induced = induce_grammar(corpus, min_count=min_count, max_vars=max_vars)
    index = FeatureIndex()
    grammar = SVMGrammar(induced, index, version=version)
    examples, skipped = prepare_examples(grammar, corpus.sources, corpus.keeps, progress=progress)
    index.growing = False
    return Prepared(induced, index, examples, skipped, grammar.feature_matrix(), time.perf_counter() - t0,
                    version=version)


def train_svm(corpus=None, *, loss: str = SVM_LOSS, C: float = SVM_C, rescaling: str = "slack", iterations: int = 50,
              epsilon: float = 0.01, min_count: int = 2, max_vars: int = 3,
              version: int = SVMGrammar.VERSION, checkpoint=None, resume: bool = False,
              ui=None, callback=None, prepared: Prepared | None = None) -> tuple[SVMGrammar, dict]:
    """Induce the grammar of a `PairCorpus` (or take a `prepare_training` result), train the weights, and return
    (decoding grammar, info)."""
    check_loss(loss)
    t0 = time.perf_counter()
    if prepared is None:
        track = (lambda xs: ui.track(xs, description="charts and gold derivations")) if ui else None
        prepared = prepare_training(corpus, min_count=min_count, max_vars=max_vars, version=version,
                                    progress=track)
    induced, index, examples, skipped, R = (prepared.induced, prepared.index, prepared.examples, prepared.skipped,
                                            prepared.R)
    import hashlib

    fp = hashlib.sha256(("\n".join(index.names[:2000]) + f"|{len(index)}|{len(examples)}|"
                         + "|".join(str(e.r) + "," + str(e.n) for e in examples)).encode()).hexdigest()[:16]
    cp = CuttingPlane(examples, R, len(index), C=C, loss=loss, rescaling=rescaling, epsilon=epsilon,
                      checkpoint=checkpoint, fingerprint=fp)
    if resume and checkpoint and Path(checkpoint).exists():
        cp.load_checkpoint(Path(checkpoint))
        if ui:
            ui.note(f"resumed from {checkpoint} after {len(cp.trace)} cutting-plane iterations")
    if ui:
        done = len(cp.trace)
        with ui.task("cutting-plane passes (examples)", total=iterations * len(examples)) as advance:
            advance(done * len(examples))

            def cb(rec):
                advance(0, f"it {rec['iteration']} ws={rec['working_set']} primal={rec['primal']:.4g} "
                           f"dual={rec['dual']:.4g} loss={rec['train_loss']:.3f}")
                if callback:
                    callback(rec)

            cp.run(iterations, advance, cb)
        ui.table("cutting-plane passes", ["pass", "added", "working set", "primal", "dual", "train loss", "seconds"],
                 [(r["iteration"], r["added"], r["working_set"], f"{r['primal']:.5g}", f"{r['dual']:.5g}",
                   f"{r['train_loss']:.4f}", f"{r['seconds']:.1f}") for r in cp.trace[-20:]])
        ui.note("converged: no constraint violated by more than epsilon" if cp.converged else
                f"stopped after {len(cp.trace)} passes (not converged; continue with --checkpoint F --resume "
                f"--iterations N)")
    else:
        cp.run(iterations, None, callback)
    w = cp.w
    # scale the weights so that rule scores have unit spread (argmax unchanged; makes --reward / --rate usable)
    spread = float(np.std(rule_scores_of(R, w)))
    scale = 1.0 / spread if spread > 0 else 1.0
    final_index = FeatureIndex(index.names)
    final_index.growing = False
    final = SVMGrammar(induced, final_index, w * scale, version=prepared.version)
    info = {"loss": loss, "C": C, "rescaling": rescaling, "epsilon": epsilon,
            "grammar_version": prepared.version, "iterations_run": len(cp.trace),
            "converged": cp.converged, "working_set": len(cp.b), "features": len(index),
            "induced_rules": len(induced), "minimal_rules": induced.n_minimal,
            "training_examples": len(examples), "no_gold_derivation": len(skipped),
            "weight_scale": scale, "preparation_seconds": round(prepared.seconds, 2),
            "cutting_plane_seconds": round(time.perf_counter() - t0, 2),
            "trace": [{k: (round(v, 6) if isinstance(v, float) else v) for k, v in r.items()} for r in cp.trace]}
    return final, info


def calibrate_length_bias(corpus, *, holdout: int = 5, steps: int = 20, progress=None, **train_kw) -> dict:
    """The per-kept-word bias that makes the model keep as many words as the gold compressions on pairs it was not
    trained on: a model trained (`train_svm(**train_kw)`) without every `holdout`-th pair decodes those pairs, and the
    bias is bisected until their compression rate is the gold one.

    Why: the learner sees its own training pairs through their own rules, so it fits their rate, but on a new
    sentence the grammar lacks many of the deletions it would need (a gold compression of a dev sentence is
    derivable for about half of them) and copying is always possible: without the bias the model keeps 10-15 points
    more than the gold on new text (benchmarks/RESULTS.md `stsg-svm`).  The bias is in the units of the trained
    model's scaled weights (rule scores of unit spread), so it carries over to the model trained on all pairs, whose
    deletion policy gets it as its default reward.  Returns {"bias", "pairs", "gold_rate", "rate_before",
    "rate_after", "seconds"}."""
    from treegram.plugins.stsg.model import PairCorpus

    t0 = time.perf_counter()
    n = len(corpus.sources)
    held = [i for i in range(n) if i % holdout == holdout - 1]
    fit = [i for i in range(n) if i % holdout != holdout - 1]
    if not held or not fit:
        return {"bias": 0.0, "pairs": 0, "gold_rate": None, "rate_before": None, "rate_after": None, "seconds": 0.0}
    sub = PairCorpus([corpus.sources[i] for i in fit], [corpus.targets[i] for i in fit],
                     [corpus.keeps[i] for i in fit], beta=corpus.beta)
    grammar, _ = train_svm(sub, **train_kw)
    items = [corpus.sources[i] for i in held]
    charts = [grammar.chart(t) for t in (progress(items) if progress else items)]
    words = sum(sc.n_words for sc in charts)
    target = sum(int(np.sum(corpus.keeps[i])) for i in held) / words

    def rate(bias: float) -> float:
        return sum(int(sc.decode(bias)[1].sum()) for sc in charts) / words

    before = rate(0.0)
    lo, hi = -1.0, 1.0  # bracket the bias, then bisect (the rate grows with it, up to ties)
    while rate(lo) > target and lo > -1e3:
        lo *= 4
    while rate(hi) < target and hi < 1e3:
        hi *= 4
    best = (abs(before - target), 0.0, before)
    for _ in range(steps):
        mid = (lo + hi) / 2
        got = rate(mid)
        best = min(best, (abs(got - target), mid, got))
        if got < target:
            lo = mid
        else:
            hi = mid
    return {"bias": best[1], "pairs": len(held), "gold_rate": round(100 * target, 2),
            "rate_before": round(100 * before, 2), "rate_after": round(100 * best[2], 2),
            "seconds": round(time.perf_counter() - t0, 1)}


def check_weights(names: list, weights: np.ndarray, source) -> None:
    if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
        raise ModelFileError(f"{source}: corrupt SVM model (feature names)", hint="re-create it with `treegram train`")
    if weights.ndim != 1 or len(weights) != len(names) or not np.all(np.isfinite(weights)):
        raise ModelFileError(f"{source}: corrupt SVM model ({len(names)} feature names but weights of shape "
                             f"{weights.shape}, or non-finite weights)", hint="re-create it with `treegram train`")



# ================================================================================================================
# The model file
# ================================================================================================================
class SVMSTSGModel(STSGModel):
    """An STSG whose rules are scored by learned feature weights (`treegram train stsg --method svm`).

    Model file (data only): the induced rules with their counts and the feature names (JSON), the weights
    (an array aligned with the names) and the induced rules' scores w . psi (an array aligned with the rules, so
    that loading does not recompute their features; copy/delete rules of unseen productions are scored from
    their features when a sentence needs them)."""

    def save(self, path) -> None:
        from treegram.formalism import save_model

        parser_meta, arrays = embed_parser(self.parser)
        g = self.grammar
        arrays["svm.weights"] = np.asarray(g.weights, dtype=np.float64)
        arrays["svm.rule_scores"] = np.array([r.logp for r in g.rules], dtype=np.float64)
        save_model(path, self, {"kind": "svm", "svm": {"rules": g.induced.to_json(), "features": g.index.to_json(),
                                                       "version": g.version},
                                "info": self.info, "parser": parser_meta, "policy": self.policy.to_json()}, arrays)

    @classmethod
    def from_bundle(cls, meta: dict, arrays: dict):
        from treegram.schema import COMMON_OPTIONAL, Dict, Int, List, Opt, Str, validate

        validate(meta, Dict({"svm": Dict({"rules": List(List(min_len=4, max_len=4)), "features": List(Str())},
                                         optional={"version": Int()})},
                            optional={**COMMON_OPTIONAL, "parser": Opt(Dict({"formalism": Str()})),
                                      "policy": Opt(Dict())}), "meta")
        weights = arrays.get("svm.weights")
        if weights is None:
            raise ModelFileError("corrupt stsg SVM model (no weights array)", hint="re-create it with `treegram train`")
        check_weights(meta["svm"]["features"], weights, "model")
        index = FeatureIndex(meta["svm"]["features"])
        index.growing = False
        try:
            induced = InducedGrammar.from_json(meta["svm"]["rules"])
        except (TypeError, ValueError, IndexError) as exc:
            raise ModelFileError(f"corrupt stsg SVM model (rules: {exc})",
                                 hint="re-create it with `treegram train`") from None
        scores = arrays.get("svm.rule_scores")
        if scores is not None and (scores.shape != (len(induced),) or not np.all(np.isfinite(scores))):
            raise ModelFileError(f"corrupt stsg SVM model ({len(induced)} rules but rule scores of shape "
                                 f"{scores.shape}, or non-finite scores)", hint="re-create it with `treegram train`")
        version = meta["svm"].get("version", 1)  # files written before grammar versions are version 1
        try:
            policy = DeletionPolicy.from_json(meta.get("policy"))
        except (KeyError, TypeError, ValueError) as exc:
            raise ModelFileError(f"corrupt stsg SVM model: bad deletion policy ({exc})",
                                 hint="re-create it with `treegram train`") from None
        return cls(SVMGrammar(induced, index, weights, scores, version=version), embedded_parser(meta, arrays),
                   meta.get("info"), policy)

    # -- treegram grammar -------------------------------------------------------------------------------------
    def top_features(self, k: int) -> list[dict]:
        g = self.grammar
        order = np.argsort(-np.abs(g.weights), kind="stable")[:k]
        return [{"feature": g.index.names[i], "weight": round(float(g.weights[i]), 4)} for i in order]

    def top_rules(self, k: int) -> list[dict]:
        rules = sorted(self.grammar.rules, key=lambda r: -r.logp)[:k]
        return [{"root pair": r.category, "rule": r.text, "count": round(r.count, 2), "score": round(r.logp, 4)}
                for r in rules]

    def describe(self, *, top: int = 20) -> dict[str, Any]:
        g = self.grammar
        out: dict[str, Any] = {"formalism": "stsg", "method": "svm",
                               **{k: v for k, v in self.info.items() if not isinstance(v, (list, dict))},
                               "rules_total": len(g.rules), "features_total": len(g.index),
                               "nonzero_weights": int(np.count_nonzero(g.weights)),
                               "parser": getattr(self.parser, "formalism", None)}
        if top:
            out["top_rules"] = self.top_rules(top)
            out["top_features"] = self.top_features(top)
        return out

    def grammar_json(self, args) -> dict:
        return self.describe(top=getattr(args, "top", 20))

    def render_grammar(self, ui, args) -> None:
        k = getattr(args, "top", 20)
        if not k:
            return
        feats = self.top_features(k)
        ui.table(f"top {len(feats)} features by |weight|", ["feature", "weight"],
                 [(f["feature"], f"{f['weight']:+.4f}") for f in feats])
        rules = self.top_rules(k)
        ui.table(f"top {len(rules)} rules by score w . psi(rule)", ["root pair", "rule", "count", "score"],
                 [(r["root pair"], r["rule"], r["count"], f"{r['score']:+.4f}") for r in rules])
