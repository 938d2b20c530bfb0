"""Bayesian tree-substitution grammars (issue 3).

The tree preparation, the substitution-site state and its collapsed Gibbs sampler are the core elementary-tree
layer's (`treegram.elementary`: `TSGSettings`, `prepare` -> `TSGData`, `GibbsTSG`, the numba kernels); this plugin
keeps the TSG formalism:

- `state`: `BlockedTSG` (whole-tree Metropolis-Hastings, `treegram.bayes.BlockedMH`) over the core
  substitution-site state; hyperparameters alpha_c / beta_c slice-sampled from the exact collapsed joint.
- `proposal`: the TSG's tree-anchored blocked proposal `TreeProposal` (rules emitted into the core
  `treegram.charts.AnchoredCFG`, the reusable blocked-proposal machinery).
- `model`: `TSGModel` (Goodman transform to a `WeightedCFG`, coarse-to-fine Viterbi parsing, bundle I/O).
- `train`: `extract_model` (sampler state -> `TSGModel`) and the tree preparation.
- `formalism`: `TSGFormalism`, its options `TSGOptions` and `train_tsg(trees, TSGOptions(...), RunOptions(...))`
  (the core loop, as `treegram train tsg` runs it; `RunOptions` is the core's, `treegram.formalism`).
"""

from treegram.elementary import GibbsTSG, TSGSettings, prepare
from treegram.plugins.tsg.model import TSGModel, goodman_cfg
from treegram.plugins.tsg.state import BlockedTSG
from treegram.plugins.tsg.formalism import train_tsg

__all__ = ["BlockedTSG", "GibbsTSG", "TSGModel", "TSGSettings", "goodman_cfg", "prepare",
           "train_tsg"]
