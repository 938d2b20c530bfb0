"""Weighted CFGs on numpy arrays, symbol tables, and relative-frequency estimation."""

from treegram.grammar.cfg import GrammarIndex, LexicalInput, WeightedCFG
from treegram.grammar.estimate import RuleCounts, estimate_pcfg, rule_counts
from treegram.grammar.symbols import SymbolTable

__all__ = ["GrammarIndex", "LexicalInput", "RuleCounts", "SymbolTable", "WeightedCFG", "estimate_pcfg",
           "rule_counts"]
