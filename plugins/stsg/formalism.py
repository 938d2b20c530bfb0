"""The `stsg` formalism (`treegram train stsg`): its settings and `STSGFormalism`.  `treegram compress` and
`treegram eval-compression` are core commands (`treegram.compression.cli`) that work on every compressor model."""

from __future__ import annotations

import time

import attrs

from treegram.argtypes import open_probability, positive_float, positive_int
from treegram.compression.policy import CompressorOptions
from treegram.errors import InputError
from treegram.bayes.averaging import average_option, options_averaging, thin_option
from treegram.formalism import Formalism, RunOptions, Sampling, option

from treegram.plugins.stsg import ANNEAL, GIBBS_SWEEPS, SVM_C, SVM_LOSS

#: --iterations when not given, per --method (mcdonald counts --epochs instead)
DEFAULT_ITERATIONS = {"gibbs": GIBBS_SWEEPS, "em": 30, "vb": 30, "svm": 50, "mcdonald": 0}


@attrs.frozen
class STSGOptions(CompressorOptions):
    """`treegram train stsg` options (the settings fields are the command-line options; see treegram.formalism);
    the inputs and the deletion-policy options (group "decoding") come from `CompressorOptions`."""

    method: str = option("gibbs", choices=("gibbs", "em", "vb", "svm", "mcdonald"),
                         help="gibbs: Bayesian STSG (default); em / vb: fixed-grammar baselines; svm: large-margin "
                              "STSG (Cohn & Lapata 2007); mcdonald: McDonald (2006) word-deletion labelling")
    alpha: float = option(100.0, help="DP concentration (default 100)", type=positive_float)
    beta: float = option(0.1, help="expansion probability of the base (default 0.1)", type=open_probability)
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
    average: int = average_option(1, group="sampling")
    thin: int = thin_option(group="sampling")
    epochs: int = option(10, type=positive_int, group="mcdonald",
                         help="passes over the training pairs (--method mcdonald; default 10)")
    update: str = option("mira", choices=("mira", "perceptron"), group="mcdonald",
                         help="1-best MIRA (default) or the averaged perceptron (--method mcdonald)")
    mira_c: float = option(1.0, type=positive_float, group="mcdonald",
                           help="largest MIRA step (--method mcdonald; default 1)")

    def averaging(self):
        return options_averaging(self)


@attrs.frozen
class GibbsSettings:
    """The settings of a Gibbs run that shape the model (the part of `STSGOptions` the sampling contract reads;
    `train_stsg` builds one for library callers)."""

    alpha: float = 100.0
    beta: float = 0.1
    average: int = 1
    thin: int = 0

    def averaging(self):
        return options_averaging(self)


def _progress(record: dict) -> str:
    return f"T={record['temperature']:.2f} logp={record['log_likelihood']:.0f} rules={record.get('rules', '?')}"


class STSGFormalism(Formalism):
    """Gibbs (the default method) runs in the core sampling loop (`treegram.training.run_sampler`: annealing,
    checkpoint/resume, averaging, progress); em / vb / svm / mcdonald train directly (`train`)."""

    name = "stsg"
    description = ("Bayesian synchronous TSG for extractive sentence compression (Gibbs; em / vb baselines; svm: "
                   "large-margin STSG; mcdonald: McDonald 2006)")
    trains_on = "pairs"
    Settings = STSGOptions
    sampling = Sampling(iterations=None, default_move="gibbs", label="Gibbs sweeps", progress=_progress,
                        columns=(("rules", "rules"), ("changed", "changed")), anneal=ANNEAL, checkpoint_every=10,
                        iterations_help=f"Gibbs sweeps (annealed --anneal-start -> --anneal-end; default "
                                        f"{GIBBS_SWEEPS}), EM/VB iterations (default 30) or SVM cutting-plane passes "
                                        "(default 50)")
    state_kinds = ("sites",)

    def run_options(self, options, run: RunOptions) -> RunOptions:
        if run.iterations is None:
            run = attrs.evolve(run, iterations=DEFAULT_ITERATIONS[options.method])
        return run

    def sampled(self, options) -> bool:
        return options.method == "gibbs"

    def load_corpus(self, options: STSGOptions, ctx):
        """The pairs and the parser; the sources parsed (cached) into the integer-coded corpus, except for mcdonald,
        which parses as it trains."""
        from treegram.compression.align import load_training_data
        from treegram.compression.compressor import parser_fingerprint
        from treegram.plugins.stsg.compressor import STSGData, prepare_corpus

        ui = ctx.ui
        started = time.perf_counter()
        parser, pairs = load_training_data(options.pairs, options.parser, limit=options.limit, note=ui.note)
        data = STSGData(pairs, parser, parser_fingerprint(options.parser), options.parse_cache, started=started)
        if options.method != "mcdonald":
            data.corpus, data.parse_counts = prepare_corpus(
                pairs, parser, parser_id=data.parser_id, cache_dir=options.parse_cache, beta=options.beta,
                progress=lambda xs: ui.track(xs, description="parsing sources"))
        return data

    # -- the sampling contract (method gibbs) -------------------------------------------------------------------
    def prepare(self, data, options):
        if data.corpus is None:
            raise InputError("no parsed training corpus", hint="train through `treegram train stsg`")
        return data

    def make_state(self, data, options, kind: str, run: RunOptions, ctx=None):
        from treegram.plugins.stsg.model import STSGSampler

        # resumed: the checkpoint supplies the alignment, so skip the random initial derivation
        return STSGSampler(data.corpus, alpha=options.alpha, seed=run.seed, init="none" if run.resume else "random")

    def extract_model(self, state, data, options, run: RunOptions, trace, *, samples=None, averaging_info=None):
        from treegram.plugins.stsg.compressor import gibbs_model

        return gibbs_model(state, data, alpha=options.alpha, beta=options.beta, seed=run.seed,
                           iterations=run.iterations, trace=trace, samples=samples, averaging_info=averaging_info)

    # -- the other methods ----------------------------------------------------------------------------------------
    def train(self, data, options: STSGOptions, ctx):
        from treegram.plugins.stsg.baselines import train_baseline

        ui = ctx.ui
        run = self.run_options(options, ctx.run or RunOptions(iterations=None, seed=ctx.seed, checkpoint=None))
        if options.method == "mcdonald":
            from treegram.plugins.stsg.mcdonald import train_mcdonald

            return train_mcdonald(data.pairs, data.parser, epochs=options.epochs, update=options.update,
                                  C=options.mira_c, seed=run.seed, parser_id=data.parser_id,
                                  cache_dir=options.parse_cache, ui=ui)
        return train_baseline(options.method, data.corpus, data.pairs, data.parser, iterations=run.iterations,
                              alpha=options.alpha, beta=options.beta, seed=run.seed, parse_counts=data.parse_counts,
                              started=data.started, checkpoint=run.checkpoint, resume=run.resume, ui=ui,
                              **({"loss": options.loss, "C": options.C, "rescaling": options.rescaling,
                                  "epsilon": options.epsilon, "calibrate": options.calibrate}
                                 if options.method == "svm" else {}))

    def finish(self, model, data, options: STSGOptions, ctx):
        """The deletion policy and default length of the `PolicyOptions` (not for mcdonald, which has its own)."""
        if options.method == "mcdonald":
            return model
        from treegram.compression.policy import apply_options

        return apply_options(model, options, parser=data.parser, parser_id=data.parser_id,
                             cache_dir=options.parse_cache, default_text=[p.source for p in data.pairs], ui=ctx.ui)

    def model_schema(self, meta):
        from treegram.plugins.stsg.schema import stsg_schema

        return stsg_schema(meta)

    def load_model(self, meta, arrays):
        from treegram.plugins.stsg.compressor import STSGModel

        if meta.get("kind") == "mcdonald":
            from treegram.plugins.stsg.mcdonald import McDonaldModel

            return McDonaldModel.from_bundle(meta, arrays)
        if meta.get("kind") == "svm":
            from treegram.plugins.stsg.largemargin import SVMSTSGModel

            return SVMSTSGModel.from_bundle(meta, arrays)
        return STSGModel.from_bundle(meta, arrays)
