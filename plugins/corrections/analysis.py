"""The educational application of section 4: isolate the corrections in aligned sentence pairs (heuristic h_i
over the edit path) and type each one, either with a trained `CorrectionsModel` (the instance of a correction is
the corrected sentence with that correction undone, as in training) or with the rule typer (rules.py)."""

from __future__ import annotations

import attrs

from treegram.plugins.corrections.editpath import HEURISTICS, Span, edit_path, isolate, revert
from treegram.plugins.corrections.features import features
from treegram.plugins.corrections.labels import collapse
from treegram.plugins.corrections.pipeline import tag_sentences
from treegram.plugins.corrections.rules import rule_code


@attrs.frozen
class Found:
    span: Span
    code: str
    label15: str
    wrong: str
    right: str


class ModelTyper:
    name = "model"

    def __init__(self, model):
        self.model = model

    def classify(self, items, xtags, ytags) -> list[str]:
        feats = [features(revert(x, y, sp), y, yt, lexical=self.model.lexical)
                 for (x, y, sp), yt in zip(items, ytags)]
        codes, _ = self.model.predict(feats)
        return codes


class RuleTyper:
    name = "rules"

    def classify(self, items, xtags, ytags) -> list[str]:
        out = []
        for (x, y, sp), xt, yt in zip(items, xtags, ytags):
            xe = revert(x, y, sp)
            reorder = sorted(xe) == sorted(y) and xe != list(y)
            out.append(rule_code(list(x[sp.x0:sp.x1]), list(y[sp.y0:sp.y1]), list(xt[sp.x0:sp.x1]),
                                 list(yt[sp.y0:sp.y1]), reorder=reorder))
        return out


def find_corrections(pairs, typer, *, heuristic: str = "h0", ui=None) -> list[list[Found]]:
    """pairs: [(original tokens, corrected tokens)] -> the corrections of each pair, left to right."""
    pairs = [(list(x), list(y)) for x, y in pairs]
    spans = [isolate(edit_path(x, y), HEURISTICS[heuristic]) for x, y in pairs]
    need = [k for k, s in enumerate(spans) if s]
    ytags = dict(zip(need, tag_sentences([pairs[k][1] for k in need], ui)))
    xtags = dict(zip(need, tag_sentences([pairs[k][0] for k in need], ui))) if isinstance(typer, RuleTyper) else {}
    items, xt, yt, where = [], [], [], []
    for k in need:
        x, y = pairs[k]
        for sp in spans[k]:
            items.append((x, y, sp))
            xt.append(xtags.get(k, ()))
            yt.append(ytags[k])
            where.append(k)
    codes = typer.classify(items, xt, yt) if items else []
    out: list[list[Found]] = [[] for _ in pairs]
    for (x, y, sp), code, k in zip(items, codes, where):
        out[k].append(Found(sp, code, collapse(code), " ".join(x[sp.x0:sp.x1]), " ".join(y[sp.y0:sp.y1])))
    return out
