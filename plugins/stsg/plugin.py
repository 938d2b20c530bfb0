"""The stsg plugin's hook implementations: the `stsg` formalism (`treegram train stsg`).  `treegram compress` and
`treegram eval-compression` are core commands (`treegram.compression.cli`) that work on every compressor model."""

from __future__ import annotations

from pathlib import Path

import attrs

from treegram.argtypes import open_probability, positive_float, positive_int
from treegram.compression.policy import PolicyOptions
from treegram.formalism import Formalism, option
from treegram.plugin_manager import hookimpl

from treegram.plugins.stsg import GIBBS_SWEEPS, SVM_C, SVM_LOSS


@attrs.frozen
class STSGOptions(PolicyOptions):
    """`treegram train stsg` options (the settings fields are the command-line options; see treegram.formalism);
    the deletion-policy options (group "decoding") come from `PolicyOptions`."""

    pairs: list = option(required=True, nargs=2, metavar=("SRC", "TGT"), type=Path,
                         help="line-parallel files: long sentences and their compressions, one tokenized "
                              "sentence per line")
    parser: str = option(required=True, type=str,
                         help="a treegram parsing model (pcfg, tsg, ...) for the source sentences, or `spacy`: the "
                              "installed spaCy pipeline's dependency parses as dependency-projected trees (spacy-binary: "
                              "one dependent per node)")
    method: str = option("gibbs", choices=("gibbs", "em", "vb", "svm", "mcdonald"),
                         help="gibbs: Bayesian STSG (default); em / vb: fixed-grammar baselines; svm: large-margin "
                              "STSG (Cohn & Lapata 2007); mcdonald: McDonald (2006) word-deletion labelling")
    iterations: int | None = option(None, type=positive_int,
                                    help=f"Gibbs sweeps (annealed T 5 -> 0; default {GIBBS_SWEEPS}), EM/VB iterations "
                                         "(default 30) or SVM cutting-plane passes (default 50)")
    alpha: float = option(100.0, help="DP concentration (default 100)", type=positive_float)
    beta: float = option(0.1, help="expansion probability of the base (default 0.1)", type=open_probability)
    limit: int | None = option(None, help="use only the first N pairs", type=positive_int)
    parse_cache: Path | None = option(None, type=Path,
                                      help="directory for cached source parses (bracket files keyed by input + "
                                           "parser)")
    loss: str = option(SVM_LOSS, choices=("prec", "bp1", "bp2", "hamming"), group="svm",
                       help="svm: loss of the loss-augmented decoding: 1 - unigram precision (prec), times the "
                            "one-sided (bp1) or two-sided (bp2) brevity penalty, or the Hamming loss (default: "
                            "the best on held-out training pairs, benchmarks/RESULTS.md stsg-svm-select)")
    C: float = option(SVM_C, type=positive_float, group="svm",
                      help="svm: regularisation trade-off C of 1/2|w|^2 + C/n sum xi (default 1: the best of "
                           "0.01-1 on held-out training pairs, benchmarks/RESULTS.md stsg-svm-select)")
    rescaling: str = option("slack", choices=("slack", "margin"), group="svm",
                            help="svm: slack (default, as the paper) or margin rescaling of the loss")
    epsilon: float = option(0.01, type=positive_float, group="svm",
                            help="svm: add a constraint when it is violated by more than this (default 0.01)")
    calibrate: bool = option(True, flag="--no-calibrate", group="svm",
                             help="svm: keep the raw model's length (default: a per-kept-word bias calibrated on "
                                  "held-out training pairs, so that new sentences keep about the gold share of words; "
                                  "costs a second training on 4/5 of the pairs)")
    checkpoint: Path | None = option(None, type=Path, help="checkpoint file (Gibbs sweeps, SVM passes)")
    resume: bool = option(False, help="continue from --checkpoint if it exists")
    epochs: int = option(10, type=positive_int, group="mcdonald",
                         help="passes over the training pairs (--method mcdonald; default 10)")
    update: str = option("mira", choices=("mira", "perceptron"), group="mcdonald",
                         help="1-best MIRA (default) or the averaged perceptron (--method mcdonald)")
    mira_c: float = option(1.0, type=positive_float, group="mcdonald",
                           help="largest MIRA step (--method mcdonald; default 1)")


class STSGFormalism(Formalism):
    name = "stsg"
    description = ("Bayesian synchronous TSG for extractive sentence compression (Gibbs; em / vb baselines; svm: "
                   "large-margin STSG; mcdonald: McDonald 2006)")
    trains_on = "pairs"
    Settings = STSGOptions

    def train(self, corpus, options: STSGOptions, ctx):
        from treegram.compression.align import load_training_data
        from treegram.compression.compressor import parser_fingerprint as model_fingerprint
        from treegram.compression.policy import apply_options
        from treegram.plugins.stsg.compressor import train_stsg

        ui = ctx.ui
        parser, pairs = load_training_data(options.pairs, options.parser, limit=options.limit, note=ui.note)
        if options.method == "mcdonald":
            from treegram.plugins.stsg.mcdonald import train_mcdonald

            return train_mcdonald(pairs, parser, epochs=options.epochs, update=options.update, C=options.mira_c,
                                  seed=ctx.seed, parser_id=model_fingerprint(options.parser),
                                  cache_dir=options.parse_cache, ui=ui)
        model = train_stsg(pairs, parser, method=options.method, iterations=options.iterations, alpha=options.alpha,
                           beta=options.beta, seed=ctx.seed, parser_id=model_fingerprint(options.parser),
                           cache_dir=options.parse_cache, checkpoint=options.checkpoint, resume=options.resume, ui=ui,
                           **({"loss": options.loss, "C": options.C, "rescaling": options.rescaling,
                               "epsilon": options.epsilon, "calibrate": options.calibrate}
                              if options.method == "svm" else {}))
        return apply_options(model, options, parser=parser, parser_id=model_fingerprint(options.parser),
                             cache_dir=options.parse_cache, default_text=[p.source for p in pairs], ui=ui)

    def load_model(self, meta, arrays):
        from treegram.plugins.stsg.compressor import STSGModel

        if meta.get("kind") == "mcdonald":
            from treegram.plugins.stsg.mcdonald import McDonaldModel

            return McDonaldModel.from_bundle(meta, arrays)
        if meta.get("kind") == "svm":
            from treegram.plugins.stsg.largemargin import SVMSTSGModel

            return SVMSTSGModel.from_bundle(meta, arrays)
        return STSGModel.from_bundle(meta, arrays)


@hookimpl
def register_formalisms(register):
    register(STSGFormalism())
