"""Plausibility scorer for generated sheet items (issue 12): which features separate the judged plausible generated
sentences from the implausible ones, in cross-validation, and the ranker + threshold that ships.

    python benchmarks/bench_plausibility.py [--target 0.95] [--repeats 20] [--write-ranker] [--no-write]

Data: the blind judged set of benchmarks/judged/ (330 sentences; its 220 *generated* ones — raw draws and sheet
choices of the old SLOR ranker — are the training/test items: corpus sentences are in the scorers' training data,
so they would only teach "seen before").  Sentences are re-tokenized with the spaCy tokenizer the training parses
used.  Every figure is cross-validated: stratified 5-fold, repeated `--repeats` times with different splits.

* AUC of each single feature (no fitting) and of logistic regressions (standardized features, C=1) on few
  features, out-of-fold.
* Threshold calibration, nested: in each outer fold the threshold is chosen on the training part's own out-of-fold
  scores as the lowest one at which the passing items are >= `--target` plausible (at least 10 passing), then
  applied to the held-out fold.  Reported: the plausible share of the held-out items that pass, and the pass rate
  (pooled over folds and repeats).
* `--write-ranker` refits the chosen feature set on all 220 items, picks the threshold the same way on their
  repeated out-of-fold scores, and writes `plugins/vocabgen/data/plausibility-ranker.json` (JSON, no pickle).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _results import machine_line, markdown_table, write_section  # noqa: E402

ROOT = Path(__file__).resolve().parent
JUDGED = ROOT / "judged" / "sheets-set.judged.tsv"
KEY = ROOT / "judged" / "sheets-set.key.json"
SHIPPED = ("slor", "min_local", "length")
SETS = [("slor",), ("min_local",), ("slor", "min_local"), SHIPPED, SHIPPED + ("pcfg_slor",), ("pcfg_slor",)]
MIN_PASS = 10


def load_judged():
    key = json.loads(KEY.read_text(encoding="utf-8"))
    marks = {}
    for line in JUDGED.read_text(encoding="utf-8").splitlines():
        parts = line.split("\t")
        if len(parts) >= 3 and parts[0].isdigit():
            marks[int(parts[0])] = (parts[1].strip() == "p", parts[2].strip() == "f")
    return [(it, marks[n]) for n, it in enumerate(key, start=1) if n in marks]


def tokenize(texts):
    from treegram.plugins.vocabgen.parsing import load_spacy

    tok = load_spacy().tokenizer
    return [[t.text for t in tok(s) if not t.is_space] for s in texts]


def model():
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    return make_pipeline(StandardScaler(), LogisticRegression(C=1.0))


def oof_scores(X, y, seed):
    from sklearn.model_selection import StratifiedKFold

    out = np.zeros(len(y))
    for tr, te in StratifiedKFold(5, shuffle=True, random_state=seed).split(X, y):
        out[te] = model().fit(X[tr], y[tr]).decision_function(X[te])
    return out


def pick_threshold(scores, y, target):
    """The lowest score at which items scoring at least it are >= target plausible (>= MIN_PASS of them)."""
    order = np.argsort(-scores)
    s, lab = scores[order], y[order]
    prec = np.cumsum(lab) / np.arange(1, len(lab) + 1)
    ok = [k for k in range(MIN_PASS - 1, len(s)) if prec[k] >= target]
    return float(s[max(ok)]) if ok else float(s[0]) + 1.0


def share_threshold(scores, share):
    """The score that the best `share` of the items reach."""
    return float(np.quantile(scores, 1.0 - share))


def nested(X, y, target, repeats, share=None):
    """Pooled held-out (plausible share among passing, pass rate, passing count); the threshold is chosen on the
    training part's out-of-fold scores: for `target` plausible (pick_threshold) or, with `share`, as the score the
    best `share` of the training items reach."""
    from sklearn.model_selection import StratifiedKFold

    passed = good = total = 0
    for rep in range(repeats):
        for tr, te in StratifiedKFold(5, shuffle=True, random_state=1000 + rep).split(X, y):
            inner = oof_scores(X[tr], y[tr], rep)
            thr = share_threshold(inner, share) if share else pick_threshold(inner, y[tr], target)
            s = model().fit(X[tr], y[tr]).decision_function(X[te])
            keep = s >= thr
            passed += int(keep.sum())
            good += int(y[te][keep].sum())
            total += len(te)
    return good / max(passed, 1), passed / total, passed


def main() -> None:
    from sklearn.metrics import roc_auc_score

    from treegram.formalism import load_model
    from treegram.plugins.vocabgen.default import data_dir, default_scorer
    from treegram.plugins.vocabgen.ranking import FEATURES, PlausibilityRanker, features

    ap = argparse.ArgumentParser()
    ap.add_argument("--target", type=float, default=0.95)
    ap.add_argument("--repeats", type=int, default=20)
    ap.add_argument("--share", type=float, default=0.2,
                    help="the shipped threshold passes this share of the judged generated items (default 0.2)")
    ap.add_argument("--write-ranker", action="store_true")
    ap.add_argument("--no-write", action="store_true")
    args = ap.parse_args()
    t0 = time.perf_counter()
    items = load_judged()
    gen = [(it, m) for it, m in items if it["source"] != "corpus"]
    corpus = [(it, m) for it, m in items if it["source"] == "corpus"]
    lm, slor_threshold = default_scorer()
    pcfg = load_model(data_dir() / "default-pcfg.npz")
    toks = tokenize([it["text"] for it, _ in gen])
    F = [features(lm, t, pcfg, FEATURES) for t in toks]
    y = np.asarray([m[0] for _, m in gen])
    fit = np.asarray([m[1] for _, m in gen])
    t_feat = time.perf_counter() - t0
    col = {k: np.asarray([f[k] for f in F]) for k in FEATURES}
    rows = []
    for k in FEATURES:
        rows.append([f"`{k}` alone (no fitting)", f"{roc_auc_score(y, col[k]):.3f}", "-", "-"])
    old = col["slor"] >= slor_threshold
    rows.append([f"old ranker: SLOR >= {slor_threshold:.3f} (what sheets used)", f"{roc_auc_score(y, col['slor']):.3f}",
                 f"{100 * y[old].mean():.1f}% ({100 * old.mean():.1f}%)", "-"])
    best = {}
    for names in SETS:
        X = np.column_stack([col[k] for k in names])
        aucs = [roc_auc_score(y, oof_scores(X, y, r)) for r in range(args.repeats)]
        prec, rate, n = nested(X, y, args.target, args.repeats)
        sprec, srate, sn = nested(X, y, args.target, args.repeats, share=args.share)
        best[names] = (np.mean(aucs), sprec, srate)
        rows.append([f"logistic regression: {' + '.join(f'`{k}`' for k in names)}",
                     f"{np.mean(aucs):.3f} ± {np.std(aucs):.3f}", f"{100 * prec:.1f}% ({100 * rate:.1f}%, {n})",
                     f"{100 * sprec:.1f}% ({100 * srate:.1f}%)"])
        print(rows[-1], flush=True)
    body = [f"Judged set: benchmarks/judged/ — {len(gen)} generated sentences ({int(y.sum())} judged plausible, "
            f"{100 * y.mean():.1f}%; classroom-fit {100 * fit.mean():.1f}%) and {len(corpus)} corpus sentences "
            f"({100 * np.mean([m[0] for _, m in corpus]):.1f}% plausible). Stratified 5-fold CV x {args.repeats} "
            f"repeats; thresholds chosen in nested CV for >= {100 * args.target:.0f}% plausible among passing items "
            f"(at least {MIN_PASS} passing in the inner data), or passing the best {100 * args.share:.0f}% of the "
            "inner data's out-of-fold scores.", "",
            markdown_table(["scorer", "AUC (out-of-fold)",
                            f"plausible among passing at >= {100 * args.target:.0f}% target (pass rate, pooled n)",
                            f"plausible among passing, best {100 * args.share:.0f}% (pass rate)"], rows), ""]
    if args.write_ranker:
        X = np.column_stack([col[k] for k in SHIPPED])
        scores = np.mean([oof_scores(X, y, r) for r in range(args.repeats)], axis=0)
        thr = share_threshold(scores, args.share)
        final = model().fit(X, y)
        auc, prec, rate = best[SHIPPED]
        spec = PlausibilityRanker.spec_from_sklearn(
            SHIPPED, final, thr,
            trained_on=f"benchmarks/judged/sheets-set ({len(gen)} generated sentences, one annotator)",
            calibration={"passes_best_share_of_judged_generated": args.share, "cv_auc": round(auc, 3),
                         "nested_cv_plausible_among_passing": round(prec, 3), "nested_cv_pass_rate": round(rate, 3)},
            command="python benchmarks/bench_plausibility.py --write-ranker")
        path = data_dir() / "plausibility-ranker.json"
        path.write_text(json.dumps(spec, indent=1) + "\n", encoding="utf-8")
        ranker = PlausibilityRanker(lm, spec)
        passing = np.asarray([ranker.score(t) >= ranker.threshold for t in toks])
        body.append(f"Shipped (`data/plausibility-ranker.json`): logistic regression on "
                    f"{' + '.join(f'`{k}`' for k in SHIPPED)} fitted on all {len(gen)}, threshold {thr:.3f} "
                    f"(log-odds: the score the best {100 * args.share:.0f}% of the items' repeated out-of-fold "
                    f"scores reach). On its own training items it passes "
                    f"{int(passing.sum())} ({100 * passing.mean():.1f}%), {100 * y[passing].mean():.1f}% of them "
                    "plausible (in-sample, optimistic: the nested-CV row above is the honest figure).")
        body.append("")
    body.append("Notes. The labels are one annotator's from inside the team (benchmarks/RESULTS.md `sheets`), so "
                "every figure here is that annotator's judgment. No feature set reaches the 95% target at a usable "
                "pass rate; the shipped threshold passes the best fifth, and the ranker's items are checked on a "
                "second blind set it never saw (section `sheets`: 89% plausible vs 96% for corpus items). "
                "Sheets therefore take corpus items first. The PCFG's inside probability (`pcfg_slor`) adds "
                "nothing over the n-gram features, so the shipped ranker does not parse.")
    body.append("")
    body.append(f"Features of {len(gen)} sentences in {t_feat:.1f} s (incl. spaCy tokenizer and PCFG load).")
    body.append("")
    body.append(machine_line() + "; `python benchmarks/bench_plausibility.py " + " ".join(sys.argv[1:]) + "`")
    text = "\n".join(body)
    print(text)
    if not args.no_write:
        write_section("plausibility", text)


if __name__ == "__main__":
    main()
