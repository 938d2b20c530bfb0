"""The fixed-grammar and large-margin trainers of `treegram train stsg --method em|vb|svm`: the EM / VB
baselines over the extracted rule set (`em`) and the structured SVM of Cohn & Lapata 2007 (`largemargin`), on a
parsed corpus (`compressor.prepare_corpus`), as compression models."""

from __future__ import annotations

import time

from treegram.compression.align import Pair
from treegram.compression.policy import DeletionPolicy
from treegram.errors import InputError

from treegram.plugins.stsg.compressor import STSGModel, _info


def train_baseline(method: str, corpus, pairs: list[Pair], parser, *, iterations: int | None = None,
                   alpha: float = 100.0, beta: float = 0.1, seed: int = 0, parse_counts=None, started: float,
                   checkpoint=None, resume: bool = False, ui=None, callback=None, **svm_options) -> STSGModel:
    """em / vb: the fixed-grammar baselines; svm: the large-margin STSG, `svm_options` = loss, C, rescaling,
    epsilon (and `prepared`) of `largemargin.train_svm`, and `calibrate` (default True): the length bias of
    `largemargin.calibrate_length_bias`."""
    from treegram.plugins.stsg.em import train_em

    start = started
    track = (lambda xs, d: ui.track(xs, description=d)) if ui else (lambda xs, d: xs)
    info = _info(method, pairs, parse_counts or {}, alpha, beta, seed)
    if method in ("em", "vb"):
        iterations = 30 if iterations is None else iterations
        grammar, em_info = train_em(corpus, method=method, iterations=iterations,
                                    progress=lambda xs: track(xs, f"{method.upper()} iterations"))
        info.update({k: v for k, v in em_info.items() if k != "trace"})
        info["trace"] = em_info["trace"]
    elif method == "svm":
        from treegram.plugins.stsg.largemargin import SVMSTSGModel, calibrate_length_bias, train_svm

        iterations = 50 if iterations is None else iterations
        calibrate = svm_options.pop("calibrate", True)
        cal = None
        if calibrate:
            if ui:
                ui.note("length calibration: a model trained without every 5th pair, its bias per kept word set so "
                        "that it keeps as many words of those pairs as their compressions do")
            same = {k: v for k, v in svm_options.items() if k in ("loss", "C", "rescaling", "epsilon", "version")}
            if svm_options.get("prepared") is not None:
                same["version"] = svm_options["prepared"].version
            cal = calibrate_length_bias(corpus, iterations=iterations, **same,
                                        progress=(lambda xs: track(xs, "calibration charts")) if ui else None)
            if ui:
                ui.note(f"length bias {cal['bias']:+.3f} per kept word: held-out rate {cal['rate_before']}% -> "
                        f"{cal['rate_after']}% (gold {cal['gold_rate']}%)")
        grammar, svm_info = train_svm(corpus, iterations=iterations, checkpoint=checkpoint, resume=resume, ui=ui,
                                      callback=callback, **svm_options)
        info.update(svm_info)
        info["calibration"] = cal
        info.pop("alpha", None)  # the DP concentration plays no part in the SVM
        info["training_seconds"] = round(time.perf_counter() - start, 2)
        return SVMSTSGModel(grammar, parser, info, DeletionPolicy(reward=cal["bias"] if cal else 0.0))
    else:
        raise InputError(f"unknown training method {method!r}", hint="use em, vb or svm here")
    info["training_seconds"] = round(time.perf_counter() - start, 2)
    return STSGModel(grammar, parser, info)
