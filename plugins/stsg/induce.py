"""Grammar induction for the large-margin STSG (Cohn & Lapata 2007, section 3.2), from word-aligned parsed pairs.

Alignment.  The word alignment A is the plugin's deletion alignment (`align`: the longest common subsequence of
source and compression, a kept word aligned with itself; pairs whose compression rewrites words are projected onto
their LCS and kept, not dropped).  Target trees are derived from the source parse (`treeprep.derive_target`).

Aligned constituent pairs.  The alignment-template constraint

    C = {(n_S, n_T) : some link (s, t) has s in Y(n_S) and t in Y(n_T), and no link has exactly one end inside}

reduces, for a monotone deletion alignment, to: the kept words of source node n_S are exactly the words of target node
n_T (their spans coincide once kept source words are mapped to target positions).  `model.PairCorpus` lists these
candidates per source node (`cands`); source nodes with no kept word pair with epsilon (deleted constituents, whose
frontier positions become the *dropped variables* of a rule).

Rules.  `model.maximal_alignment` aligns every source node that has an aligned partner (top-down) -- the maximally
general derivation, whose elementary tree pairs are the minimal synchronous rules (Figure 3 of the paper).  More
specific rules conjoin a minimal rule with one minimal rule directly below it; these are kept when they occur at
least `min_count` times (singletons pruned) and have at most `max_vars` variables.  Both steps are the extraction the
EM/VB baselines share (`em.ExtractedForest`), so the three fixed-grammar systems decode over the same rule set.

Copy rules.  `grammar.FiniteSTSG` adds, at decoding time, the copy rule (X Y1[1] .. Yn[n]) / (X Y1[1] .. Yn[n]) and the
deletion rule (X Y1[] .. Yn[]) / eps of every source CFG production (and tag/word) not in the grammar, so that every
source tree decodes; `InducedGrammar.is_seen` tells them apart and the feature set flags them as unseen.

Counts.  Every rule keeps its extraction count c(s, t) (occurrences of the pair in the corpus as a minimal or kept
composed rule), from which the relative frequencies phi(t|s) = c(s,t)/c(s), phi(s|t) = c(s,t)/c(t) and
phi(s,t) = c(s,t)/N of the feature set (section 3.3) follow.  A rule outside the grammar (a copy/delete or
keep-subset rule added at decoding time) has c(s,t) = `UNSEEN_COUNT` in the version-2 features
(`smoothed_log_frequencies`), so that its frequencies are below every seen rule's instead of missing; and every rule
has its smoothed log probability given its root pair, lp(e|c), by the Bayesian STSG's formula
(`grammar.FiniteSTSG.from_counts`, Laplace smoothing over the induced rules of each root pair).
"""

from __future__ import annotations

import math
from collections import Counter

import numpy as np

from treegram.plugins.stsg.grammar import fragment_from_json, fragment_to_json
from treegram.plugins.stsg.model import Fragment, PairCorpus, rule_string

__all__ = ["InducedRule", "InducedGrammar", "induce_grammar", "UNSEEN_COUNT"]

UNSEEN_COUNT = 0.5  # the extraction count a rule outside the grammar is given in its relative frequencies


class InducedRule:
    """One synchronous rule with its extraction statistics."""

    __slots__ = ("fragment", "text", "count", "minimal", "source_text", "target_text")

    def __init__(self, fragment: Fragment, count: float, minimal: bool, text: str | None = None):
        self.fragment = fragment
        self.text = text if text is not None else str(fragment)
        self.count = float(count)
        self.minimal = bool(minimal)
        self.source_text, _, self.target_text = self.text.partition(" / ")


class InducedGrammar:
    """The induced rules and the counts behind the relative-frequency features."""

    def __init__(self, rules: list[InducedRule]):
        self.rules = rules
        self.by_text = {r.text: r for r in rules}
        self.source_count: Counter = Counter()
        self.target_count: Counter = Counter()
        for r in rules:
            self.source_count[r.source_text] += r.count
            self.target_count[r.target_text] += r.count
        self.total = float(sum(r.count for r in rules)) or 1.0
        self._finite = None  # (rule text -> lp(e|c), the smoothed FiniteSTSG), built on first use

    def __len__(self) -> int:
        return len(self.rules)

    def is_seen(self, text: str) -> bool:
        r = self.by_text.get(text)
        return r is not None and r.count > 0

    def log_relative_frequencies(self, fragment: Fragment) -> tuple[float, float, float] | None:
        """(log phi(t|s), log phi(s|t), log phi(s,t)) of a rule, or None for a rule not in the grammar."""
        text = rule_string(fragment.source, fragment.target)
        r = self.by_text.get(text)
        if r is None or r.count <= 0:
            return None
        return (math.log(r.count / self.source_count[r.source_text]),
                math.log(r.count / self.target_count[r.target_text]),
                math.log(r.count / self.total))

    def smoothed_log_frequencies(self, fragment: Fragment, text: str | None = None) -> tuple[float, float, float]:
        """(log phi(t|s), log phi(s|t), log phi(s,t)) with c(s,t) = `UNSEEN_COUNT` for a rule not in the grammar
        (its source and target counts grow by as much)."""
        text = text if text is not None else rule_string(fragment.source, fragment.target)
        r = self.by_text.get(text)
        if r is not None and r.count > 0:
            c, cs, ct = r.count, self.source_count[r.source_text], self.target_count[r.target_text]
        else:
            src, _, tgt = text.partition(" / ")
            c = UNSEEN_COUNT
            cs, ct = self.source_count.get(src, 0.0) + c, self.target_count.get(tgt, 0.0) + c
        return math.log(c / cs), math.log(c / ct), math.log(c / (self.total + c))

    def log_prob_given_roots(self, fragment: Fragment, text: str | None = None) -> float:
        """lp(e|c): the rule's log probability given its root pair in the finite grammar the Bayesian STSG would
        build from these counts (`FiniteSTSG.from_counts`: Laplace smoothing; an unseen rule gets the unseen
        probability of its root pair)."""
        if self._finite is None:
            from treegram.plugins.stsg.grammar import FiniteSTSG

            g = FiniteSTSG.from_counts([(r.fragment, r.count) for r in self.rules if r.count > 0], [])
            self._finite = ({r.text: r.logp for r in g.rules}, g)
        table, g = self._finite
        text = text if text is not None else rule_string(fragment.source, fragment.target)
        lp = table.get(text)
        return lp if lp is not None else g._unseen(fragment.category)

    @property
    def n_minimal(self) -> int:
        return sum(r.minimal for r in self.rules)

    # -- persistence (JSON data) ----------------------------------------------------------------------------------
    def to_json(self) -> list:
        return [[fragment_to_json(r.fragment.source),
                 None if r.fragment.target is None else fragment_to_json(r.fragment.target), r.count, int(r.minimal)]
                for r in self.rules]

    @classmethod
    def from_json(cls, rows: list) -> "InducedGrammar":
        return cls([InducedRule(Fragment(fragment_from_json(s), None if t is None else fragment_from_json(t)),
                                float(n), bool(m)) for s, t, n, m in rows])


def induce_grammar(corpus: PairCorpus, *, min_count: int = 2, max_vars: int = 3) -> InducedGrammar:
    """Minimal rules plus composed rules (>= `min_count` occurrences, <= `max_vars` variables) of a corpus."""
    from treegram.plugins.stsg.em import ExtractedForest

    forest = ExtractedForest(corpus, min_count=min_count, max_vars=max_vars)
    counts = np.zeros(forest.num_rules)
    for r in forest.order:
        for rid, _frontier in forest.cands[r]:
            counts[rid] += 1
    rules, seen = [], set()
    for rid in range(forest.num_rules):
        f = forest.fragment(rid)
        text = str(f)
        if text in seen:  # two hashes can print alike only through label collisions; keep the first
            continue
        seen.add(text)
        rules.append(InducedRule(f, counts[rid], rid < forest.n_minimal, text))
    return InducedGrammar(rules)
