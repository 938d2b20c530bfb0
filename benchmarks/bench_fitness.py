"""Classroom fitness of sheet sentences (issue 25): the filter sheets apply before choosing items.

    python benchmarks/bench_fitness.py [--repeats 5] [--write-model] [--floor F] [--bands B ...] [--no-write]

Data (benchmarks/judged/, every set judged blind from the text alone): the team's four sets (one annotator inside
the team: `NAME.judged.tsv`, f = classroom-fit) and the blind kits judged by two judges outside the team
(`NAME.ratings-judge*.tsv`; fit = every judge says yes): mc25-sentences (392 sheet sentences, all corpus) and
scorer-kit-25 (220: corpus, raw generated, known-bad).  Features: plugins/vocabgen/fitness.py.

Reports (RESULTS.md section `fitness`): AUC of the logistic regression in 5-fold CV (repeated) over all judged
sentences and on the mc25 kit's corpus sentences, and fitted without the mc25 kit; the share of mc25 sentences
judged fit (both judges, and each) among those a threshold keeps; the policy (floor and bands); what they cost in
coverage (candidate corpus sentences per word for every single-word CEFR-J A1 and A2 headword, before and after);
and the sheet figure they predict for the mc25 words (calibrated on the mc25 judges' labels).  `--write-model`
writes `data/classroom-fitness.json` and the corpus's precomputed scores `data/default-fitness.npz`.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent
JUDGED = ROOT / "judged"
sys.path.insert(0, str(ROOT))

TEAM_SETS = ("sheets-set", "ranker-set", "route-set", "wordnet-set")
KITS = ("mc25-sentences", "scorer-kit-25")


def _yes(x: str) -> bool:
    return x.strip().lower().startswith("y")


def load_rows() -> list[dict]:
    """Every judged sentence: text, source, set, fit (every judge yes), plausible, provenance."""
    rows = []
    for name in TEAM_SETS:
        key = json.loads((JUDGED / f"{name}.key.json").read_text(encoding="utf-8"))
        lab = [ln.split("\t") for ln in (JUDGED / f"{name}.judged.tsv").read_text(encoding="utf-8").splitlines()]
        for k, lb in zip(key, lab):
            rows.append({"set": name, "text": k["text"], "source": k["source"], "fit": lb[2].strip() == "f",
                         "plausible": lb[1].strip() == "p", "fits": [lb[2].strip() == "f"],
                         "provenance": k.get("provenance", "")})
    for name in KITS:
        key = json.loads((JUDGED / f"{name}.key.json").read_text(encoding="utf-8"))
        judges = []
        for f in sorted(JUDGED.glob(f"{name}.ratings-*.tsv")):
            judges.append({p[0]: p for p in (ln.split("\t") for ln in f.read_text(encoding="utf-8").splitlines())
                           if len(p) >= 3})
        for k in key:
            fits = [_yes(j[k["id"]][2]) for j in judges]
            rows.append({"set": name, "text": k["text"], "source": k["source"], "fit": all(fits), "fits": fits,
                         "plausible": all(_yes(j[k["id"]][1]) for j in judges),
                         "provenance": k.get("provenance", ""), "word": k.get("word", ""),
                         "level": k.get("level", "")})
    return rows


def items_of(rows, corpus):
    """(tokens, provenance, source) per row: a corpus sentence with the corpus's own tokens and provenance."""
    from treegram.plugins.vocabgen.corpus import dedup_key
    from treegram.plugins.vocabgen.ranking import tokenize

    idx = {dedup_key(t): i for i, t in enumerate(corpus.texts)}
    out = []
    for r in rows:
        real = r["source"].startswith("corpus")
        i = idx.get(dedup_key(r["text"])) if real else None
        if i is not None:
            out.append((corpus.tokens[i], corpus.provenance(i), "corpus"))
        else:
            out.append((tuple(tokenize(r["text"])), r.get("provenance", ""), "corpus" if real else "generated"))
    return out


def model(C: float = 0.3):
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    return make_pipeline(StandardScaler(), LogisticRegression(C=C, max_iter=2000))


def out_of_fold(X, y, repeats: int, C: float = 0.3) -> np.ndarray:
    from sklearn.model_selection import StratifiedKFold

    out = np.zeros(len(y))
    for rep in range(repeats):
        for tr, te in StratifiedKFold(5, shuffle=True, random_state=rep).split(X, y):
            out[te] += model(C).fit(X[tr], y[tr]).decision_function(X[te]) / repeats
    return out


def calibrate(scores, labels):
    """Platt scaling on the outside judges' labels: P(fit | score) = sigmoid(a score + b)."""
    from sklearn.linear_model import LogisticRegression

    lr = LogisticRegression(C=1e4).fit(np.asarray(scores).reshape(-1, 1), labels)
    return lambda s: lr.predict_proba(np.asarray(s, dtype=np.float64).reshape(-1, 1))[:, 1]


def word_pools(level: str, scores: np.ndarray, corpus) -> dict[str, np.ndarray]:
    """Fitness scores of each single-word headword's candidate corpus sentences at its own level (what
    CorpusPool starts from: a form of the word, every other word in the vocabulary)."""
    from treegram.plugins.vocabgen.vocab import cefr_vocabulary, headwords, word_forms

    vocab = cefr_vocabulary(level)
    own = sorted(set(headwords(level)) - (set(headwords("A1")) if level == "A2" else set()))
    out = {}
    for w in own:
        forms = word_forms(w, level)
        allowed = vocab.with_words(forms - vocab.words) if not forms <= vocab.words else vocab
        out[w] = scores[np.asarray(corpus.candidates(allowed, set(forms)), dtype=np.int64)]
    return out


def take(s: np.ndarray, floor: float, bands) -> np.ndarray:
    """The scores of the candidates a sheet takes its items from under the policy: the best non-empty band."""
    s = s[s >= floor]
    for b in bands:
        if (s >= b).any():
            return s[s >= b]
    return s


def sheet_estimate(pools, prob, floor: float, bands) -> tuple[float, int]:
    """(mean over words of the calibrated P(fit) of the candidates a sheet takes an item from, words left with no
    candidate)."""
    vals, empty = [], 0
    for s in pools.values():
        pick = take(s, floor, bands)
        if not len(pick):
            empty += 1
            continue
        vals.append(prob(pick).mean())
    return float(np.mean(vals)) if vals else float("nan"), empty


def main() -> None:
    from sklearn.metrics import roc_auc_score

    from treegram.plugins.vocabgen.default import data_dir, default_corpus, default_ranker
    from treegram.plugins.vocabgen.fitness import (FEATURES, FitnessModel, compute_corpus_scores,
                                                   feature_matrix, write_corpus_scores)

    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--write-model", action="store_true", help="write data/classroom-fitness.json and the scores")
    ap.add_argument("--floor", type=float, default=0.0, help="log-odds below which a sentence never shows")
    ap.add_argument("--bands", type=float, nargs="*", default=[4.0, 3.0, 2.0, 1.0],
                    help="descending log-odds thresholds: a sheet takes the highest band first")
    ap.add_argument("--no-write", action="store_true", help="print instead of writing RESULTS.md")
    args = ap.parse_args()

    t0 = time.time()
    corpus, ranker = default_corpus(), default_ranker()
    rows = load_rows()
    X = feature_matrix(items_of(rows, corpus), ranker)
    y = np.asarray([r["fit"] for r in rows], dtype=int)
    mc = np.asarray([r["set"] == "mc25-sentences" for r in rows])
    real = np.asarray([r["source"].startswith("corpus") for r in rows])
    oof = out_of_fold(X, y, args.repeats)
    auc_all, auc_corpus, auc_mc = (roc_auc_score(y[m], oof[m]) for m in (np.ones(len(y), bool), real, mc))
    wo = model().fit(X[~mc], y[~mc]).decision_function(X[mc])
    auc_wo = roc_auc_score(y[mc], wo)
    groups = {"provenance": ("has_tatoeba", "log_tatoeba_id", "graded_only", "generated"),
              "plausibility": ("plausibility", "slor", "min_local")}
    ablation = {}
    for g, names in groups.items():
        keep = [k for k, n in enumerate(FEATURES) if n not in names]
        o = out_of_fold(X[:, keep], y, args.repeats)
        ablation[g] = roc_auc_score(y[mc], o[mc])
        only = [FEATURES.index(n) for n in names]
        o = out_of_fold(X[:, only], y, args.repeats)
        ablation[g + " alone"] = roc_auc_score(y[mc], o[mc])

    # the curve on the outside judges' sheet sentences (out-of-fold scores)
    fa = np.asarray([r["fits"][0] for r in rows])[mc]
    fb = np.asarray([r["fits"][-1] for r in rows])[mc]
    pl = np.asarray([r["plausible"] for r in rows])[mc]
    om = oof[mc]
    prob = calibrate(om, y[mc])
    curve = []
    for q in (0, 10, 20, 30, 40, 50, 60):
        k = om >= np.percentile(om, q)
        curve.append((q, int(k.sum()), y[mc][k].mean(), fa[k].mean(), fb[k].mean(), pl[k].mean()))

    final = model().fit(X, y)
    fm = FitnessModel(FitnessModel.spec_from_sklearn(FEATURES, final, 0.0, ()))
    t1 = time.time()
    scores = compute_corpus_scores(corpus, fm)
    t_scores = time.time() - t1
    pools = {lv: word_pools(lv, scores, corpus) for lv in ("A1", "A2")}
    mcw = {(r["word"], r["level"]) for r in rows if r["set"] == "mc25-sentences"}
    mc_pools = {w: pools[lv][w] for w, lv in mcw if w in pools[lv]}
    floor, bands = args.floor, tuple(args.bands)
    est, empty = sheet_estimate(mc_pools, prob, floor, bands)
    est0, _ = sheet_estimate(mc_pools, prob, -1e9, ())
    options = [(f, bb, *sheet_estimate(mc_pools, prob, f, bb)) for f in (-0.5, 0.0, 0.5, 1.0)
               for bb in ((), (2.0,), (3.0, 2.0, 1.0), (4.0, 3.0, 2.0, 1.0))]

    def cov(lv, lo):
        counts = np.asarray([int((s >= lo).sum()) for s in pools[lv].values()])
        return int((counts < 10).sum()), int((counts > 100).sum()), int((counts == 0).sum()), \
            int(np.median(counts)), len(counts)

    spec = FitnessModel.spec_from_sklearn(
        FEATURES, final, floor, bands,
        fitted_on=f"{len(y)} judged sentences of benchmarks/judged ({', '.join(TEAM_SETS + KITS)}), "
                  f"{100 * y.mean():.0f}% classroom-fit",
        calibration={"cv_auc": round(float(auc_all), 3), "cv_auc_mc25": round(float(auc_mc), 3),
                     "auc_mc25_fitted_without": round(float(auc_wo), 3),
                     "estimated_sheet_fit_mc25": round(est, 3)})
    if args.write_model:
        path = data_dir() / "classroom-fitness.json"
        path.write_text(json.dumps(spec, indent=1) + "\n", encoding="utf-8")
        from treegram.plugins.vocabgen.default import DEFAULTS

        DEFAULTS.clear()
        write_corpus_scores(data_dir() / "default-fitness.npz", corpus, FitnessModel(spec), scores=scores)

    pct = lambda v: f"{100 * v:.1f}%"  # noqa: E731
    lines = [
        f"Judged sentences: {len(y)} ({int(real.sum())} corpus, {int((~real).sum())} generated or known-bad; "
        f"{pct(y.mean())} classroom-fit): the team's sets {', '.join(TEAM_SETS)} (one annotator inside the team) "
        f"and the blind kits {', '.join(KITS)} (two judges outside the team; fit = both say yes). "
        f"Features ({len(FEATURES)}): plugins/vocabgen/fitness.py.",
        "",
        "| measure | AUC |",
        "|---|---|",
        f"| 5-fold CV x {args.repeats}, all judged sentences | {auc_all:.3f} |",
        f"| ... corpus sentences only | {auc_corpus:.3f} |",
        f"| ... mc25 sheet sentences (392, two outside judges) | {auc_mc:.3f} |",
        f"| fitted without mc25, scored on mc25 | {auc_wo:.3f} |",
        *(f"| CV on mc25, {'only ' + g.split()[0] + ' features' if g.endswith('alone') else 'without ' + g + ' features'}"
          f" | {a:.3f} |" for g, a in ablation.items()),
        "",
        "**What a threshold keeps of the mc25 sheet sentences** (out-of-fold scores; fit = both judges; the judged "
        "figures were 68.4% fit (both), 70.9% / 69.4% per judge, 97.4% plausible):",
        "",
        "| dropped (lowest scores) | kept | fit, both judges | judge A | judge B | plausible (both) |",
        "|---|---|---|---|---|---|",
        *(f"| {q}% | {n} | {pct(a)} | {pct(b)} | {pct(c)} | {pct(d)} |" for q, n, a, b, c, d in curve),
        "",
        f"**Shipped policy** (`data/classroom-fitness.json`): floor {floor:+.2f} (the model's even odds; "
        f"P(fit) {pct(float(prob([floor])[0]))} by the mc25 calibration): a sentence below it never reaches a sheet; "
        f"bands {', '.join(f'{b:+.1f}' for b in bands)}: a sheet takes a word's sentences of the highest band it "
        "has first (seeded random order inside a band). Estimated share of fit items on sheets for the mc25 words "
        f"(the mean over words of the calibrated P(fit) of the candidates the policy takes an item from): "
        f"**{pct(est)}** against {pct(est0)} without the filter (judged: 68.4%); {empty} of {len(mc_pools)} words "
        "lose every candidate.",
        "",
        "| floor | bands | estimated fit on mc25 sheets | words left with no candidate |",
        "|---|---|---|---|",
        *(f"| {f:+.1f} | {', '.join(f'{b:+.1f}' for b in bb) or '-'} | {pct(e)} | {m} |" for f, bb, e, m in options),
        "",
        "**Coverage cost** (candidate corpus sentences per word: a form of the word, every other word at the "
        "level; before the fragment / sense checks; the single-word CEFR-J headwords of the level)",
        "",
        "| level | candidates | words | words with < 10 | words with > 100 | words with none | median |",
        "|---|---|---|---|---|---|---|",
    ]
    for lv in ("A1", "A2"):
        for what, lo in (("all", -1e9), (f">= floor {floor:+.2f} (what sheets can show)", floor),
                         *((f">= band {b:+.1f}", b) for b in bands[:2])):
            a, b, z, m, n = cov(lv, lo)
            lines.append(f"| {lv} | {what} | {n} | {a} | {b} | {z} | {m} |")
    share = lambda lo: float(np.mean(scores >= lo))  # noqa: E731
    lines += [
        "",
        f"Corpus sentences at or above the floor: {pct(share(floor))}; "
        + "; ".join(f"at or above {b:+.1f}: {pct(share(b))}" for b in bands) + f" (of {len(scores)})."
        f" Scoring the whole corpus: {t_scores:.0f} s (precomputed into "
        "`data/default-fitness.npz`).",
        "",
        "Notes. The estimates are in-sample for the policy (floor and bands were chosen on the mc25 calibration, "
        "and the model is fitted on the mc25 labels too): the claim is the next blind kit on new words and a new "
        "seed (RESULTS `exercise-kits`).",
        "",
        f"{time.strftime('%Y-%m-%d')}, `python benchmarks/bench_fitness.py --repeats {args.repeats}"
        f"{' --write-model' if args.write_model else ''}` ({time.time() - t0:.0f} s)",
    ]
    body = "\n".join(lines)
    if args.no_write:
        print(body)
    else:
        from _results import write_section

        write_section("fitness", body)
        print(body)


if __name__ == "__main__":
    main()
