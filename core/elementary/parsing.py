"""The parsing model TSG and TIG share: a fine CFG (the formalism's Goodman-style transform, whose symbol
categories are the labels of the prepared trees) parsed with the coarse treebank PCFG of the same labels for
coarse-to-fine pruning and for unknown words, through the core decoders (`treegram.charts.decoders.ChartModel`).

A model class mixes `CoarseToFineModel` in and provides `cfg` (`WeightedCFG`), `pcfg` (`treegram.grammar.pcfg.
PCFGModel`), `prune_threshold` (the coarse stage's posterior cutoff), `formalism` and `_base_symbol(label)`: the
fine CFG's symbol that expands a label by the base distribution (where an unknown word's open-class tag enters the
fine grammar), or None.
"""

from __future__ import annotations

import numpy as np

from treegram.elementary.data import START
from treegram.errors import InputError
from treegram.grammar.cfg import LexicalInput
from treegram.trees import Tree, unbinarize


class CoarseToFineModel:
    _unk = None
    _generation_view = None
    cell_beam = None  # the coarse pass's cell beam: None = `treegram.option_groups.CELL_BEAM` (`parse --cell-beam`)

    def _base_symbol(self, label: str) -> int | None:
        raise NotImplementedError

    def _unknown_entries(self) -> tuple[np.ndarray, np.ndarray]:
        """(fine symbols, log P(unseen word | tag)) for the coarse PCFG's open-class fallback tags."""
        if self._unk is None:
            coarse = self.pcfg.cfg.nonterminals
            ids, logp = [], []
            for t, lpv in zip(self.pcfg.unk_tags.tolist(), self.pcfg.unk_logp.tolist()):
                s = self._base_symbol(coarse.symbol(t))
                if s is not None:
                    ids.append(s)
                    logp.append(lpv)
            self._unk = (np.array(ids, np.int32), np.array(logp, np.float64))
        return self._unk

    def lexical_input(self, tokens: list[str]) -> LexicalInput:
        """Lexical rules for known words and signatures; open-class base symbols for never-seen signatures."""
        lex = self.cfg.lexical_input(self.pcfg.mapper.map_sentence(tokens))
        return lex.with_fallback(*self._unknown_entries())

    def _pruning(self, tokens):
        """The coarse-to-fine stage (`treegram.charts.pruning.coarse_stage`; None: off, or no coarse parse)."""
        from treegram.charts.pruning import coarse_stage

        return coarse_stage(self.pcfg.cfg, self.pcfg.lexical_input(tokens), self.cfg, threshold=self.prune_threshold,
                            beam=self.cell_beam)

    def pruning_label(self) -> str:
        """describe()'s account of the parse-time pruning."""
        from treegram.charts.pruning import stage_label

        return stage_label(self.prune_threshold, self.cell_beam)

    # `treegram.charts.decoders.ChartModel`: every core decoder (MPD, MPP, max-rule, ...) works on these models
    def chart_input(self, tokens: list[str]):
        from treegram.charts.decoders import ChartInput

        if not tokens:
            raise InputError("empty sentence", hint="give at least one token")
        return ChartInput(self.cfg, self.lexical_input(tokens), list(tokens), self._pruning(tokens))

    @staticmethod
    def finish_tree(tree: Tree) -> Tree:
        """A derived tree over the prepared labels -> an output tree: the START root dropped, unbinarized."""
        if tree.label == START and len(tree.children) == 1 and isinstance(tree.children[0], Tree):
            tree = tree.children[0]
        return unbinarize(tree)

    def generation_view(self):
        """(GenerationModel, system): this model's parsing grammar as a Context/Outcome/Imply generation system
        (`treegram.generation.cfg_view`), for `treegram generate --model`; words only (signatures left out)."""
        if self._generation_view is None:
            from treegram.generation.cfg_view import cfg_generation_view

            self._generation_view = cfg_generation_view(self.cfg, keep_word=self.pcfg.mapper.is_known,
                                                         formalism=self.formalism)
        return self._generation_view
