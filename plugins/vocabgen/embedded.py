"""The embedded default data of `data/` (see data/NOTICE.md): its files and `DEFAULTS`, the one object that reads
each part on first use and keeps it.  The data layer: it imports nothing of vocabgen but the corpus index, so every
module may read the embedded files through it; what is assembled from them (the plausibility ranker in ranking.py,
the classroom-fitness model in fitness.py) is built there and kept here (`EmbeddedData.part`).  default.py is the
public face over all of it.
"""

from __future__ import annotations

from functools import cached_property
from pathlib import Path

from treegram.errors import InputError


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

    Read here: ``model`` (SPINEDEP, default-model.npz), ``fallback_model`` (default-model-rare.npz, not shipped),
    ``corpus`` (CorpusIndex, default-corpus.npz), ``pcfg`` (the PCFG reorder tiles and the ranker parse with,
    default-pcfg.npz).  Assembled above and kept by `part`: ``scorer`` ((NgramScorer, SLOR threshold),
    default-lm.npz), ``lstm`` (default-lstm.npz, not shipped), ``ranker`` (PlausibilityRanker,
    plausibility-ranker.json) -- ranking.py; ``fitness`` (classroom-fitness.json) and ``corpus_scores`` (the
    corpus's precomputed fitness scores, default-fitness.npz; None when they belong to another corpus or model)
    -- fitness.py."""

    def __init__(self, folder: Path | None = None):
        self._folder = folder

    @property
    def folder(self) -> Path:
        return self._folder if self._folder is not None else data_dir()

    def clear(self) -> None:
        """Forget what was loaded (after a build step rewrote a data file)."""
        for name in [k for k in vars(self) if k != "_folder"]:
            del self.__dict__[name]

    def path(self, name: str) -> Path | None:
        """The data file `name` in the folder, or None when it is absent."""
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

        path = self.path(FALLBACK_FILE)
        return load_model(path) if path else None

    @cached_property
    def corpus(self):
        from treegram.plugins.vocabgen.corpus import CorpusIndex

        path = self.path("default-corpus.npz")
        return CorpusIndex.load(path) if path else None

    @cached_property
    def pcfg(self):
        from treegram.formalism import load_model

        path = self.path("default-pcfg.npz")
        return load_model(path) if path else None

    def part(self, name: str, build):
        """The part `name`, made by `build(self)` on first use and then kept (until `clear`): how the modules
        above this one (ranking.py: the scorer and ranker; fitness.py: the fitness model and its corpus scores)
        keep what they assemble from these files in this one object."""
        parts = self.__dict__.setdefault("_parts", {})
        if name not in parts:
            parts[name] = build(self)
        return parts[name]



#: the embedded default data, loaded part by part as it is used
DEFAULTS = EmbeddedData()
