"""Evaluation: EVALB-compatible PARSEVAL scoring and paired significance tests."""

from treegram.evaluation.parseval import (
    ParsevalParams,
    ParsevalResult,
    SentenceScore,
    evalb_files,
    score_corpus,
    score_sentence,
    strip_function_tags,
)
from treegram.evaluation.significance import (
    SignificanceResult,
    approximate_randomization,
    paired_bootstrap,
    paired_parseval_counts,
    parseval_f1,
)

__all__ = [
    "ParsevalParams",
    "ParsevalResult",
    "SentenceScore",
    "SignificanceResult",
    "approximate_randomization",
    "evalb_files",
    "paired_bootstrap",
    "paired_parseval_counts",
    "parseval_f1",
    "score_corpus",
    "score_sentence",
    "strip_function_tags",
]
