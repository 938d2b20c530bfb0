"""The elementary-tree layer TSG, TIG and Bayesian OSTAG share (Cohn et al. 2009/2010; Yamangil & Shieber 2012,
2013): each of those plugins keeps only its own transforms, base distributions and moves.

- `data`: tree preparation (`prepare`: binarize, map rare words to signatures, wrap in TOP, integer-code) ->
  `TSGData` (rows, node kinds, base-PCFG rule log-probs); `TSGSettings` (preparation + the TSG priors).
- `kernels`: numba elementary-tree hashing, the hashed count table, the collapsed Gibbs sweep and per-tree pieces.
- `gibbs`: the substitution-site state `TSGState` and its collapsed Gibbs sampler `GibbsTSG` (Cohn et al. 2009's
  node-flip move); `gibbs_cuts` gives the cuts the TIG and OSTAG samplers start from.
- `tables`: type keys of elementary trees (`key_to_tree`, rule shapes `key_sig` / `row_sig`), per-row base-PCFG
  lookups (`Tables`) and type counts with their match index (`TypeCounts`).
- `types`: `TypeTableState`, the DP families of elementary-tree types of the TIG / OSTAG blocked samplers
  (occurrence counting, predictives, collapsed joint, concentration resampling).

The DP / Pitman-Yor predictive and the collapsed joint themselves are `treegram.bayes.dp`'s (one formula).
"""

from treegram.elementary.data import KIND_BINARY, KIND_LEX, KIND_UNARY, START, TSGData, TSGSettings, prepare
from treegram.elementary.gibbs import GibbsTSG, TSGState, gibbs_cuts
from treegram.elementary.tables import Tables, TypeCounts, key_sig, key_to_tree, node_sigs, row_sig
from treegram.elementary.types import TypeTableState

__all__ = ["GibbsTSG", "KIND_BINARY", "KIND_LEX", "KIND_UNARY", "START", "TSGData", "TSGSettings",
           "TSGState", "Tables", "TypeCounts", "TypeTableState", "gibbs_cuts", "key_sig", "key_to_tree",
           "node_sigs", "prepare", "row_sig"]
