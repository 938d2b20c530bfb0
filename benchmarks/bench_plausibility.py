"""The sheet scorer (issues 12, 25): which plausibility features separate the judged plausible sentences from the
implausible ones, side by side, and the ranker + threshold that ships.

    python benchmarks/bench_plausibility.py [--repeats 10] [--write-ranker] [--no-write] [--kit NAME ...]

Data (benchmarks/judged/, every set judged blind from the text alone):
* **development**: the generated sentences of the first three sets (sheets-set: raw draws and old-ranker choices;
  ranker-set and route-set: items that passed earlier rankers) — 420 sentences;
* **held out**: the fourth set (wordnet-set: 150 generated items, all above the old ranker's threshold, + 50 corpus
  items), never used to fit or choose anything here;
* **kits** (`--kit NAME`): a blind kit made by make_scorer_kit.py and rated by judges outside the team
  (../judging/NAME/ratings-*.tsv, majority vote), also held out.
Corpus sentences are not fitted on (the count models were trained on real sentences, so they would only teach
"seen before"); the judged sentences themselves are held out of every scorer's training data (build_default
`--exclude`).  Sentences are re-tokenized with the spaCy tokenizer of the training parses.

Options (each a logistic regression over standardized features, C=1; ranking.FEATURES says what each is):
in-domain Kneser-Ney trigram, pocketsphinx's general English trigram model, wordfreq frequencies, treegram's PCFG,
the LSTM, and combinations.  Reported: out-of-fold AUC on the development set (stratified 5-fold x `--repeats`),
and AUC on each held-out set of the model fitted on all development items.

`--write-ranker` writes `plugins/vocabgen/data/plausibility-ranker.json` for SHIPPED, with the threshold at which
the development items that pass are `--target` plausible in out-of-fold scores.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _results import machine_line, markdown_table, publish  # noqa: E402

ROOT = Path(__file__).resolve().parent
JUDGED = ROOT / "judged"
JUDGING = ROOT.parent.parent / "judging"
DEV_SETS = ("sheets-set", "ranker-set", "route-set")
HELD_SETS = ("wordnet-set",)
KN = ("slor", "min_local", "length")
PS = ("ps_slor", "ps_min", "length")
WF = ("wf_min", "wf_mean", "length")
NN = ("nn_slor", "nn_min", "nn_mean", "length")
OPTIONS = [
    ("in-domain Kneser-Ney trigram", KN),
    ("pocketsphinx general English trigram", PS),
    ("wordfreq frequencies", WF),
    ("treegram PCFG (inside SLOR)", ("pcfg_slor", "length")),
    ("LSTM", NN),
    ("Kneser-Ney + pocketsphinx", KN + PS[:-1]),
    ("Kneser-Ney + LSTM", KN + NN[:-1]),
    ("LSTM + pocketsphinx", NN + PS[:-1]),
    ("Kneser-Ney + LSTM + pocketsphinx", KN + NN[:-1] + PS[:-1]),
    ("Kneser-Ney + LSTM + pocketsphinx + wordfreq", KN + NN[:-1] + PS[:-1] + WF[:-1]),
    ("all", KN + NN[:-1] + PS[:-1] + WF[:-1] + ("pcfg_slor",)),
]
SHIPPED = KN + PS[:-1]


NOTES = """Notes. The goal (AUC >= 0.85 on a held-out judged set) is not reached: every count-based option and
combination stays near 0.72-0.73 in CV, and the sets other than sheets-set hold only items that already passed a
trigram ranker, so within them no option separates much (0.5-0.6). The LSTM (nnlm.py: tied embeddings, 96 units,
3,000 words, one epoch over 83,830 sentences, train perplexity 136, 11 minutes of CPU on a machine shared by five
sessions) adds nothing over the trigram features; a better-trained one was not affordable here. Also measured and
not shipped: a real-vs-generated discriminator over hashed n-grams (benchmarks/proto_discriminator.py: 0.652 alone,
0.744 with the shipped features against 0.725, sheets-set held out 0.742 against 0.717), and variants of the local
features (second-worst position, counts of bad positions, sentence-final position: no gain). Held-out AUC on judges
outside the team waits for the kit `scorer-kit-25` (220 items: 150 raw `treegram generate` sentences for random
A1/A2 headwords, 40 corpus items half graded-enja half Tatoeba-only, 30 known-bad perturbations of corpus items;
make_scorer_kit.py); run with `--kit scorer-kit-25` once ../judging/scorer-kit-25/ratings-*.tsv exist."""


def load_set(name):
    """[(text, source, plausible, fit)] of a judged set in benchmarks/judged (N<TAB>p|i<TAB>f|u lines)."""
    key = json.loads((JUDGED / f"{name}.key.json").read_text(encoding="utf-8"))
    marks = {}
    for line in (JUDGED / f"{name}.judged.tsv").read_text(encoding="utf-8").splitlines():
        parts = line.split("\t")
        if len(parts) >= 3 and parts[0].isdigit():
            marks[int(parts[0])] = (parts[1].strip() == "p", parts[2].strip() == "f")
    return [(it["text"], it["source"], *marks[n]) for n, it in enumerate(key, start=1) if n in marks]


def load_kit(name):
    """[(text, source, plausible, fit)] of a rated kit: majority of ../judging/NAME/ratings-*.tsv (ties: no)."""
    key = {it["id"]: it for it in json.loads((JUDGED / f"{name}.key.json").read_text(encoding="utf-8"))}
    votes: dict[str, list] = {}
    files = sorted((JUDGING / name).glob("ratings-*.tsv"))
    for f in files:
        for line in f.read_text(encoding="utf-8").splitlines():
            p = line.split("\t")
            if len(p) >= 3 and p[0] in key:
                votes.setdefault(p[0], []).append((p[1].strip().lower().startswith("y"),
                                                   p[2].strip().lower().startswith("y")))
    out = []
    for i, vs in votes.items():
        it = key[i]
        out.append((it["text"], it["source"], 2 * sum(a for a, _ in vs) > len(vs), 2 * sum(b for _, b in vs) > len(vs)))
    return out, len(files)


def tokenize(texts):
    from treegram.plugins.vocabgen.parsing import load_spacy

    tok = load_spacy().tokenizer
    return [[t.text for t in tok(s) if not t.is_space] for s in texts]


def model():
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    return make_pipeline(StandardScaler(), LogisticRegression(C=1.0, max_iter=1000))


def oof_scores(X, y, seed):
    from sklearn.model_selection import StratifiedKFold

    out = np.zeros(len(y))
    for tr, te in StratifiedKFold(5, shuffle=True, random_state=seed).split(X, y):
        out[te] = model().fit(X[tr], y[tr]).decision_function(X[te])
    return out


def pick_threshold(scores, y, target, min_pass=20):
    """The lowest score at which the items scoring at least it are >= target plausible (>= min_pass of them)."""
    order = np.argsort(-scores)
    s, lab = scores[order], y[order]
    prec = np.cumsum(lab) / np.arange(1, len(lab) + 1)
    ok = [k for k in range(min_pass - 1, len(s)) if prec[k] >= target]
    return float(s[max(ok)]) if ok else float(s[min_pass - 1])


def resources(lstm_path=None):
    from treegram.formalism import load_model
    from treegram.io import load_bundle
    from treegram.plugins.vocabgen.default import data_dir, default_scorer
    from treegram.plugins.vocabgen.nnlm import from_bundle
    from treegram.plugins.vocabgen.ranking import GeneralLM, Resources

    lm, _ = default_scorer()
    lstm = from_bundle(*load_bundle(lstm_path)) if lstm_path else None
    return Resources(lm, load_model(data_dir() / "default-pcfg.npz"), GeneralLM(), lstm)


def main() -> None:
    from sklearn.metrics import roc_auc_score

    from treegram.plugins.vocabgen.default import data_dir
    from treegram.plugins.vocabgen.ranking import FEATURES, PlausibilityRanker, feature_matrix

    ap = argparse.ArgumentParser()
    ap.add_argument("--repeats", type=int, default=10)
    ap.add_argument("--target", type=float, default=0.9,
                    help="the shipped threshold: development items passing it are this plausible (out-of-fold)")
    ap.add_argument("--kit", nargs="*", default=[], help="rated blind kits (../judging/NAME) as held-out sets")
    ap.add_argument("--lstm", type=Path, default=None, help="an LSTM scorer file (build_default --only lstm --out DIR) "
                    "for the LSTM rows (not shipped: it adds nothing over the shipped features)")
    ap.add_argument("--write-ranker", action="store_true")
    ap.add_argument("--no-write", action="store_true")
    args = ap.parse_args()
    t0 = time.perf_counter()
    sets = {n: load_set(n) for n in DEV_SETS + HELD_SETS}
    kits = {}
    for k in args.kit:
        items, judges = load_kit(k)
        kits[k] = (items, judges)
        sets[k] = items
    allitems = [it for v in sets.values() for it in v]
    toks = tokenize([t for t, *_ in allitems])
    res = resources(args.lstm)
    names_all = FEATURES if res.lstm is not None else tuple(k for k in FEATURES if not k.startswith("nn_"))
    options = [(lab, names) for lab, names in OPTIONS if set(names) <= set(names_all)]
    t1 = time.perf_counter()
    F = feature_matrix(res, toks, names_all)
    t_feat = time.perf_counter() - t1
    col = {k: j for j, k in enumerate(names_all)}
    pos = 0
    parts = {}
    for n, v in sets.items():
        parts[n] = (F[pos:pos + len(v)], np.asarray([p for _, _, p, _ in v]), np.asarray([s for _, s, _, _ in v]))
        pos += len(v)

    def gen_only(n):
        X, y, src = parts[n]
        keep = ~np.char.startswith(src.astype(str), "corpus")
        return X[keep], y[keep]

    judged = DEV_SETS + HELD_SETS
    Xd = np.vstack([gen_only(n)[0] for n in judged])
    yd = np.concatenate([gen_only(n)[1] for n in judged])
    grp = np.concatenate([[k] * len(gen_only(n)[1]) for k, n in enumerate(judged)])
    held = []
    for k in kits:
        held += [(k, *gen_only(k), "generated + known-bad"), (k, parts[k][0], parts[k][1], "all")]
    held = [h for h in held if len(set(h[2].tolist())) == 2]
    rows = []
    fitted = {}
    for label, names in options:
        idx = [col[k] for k in names]
        X = Xd[:, idx]
        aucs = [roc_auc_score(yd, oof_scores(X, yd, r)) for r in range(args.repeats)]
        row = [label, ", ".join(f"`{k}`" for k in names), f"{np.mean(aucs):.3f} ± {np.std(aucs):.3f}"]
        for k, n in enumerate(judged):  # leave one judged set out: fit on the other three
            te = grp == k
            m = model().fit(X[~te], yd[~te])
            row.append(f"{roc_auc_score(yd[te], m.decision_function(X[te])):.3f}")
        m = model().fit(X, yd)
        fitted[names] = m
        for n, Xh, yh, _what in held:
            row.append(f"{roc_auc_score(yh, m.decision_function(Xh[:, idx])):.3f}")
        rows.append(row)
        print(row, flush=True)
    heads = ["option", "features", f"AUC, 5-fold CV over all {len(yd)} judged generated ({100 * yd.mean():.0f}% "
             "plausible)"]
    heads += [f"AUC on {n} ({int((grp == k).sum())} generated, {100 * yd[grp == k].mean():.0f}% plausible), fitted "
              "on the other sets" for k, n in enumerate(judged)]
    heads += [f"AUC held out: kit {n} {what} ({len(yh)}, {100 * yh.mean():.0f}% plausible)" for n, _, yh, what in held]
    body = [f"Judged sets (benchmarks/judged/, one annotator inside the team): the generated sentences of "
            f"{', '.join(judged)} (sheets-set: raw draws and old-SLOR choices, the full range; the others: items "
            "that passed earlier rankers, a narrow range selected on the trigram features)"
            + "".join(f"; kit {k}: majority of {j} judges outside the team, never fitted on" for k, (_, j) in kits.items())
            + f". Cross-validation: stratified 5-fold x {args.repeats} over all judged sets pooled, and each set held "
            "out in turn (fitted on the other three). Corpus sentences are never fitted on.", "",
            markdown_table(heads, rows), ""]
    if args.write_ranker:
        idx = [col[k] for k in SHIPPED]
        X = Xd[:, idx]
        oof = np.mean([oof_scores(X, yd, r) for r in range(args.repeats)], axis=0)
        thr = pick_threshold(oof, yd, args.target)
        passing = oof >= thr
        final = fitted[SHIPPED]
        held_auc = {f"{n} {what}": round(float(roc_auc_score(yh, final.decision_function(Xh[:, idx]))), 3)
                    for n, Xh, yh, what in held}
        spec = PlausibilityRanker.spec_from_sklearn(
            SHIPPED, final, thr,
            trained_on=f"benchmarks/judged {', '.join(judged)} ({len(yd)} generated sentences, one annotator)",
            calibration={"target_plausible_among_passing": args.target,
                         "dev_oof_plausible_among_passing": round(float(yd[passing].mean()), 3),
                         "dev_oof_pass_rate": round(float(passing.mean()), 3),
                         "cv_auc": round(float(np.mean([roc_auc_score(yd, oof_scores(X, yd, r))
                                                        for r in range(3)])), 3),
                         "held_out_auc": held_auc},
            command="python benchmarks/bench_plausibility.py --write-ranker")
        path = data_dir() / "plausibility-ranker.json"
        path.write_text(json.dumps(spec, indent=1) + "\n", encoding="utf-8")
        body.append(f"Shipped (`data/plausibility-ranker.json`): {' + '.join(f'`{k}`' for k in SHIPPED)}, fitted on "
                    f"all {len(yd)} judged generated items; threshold {thr:.3f} (log-odds), the lowest at which the "
                    f"judged items passing in out-of-fold scores are >= {100 * args.target:.0f}% plausible: "
                    f"{100 * yd[passing].mean():.1f}% plausible, {100 * passing.mean():.1f}% pass. Held-out AUC: "
                    + (", ".join(f"{k} {v:.3f}" for k, v in held_auc.items()) or "no rated kit yet") + ".")
        for n, Xh, yh, what in held:
            s = final.decision_function(Xh[:, idx])
            keep = s >= thr
            if keep.any():
                body.append(f"- {n} {what}: at the threshold {int(keep.sum())} of {len(yh)} pass, "
                            f"{100 * yh[keep].mean():.1f}% of them judged plausible (all: {100 * yh.mean():.1f}%).")
        body.append("")
    body.append(NOTES)
    body.append("")
    body.append(f"Features of {len(allitems)} sentences in {t_feat:.1f} s (models loaded beforehand in "
                f"{t1 - t0:.1f} s, incl. the spaCy tokenizer).")
    body.append("")
    body.append(machine_line() + "; `python benchmarks/bench_plausibility.py " + " ".join(sys.argv[1:]) + "`")
    text = "\n".join(body)
    publish("plausibility", text, not args.no_write)


if __name__ == "__main__":
    main()
