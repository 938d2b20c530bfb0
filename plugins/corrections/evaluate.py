"""Evaluation on FCE: classification accuracy (section 3.1: 15 classes and 75 codes, most-common-class
baselines, confusions) and correction isolation (section 4: precision/recall/F1 of h0..h4 and h-infinity on
span boundaries alone -- unlabelled -- and with the predicted code / 15-class label -- labelled).

A predicted correction matches a gold one when their token spans in the original and the corrected sentence are
identical (gold spans trimmed of shared tokens, see fce.py); matching is one-to-one (multiset intersection)."""

from __future__ import annotations

from collections import Counter

from treegram.plugins.corrections.analysis import find_corrections
from treegram.plugins.corrections.editpath import HEURISTICS
from treegram.plugins.corrections.labels import collapse


def _prf(tp: int, n_pred: int, n_gold: int) -> dict[str, float]:
    p = tp / n_pred if n_pred else 0.0
    r = tp / n_gold if n_gold else 0.0
    return {"precision": round(p, 4), "recall": round(r, 4), "f1": round(2 * p * r / (p + r), 4) if p + r else 0.0}


def accuracy(gold_codes: list[str], pred75: list[str], pred15: list[str]) -> dict:
    n = len(gold_codes)
    g15 = [collapse(c) for c in gold_codes]
    maj75 = Counter(gold_codes).most_common(1)[0] if n else ("", 0)
    maj15 = Counter(g15).most_common(1)[0] if n else ("", 0)
    conf = Counter((g, p) for g, p in zip(g15, pred15) if g != p)
    return {
        "instances": n,
        "accuracy_75": round(sum(a == b for a, b in zip(gold_codes, pred75)) / n, 4) if n else 0.0,
        "accuracy_15": round(sum(a == b for a, b in zip(g15, pred15)) / n, 4) if n else 0.0,
        "majority_75": {"code": maj75[0], "accuracy": round(maj75[1] / n, 4) if n else 0.0},
        "majority_15": {"label": maj15[0], "accuracy": round(maj15[1] / n, 4) if n else 0.0},
        "top_confusions_15": [{"gold": g, "predicted": p, "count": c} for (g, p), c in conf.most_common(10)],
    }


def confusion(gold: list[str], pred: list[str], labels: list[str]) -> list[list[int]]:
    idx = {l: k for k, l in enumerate(labels)}
    m = [[0] * len(labels) for _ in labels]
    for g, p in zip(gold, pred):
        if g in idx and p in idx:
            m[idx[g]][idx[p]] += 1
    return m


def isolation(pairs, typer, *, heuristics=None, ui=None) -> dict[str, dict]:
    """For each heuristic: unlabelled P/R/F1, and labelled F1 with 75-codes and with 15-class labels."""
    out = {}
    xy = [(p.x, p.y) for p in pairs]
    n_gold = sum(len(p.gold) for p in pairs)
    for h in heuristics or list(HEURISTICS):
        found = find_corrections(xy, typer, heuristic=h, ui=ui)
        n_pred = sum(len(f) for f in found)
        tp_u = tp_75 = tp_15 = 0
        for pair, fs in zip(pairs, found):
            gu = Counter(g.span for g in pair.gold)
            g75 = Counter((g.span, g.code) for g in pair.gold)
            g15 = Counter((g.span, collapse(g.code)) for g in pair.gold)
            tp_u += sum((gu & Counter(f.span for f in fs)).values())
            tp_75 += sum((g75 & Counter((f.span, f.code) for f in fs)).values())
            tp_15 += sum((g15 & Counter((f.span, f.label15) for f in fs)).values())
        out[h] = {"unlabelled": _prf(tp_u, n_pred, n_gold), "labelled_75": _prf(tp_75, n_pred, n_gold),
                  "labelled_15": _prf(tp_15, n_pred, n_gold), "predicted": n_pred, "gold": n_gold,
                  "matched": {"unlabelled": tp_u, "labelled_75": tp_75, "labelled_15": tp_15}}
    return out


def pool_isolation(parts: list[dict[str, dict]]) -> dict[str, dict]:
    """Sum the counts of several `isolation` results (e.g. cross-validation folds) and recompute P/R/F1."""
    out = {}
    for h in parts[0]:
        n_pred = sum(p[h]["predicted"] for p in parts)
        n_gold = sum(p[h]["gold"] for p in parts)
        tp = {k: sum(p[h]["matched"][k] for p in parts) for k in ("unlabelled", "labelled_75", "labelled_15")}
        out[h] = {k: _prf(v, n_pred, n_gold) for k, v in tp.items()}
        out[h].update(predicted=n_pred, gold=n_gold, matched=tp)
    return out
