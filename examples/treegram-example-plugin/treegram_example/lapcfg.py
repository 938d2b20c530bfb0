"""A Bayesian latent-annotation PCFG, written as a third-party treegram formalism.

The model (a small Bayesian relative of Matsuzaki et al. 2005's PCFG-LA).  Every nonterminal node n of a binarized
training tree carries a hidden subcategory z_n in {0..K-1} (TOP has one).  Rules are over annotated symbols,
A_z -> B_x C_y, A_z -> B_x, A_z -> word, and each annotated parent draws its rules from a Dirichlet prior::

    theta_{A_z} ~ Dirichlet(alpha * P0(. | A_z)),     P0(A_z -> B_x C_y) = P_tb(A -> B C) / K^2     (eq. 1)

where P_tb is the relative-frequency PCFG of the (unannotated) treebank.  Integrating theta out gives the
collapsed predictive probability of one more use of rule r with parent A_z::

    p(r | counts) = (c(r) + alpha * P0(r)) / (c(A_z) + alpha)                                        (eq. 2)

The sampler move is the core's collapsed Gibbs site move: site n's value z_n touches two rule events (the
parent's rule, which names z_n on its right-hand side, and n's own rule); `resample_site` removes both, scores
each k with eq. 2 (the two events added one after the other) and draws k.  The parsing grammar is the posterior
predictive of the final sample (eq. 2 for every annotated variant of every treebank rule), whose categories are
the unannotated labels; parses are decoded on the core's charts by any registered decoder (`treegram parse
--decoder mpd|mpp|maxrule|...`) and mapped back by deleting the annotations and undoing the binarization; the same
grammar is a generation system for `treegram generate --model` (`treegram.generation.cfg_view`).

Everything else -- the training loop, annealing, checkpoint/resume, progress, `--sampler`, model files and the
command line -- comes from treegram (`treegram.formalism`).
"""

from __future__ import annotations

import math
from collections import Counter
from typing import Any

import attrs
import numpy as np

from treegram.bayes import tempered_choice
from treegram.argtypes import nonnegative_int, positive_float, positive_int
from treegram.errors import InputError, ParseFailure
from treegram.formalism import Formalism, Sampling, option, save_model
from treegram.trees import RareWordMapper, Tree, binarize, unbinarize

TOP = "TOP"
SEP = "|"  # annotated symbol: f"{label}{SEP}{z}"


# -- 1. settings: the fields are the `treegram train lapcfg` options --------------------------------------------
@attrs.frozen
class LatentPCFGSettings:
    splits: int = option(2, help="latent subcategories per nonterminal K (default 2)", type=positive_int,
                         group="model")
    alpha: float = option(1.0, help="Dirichlet concentration of every annotated parent (default 1)",
                          type=positive_float, group="model")
    horizontal: int = option(1, help="horizontal markovization of the binarization (default 1)",
                             type=nonnegative_int, group="model")
    vertical: int = option(1, help="vertical markovization (default 1: no parent annotation)", type=positive_int,
                           group="model")
    rare_threshold: int = option(2, help="words seen fewer times become unknown-word classes (default 2)",
                                 type=positive_int, group="model")


# -- 2. prepare: the corpus as integer-coded nodes, and the base distribution P0 --------------------------------
@attrs.frozen
class Corpus:
    """All training nodes of all trees, flattened: node 0 of each tree is its TOP."""

    labels: list[str]  # label id -> label
    label: list[int]  # node -> label id
    parent: list[int]  # node -> parent node (-1 for TOP)
    children: list[tuple[int, ...]]  # node -> child nodes (empty for preterminals)
    word: list[str | None]  # preterminal node -> its (mapped) word
    roots: list[int]  # the TOP node of each tree
    sites: np.ndarray  # nodes with a latent subcategory (all but TOP)
    base: dict[tuple, float]  # (label, child labels or word) -> P_tb
    mapper: RareWordMapper


def prepare_corpus(trees, s: LatentPCFGSettings) -> Corpus:
    trees = list(trees)
    if not trees:
        raise InputError("no training trees", hint="check the --treebank paths")
    mapper = RareWordMapper().fit(trees, min_count=s.rare_threshold)
    labels: list[str] = []
    ids: dict[str, int] = {}
    label, parent, children, word, roots = [], [], [], [], []
    for t in trees:
        b = mapper.map_training_tree(binarize(t, horizontal=s.horizontal, vertical=s.vertical))
        stack = [(Tree(TOP, (b,)), -1)]
        while stack:  # pre-order; children are linked to their parent as they are created
            node, par = stack.pop()
            n = len(label)
            label.append(ids.setdefault(node.label, len(ids)))
            if len(labels) < len(ids):
                labels.append(node.label)
            parent.append(par)
            children.append(())
            word.append(None)
            if par < 0:
                roots.append(n)
            else:
                children[par] = children[par] + (n,)
            if len(node.children) == 1 and isinstance(node.children[0], str):
                word[n] = node.children[0]
            else:
                stack.extend((c, n) for c in reversed(node.children))
    rule_count: Counter = Counter()
    for n in range(len(label)):
        rule_count[_base_key(label, children, word, n)] += 1
    lhs_count: Counter = Counter()
    for (lhs, _rhs), c in rule_count.items():
        lhs_count[lhs] += c
    base = {key: c / lhs_count[key[0]] for key, c in rule_count.items()}
    sites = np.array([n for n in range(len(label)) if parent[n] >= 0], dtype=np.int64)
    return Corpus(labels, label, parent, children, word, roots, sites, base, mapper)


def _base_key(label, children, word, n) -> tuple:
    return (label[n], (word[n],) if word[n] is not None else tuple(label[c] for c in children[n]))


# -- 3. the derivation state for the Gibbs site move (implements treegram.bayes.GibbsModel) ----------------------
class LatentState:
    def __init__(self, corpus: Corpus, s: LatentPCFGSettings, seed: int):
        self.c, self.k, self.alpha = corpus, s.splits, s.alpha
        rng = np.random.default_rng(seed)
        self.z = rng.integers(0, self.k, size=len(corpus.label)).tolist()
        for r in corpus.roots:
            self.z[r] = 0
        self._rebuild()

    def _rule(self, n: int) -> tuple:
        c, z = self.c, self.z
        rhs = (c.word[n],) if c.word[n] is not None else tuple((c.label[m], z[m]) for m in c.children[n])
        return (c.label[n], z[n]), rhs

    def _p0(self, rule: tuple) -> float:
        (lab, _z), rhs = rule
        if len(rhs) == 1 and isinstance(rhs[0], str):
            return self.c.base[(lab, rhs)]
        return self.c.base[(lab, tuple(x for x, _ in rhs))] / self.k ** len(rhs)

    def _add(self, rule: tuple, by: int) -> None:
        self.rules[rule] = self.rules.get(rule, 0) + by
        self.lhs[rule[0]] = self.lhs.get(rule[0], 0) + by

    def _log_pred(self, rule: tuple) -> float:  # eq. 2
        return math.log(self.rules.get(rule, 0) + self.alpha * self._p0(rule)) - math.log(
            self.lhs.get(rule[0], 0) + self.alpha)

    def _rebuild(self) -> None:
        self.rules: dict[tuple, int] = {}
        self.lhs: dict[tuple, int] = {}
        for n in range(len(self.z)):
            self._add(self._rule(n), 1)

    # GibbsModel
    def num_sites(self) -> int:
        return len(self.c.sites)

    def resample_site(self, site: int, rng: np.random.Generator, temperature: float) -> bool:
        n = int(self.c.sites[site])
        p = self.c.parent[n]
        old = self.z[n]
        self._add(self._rule(p), -1)
        self._add(self._rule(n), -1)
        scores = []
        for k in range(self.k):
            self.z[n] = k
            above = self._rule(p)
            lp = self._log_pred(above)
            self._add(above, 1)  # the two events one after the other: exact collapsed conditional
            lp += self._log_pred(self._rule(n))
            self._add(above, -1)
            scores.append(lp)
        self.z[n] = tempered_choice(scores, rng, temperature)
        self._add(self._rule(p), 1)
        self._add(self._rule(n), 1)
        return self.z[n] != old

    def log_likelihood(self) -> float:
        """log P(annotated trees) with theta integrated out (Dirichlet-multinomial per annotated parent)."""
        a = self.alpha
        total = sum(math.lgamma(a) - math.lgamma(a + c) for c in self.lhs.values() if c > 0)
        for rule, c in self.rules.items():
            if c > 0:
                ap = a * self._p0(rule)
                total += math.lgamma(c + ap) - math.lgamma(ap)
        return total

    def sweep_stats(self) -> dict[str, Any]:
        return {"subcategories": sum(1 for c in self.lhs.values() if c > 0)}

    def state_dict(self) -> dict[str, Any]:
        return {"z": np.asarray(self.z, dtype=np.int32)}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.z = [int(v) for v in state["z"]]
        self._rebuild()


# -- 4. the trained model: parsing CFG (posterior predictive, eq. 2) and its back-transform ----------------------
class LatentPCFGModel:
    formalism = "lapcfg"

    def __init__(self, cfg, mapper: RareWordMapper, settings: LatentPCFGSettings, info: dict[str, Any]):
        self.cfg, self.mapper, self.settings, self.info = cfg, mapper, settings, info

    @classmethod
    def from_state(cls, state: LatentState, settings: LatentPCFGSettings, trace: list[dict]) -> LatentPCFGModel:
        from treegram.grammar.cfg import WeightedCFG

        c, k, a = state.c, state.k, state.alpha
        ks = range(k)
        binary, unary, lexical = [], [], []
        for (lab, rhs), _p in c.base.items():
            parents = [0] if c.labels[lab] == TOP else ks
            for z in parents:
                sym = _sym(c.labels[lab], z, c.labels[lab] == TOP)
                if len(rhs) == 1 and isinstance(rhs[0], str):
                    lexical.append((sym, rhs[0], state._log_pred(((lab, z), rhs))))
                    continue
                for combo in np.ndindex(*(k,) * len(rhs)):
                    ann = tuple(zip(rhs, combo))
                    lp = state._log_pred(((lab, z), ann))
                    kids = [_sym(c.labels[x], y, False) for x, y in ann]
                    (binary if len(kids) == 2 else unary).append((sym, *kids, lp))
        # categories: the unannotated labels, which the max-rule decoders sum the annotations into
        cfg = WeightedCFG.from_rules(TOP, binary=binary, unary=unary, lexical=lexical, category=_category)
        info = {"training_trees": len(c.roots), "log_likelihood": round(state.log_likelihood(), 3),
                "iterations": len(trace), **state.sweep_stats()}
        return cls(cfg, c.mapper, settings, info)

    def parse(self, tokens: list[str]) -> Tree:
        """The tree of the most probable annotated derivation (`treegram parse`'s default decoder, ``mpd``)."""
        from treegram.charts.decoders import decode_mpd

        return decode_mpd(self, tokens)

    # `treegram.charts.decoders.ChartModel`: with these three methods every registered decoder works on the model
    # (`treegram parse --decoder maxrule` sums over the latent annotations, which Viterbi cannot)
    def chart_input(self, tokens: list[str]):
        from treegram.charts.decoders import ChartInput

        if not tokens:
            raise InputError("empty sentence", hint="give at least one token")
        lex = self.cfg.lexical_input(self.mapper.map_sentence(tokens))
        if lex.uncovered_positions():
            raise ParseFailure(f"no parse for a sentence of {len(tokens)} words (a word with no known class)")
        return ChartInput(self.cfg, lex, list(tokens))

    def derivation_tree(self, derivation, inp) -> Tree:
        """The back-transform: annotations off, then as `category_tree`."""
        return self.category_tree(_strip(derivation.to_tree(self.cfg, inp.words)), inp)

    def category_tree(self, tree: Tree, inp=None) -> Tree:
        if tree.label == TOP and len(tree.children) == 1:
            tree = tree.children[0]
        return unbinarize(tree)

    def generation_view(self):
        """The grammar as a Context/Outcome/Imply generation system (`treegram generate --model`)."""
        from treegram.generation.cfg_view import cfg_generation_view

        return cfg_generation_view(self.cfg, keep_word=self.mapper.is_known, formalism=self.formalism)

    def save(self, path) -> None:
        meta, arrays = self.cfg.to_bundle()
        save_model(path, self, {"settings": attrs.asdict(self.settings), "mapper": self.mapper.to_dict(),
                                "cfg": meta, "info": self.info}, {f"cfg.{k}": v for k, v in arrays.items()})

    @classmethod
    def from_bundle(cls, meta: dict[str, Any], arrays: dict[str, np.ndarray]) -> LatentPCFGModel:
        from treegram.grammar.cfg import WeightedCFG

        cfg = WeightedCFG.from_bundle(meta["cfg"], {k[4:]: v for k, v in arrays.items() if k.startswith("cfg.")})
        return cls(cfg, RareWordMapper.from_dict(meta["mapper"]), LatentPCFGSettings(**meta["settings"]),
                   meta["info"])

    def describe(self, *, top: int = 20) -> dict[str, Any]:
        return {"formalism": self.formalism, **{f"setting_{k}": v for k, v in attrs.asdict(self.settings).items()},
                **self.info, "nonterminals": len(self.cfg.nonterminals), "rules": self.cfg.num_rules}


def _sym(label: str, z: int, top: bool) -> str:
    return label if top else f"{label}{SEP}{z}"


def _category(symbol: str) -> str:
    return symbol.rsplit(SEP, 1)[0] if SEP in symbol else symbol


def _strip(tree: Tree) -> Tree:
    kids = tuple(c if isinstance(c, str) else _strip(c) for c in tree.children)
    return Tree(_category(tree.label), kids)


# -- 5. the formalism: ties the pieces to the core contract ----------------------------------------------------
class LatentPCFG(Formalism):
    name = "lapcfg"
    description = "Bayesian latent-annotation PCFG (example plugin: collapsed Gibbs over node subcategories)"
    trains_on = "trees"
    Settings = LatentPCFGSettings
    sampling = Sampling(iterations=20, default_move="gibbs", columns=(("subcategories", "subcategories"),
                                                                      ("changed", "changed")))
    state_kinds = ("sites",)

    def prepare(self, trees, settings):
        return prepare_corpus(trees, settings)

    def make_state(self, corpus, settings, kind, run, ctx=None):
        return LatentState(corpus, settings, run.seed)

    def extract_model(self, state, corpus, settings, run, trace):
        return LatentPCFGModel.from_state(state, settings, trace)

    def load_model(self, meta, arrays):
        return LatentPCFGModel.from_bundle(meta, arrays)
