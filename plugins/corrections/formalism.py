"""The `corrections` formalism: `treegram train corrections` settings and `CorrectionsFormalism` (the model is
`model.py`'s `CorrectionsModel`)."""

from __future__ import annotations

from pathlib import Path

import attrs

from treegram.argtypes import positive_float, positive_int
from treegram.formalism import Formalism, option
from treegram.plugins.corrections.model import FORMALISM


@attrs.frozen
class CorrectionsOptions:
    """`treegram train corrections` options (the settings fields are the command-line options)."""

    fce: list = option(required=True, nargs="+", type=Path, metavar="FILE.json",
                       help="FCE JSON-lines files (BEA-2019 release): essays with coded character edits")
    C: float = option(1.0, flag="--C", type=positive_float, help="inverse L2 regularisation strength (default 1)")
    max_iter: int = option(100, type=positive_int, help="lbfgs iterations (default 100)")
    lexical: bool = option(True, flag="--no-lexical",
                           help="leave out the lexicalised features (the ablation of section 3.1)")


class CorrectionsFormalism(Formalism):
    name = FORMALISM
    description = ("learner-correction classifier (Swanson & Yamangil 2012): log-linear model over edit-path "
                   "features, trained on CLC FCE essays")
    trains_on = "pairs"
    Settings = CorrectionsOptions

    def train(self, corpus, options: CorrectionsOptions, ctx):
        from treegram.plugins.corrections.fce import read_fce
        from treegram.plugins.corrections.model import CorrectionsModel
        from treegram.plugins.corrections.pipeline import instance_features

        ui = ctx.ui
        _, instances = read_fce(options.fce)
        ui.note(f"{len(instances)} correction instances from {len(options.fce)} file(s)")
        feats = instance_features(instances, lexical=options.lexical, ui=ui)
        # two lbfgs fits (sklearn reports no iterations): a step each, so the ETA shows after the first
        with ui.task("fitting log-linear models (75 codes, 15 classes)", 2) as advance:
            return CorrectionsModel.train(feats, [i.code for i in instances], C=options.C, max_iter=options.max_iter,
                                          seed=ctx.seed, lexical=options.lexical,
                                          progress=lambda info: advance(1, info=info))

    def model_schema(self, meta):
        from treegram.plugins.corrections.model import corrections_schema

        return corrections_schema()

    def load_model(self, meta, arrays):
        from treegram.plugins.corrections.model import CorrectionsModel

        return CorrectionsModel.from_bundle(meta, arrays)
