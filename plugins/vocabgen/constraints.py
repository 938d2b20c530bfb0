"""Compatibility import: the constraint machinery lives in core, `treegram.generation.constraints`."""

from treegram.generation.constraints import *  # noqa: F401,F403
from treegram.generation.constraints import (  # noqa: F401
    SAMPLE_NEED_UNIFORMS, SAMPLE_OK, SAMPLE_SPINE_TOO_LONG, SAMPLE_TOO_LARGE, GenerateUp, NoSentenceError,
    PruneReport, acyclic_edges, algorithm1_keep, constrain, entry_keys, expected_counts, goodness,
    log_likelihood_ratio, mask_contexts, oov_outcomes, prune_to_vocabulary, rejection_sample_entries)
