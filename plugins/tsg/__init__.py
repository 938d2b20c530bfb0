"""Bayesian tree-substitution grammars (issue 3).

- `data`: `TSGSettings`, `prepare` (binarize, map rare words, wrap in TOP, integer-code) -> `TSGData`.
- `state`: `GibbsTSG` (collapsed node-flip Gibbs, `treegram.bayes.GibbsSampler`) and `BlockedTSG` (whole-tree
  Metropolis-Hastings, `treegram.bayes.BlockedMH`) over one substitution flag per tree node; hyperparameters
  alpha_c / beta_c slice-sampled from the exact collapsed joint.
- `kernels`: numba elementary-tree hashing, count table, Gibbs sweep, per-tree helpers.
- `transform`: the TSG's tree-anchored blocked proposal `TreeProposal` (rules emitted into the core
  `treegram.charts.AnchoredCFG`, the reusable blocked-proposal machinery).
- `grammar`: `TSGModel` (Goodman transform to a `WeightedCFG`, coarse-to-fine Viterbi parsing, bundle I/O).
- `train`: `train_tsg(trees, settings, RunOptions(...))`, checkpoint/resume.
"""

from treegram.plugins.tsg.data import TSGSettings, prepare
from treegram.plugins.tsg.grammar import TSGModel, goodman_cfg
from treegram.plugins.tsg.state import BlockedTSG, GibbsTSG
from treegram.plugins.tsg.train import RunOptions, train_tsg

__all__ = ["BlockedTSG", "GibbsTSG", "RunOptions", "TSGModel", "TSGSettings", "goodman_cfg", "prepare",
           "train_tsg"]
