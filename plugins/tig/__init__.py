"""Bayesian tree-insertion grammars (issue 5; Yamangil & Shieber 2012).

- `model`: `TIGSettings` (variant tig | tig0), the derivation encoding and its decoder (elementary-tree
  occurrences, P0 pieces, insertion decisions), label categories and conditional spine PCFG.
- `anchored`: the exact TIG -> TSG -> CFG transform of one training tree (Figure 4), emitted as the TSG plugin's
  `AnchoredCFG` and sampled with the core charts.
- `sampler`: `BlockedTIG` for `treegram.bayes.BlockedMH` (hyperparameters alpha, beta, foot, phi resampled).
- `grammar`: the string-level transform over labels for parsing (`Builder`) and the CFG derivation -> TIG
  derivation -> derived tree map (`derived_tree`, `Decoder`).
- `train`: `TIGModel` (parse, save/load, describe, render_grammar), `RunOptions`, `train_tig`.
- `formalism`: `TIGFormalism` (`treegram train tig --variant tig|tig0`), registered in `plugin.py`.
"""

from treegram.plugins.tig.model import TIGSettings
from treegram.plugins.tig.sampler import BlockedTIG
from treegram.plugins.tig.train import RunOptions, TIGModel, train_tig

__all__ = ["BlockedTIG", "RunOptions", "TIGModel", "TIGSettings", "train_tig"]
