"""What an STSG model file holds, per variant (``kind``): the Bayesian/EM/VB grammar (no kind), the large-margin
SVM (``svm``) and McDonald's discriminative compressor (``mcdonald``).  The core checks the schema before loading a
file and before writing one (`treegram.formalism.Formalism.model_schema`)."""

from __future__ import annotations

from typing import Any


def stsg_schema(meta: dict[str, Any]):
    from treegram.compression.compressor import embedded_parser_schema
    from treegram.compression.policy import policy_schema
    from treegram.errors import ModelFileError
    from treegram.schema import (COMMON_OPTIONAL, LOGP, Any as Anything, Arr, Bundle, Dict, Float, Int, List, Str,
                                 Tuple)

    kind = meta.get("kind")
    common = {**COMMON_OPTIONAL, "kind": Str(), "parser": embedded_parser_schema(), "policy": policy_schema()}
    fragment = Anything()  # nested label lists: `fragment_from_json` reads and checks them
    if kind is None:
        rule = Tuple((fragment, fragment, LOGP, Float(min=0)))
        grammar = Dict({"rules": List(rule), "unseen": Dict(values=LOGP), "default_unseen": LOGP}, extra=False)
        return Bundle(meta=Dict({"grammar": grammar}, optional=common))
    if kind == "svm":
        rule = Tuple((fragment, fragment, Float(min=0), Int(min=0, max=1)))
        svm = Dict({"rules": List(rule, length="rules"), "features": List(Str(), length="features")},
                   optional={"version": Int(min=0)})
        return Bundle(meta=Dict({"svm": svm}, optional=common),
                      arrays=Dict({"svm.weights": Arr("f", shape=("features",), finite=True)},
                                  optional={"svm.rule_scores": Arr("f", shape=("rules",), finite=True)}))
    if kind == "mcdonald":
        from treegram.plugins.stsg.mcdonald import FEATURES

        if meta.get("features") != FEATURES:
            raise ModelFileError(f"mcdonald model with feature set {meta.get('features')!r}, but this treegram "
                                 f"computes {FEATURES!r}",
                                 hint="retrain it with `treegram train stsg --method mcdonald`")
        bits = meta.get("bits")
        top = (1 << bits) - 1 if isinstance(bits, int) and not isinstance(bits, bool) and 4 <= bits <= 28 else None
        vocab = Dict({"words": List(Str()), "tags": List(Str()), "labels": List(Str())})
        return Bundle(meta=Dict({"features": Str(), "bits": Int(min=4, max=28), "vocab": vocab}, optional=common),
                      arrays=Dict({"mcdonald.index": Arr("iu", shape=("weights",), min=0, max=top),
                                   "mcdonald.weight": Arr("f", shape=("weights",), finite=True)}))
    raise ModelFileError(f"stsg model of kind {kind!r}, which this treegram does not know",
                         hint="upgrade treegram, or retrain the model")
