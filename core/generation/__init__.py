"""Generation in the Context/Outcome/Imply framework: systems, integer-coded models, ancestral sampling."""

from treegram.generation.model import GenerationModel, fit_mle
from treegram.generation.constraints import (GenerateUp, NoSentenceError, PruneReport, constrain, expected_counts,
                                             goodness, log_likelihood_ratio, oov_outcomes, prune_to_vocabulary,
                                             rejection_sample_entries)
from treegram.generation.ngram import BOS, EOS, NgramSystem
from treegram.generation.pcfg_system import PCFGSystem
from treegram.generation.protocol import (Derivation, GenerationSystem, SystemBase, check_derivation,
                                          from_json_value, to_json_value)
from treegram.generation.registry import BUILTIN_SYSTEMS, make_system
from treegram.generation.sampling import (DeadContextError, DerivationTooLarge, GenerationError, SampleFailure,
                                          sample, sample_entries, sample_text, try_sample)
from treegram.generation.sparse import SparseMatrix

__all__ = [
    "BOS", "BUILTIN_SYSTEMS", "DeadContextError", "Derivation", "DerivationTooLarge", "EOS", "GenerateUp",
    "GenerationError", "GenerationModel", "GenerationSystem", "NgramSystem", "NoSentenceError", "PCFGSystem",
    "PruneReport", "SampleFailure", "SparseMatrix", "SystemBase", "check_derivation", "constrain",
    "expected_counts", "fit_mle", "from_json_value", "goodness", "log_likelihood_ratio", "make_system",
    "oov_outcomes", "prune_to_vocabulary", "rejection_sample_entries", "sample", "sample_entries", "sample_text",
    "to_json_value", "try_sample",
]
