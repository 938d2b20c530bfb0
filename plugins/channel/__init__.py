"""Lexicalized noisy-channel sentence compression (Yamangil & Nelken 2008) and Knight & Marcu's (2000) model as its
level-4 special case.

- `model`: Witten-Bell tables, the head-lexicalized source model p(s), the six-level channel p(l|s), the score of a
  compression and exact decoding over all compressions of the long tree on the core tree chart
- `compressor`: `ChannelModel` (model file with the embedded parser; the compressor protocol of `treegram compress`)
  and `train_channel`
- `plugin`: `treegram train channel`

Pair reading, tree preparation and evaluation are shared with stsg through `treegram.compression`.
"""

# The default back-off chain of `treegram train channel`: Knight & Marcu's level 4 with its PCFG source model, the
# better measured setting on broadcast-news dev (benchmarks/RESULTS.md `channel`, `compression-defaults`; 6 is the
# lexicalized model).  Model files carry their own levels, so older level-6 models load unchanged.
DEFAULT_LEVELS = 4
