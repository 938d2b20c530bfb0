"""Generation in the Context/Outcome/Imply framework: systems, integer-coded models, ancestral sampling."""

from treegram.generation.model import GenerationModel, fit_mle
from treegram.generation.ngram import BOS, EOS, NgramSystem
from treegram.generation.pcfg_system import PCFGSystem
from treegram.generation.protocol import (Derivation, GenerationSystem, SystemBase, check_derivation,
                                          from_json_value, to_json_value)
from treegram.generation.registry import BUILTIN_SYSTEMS, make_system
from treegram.generation.sampling import (DeadContextError, DerivationTooLarge, GenerationError, SampleFailure,
                                          sample, sample_entries, sample_text, try_sample)
from treegram.generation.sparse import SparseMatrix

__all__ = [
    "BOS", "BUILTIN_SYSTEMS", "DeadContextError", "Derivation", "DerivationTooLarge", "EOS", "GenerationError",
    "GenerationModel", "GenerationSystem", "NgramSystem", "PCFGSystem", "SampleFailure", "SparseMatrix",
    "SystemBase", "check_derivation", "fit_mle", "from_json_value", "make_system", "sample", "sample_entries",
    "sample_text", "to_json_value", "try_sample",
]
