"""`train_stsg`: the library entry point of every STSG compression trainer, as `treegram train stsg` runs them
(gibbs through the formalism on the core sampling loop; em / vb / svm through `baselines`)."""

from __future__ import annotations

import time
from pathlib import Path

from treegram.compression.align import Pair
from treegram.errors import InputError

from treegram.plugins.stsg import GIBBS_SWEEPS
from treegram.plugins.stsg.compressor import STSGData, STSGModel, prepare_corpus


def train_stsg(pairs: list[Pair], parser, *, method: str = "gibbs", iterations: int | None = None,
               alpha: float = 100.0, beta: float = 0.1, seed: int = 0, parser_id: str = "", cache_dir=None,
               checkpoint=None, resume: bool = False, ui=None, corpus=None, callback=None, parse_counts=None,
               started: float | None = None, average: int = 1, thin: int = 0, **svm_options) -> STSGModel:
    """Train a compression model (gibbs: the Bayesian STSG, through the core sampling loop exactly as `treegram
    train stsg` runs it; em / vb: the fixed-grammar baselines; svm: the large-margin STSG of Cohn & Lapata 2007,
    `svm_options` = loss, C, rescaling, epsilon (and `prepared`) of `largemargin.train_svm`, and `calibrate`
    (default True): the length bias of `largemargin.calibrate_length_bias`)."""
    if not pairs:
        raise InputError("no training pairs", hint="check the --pairs files (one tokenized sentence per line)")
    start = time.perf_counter() if started is None else started
    track = (lambda xs, d: ui.track(xs, description=d)) if ui else (lambda xs, d: xs)
    if corpus is None:
        corpus, parse_counts = prepare_corpus(pairs, parser, parser_id=parser_id, cache_dir=cache_dir, beta=beta,
                                              progress=lambda xs: track(xs, "parsing sources"))
    parse_counts = parse_counts or {}
    if method == "gibbs":
        from treegram.formalism import RunOptions, TrainContext
        from treegram.training import run_sampler, sample

        from treegram.plugins.stsg import ANNEAL
        from treegram.plugins.stsg.formalism import GibbsSettings, STSGFormalism

        iterations = GIBBS_SWEEPS if iterations is None else iterations
        run = RunOptions(move="gibbs", iterations=iterations, seed=seed, anneal_start=ANNEAL[0],
                         anneal_end=ANNEAL[1], checkpoint=checkpoint,
                         checkpoint_every=max(1, min(100, iterations // 10)),
                         resume=bool(resume and checkpoint and Path(checkpoint).exists()))
        data = STSGData(pairs, parser, parser_id, cache_dir, corpus, parse_counts, start)
        settings = GibbsSettings(alpha=alpha, beta=beta, average=average, thin=thin)
        if ui is not None and callback is None:
            return run_sampler(STSGFormalism(), data, settings, run, TrainContext(ui=ui, seed=seed))
        return sample(STSGFormalism(), data, settings, run, callback=callback)[0]
    from treegram.plugins.stsg.baselines import train_baseline

    return train_baseline(method, corpus, pairs, parser, iterations=iterations, alpha=alpha, beta=beta, seed=seed,
                          parse_counts=parse_counts, started=start, checkpoint=checkpoint, resume=resume, ui=ui,
                          callback=callback, **svm_options)
