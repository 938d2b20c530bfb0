"""`AnchoredCFG`: a per-item CFG whose symbols are tied to one item's nodes (a training tree's rows).

Blocked samplers of tree grammars (TSG, TIG, OSTAG) propose a new derivation of one observed tree from a CFG whose
derivations are exactly that tree's derivations in the formalism (Cohn & Blunsom 2010); because every symbol is
anchored at a node, the grammar can only derive the observed tree and no chart masks are needed.  Formalisms fill
the rule arrays; this class turns them into a core `WeightedCFG` + `LexicalInput`, runs the inside pass, draws
exact samples and reads back which anchored symbols (by role) a sampled derivation used.
"""

from __future__ import annotations

import attrs
import numpy as np

from treegram.charts.chart import inside, sample
from treegram.grammar.cfg import LexicalInput, WeightedCFG
from treegram.grammar.symbols import SymbolTable

_ONE_CATEGORY = SymbolTable(["*"]).freeze()
_NO_WORDS = SymbolTable().freeze()
_NAME_CACHE: list[str] = []


def _names(n: int) -> list[str]:
    if len(_NAME_CACHE) < n:
        _NAME_CACHE.extend(str(i) for i in range(len(_NAME_CACHE), max(n, 2 * len(_NAME_CACHE) + 4096)))
    return _NAME_CACHE[:n]


@attrs.frozen(eq=False)
class AnchoredCFG:
    """A per-item CFG whose symbols are anchored at items' nodes: rule arrays, lexical entries, and for every
    symbol the anchored node and a role code (the formalism's own meaning).  `chart()` runs the core inside pass.
    """

    num_symbols: int
    start: int
    n_words: int
    bin_parent: np.ndarray
    bin_left: np.ndarray
    bin_right: np.ndarray
    bin_logp: np.ndarray
    un_parent: np.ndarray
    un_child: np.ndarray
    un_logp: np.ndarray
    lex_pos: np.ndarray
    lex_sym: np.ndarray
    lex_logp: np.ndarray
    sym_node: np.ndarray
    sym_role: np.ndarray

    def to_cfg(self) -> tuple[WeightedCFG, LexicalInput]:
        nts = SymbolTable(_names(self.num_symbols))
        empty_i = np.zeros(0, np.int32)
        cfg = WeightedCFG(nonterminals=nts, words=_NO_WORDS, start=self.start,
                          bin_parent=self.bin_parent, bin_left=self.bin_left, bin_right=self.bin_right,
                          bin_logp=self.bin_logp, un_parent=self.un_parent, un_child=self.un_child,
                          un_logp=self.un_logp, lex_parent=empty_i, lex_word=empty_i,
                          lex_logp=np.zeros(0), categories=_ONE_CATEGORY,
                          category=np.zeros(self.num_symbols, np.int32))
        lex = LexicalInput.from_triples(self.n_words, self.lex_pos, self.lex_sym, self.lex_logp)
        return cfg, lex

    def chart(self):
        cfg, lex = self.to_cfg()
        return inside(cfg, lex)

    def sample(self, rng: np.random.Generator, chart=None):
        """(derivation, log Z): one derivation drawn exactly from the CFG's distribution over derivations
        (pass the `chart()` to reuse it across draws)."""
        chart = self.chart() if chart is None else chart
        _tree, _logp, deriv = sample(chart, rng, words=["w"] * self.n_words)
        return deriv, chart.log_z

    def used_nodes(self, deriv, role: int) -> np.ndarray:
        """Anchored nodes of the symbols of `role` that the derivation rewrites."""
        syms = deriv.steps[:, 2]
        syms = syms[self.sym_role[syms] == role]
        return np.unique(self.sym_node[syms])
