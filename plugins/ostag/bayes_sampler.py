"""Bayesian OSTAG: sampler state, blocked Metropolis-Hastings (`treegram.bayes.BlockedMH`), training end to end and
extraction of a parsing `OSTAGModel` from the final sample or the posterior average of several.

State: the derivation encoding of every tree (`sub`, `afoot`, see `bayes_model`), the hyperparameters and their RNG.
Type counts are a deterministic function of the encodings (rebuilt every sweep and on load), so a checkpoint stores
only those and a resumed run is the uninterrupted one.

Collapsed joint of one DP with types e (counts n_e, total n): prod_e prod_{k<n_e} (k + alpha P0(e)) /
prod_{j<n} (j + alpha); the adjunction parameters mu are explicit (Beta(1,1) prior, conjugate draw every sweep);
alpha (vague Gamma prior) and the base parameters beta / foot (uniform prior) are slice-sampled from the exact
collapsed joint.

Extraction (section 4's parameter refinement, OSTAG3-style): the sampled initial and auxiliary types become an
`OSTAG` grammar; P_sub(e | c) and P_aux(a | c) are the DP posterior predictives restricted to the grammar,
(n_e + alpha_c P0(e)) / sum, with every depth-1 treebank rule added as an initial tree with pseudo-count
alpha_c P0(rule) (coverage); the adjunction Bernoulli of every Goodman index (`OSTAG` contexts of model
"ostag3") is estimated from the sample's adjunction counts at the elementary nodes with that index, smoothed
towards the sampled per-label mu[c] with `adj_prior` pseudo-counts.  Averaged over K samples
(`treegram.bayes.averaging`, `--average K`; `TypeTableState.averaged_types`): n_e, n_c, alpha, beta, foot and mu are
their means over the samples, and the adjunction counts of every Goodman index the mean of the samples' counts.
"""

from __future__ import annotations

import math
from collections import Counter
from typing import TYPE_CHECKING, Any

import numpy as np

from treegram.argtypes import seed_entropy

from treegram.bayes.blocked import Proposal
from treegram.elementary.data import KIND_BINARY, KIND_LEX, TSGData, TSGSettings
from treegram.elementary.gibbs import gibbs_cuts
from treegram.elementary.tables import key_to_tree
from treegram.elementary.types import TypeTableState
from treegram.errors import InputError
from treegram.trees import Tree

from treegram.plugins.ostag.bayes_model import (DP_AUX, DP_INIT, BayesOSTAGSettings, Hyper, TreeTables,
                                                adjunction_log, decode, key_direction, key_size)
from treegram.plugins.ostag.bayes_proposal import TreeProposal, ostag_counts

if TYPE_CHECKING:
    from treegram.plugins.ostag.formalism import BayesOSTAGOptions


class OSTAGState(TypeTableState):
    """Derivations of all training trees + hyperparameters + the counts built from them (the encoding, checkpoints,
    predictives and base-parameter resampling are the core `TypeTableState`'s)."""

    NAME = "OSTAG"
    ENCODING = (("sub", np.int8), ("afoot", np.int32))

    def __init__(self, data: TSGData, settings: BayesOSTAGSettings, seed: int, init_sub: np.ndarray | None = None):
        self._setup(data, settings, seed, TreeTables, Hyper)
        rng = np.random.default_rng([seed_entropy(self.seed), 1])
        n = data.num_rows
        sub = np.zeros(n, np.int8)
        random_cuts = (rng.random(len(data.sites)) < settings.init_site_prob).astype(np.int8)
        if init_sub is None:
            sub[data.sites] = random_cuts
        else:  # e.g. the cuts of a TSG Gibbs sample on the same data (`BayesOSTAGOptions.tsg_init`)
            if len(init_sub) != n:
                raise InputError(f"initial cuts cover {len(init_sub)} rows, the data has {n}")
            sub[data.sites] = np.asarray(init_sub, np.int8)[data.sites] != 0
        sub[data.is_root] = 1
        self.sub = sub
        self.afoot = np.full(n, -1, np.int32)  # start without adjunction: a TSG derivation
        self.rebuild()
        self._last: tuple[int, float] | None = None

    # -- counts -------------------------------------------------------------------------------------------------
    _new_counts = staticmethod(ostag_counts)

    def _reset_decisions(self, nl: int) -> None:
        self.adj_yes = np.zeros(nl, np.int64)
        self.adj_no = np.zeros(nl, np.int64)

    def decode(self, item: int, enc):
        lo, hi = self.tree_rows(item)
        return decode(self.T, lo, hi, enc[0], enc[1])

    def _count_decisions(self, adj, by: int) -> None:
        for lab, k, _node in adj:
            self.adj_yes[lab] += by * k
            self.adj_no[lab] += by

    def _decisions_log(self, adj) -> float:
        return adjunction_log(adj, self.hyper)

    def _proposal_log_z(self, item: int):
        return self.proposal(item)[1].log_z

    def adjunctions(self) -> int:
        return int(np.count_nonzero(self.afoot >= 0))

    def wrapping(self) -> tuple[int, int]:
        """(wrapping auxiliary types, wrapping adjunction tokens) in the current sample."""
        types = tokens = 0
        for (dp, key), n in self.counts.count.items():
            if dp == DP_AUX and key_direction(key) == "wrap":
                types += 1
                tokens += n
        return types, tokens

    def _proposal_builder(self, lo: int, hi: int) -> TreeProposal:
        return TreeProposal(self.T, self.counts, self.hyper, lo, hi)

    def _decision_joint(self):
        """The adjunction decisions' term of the log joint (Bernoulli mu per label)."""
        h = self.hyper
        yield float((self.adj_yes * np.log(h.mu) + self.adj_no * np.log1p(-h.mu)).sum())

    # -- hyperparameters ----------------------------------------------------------------------------------------
    BASE_ORDERED = True

    def _resample_decisions(self) -> None:
        if not self.settings.fixed_mu:
            self.hyper.mu = self._conjugate_draw(self.adj_yes, self.adj_no, self.hyper.mu)

    @staticmethod
    def _foot_family(o) -> int:
        return 1  # one foot coin per label

    def _base_params(self, which: int) -> np.ndarray:
        return self.hyper.beta if which == 0 else self.hyper.foot


class BlockedOSTAG(OSTAGState):
    """`BlockedModel` for `treegram.bayes.BlockedMH`: items are trees, the proposal is the per-tree hypergraph of
    `bayes_proposal.TreeProposal`, sampled exactly; the MH ratio uses the exact sequential predictive."""

    def propose(self, item: int, rng: np.random.Generator) -> Proposal:
        tp, hg = self.proposal(item)
        enc = tp.encoding(hg, hg.sample(rng))
        self._last = (item, hg.log_z)
        return Proposal(enc, self.log_q(item, enc))

    def sweep_stats(self) -> dict[str, Any]:
        # rebuilding the tables from the encodings makes their iteration order (which orders floating-point sums and
        # proposal edges) match a state loaded from a checkpoint, so a resumed run is the uninterrupted one
        self.rebuild()
        self.resample_hyperparameters()
        ni, na = self.num_types()
        wt, wa = self.wrapping()
        return {"initial": ni, "auxiliary": na, "wrapping": wt, "adjunctions": self.adjunctions(),
                "wrapping_adjunctions": wa}


# -- training ---------------------------------------------------------------------------------------------------------

def prepare_data(trees: list[Tree], settings: BayesOSTAGSettings, pcfg=None):
    """(coarse PCFG, TSGData) for training trees prepared exactly as the OSTAG EM route prepares them."""
    from treegram.grammar.pcfg import PCFGModel, PCFGSettings
    from treegram.plugins.ostag.extract import prepare_tree

    if pcfg is None:
        pcfg = PCFGModel.train(trees, PCFGSettings(horizontal=settings.horizontal, vertical=settings.vertical,
                                                   rare_threshold=settings.rare_threshold,
                                                   mark_unary=settings.mark_unary))
    prep = [prepare_tree(t, pcfg.mapper, horizontal=settings.horizontal, vertical=settings.vertical,
                         mark_unary=settings.mark_unary) for t in trees]
    return pcfg, TSGData(prep)


def tsg_initial_cuts(data: TSGData, settings: BayesOSTAGSettings, sweeps: int, seed: int) -> np.ndarray:
    """Substitution cuts of a Bayesian TSG (the tsg plugin's collapsed Gibbs sampler, `sweeps` sweeps) on the same
    prepared trees: a better starting point for the blocked sampler than random cuts, as in the TIG plugin."""
    return gibbs_cuts(data, TSGSettings(horizontal=settings.horizontal, vertical=settings.vertical,
                                        rare_threshold=settings.rare_threshold), sweeps, seed)


#: Training trees with more nodes are left out (with a note): the per-tree proposal is superlinear in its size.
MAX_TRAIN_NODES = 2000


# -- extraction ---------------------------------------------------------------------------------------------------------

def _type_p0_tree(state: OSTAGState, view, dp: int, key) -> tuple[Tree, float]:
    o = view.types[(dp, key)]
    return key_to_tree(key, state.data.labels, state.data.words), o.log_p0(view.hyper)


def _depth1_rules(state: OSTAGState, h) -> dict[Tree, tuple[int, float]]:
    """Every depth-1 rule of the prepared treebank as an initial tree, with (root label, log P0-init) under the
    hyperparameters `h`."""
    T = state.T
    data = state.data
    labels, words = data.labels, data.words
    out: dict[Tree, tuple[int, float]] = {}
    for f in data.nonterminal_rows.tolist():
        k = T.kind[f]
        L = int(T.label[f])
        lp = T.row_rule_logp(f)
        if k == KIND_LEX:
            t = Tree(labels[L], (words[int(T.pword[f])],))
        else:
            kids = [int(T.child1[f])] + ([int(T.child2[f])] if k == KIND_BINARY else [])
            t = Tree(labels[L], tuple(Tree(labels[int(T.label[y])], ()) for y in kids))
            lp += sum(math.log(h.beta[int(T.label[y])]) for y in kids)
        if t not in out:
            out[t] = (L, lp)
    return out


def goodman_node_ids(grammar) -> dict[tuple, int]:
    """(label id, child ref kind/ref x 2) -> node id of the grammar's non-root nodes (no virtual nodes here)."""
    nd = grammar.nodes
    idx: dict[tuple, int] = {}
    for n in range(len(nd)):
        if nd.aux_root[n]:
            continue
        idx[(int(nd.label[n]), int(nd.ck[n, 0]), int(nd.cr[n, 0]), int(nd.ck[n, 1]), int(nd.cr[n, 1]))] = n
    return idx


def _adjunction_counts(state: OSTAGState, grammar) -> tuple[np.ndarray, np.ndarray, Counter]:
    """Adjunctions / stack ends per OSTAG3 context (Goodman index) over every adjoinable node of the sample, and
    the adjunction statistics {(auxiliary tree id, Goodman node id): adjunctions} (the TAG->TSG conversion's)."""
    from treegram.plugins.ostag.grammar import REF_FOOT, REF_NODE, REF_NONE, REF_SITE, REF_WORD

    labels, words = state.data.labels, state.data.words
    idx = goodman_node_ids(grammar)
    glab, gword = grammar.labels.get, grammar.words.get
    memo: dict[tuple, int] = {}  # keyed by the node itself: id() keys went stale when decoded keys were freed

    def node_id(enode) -> int:
        """Grammar node of a type-key node (off-spine: no foot below); -1 if absent."""
        hit = memo.get(enode)
        if hit is not None:
            return hit
        refs = []
        for k in enode[1:]:
            if k[0] == "w":
                refs.append((REF_WORD, gword(words[k[1]])))
            elif k[0] == "s":
                refs.append((REF_SITE, glab(labels[k[1]])))
            elif k[0] == "*":
                refs.append((REF_FOOT, glab(labels[k[1]])))
            else:
                c = node_id(k)
                refs.append((REF_NODE, c))
        while len(refs) < 2:
            refs.append((REF_NONE, -1))
        n = idx.get((glab(labels[enode[0]]),) + refs[0] + refs[1], -1)
        memo[enode] = n
        return n

    aux_id = {t: a for a, t in enumerate(grammar.auxiliary)}
    adj = np.zeros(grammar.num_ctx)
    noadj = np.zeros(grammar.num_ctx)
    pairs: Counter = Counter()
    for t in range(state.data.num_trees):
        lo, hi = state.tree_rows(t)
        sub, afoot = state.current(t)
        sites: list = []
        _occs, adjs = decode(state.T, lo, hi, sub, afoot, sites)
        for _lab, k, enode in adjs:
            n = node_id(enode)
            c = grammar.ctx[n] if n >= 0 else -1
            if c >= 0:
                adj[c] += k
                noadj[c] += 1
        for enode, stack in sites:
            n = node_id(enode)
            for key in stack:
                a = aux_id.get(key_to_tree(key, labels, words), -1)
                if n >= 0 and a >= 0:
                    pairs[(a, n)] += 1
    return adj, noadj, pairs


def extract_model(state: OSTAGState, pcfg, settings: BayesOSTAGSettings, options: BayesOSTAGOptions, info: dict,
                  trace: list[dict], samples: list[dict] | None = None):
    """The parsing `OSTAGModel` (adjunction prior and pruning from `options`) of the current sample (see the module
    docstring), or with `samples` (`TypeTableState.snapshot()`
    dicts, newest first) of the posterior average: every elementary tree of any sample at
    n̄_e + ᾱ_c P0(e) (mean counts, mean hyperparameters) and the adjunction counts of each Goodman index averaged
    over the samples (`treegram.bayes.averaging`)."""
    from treegram.plugins.ostag.extract import START
    from treegram.plugins.ostag.grammar import OSTAG
    from treegram.plugins.ostag.model import OSTAGModel, OSTAGSettings

    view = state.averaged_types(samples)
    h = view.hyper
    init: dict[Tree, float] = {}
    aux: dict[Tree, float] = {}
    sampled = {DP_INIT: 0, DP_AUX: 0}
    dirs: Counter = Counter()
    for (dp, key), n in sorted(view.count.items(), key=lambda kv: (-kv[1], key_size(kv[0][1]), repr(kv[0][1]))):
        t, lp0 = _type_p0_tree(state, view, dp, key)
        w = n + h.alpha[dp, key[0]] * math.exp(lp0)
        (init if dp == DP_INIT else aux)[t] = w
        sampled[dp] += 1
        if dp == DP_AUX:
            dirs[key_direction(key)] += 1
    added = 0
    for t, (L, lp) in _depth1_rules(state, h).items():
        if t not in init:
            init[t] = h.alpha[DP_INIT, L] * math.exp(lp)
            added += 1
    grammar = OSTAG(init.items(), aux.items(), start=START, model="ostag3")
    per = state.for_each_sample(samples, lambda: _adjunction_counts(state, grammar)) if samples \
        else [_adjunction_counts(state, grammar)]
    adj, noadj = sum(a for a, _, _ in per) / len(per), sum(b for _, b, _ in per) / len(per)
    pairs: Counter = Counter()
    for _a, _b, p in per:
        pairs.update(p)
    order = sorted(pairs)  # (auxiliary tree, node): deterministic
    adjunction_pairs = (np.array([a for a, _n in order], np.int64).reshape(-1),
                        np.array([n for _a, n in order], np.int64).reshape(-1),
                        np.array([pairs[k] / len(per) for k in order], np.float64).reshape(-1))
    data_label = {s: i for i, s in enumerate(state.data.labels)}
    ctx_label = np.array([data_label[grammar.labels.symbol(int(grammar.nodes.label[n]))]
                          for n in grammar.ctx_names], np.int64).reshape(-1)
    mu = h.mu[ctx_label] if ctx_label.size else np.zeros(0)
    grammar.set_params(np.asarray(grammar.initial_count), np.asarray(grammar.aux_count),
                       adj + options.adj_prior * mu, noadj + options.adj_prior * (1 - mu))
    osettings = OSTAGSettings(kind="ostag3", expand=False, horizontal=settings.horizontal,
                              vertical=settings.vertical, mark_unary=settings.mark_unary,
                              rare_threshold=settings.rare_threshold, em_iterations=0,
                              prune_threshold=options.prune_threshold)
    wt, wa = state.wrapping()
    info = {**info, "bayesian": True, "bayes_settings": settings.to_dict(),
            "sampled_initial_trees": sampled[DP_INIT], "sampled_auxiliary_trees": sampled[DP_AUX],
            "sampled_wrapping_auxiliary_trees": dirs["wrap"], "sampled_left_auxiliary_trees": dirs["left"],
            "sampled_right_auxiliary_trees": dirs["right"], "added_depth1_rules": added,
            "training_adjunctions": state.adjunctions(), "training_wrapping_adjunctions": wa,
            "log_likelihood": round(state.log_likelihood(), 3),
            "adjunction_parameters": "OSTAG3 (Goodman index) from the sample's counts, "
                                     f"{options.adj_prior} pseudo-counts towards mu[label]"}
    trace = [{k: v for k, v in r.items()} for r in trace]
    return OSTAGModel(grammar, pcfg, osettings, info, trace, adjunction_pairs=adjunction_pairs)
