"""Bayesian tree-insertion grammars (issue 5; Yamangil & Shieber 2012).  Work in progress.

- `model`: `TIGSettings` (variant tig | tig0), the derivation encoding and its decoder (elementary-tree
  occurrences, P0 pieces, insertion decisions), label categories and conditional spine PCFG.
- `anchored`: the exact TIG -> TSG -> CFG transform of one training tree (Figure 4), emitted as the TSG plugin's
  `AnchoredCFG` and sampled with the core charts.
- `sampler`: `BlockedTIG` for `treegram.bayes.BlockedMH` (hyperparameters alpha, beta, foot, phi resampled).

Not yet: parsing grammar (string-level transform), CLI (`treegram train tig`), benchmark.
"""

from treegram.plugins.tig.model import TIGSettings
from treegram.plugins.tig.sampler import BlockedTIG

__all__ = ["BlockedTIG", "TIGSettings"]
