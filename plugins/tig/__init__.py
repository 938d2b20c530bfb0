"""Bayesian tree-insertion grammars (issue 5; Yamangil & Shieber 2012).

Module names mean the same in every plugin: `model` the trained model `treegram train` writes, `proposal` the
blocked sampler's per-tree CFG transform, `grammar` the parsing grammar's transform, `train` training end to end.
Tree preparation, type keys / counts and the TSG Gibbs start are the core elementary-tree layer's
(`treegram.elementary`).

- `derivation`: `TIGSettings` (variant tig | tig0), the derivation encoding and its decoder (elementary-tree
  occurrences, P0 pieces, insertion decisions), label categories and conditional spine PCFG (`TIGTables`).
- `proposal`: the exact TIG -> TSG -> CFG transform of one training tree (Figure 4), emitted as the core
  `AnchoredCFG` and sampled with the core charts.
- `sampler`: `BlockedTIG` for `treegram.bayes.BlockedMH` (hyperparameters alpha, beta, foot, phi resampled).
- `grammar`: the string-level transform over labels for parsing (`Builder`) and the CFG derivation -> TIG
  derivation -> derived tree map (`derived_tree`, `Decoder`).
- `model`: `TIGModel` (parse, save/load, describe, render_grammar).
- `train`: `extract_model` (sampler state -> `TIGModel`).
- `formalism`: `TIGFormalism` (`treegram train tig --variant tig|tig0`), registered in `plugin.py`, and
  `train_tig(trees, TIGOptions(...), RunOptions(...))` (the core loop, as `treegram train tig` runs it).

Shipped defaults (issue 16, measured by `benchmarks/bench_parsing_defaults_tag.py`): TIG0, started from 100 TSG
collapsed-Gibbs sweeps, and the model file records `default_decoder = "maxrule"` (max-rule-product over the
inside-outside rule posteriors), which `treegram parse` uses when given no --decoder.
"""

from treegram.plugins.tig.derivation import TIGSettings
from treegram.plugins.tig.model import TIGModel
from treegram.plugins.tig.sampler import BlockedTIG
from treegram.plugins.tig.formalism import train_tig

__all__ = ["BlockedTIG", "TIGModel", "TIGSettings", "train_tig"]
