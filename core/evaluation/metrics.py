"""Metrics as plugin contributions: the core registers PARSEVAL through `register_metrics`."""

from __future__ import annotations



def parseval_metric(gold_trees, predicted_trees) -> dict[str, float]:
    """EVALB/COLLINS.prm labeled bracket precision, recall, F1 and exact match over aligned tree lists."""
    from treegram.evaluation.parseval import ParsevalParams, score_corpus

    result = score_corpus(list(gold_trees), list(predicted_trees), ParsevalParams())
    return {k: v for k, v in result.to_dict().items() if isinstance(v, (int, float))}


