"""The TAG->TSG approximation of Yamangil & Shieber (2013, section 5 and Figure 2): a Bayesian OSTAG model turned into
a TSG with the same derivations, parsed in cubic time by the TSG parser (`treegram convert MODEL --to tsg`).

With Goodman-index adjunction parameters (OSTAG3: one Bernoulli per Goodman node, `grammar.OSTAG`), an adjunction
at node n is remembered completely by n itself, so the paper's construction applies:

* **Goodman-index relabelling.** Every off-spine node n becomes a substitution site of its own label ``X@n``
  (CFG symbol node[n]); its initial trees are n's own subtree (weight 1 - P_adj(n)) and, for every auxiliary tree
  a kept at n, a copy of a whose root and foot are both relabelled ``X@n`` (weight P_adj(n) P_aux(a | X)): the
  foot is again the site ``X@n``, so stacked (simultaneous) adjunction is the same geometric series as in the TAG.
  The spine nodes of a's copy are the symbols pair[s, n] (one per spine node s below a's root).
* **Adjunctions removed in topological order.** In an off-spine TAG no auxiliary tree adjoins on a spine, so the
  spine-adjunction relation of the paper has no edges: every order is topological, nothing is duplicated for
  it, and no cycle has to be broken (an adjunction at an off-spine node of an auxiliary tree is at a Goodman index
  that does not depend on where that tree adjoined).  Grammars with spine adjunction (`--spine-levels` > 0) are
  refused.
* **Kept adjunctions.** The TSG keeps the (auxiliary tree, Goodman index) pairs of the sample's adjunction
  statistics (`OSTAGModel.adjunction_pairs`, mean counts over the averaged samples) with a count of at least
  `min_count` (the paper's construction), and with `min_prob` also every unseen pair whose TAG probability
  P_adj(n) P_aux(a | X) reaches it (coverage for a larger grammar; the only pairs of EM models, which have no
  statistics); every other pair is dropped: its derivations are lost (coverage), all others keep their exact
  probability.  The weights are the TAG's own, not renormalised, so a derivation's probability under the TSG
  equals its probability under the TAG whenever it uses only kept pairs (tests/test_ostag_tag2tsg.py).

The CFG is written in the TSG model file format (symbols 0..L-1 the label sites, L..2L-1 the ``X~base`` symbols
where an unknown word's open-class tag enters, as in `treegram.elementary.base_route`; an OSTAG built on a TSG's
base route, `train ostag --from-tsg`, gets that route back with its weights): unary hops (substitution
of an initial tree at a site, adjunction of an auxiliary tree at a node) are folded into the rules they lead to,
so every symbol of a derivation is one node of the derived tree, and `treegram parse` reads the file with the
TSG plugin's parser and decoders.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Iterable

import numpy as np

from treegram.elementary.base_route import BASE_SUFFIX
from treegram.errors import InputError
from treegram.grammar.cfg import WeightedCFG
from treegram.grammar.symbols import SymbolTable

from treegram.plugins.ostag.grammar import (KIND_BINARY, KIND_LEX, NEG, OSTAG, REF_FOOT, REF_NODE, REF_SITE,
                                            REF_WORD)

TSG_MODEL_VERSION = 1  # the TSG model file version this writer produces (plugins/tsg reads it)


def kept_pairs(model, min_count: float = 0.0, min_prob: float | None = None) -> list[tuple[int, int]]:
    """The (auxiliary tree id, Goodman node id) pairs the TSG keeps, sorted: those of a Bayesian model's adjunction
    statistics with mean count >= min_count (all observed ones by default), and with `min_prob` also every pair
    whose TAG probability P_adj(n) P_aux(a | X) is at least that (unseen adjunctions the model finds likely; the
    only pairs of a model without statistics)."""
    g = model.grammar
    out: set[tuple[int, int]] = set()
    if model.adjunction_pairs is not None:
        aux, node, count = model.adjunction_pairs
        keep = count >= min_count
        out.update(zip(aux[keep].tolist(), node[keep].tolist()))
    elif min_prob is None:
        raise InputError("the model has no adjunction statistics",
                         hint="convert a model written by `treegram train ostag-bayes`, or keep adjunctions by "
                              "probability (--min-prob P)")
    if min_prob is not None:
        nd = g.nodes
        sites = np.flatnonzero(~nd.spine & (g.ctx >= 0))
        lp_site = g.adj_logp[g.ctx[sites]]
        floor = np.log(min_prob) if min_prob > 0 else -np.inf
        for a in range(len(g.auxiliary)):
            at = sites[(nd.label[sites] == g.aux_label[a]) & (lp_site + g.aux_logp[a] >= floor)]
            out.update((a, int(n)) for n in at.tolist())
    return sorted(out)


class _Rules:
    def __init__(self):
        self.bin: list[tuple[int, int, int, float]] = []
        self.un: list[tuple[int, int, float]] = []
        self.lex: list[tuple[int, int, float]] = []

    def add(self, parent: int, rhs: tuple, logp: float) -> None:
        if logp <= NEG / 2:
            return  # a zero-probability rule: no derivation needs it
        if rhs[0] == "w":
            self.lex.append((parent, rhs[1], logp))
        elif len(rhs) == 1:
            self.un.append((parent, rhs[0], logp))
        else:
            self.bin.append((parent, rhs[0], rhs[1], logp))


def tsg_cfg(g: OSTAG, pairs: Iterable[tuple[int, int]], unknown_labels: Iterable[int] = ()) -> tuple[WeightedCFG,
                                                                                                   dict[str, Any]]:
    """The TSG's Goodman CFG of the OSTAG `g` with the adjunction pairs `pairs` kept (see the module docstring);
    `unknown_labels`: label ids that get the hop ``X -> X~base`` (probability 1) for unknown words.  Returns
    (cfg, counts for the report)."""
    nd = g.nodes
    if g.spine_levels:
        raise InputError("the model allows adjunction on spines (--spine-levels > 0)",
                         hint="the conversion covers off-spine TAG models (ostag-bayes, or --spine-levels 0)")
    if nd.virtual.any():
        raise InputError("the grammar has elementary trees with more than two children or words beside "
                         "nonterminals", hint="convert a model over binarized trees (ostag-bayes)")
    nl = len(g.labels)
    by_node: dict[int, list[int]] = {}
    dropped = 0
    for a, n in sorted(set(pairs)):
        ok = (0 <= a < len(g.auxiliary) and 0 <= n < len(nd) and not nd.spine[n] and g.ctx[n] >= 0
              and int(nd.label[n]) == int(g.aux_label[a]) and g.aux_logp[a] > NEG / 2)
        if ok:
            by_node.setdefault(n, []).append(a)
        else:
            dropped += 1
    # symbols: sites, bases, node[n] for every off-spine node used as a child or as a foot target, pair[s, n]
    names = list(g.labels) + [lab + BASE_SUFFIX for lab in g.labels]
    cat = list(range(nl)) + list(range(nl))
    node_sym: dict[int, int] = {}
    pair_sym: dict[tuple[int, int], int] = {}

    def intern(table: dict, key, label: int, name: str) -> int:
        """The symbol of `key` in `table` (`node_sym` or `pair_sym`), made on first use."""
        s = table.get(key)
        if s is None:
            s = table[key] = len(names)
            names.append(name)
            cat.append(label)
        return s

    def sym_of_node(n: int) -> int:
        return intern(node_sym, n, int(nd.label[n]), f"{g.labels.symbol(int(nd.label[n]))}@{n}")

    def sym_of_pair(s: int, n: int) -> int:
        return intern(pair_sym, (s, n), int(nd.label[s]), f"{g.labels.symbol(int(nd.label[s]))}@{n}^{s}")

    def child(n: int, j: int, site: int | None) -> int:
        """Symbol of child j of node n (site: the Goodman node an auxiliary copy is adjoined at, else None)."""
        k, r = int(nd.ck[n, j]), int(nd.cr[n, j])
        if k == REF_SITE:
            return r
        if k == REF_FOOT:
            return sym_of_node(site)
        if site is not None and nd.spine[r]:
            return sym_of_pair(r, site)
        return sym_of_node(r)

    def rhs(n: int, site: int | None) -> tuple:
        k = int(nd.kind[n])
        if k == KIND_LEX:
            return ("w", int(nd.cr[n, 0]))
        if k == KIND_BINARY:
            return (child(n, 0, site), child(n, 1, site))
        return (child(n, 0, site),)

    def expansions(n: int) -> list[tuple[tuple, float]]:
        """The TSG rules' right-hand sides and weights of Goodman node n: its own subtree (no adjunction) and
        each kept auxiliary copy (root relabelled n, foot the site n)."""
        c = int(g.ctx[n])
        out = [(rhs(n, None), float(g.noadj_logp[c]) if c >= 0 else 0.0)]
        for a in by_node.get(n, ()):
            out.append((rhs(int(g.aux_root[a]), n), float(g.adj_logp[c] + g.aux_logp[a])))
        return out

    rules = _Rules()
    for e in range(len(g.initial)):  # substitution folded into the root's expansions
        root = int(g.initial_root[e])
        for r, w in expansions(root):
            rules.add(int(g.initial_label[e]), r, float(g.sub_logp[e]) + w)
    done_nodes: set[int] = set()
    done_pairs: set[tuple[int, int]] = set()
    while len(done_nodes) < len(node_sym) or len(done_pairs) < len(pair_sym):
        for n in sorted(set(node_sym) - done_nodes):
            done_nodes.add(n)
            for r, w in expansions(n):
                rules.add(node_sym[n], r, w)
        for s, n in sorted(set(pair_sym) - done_pairs):
            done_pairs.add((s, n))
            rules.add(pair_sym[(s, n)], rhs(s, n), 0.0)  # spine nodes below the root: no decision (OSTAG)
    if g.base is not None:  # a TSG's base route (EM from --from-tsg, rules 7 and 8): the TSG's own rules again
        b, lab = g.base, g.base_label

        def kid(kind, x):
            return nl + int(lab[x]) if kind == 1 else int(lab[x])  # CHILD_BASE: expand, else stop at the site

        for x, w in zip(b.hop_label.tolist(), b.hop_logp.tolist()):
            rules.add(int(lab[x]), (nl + int(lab[x]),), w)
        for p_, lk, l_, rk, r_, w in zip(b.bin_parent.tolist(), b.bin_lkind.tolist(), b.bin_left.tolist(),
                                        b.bin_rkind.tolist(), b.bin_right.tolist(), b.bin_logp.tolist()):
            rules.add(nl + int(lab[p_]), (kid(lk, l_), kid(rk, r_)), w)
        for p_, k, c, w in zip(b.un_parent.tolist(), b.un_kind.tolist(), b.un_child.tolist(), b.un_logp.tolist()):
            rules.add(nl + int(lab[p_]), (kid(k, c),), w)
        for p_, wd, w in zip(b.lex_parent.tolist(), b.lex_word.tolist(), b.lex_logp.tolist()):
            rules.add(nl + int(lab[p_]), ("w", int(g.base_word[wd])), w)
    else:  # unknown words enter at the site, as in the OSTAG: through the hop X -> X~base (probability 1)
        for lab_id in sorted(set(int(x) for x in unknown_labels)):
            rules.add(lab_id, (nl + lab_id,), 0.0)  # spliced out of derived trees by the TSG parser

    def cols(rows, width):
        if not rows:
            return tuple(np.zeros(0, np.int64) for _ in range(width)) + (np.zeros(0, np.float64),)
        a = np.array(rows, dtype=np.float64)
        return tuple(a[:, i].astype(np.int64) for i in range(width)) + (a[:, width],)

    words = g.words if len(g.words) else SymbolTable(["<none>"])
    cfg = WeightedCFG.from_arrays(SymbolTable(names), words, g.start, binary=cols(rules.bin, 3), unary=cols(rules.un, 2),
                                  lexical=cols(rules.lex, 2), categories=g.labels,
                                  category=np.array(cat, np.int32))
    report = {"kept_adjunction_pairs": sum(len(v) for v in by_node.values()), "refused_pairs": dropped,
              "node_symbols": len(node_sym), "pair_symbols": len(pair_sym), "cfg_symbols": cfg.num_symbols,
              "cfg_rules": cfg.num_rules}
    return cfg, report


def convert_model(model, out: str | Path, *, min_count: float = 0.0, min_prob: float | None = None
                  ) -> dict[str, Any]:
    """Write the TSG of an OSTAG model (the pairs of `kept_pairs`) to `out` in the TSG model file format; returns
    the conversion report."""
    from treegram.elementary.data import TSGSettings
    from treegram.formalism import save_model

    if getattr(model, "formalism", None) != "ostag" or not hasattr(model, "grammar"):
        raise InputError("not an OSTAG model", hint="pass a model written by `treegram train ostag-bayes`")
    g = model.grammar
    pairs = kept_pairs(model, min_count, min_prob)
    coarse = model.pcfg.cfg.nonterminals
    unknown = [g.labels.get(coarse.symbol(int(t))) for t in model.pcfg.unk_tags.tolist()]
    cfg, report = tsg_cfg(g, pairs, [u for u in unknown if u >= 0])
    observed = {"observed_adjunction_pairs": None}
    if model.adjunction_pairs is not None:
        aux, node, count = model.adjunction_pairs
        kept = set(pairs)
        dropped = np.array([(a, n) not in kept for a, n in zip(aux.tolist(), node.tolist())], bool)
        observed = {"observed_adjunction_pairs": int(aux.size), "dropped_observed_pairs": int(dropped.sum()),
                    "dropped_observed_mass": round(float(count[dropped].sum()), 3)}
    report = {"source_initial_trees": len(g.initial), "source_auxiliary_trees": len(g.auxiliary),
              "min_count": min_count, "min_prob": min_prob, **observed, **report}
    s = model.settings
    settings = TSGSettings(horizontal=s.horizontal, vertical=s.vertical, rare_threshold=s.rare_threshold)
    order = np.argsort(-np.asarray(g.initial_count), kind="stable")
    fragments = [{"tree": g.initial[e].to_bracket(), "count": int(round(g.initial_count[e])),
                  "root": g.labels.symbol(int(g.initial_label[e]))} for e in order.tolist()]
    cmeta, carrays = cfg.to_bundle()
    pmeta, parrays = model.pcfg.bundle("pcfg")
    info = {"converted_from": "ostag (TAG->TSG approximation, Yamangil & Shieber 2013 sec. 5)",
            **{k: v for k, v in model.info.items() if not isinstance(v, (dict, list))}, **report}
    meta = {"tsg_version": TSG_MODEL_VERSION, "settings": settings.to_dict(), "info": info, "cfg": cmeta, **pmeta,
            "fragments": fragments, "trace": [], "prune_threshold": float(s.prune_threshold), "mpp_samples": 0}
    if model.default_decoder:
        meta["default_decoder"] = model.default_decoder

    class _Written:
        formalism = "tsg"

    save_model(out, _Written(), meta, {**{f"cfg.{k}": v for k, v in carrays.items()}, **parrays})
    return report


def used_pairs(red, steps: np.ndarray) -> set[tuple[int, int]]:
    """The (auxiliary tree id, Goodman node id) adjunctions a derivation of an OSTAG reduction (`OSTAGCFG`) uses."""
    un = steps[steps[:, 0] == 1, 1]
    un = un[un >= 0]
    t3 = un[red.rtype["unary"][un] == 3]
    return {(int(red.aux["unary"][r]), int(red.sym_node[red.cfg.un_parent[r]])) for r in t3.tolist()}
