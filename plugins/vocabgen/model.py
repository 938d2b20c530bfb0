"""The vocabgen model file (the formalism that trains it: formalism.py).

A vocabgen model is a SPINEDEP GenerationModel (MLE, pairs seen once discarded) plus its training sentences
(for the corpus-search baseline), saved as one treegram bundle: JSON meta + numpy arrays, never pickle.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from treegram.corpora import DepSentence, read_dependency_file
from treegram.errors import InputError, ModelFileError
from treegram.formalism import save_model
from treegram.generation import GenerationModel, fit_mle

from treegram.plugins.vocabgen.spinedep import SpineDepSystem
from treegram import argtypes

def generation_model_to_bundle(model: GenerationModel, system) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
    """(meta, arrays) of a GenerationModel, for embedding in another bundle (arrays prefixed `g_`)."""
    return model.to_bundle(system, prefix="g_")


def generation_model_from_bundle(meta: dict[str, Any], arrays: dict[str, np.ndarray], system) -> GenerationModel:
    return GenerationModel.from_bundle(meta, arrays, system, prefix="g_")


class VocabgenModel:
    formalism = "vocabgen"

    def __init__(self, generation: GenerationModel, system: SpineDepSystem, corpus: list[list[str]],
                 settings: dict[str, Any]):
        self.generation = generation
        self.system = system
        self.corpus = corpus
        self.settings = settings

    @staticmethod
    def train(sentences: list[DepSentence], *, min_count: int = 2, settings: dict | None = None,
              smooth: str | None = None, classes=None) -> VocabgenModel:
        """SPINEDEP by MLE (pairs seen fewer than min_count times discarded), smoothed through word classes
        (eq. 1, EM) when `smooth` names a registered smoother ('wordnet', 'glove500', 'glove5000') or `classes`
        gives a class function."""
        if not sentences:
            raise InputError("no training sentences", hint="give --sentences FILE or --trees DIR with data")
        system = SpineDepSystem()
        if smooth in (None, "none") and classes is None:
            model = fit_mle(system, sentences, min_count=min_count)
        else:
            from treegram.plugins.vocabgen.smoothing import make_classes, smooth_spinedep

            fn = classes if classes is not None else make_classes(smooth)
            raw = fit_mle(system, sentences, min_count=1, prune=False)  # EM sees every token
            model = smooth_spinedep(raw, fn, name=smooth or "classes", min_count=min_count)
        corpus = [[w.lower() for w in s.words] for s in sentences]
        return VocabgenModel(model, system, corpus, dict(settings or {}, min_count=min_count,
                                                         sentences=len(sentences), smooth=smooth or "none"))

    def save(self, path: str | Path) -> None:
        meta, arrays = generation_model_to_bundle(self.generation, self.system)
        corpus_text = "\n".join(" ".join(s) for s in self.corpus)
        arrays["corpus_utf8"] = np.frombuffer(corpus_text.encode("utf-8"), dtype=np.uint8)
        save_model(path, self, {"generation": meta, "settings": self.settings}, arrays)

    @staticmethod
    def from_bundle(meta: dict[str, Any], arrays: dict[str, np.ndarray]) -> VocabgenModel:
        g = meta["generation"]
        if g["system"].get("name") != "spinedep":
            raise ModelFileError(f"vocabgen model of system {g['system'].get('name')!r}",
                                 hint="re-train with `treegram train vocabgen`")
        system = SpineDepSystem(**g["system"].get("config", {}))
        model = generation_model_from_bundle(g, arrays, system)
        text = bytes(arrays["corpus_utf8"]).decode("utf-8")
        corpus = [line.split() for line in text.split("\n")] if text else []
        return VocabgenModel(model, system, corpus, meta.get("settings", {}))

    def describe(self, *, top: int = 20) -> dict[str, Any]:
        m = self.generation
        info: dict[str, Any] = {"formalism": "vocabgen", "system": "spinedep", "contexts": m.n_contexts,
                                "outcomes": m.n_outcomes, "entries": m.n_entries, "words": len(m.words),
                                "training_sentences": len(self.corpus)}
        info.update({k: v for k, v in self.settings.items() if isinstance(v, (int, float, str))})
        if top:
            order = np.argsort(-m.count, kind="stable")[:top]
            info["top_rules"] = [{"context": _short_ctx(m.contexts[int(m.ctx_of_entry[e])]),
                                  "outcome": _short_out(m.outcomes[int(m.out_id[e])]),
                                  "count": int(m.count[e]), "prob": round(float(m.prob[e]), 4)} for e in order]
        return info


def _short_ctx(c) -> str:
    (pos, w), (ppos, pw), gpos = c
    return f"{w}/{pos} < {pw}/{ppos} < {gpos}"


def _short_out(o) -> str:
    if o == "END":
        return "END"
    return " ".join(d if isinstance(d, str) else f"{d[1]}/{d[0]}" for d in o)


def read_tree_paths(paths) -> list[DepSentence]:
    """Gold dependency trees from files or directories (.conllu/.conll/.dp), 3-15 words, malformed ones skipped."""
    from treegram.corpora import DEPENDENCY_SUFFIXES

    out: list[DepSentence] = []
    for p in paths:
        p = Path(p)
        files = sorted(q for q in p.rglob("*") if q.suffix in DEPENDENCY_SUFFIXES) if p.is_dir() else [p]
        if not files:
            raise InputError(f"{p}: no dependency files (.conllu, .conll, .dp)", hint="check the path")
        for f in files:
            if not f.is_file():
                raise InputError(f"{f}: no such dependency file", hint="check the path")
            out.extend(s for s in read_dependency_file(f, on_error="skip") if 3 <= len(s) <= 15)
    return out


def vocabgen_schema():
    """What a vocabgen model file holds (checked by the core before loading and before writing): the spine
    dependency generation model's tables (counts >= 0, probabilities in [0, 1], finite), its settings, the
    training corpus as UTF-8 bytes."""
    from treegram.schema import AnyOf, Arr, Bool, Bundle, Dict, Int, List, Opt, Str, Tuple

    ptr = Arr("iu", ndim=1, min=0)
    pair = Tuple((Str(), Str()))  # (tag, word)
    context = Tuple((pair, pair, Str()))  # head, parent head, grandparent tag
    # the ordered dependents with "*" (HEAD) where the head sits, or "END"
    outcome = AnyOf((List(AnyOf((pair, Str(choices=("*",)))), min_len=1), Str(choices=("END",))))
    generation = Dict({"system": Dict({"name": Str(choices=("spinedep",))},
                                      optional={"config": Dict(values=Bool())}),
                       "contexts": List(context), "outcomes": List(outcome), "words": List(Str())},
                      optional={"root": Int(min=0), "info": Opt(Dict(optional={"history": List()}))})
    settings = Dict(optional={"min_count": Int(min=0), "sentences": Int(min=0), "smooth": Str()})
    return Bundle(meta=Dict({"generation": generation}, optional={"settings": settings}),
                  arrays=Dict({"corpus_utf8": Arr("u", ndim=1),
                               "g_ctx_ptr": ptr, "g_imp_ptr": ptr, "g_word_ptr": ptr,
                               "g_out_id": Arr("iu", ndim=1, min=0), "g_imp_ctx": Arr("iu", ndim=1, min=0),
                               "g_word_id": Arr("iu", ndim=1, min=0),
                               "g_count": Arr("f", shape=("entries",), min=0, finite=True),
                               "g_prob": Arr("f", shape=("entries",), min=0, max=1 + 1e-9, finite=True)}))
