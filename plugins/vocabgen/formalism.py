"""The `treegram train vocabgen` formalism through the core contract (`treegram.formalism`): its settings (the
fields are the command-line options) and `train`, which parses the sentences with spaCy (or reads gold trees) and
estimates the SPINEDEP generation model of model.py.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import attrs
import numpy as np

from treegram.argtypes import nonnegative_int
from treegram.corpora import DepSentence
from treegram.errors import InputError
from treegram.formalism import Formalism, option

from treegram.plugins.vocabgen.model import VocabgenModel, read_tree_paths, vocabgen_schema


def _smooth_choices() -> list[str]:
    from treegram.plugins.vocabgen.smoothing import smoother_names

    return ["none", *smoother_names()]


@attrs.frozen
class VocabgenOptions:
    """`treegram train vocabgen` options (the settings fields are the command-line options; see treegram.formalism)."""

    sentences: list = option(attrs.Factory(list), nargs="*", metavar="FILE|DIR",
                             help="text, one sentence per line (.tsv: first column); parsed with spaCy, cached")
    trees: list = option(attrs.Factory(list), nargs="*", metavar="DIR",
                         help="gold dependency trees (.conllu/.dp files or directories)")
    min_count: int = option(2, type=nonnegative_int,
                            help="discard context/outcome pairs seen fewer times (default 2, as the paper)")
    smooth: str = option("none", choices=_smooth_choices,
                         help="semantic-class smoothing of eq. 1 with EM switches: WordNet hypernyms or k-means "
                              "clusters of GloVe vectors (500/5000; clustered once, cached) (default none)")
    cache: Path | None = option(None, type=Path, help="parse cache directory (default: the user cache dir)")


class VocabgenFormalism(Formalism):
    name = "vocabgen"
    description = "SPINEDEP generation model for vocabulary-limited sentences (train on text or dependency trees)"
    trains_on = "sentences"
    Settings = VocabgenOptions

    def train(self, corpus, options: VocabgenOptions, ctx) -> VocabgenModel:
        from treegram.plugins.vocabgen.parsing import parse_sentences, read_sentences
        from treegram.plugins.vocabgen.vocab import user_cache_dir

        ui = ctx.ui
        if not options.sentences and not options.trees:
            raise InputError("no training data", hint="give --sentences FILE... and/or --trees DIR...")
        deps: list[DepSentence] = []
        if options.trees:
            deps.extend(read_tree_paths(options.trees))
        if options.sentences:
            texts = read_sentences(options.sentences)
            cache = options.cache if options.cache is not None else user_cache_dir() / "parses"
            with ui.task("parsing sentences (spaCy)", total=len(texts)) as advance:
                deps.extend(parse_sentences(texts, cache_dir=cache, progress=advance))
        ui.note(f"{len(deps)} training trees")
        classes = None
        if options.smooth != "none":
            from treegram.plugins.vocabgen.smoothing import make_classes

            with ui.task(f"loading word classes ({options.smooth})", total=None):
                classes = make_classes(options.smooth)
        with ui.task("estimating" + (" (EM for the smoothing switches)" if classes else ""), total=None):
            model = VocabgenModel.train(deps, min_count=options.min_count, smooth=options.smooth, classes=classes,
                                        settings={"seed": ctx.seed})
        info = model.generation.info
        if classes is not None:
            ll = info.get("em_loglik", [])
            ui.note(f"smoothed ({options.smooth}): {info['em_iterations']} EM iterations, leave-one-out "
                    f"log-likelihood {ll[0]:.1f} -> {ll[-1]:.1f}; {model.generation.n_contexts} contexts, "
                    f"{model.generation.n_entries} entries")
        return model

    def model_schema(self, meta: dict[str, Any]):
        return vocabgen_schema()

    def load_model(self, meta: dict[str, Any], arrays: dict[str, np.ndarray]) -> VocabgenModel:
        return VocabgenModel.from_bundle(meta, arrays)
