"""Semantic-class smoothing of SPINEDEP with EM for the switch parameters (Swanson et al. 2014, section 3, eq. 1).

With S_C mapping a context to its smooth context c~ and S_O an outcome to its smooth outcome o~,

    P(o|c)   = lam_c P1(o|c) + (1 - lam_c) P2(o|c~)
    P1(o|c)  = alp_c P5(o|c)  + (1 - alp_c) P7(o|o~) P3(o~|c)
    P2(o|c~) = bet_c~ P6(o|c~) + (1 - bet_c~) P7(o|o~) P4(o~|c~)

Here the classes come from a word-class function (classes.py: WordNet hypernyms, GloVe k-means clusters): a node
(POS, word) of an open-class POS (noun, verb, adjective, adverb) with an alphabetic word maps to (POS, class);
every other node (function words, punctuation, ROOT) is its own class.  S_C maps each of the context's two nodes;
S_O maps every dependent of the outcome.  Property D of section 4.1 holds: the smooth contexts an outcome implies
are fixed by (c~, o~), because the parent node and POS of an implied context come from c.

Estimation.  The five multinomials P3..P7 are relative frequencies of the training (context, outcome) counts, pairs
seen fewer than `min_count` times discarded (the paper: 2).  Maximum likelihood on the same counts would drive
every switch to the unsmoothed path (P5 *is* the empirical distribution), so the switches lam, alp (one per context)
and bet (one per smooth context) are fitted by EM on the leave-one-out likelihood (deleted interpolation): each
training token is scored by the multinomials estimated without it.  By default every token takes part, pairs seen
once included: they are the novel events smoothing has to predict, and leaving them out (em_tokens="kept") makes
the fine path win almost everywhere, since a held-out token of a kept pair is always still seen in its context.
The latent variable is the path through Figure 1 (1-5, 1-3-7, 2-6, 2-4-7); no iteration lowers that likelihood
(tested).

Materialisation.  The smoothed model is compiled to an ordinary `GenerationModel` over every context reachable
from the root (the "standard PCFG with C_V as its symbol set" of section 4.2), so pruning with FIXUP, goodness,
P_V, expected counts and generating-up apply unchanged and exactly.  A context never seen in training uses
path 2 only (lam = 0); one whose smooth context was never seen either has no outcome and is pruned like any dead
context (`prune_dead`), as the MLE model does.
"""

from __future__ import annotations

import time
from typing import Any, Callable

import attrs
import numpy as np

from treegram.errors import InputError
from treegram.generation import GenerationModel

from treegram.plugins.vocabgen.classes import wn_pos
from treegram.plugins.vocabgen.spinedep import HEAD

ClassFn = Callable[..., "str | None"]


@attrs.frozen
class EMResult:
    lam: np.ndarray          # per training context
    alp: np.ndarray          # per training context
    bet: np.ndarray          # per smooth context
    loglik: list[float]      # leave-one-out log-likelihood before each iteration and after the last
    iterations: int


def smooth_node_key(node: tuple[str, str], classes: ClassFn) -> tuple[str, str, str]:
    """S on one node: (POS, 'C', class) for an open-class alphabetic word with a class, else (POS, 'W', word)."""
    pos, word = node
    if word.isalpha() and wn_pos(pos) is not None:
        cls = classes(word, pos)
        if cls is not None:
            return pos, "C", str(cls)
    return pos, "W", word


def _group(keys: np.ndarray, weights: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(inverse index of every key into the unique keys, summed weight per unique key)."""
    uniq, inv = np.unique(keys, return_inverse=True)
    return inv, np.bincount(inv, weights=weights, minlength=uniq.size)


def em_switches(n: np.ndarray, tc: np.ndarray, cb: np.ndarray, a: np.ndarray, b: np.ndarray, d: np.ndarray,
                e: np.ndarray, n_ctx: int, n_cbar: int, *, max_iter: int = 200, tol: float = 1e-7,
                init: float = 0.5) -> EMResult:
    """EM for (lam_c, alp_c, bet_c~) given per-pair leave-one-out path probabilities a (1-5), b (1-3-7),
    d (2-6), e (2-4-7), pair weights n, the pair's training context tc and smooth context cb."""
    lam = np.full(n_ctx, init)
    alp = np.full(n_ctx, init)
    bet = np.full(n_cbar, init)
    history: list[float] = []
    it = 0
    for it in range(1, max_iter + 1):
        r1 = lam[tc] * alp[tc] * a
        r2 = lam[tc] * (1 - alp[tc]) * b
        r3 = (1 - lam[tc]) * bet[cb] * d
        r4 = (1 - lam[tc]) * (1 - bet[cb]) * e
        total = r1 + r2 + r3 + r4
        ll = float(np.sum(n * np.log(total)))
        history.append(ll)
        w = n / total
        s1 = np.bincount(tc, weights=w * r1, minlength=n_ctx)
        s2 = np.bincount(tc, weights=w * r2, minlength=n_ctx)
        s3 = np.bincount(cb, weights=w * r3, minlength=n_cbar)
        s4 = np.bincount(cb, weights=w * r4, minlength=n_cbar)
        nc = np.bincount(tc, weights=n, minlength=n_ctx)
        with np.errstate(invalid="ignore", divide="ignore"):
            lam = np.clip(np.where(nc > 0, (s1 + s2) / nc, lam), 0.0, 1.0)  # clip: rounding can pass 1
            alp = np.clip(np.where(s1 + s2 > 0, s1 / (s1 + s2), alp), 0.0, 1.0)
            bet = np.clip(np.where(s3 + s4 > 0, s3 / (s3 + s4), bet), 0.0, 1.0)
        if len(history) >= 2 and history[-1] - history[-2] <= tol * abs(history[-1]):
            break
    r = lam[tc] * (alp[tc] * a + (1 - alp[tc]) * b) + (1 - lam[tc]) * (bet[cb] * d + (1 - bet[cb]) * e)
    history.append(float(np.sum(n * np.log(r))))
    return EMResult(lam, alp, bet, history, it)


def smooth_spinedep(mle: GenerationModel, classes: ClassFn, *, name: str = "classes", min_count: int = 1,
                    em_tokens: str = "all", max_iter: int = 200, tol: float = 1e-7,
                    switches: tuple[float, float, float] | None = None, prune: bool = True,
                    max_entries: int = 60_000_000, progress=None) -> GenerationModel:
    """The eq. 1 smoothed SPINEDEP model compiled to a GenerationModel (see the module docstring).

    `mle` is an unpruned MLE model (`fit_mle(..., min_count=1, prune=False)`): its entries and counts are the
    training data.  Pairs seen fewer than `min_count` times are discarded from the multinomials (the paper: 2);
    the EM for the switches sees every token (`em_tokens="all"`) or only the kept pairs ("kept").
    `switches=(lam, alp, bet)` fixes the switch parameters instead of running EM.  `prune=False` keeps dead
    contexts (each live context's distribution then sums to exactly 1); by default they are pruned as in
    `fit_mle`.  Raises InputError when the compiled model would exceed `max_entries` entries.
    """
    t0 = time.perf_counter()
    if mle.system_spec.get("name") != "spinedep":
        raise InputError(f"smoothing is defined for SPINEDEP models, not {mle.system_spec.get('name')!r}",
                         hint="train with `treegram train vocabgen`")
    # -- integer coding of nodes, POS, smooth nodes -----------------------------------------------------------
    node_id: dict[tuple[str, str], int] = {}
    pos_id: dict[str, int] = {}

    def nid(node) -> int:
        i = node_id.get(node)
        if i is None:
            i = node_id[node] = len(node_id)
        return i

    def pid(p: str) -> int:
        i = pos_id.get(p)
        if i is None:
            i = pos_id[p] = len(pos_id)
        return i

    C = mle.n_contexts
    t_node = np.empty(C, dtype=np.int64)
    t_pnode = np.empty(C, dtype=np.int64)
    t_gpos = np.empty(C, dtype=np.int64)
    for i, (node, parent, gpos) in enumerate(mle.contexts):
        t_node[i], t_pnode[i], t_gpos[i] = nid(node), nid(parent), pid(gpos)
    O = mle.n_outcomes
    dep_lists: list[list[int]] = []
    for o in mle.outcomes:
        dep_lists.append([] if o == "END" else [nid(x) for x in o if x != HEAD])
    nodes = list(node_id)
    node_pos = np.asarray([pid(p) for p, _ in nodes], dtype=np.int64)
    snode_id: dict[tuple[str, str, str], int] = {}
    node_snode = np.asarray([snode_id.setdefault(smooth_node_key(nd, classes), len(snode_id)) for nd in nodes],
                            dtype=np.int64)
    NN, NP, NS = len(nodes), len(pos_id), len(snode_id)
    dep_ptr = np.zeros(O + 1, dtype=np.int64)
    np.cumsum([len(x) for x in dep_lists], out=dep_ptr[1:])
    dep_node = np.asarray([x for xs in dep_lists for x in xs], dtype=np.int64)
    # smooth outcomes
    obar_index: dict[Any, int] = {}
    out_obar = np.empty(O, dtype=np.int64)
    for i, o in enumerate(mle.outcomes):
        key = "END" if o == "END" else tuple(-1 if x == HEAD else int(node_snode[node_id[x]]) for x in o)
        out_obar[i] = obar_index.setdefault(key, len(obar_index))
    NOB = len(obar_index)

    def ckey(node, pnode, gpos):
        return (node * NN + pnode) * NP + gpos

    def cbkey(node, pnode, gpos):
        return (node_snode[node] * NS + node_snode[pnode]) * NP + gpos

    # -- training counts ------------------------------------------------------------------------------------------
    pc_all = mle.ctx_of_entry.astype(np.int64)
    po_all = mle.out_id.astype(np.int64)
    n_all = mle.count.astype(np.float64)
    if np.any(n_all <= 0):
        raise InputError("the unsmoothed model has entries without training counts",
                         hint="smooth a model estimated by fit_mle from training data")
    # smooth contexts of every context with a token (the unpruned MLE model also lists implied, unseen ones)
    has_token = np.bincount(pc_all, weights=n_all, minlength=C) > 0
    cbar_keys = np.unique(cbkey(t_node[has_token], t_pnode[has_token], t_gpos[has_token]))
    t_cbar = _lookup(cbar_keys, cbkey(t_node, t_pnode, t_gpos))
    NCB = cbar_keys.size
    # the model's multinomials use the pairs seen at least min_count times
    kept = n_all >= min_count
    pc, po, n = pc_all[kept], po_all[kept], n_all[kept]
    if n.size == 0:
        raise InputError(f"no context/outcome pair was seen {min_count} times or more",
                         hint="lower --min-count or add training data")
    cb = t_cbar[pc]
    ob = out_obar[po]
    n_c = np.bincount(pc, weights=n, minlength=C)
    seen = n_c > 0
    n_cb = np.bincount(cb, weights=n, minlength=NCB)
    n_o = np.bincount(po, weights=n, minlength=O)
    n_ob = np.bincount(out_obar, weights=n_o, minlength=NOB)
    # the switches are fitted on the leave-one-out likelihood of every training token (em_tokens="all": pairs
    # seen once included -- they are the events smoothing exists for) or of the kept pairs only ("kept")
    if em_tokens not in ("all", "kept"):
        raise InputError(f"em_tokens={em_tokens!r}", hint="use 'all' or 'kept'")
    sel = np.ones(n_all.size, dtype=bool) if em_tokens == "all" else kept
    e_pc, e_po, e_n = pc_all[sel], po_all[sel], n_all[sel]
    a, b, d, e = _leave_one_out(e_pc, e_po, e_n, t_cbar[e_pc], out_obar, C, NCB, O, NOB)
    ok = (a + b + d + e) > 0  # a token nothing else predicts carries no information about the switches
    e_cb = t_cbar[e_pc]
    if switches is None:
        em = em_switches(e_n[ok], e_pc[ok], e_cb[ok], a[ok], b[ok], d[ok], e[ok], C, NCB, max_iter=max_iter,
                         tol=tol)
    else:
        lam0, alp0, bet0 = (float(x) for x in switches)
        if not all(0.0 <= x <= 1.0 for x in (lam0, alp0, bet0)):
            raise InputError(f"switches {switches!r} must lie in [0, 1]", hint="e.g. switches=(0.9, 0.9, 0.5)")
        em = EMResult(np.full(C, lam0), np.full(C, alp0), np.full(NCB, bet0), [float("nan")], 0)
    if progress:
        progress("em", em)

    # -- candidate outcomes per smooth context: every o whose o~ was seen with c~ ------------------------------
    cbob = np.unique(cb * NOB + ob)
    pair_cb, pair_ob = cbob // NOB, cbob % NOB
    used = np.flatnonzero(n_o > 0)  # outcomes of kept pairs only
    o_order = used[np.argsort(out_obar[used], kind="stable")]
    ob_ptr = np.zeros(NOB + 1, dtype=np.int64)
    np.cumsum(np.bincount(out_obar[used], minlength=NOB), out=ob_ptr[1:])
    lens = ob_ptr[pair_ob + 1] - ob_ptr[pair_ob]
    cand_cb = np.repeat(pair_cb, lens)
    cand_out = o_order[np.repeat(ob_ptr[pair_ob], lens) + _ranges(lens)]
    srt = np.lexsort((cand_out, cand_cb))
    cand_cb, cand_out = cand_cb[srt], cand_out[srt]
    cand_ptr = np.zeros(NCB + 1, dtype=np.int64)
    np.cumsum(np.bincount(cand_cb, minlength=NCB), out=cand_ptr[1:])
    cand_len = np.diff(cand_ptr)

    # -- contexts reachable from the root, breadth first ---------------------------------------------------
    root_key = ckey(t_node[mle.root], t_pnode[mle.root], t_gpos[mle.root])
    k_node, k_pnode, k_gpos = [t_node[[mle.root]]], [t_pnode[[mle.root]]], [t_gpos[[mle.root]]]
    known = np.asarray([root_key], dtype=np.int64)
    f_node, f_pnode, f_gpos = k_node[0], k_pnode[0], k_gpos[0]
    n_entries = 0
    while f_node.size:
        fcb = _lookup(cbar_keys, cbkey(f_node, f_pnode, f_gpos))
        live = fcb >= 0
        f_node, f_pnode, f_gpos, fcb = f_node[live], f_pnode[live], f_gpos[live], fcb[live]
        cnt = cand_len[fcb]
        n_entries += int(cnt.sum())
        if n_entries > max_entries:
            raise InputError(f"smoothed model exceeds {max_entries} entries", hint="use finer classes or less data")
        e_ctx = np.repeat(np.arange(f_node.size), cnt)
        e_out = cand_out[np.repeat(cand_ptr[fcb], cnt) + _ranges(cnt)]
        dl = dep_ptr[e_out + 1] - dep_ptr[e_out]
        i_ctx = np.repeat(e_ctx, dl)
        i_dep = dep_node[np.repeat(dep_ptr[e_out], dl) + _ranges(dl)]
        child = np.unique(ckey(i_dep, f_node[i_ctx], node_pos[f_pnode[i_ctx]]))
        new = child[~np.isin(child, known, assume_unique=True)]
        known = np.union1d(known, new)
        f_node, f_pnode, f_gpos = new // (NN * NP), (new // NP) % NN, new % NP
        k_node.append(f_node), k_pnode.append(f_pnode), k_gpos.append(f_gpos)
    c_node, c_pnode, c_gpos = np.concatenate(k_node), np.concatenate(k_pnode), np.concatenate(k_gpos)
    NC = c_node.size
    c_keys = ckey(c_node, c_pnode, c_gpos)
    key_order = np.argsort(c_keys)
    sorted_keys = c_keys[key_order]

    # -- entries and probabilities -----------------------------------------------------------------------------
    c_cb = _lookup(cbar_keys, cbkey(c_node, c_pnode, c_gpos))
    t_keys = np.where(seen, ckey(t_node, t_pnode, t_gpos), -1)
    t_sorted = np.argsort(t_keys)
    c_tc = _lookup(t_keys[t_sorted], c_keys)
    c_tc = np.where(c_tc >= 0, t_sorted[np.maximum(c_tc, 0)], -1)
    cnt = np.where(c_cb >= 0, cand_len[np.maximum(c_cb, 0)], 0)
    ctx_ptr = np.zeros(NC + 1, dtype=np.int64)
    np.cumsum(cnt, out=ctx_ptr[1:])
    e_ctx = np.repeat(np.arange(NC), cnt)
    e_cb = c_cb[e_ctx]
    e_out = cand_out[np.repeat(cand_ptr[np.maximum(c_cb, 0)], cnt) + _ranges(cnt)]
    e_ob = out_obar[e_out]
    e_tc = c_tc[e_ctx]
    has_tc = e_tc >= 0
    tcs = np.maximum(e_tc, 0)
    lam = np.where(has_tc, em.lam[tcs], 0.0)
    alp = em.alp[tcs]
    bet = em.bet[e_cb]
    p5 = np.where(has_tc, _count(pc * O + po, n, tcs * O + e_out), 0.0) / np.maximum(n_c[tcs], 1)
    p3 = np.where(has_tc, _count(pc * NOB + ob, n, tcs * NOB + e_ob), 0.0) / np.maximum(n_c[tcs], 1)
    p7 = n_o[e_out] / n_ob[e_ob]
    p6 = _count(cb * O + po, n, e_cb * O + e_out) / n_cb[e_cb]
    p4 = _count(cb * NOB + ob, n, e_cb * NOB + e_ob) / n_cb[e_cb]
    prob = lam * (alp * p5 + (1 - alp) * p3 * p7) + (1 - lam) * (bet * p6 + (1 - bet) * p4 * p7)
    prob = np.maximum(prob, 0.0)  # every term is >= 0; this only removes -1e-17 rounding
    count = np.where(has_tc, _count(pc * O + po, n, tcs * O + e_out), 0.0)
    dl = dep_ptr[e_out + 1] - dep_ptr[e_out]
    imp_ptr = np.zeros(e_out.size + 1, dtype=np.int64)
    np.cumsum(dl, out=imp_ptr[1:])
    i_ctx = np.repeat(e_ctx, dl)
    i_dep = dep_node[np.repeat(dep_ptr[e_out], dl) + _ranges(dl)]
    i_key = ckey(i_dep, c_node[i_ctx], node_pos[c_pnode[i_ctx]])
    imp_ctx = key_order[np.searchsorted(sorted_keys, i_key)]
    pos_names = list(pos_id)
    contexts = [(nodes[a], nodes[b], pos_names[g]) for a, b, g in zip(c_node.tolist(), c_pnode.tolist(),
                                                                      c_gpos.tolist())]
    info = dict(mle.info)
    info.update({"estimator": "smoothed (eq. 1, EM on leave-one-out likelihood)", "smoothing": name,
                 "min_count": min_count, "pairs_kept": int(kept.sum()), "em_tokens": em_tokens,
                 "em_iterations": em.iterations, "em_loglik": [round(x, 6) for x in em.loglik],
                 "smooth_contexts": int(NCB), "smooth_outcomes": int(NOB), "smooth_nodes": int(NS),
                 "nodes": int(NN), "mean_lambda": float(np.average(em.lam, weights=n_c)),
                 "mean_alpha": float(np.average(em.alp, weights=n_c)),
                 "mean_beta": float(np.average(em.bet, weights=n_cb)),
                 "compiled_contexts": int(NC), "compiled_entries": int(e_out.size),
                 "seconds": round(time.perf_counter() - t0, 2)})
    model = GenerationModel(system_spec=mle.system_spec, contexts=contexts, outcomes=mle.outcomes, words=mle.words,
                            root=0, ctx_ptr=ctx_ptr, out_id=e_out, count=count, prob=prob, imp_ptr=imp_ptr,
                            imp_ctx=imp_ctx, word_ptr=mle.word_ptr, word_id=mle.word_id, info=info)
    if not prune:
        return model
    return _compact_words(model.restrict(prob > 0, renormalize=True, note=f"smoothed:{name}"))


def _compact_words(model: GenerationModel) -> GenerationModel:
    """Drop words no outcome emits any more (words only in pairs seen once), so they count as unknown words."""
    used = np.zeros(len(model.words), dtype=bool)
    used[model.word_id] = True
    if used.all():
        return model
    new_id = np.cumsum(used) - 1
    return attrs.evolve(model, words=[w for w, u in zip(model.words, used) if u], word_id=new_id[model.word_id])


def _leave_one_out(pc, po, n, cb, out_obar, C, NCB, O, NOB):
    """Per (context, outcome) pair, the probability of one of its tokens under paths 1-5, 1-3-7, 2-6, 2-4-7 with
    every multinomial estimated from the other tokens (deleted interpolation)."""
    ob = out_obar[po]
    n_c = np.bincount(pc, weights=n, minlength=C)
    n_cb = np.bincount(cb, weights=n, minlength=NCB)
    n_o = np.bincount(po, weights=n, minlength=O)
    n_ob = np.bincount(out_obar, weights=n_o, minlength=NOB)
    inv_c_ob, n_c_ob = _group(pc * NOB + ob, n)
    inv_cb_o, n_cb_o = _group(cb * O + po, n)
    inv_cb_ob, n_cb_ob = _group(cb * NOB + ob, n)
    with np.errstate(invalid="ignore", divide="ignore"):
        p7 = np.where(n_ob[ob] > 1, (n_o[po] - 1) / (n_ob[ob] - 1), 0.0)
        a = np.where(n_c[pc] > 1, (n - 1) / (n_c[pc] - 1), 0.0)
        b = np.where(n_c[pc] > 1, (n_c_ob[inv_c_ob] - 1) / (n_c[pc] - 1), 0.0) * p7
        d = np.where(n_cb[cb] > 1, (n_cb_o[inv_cb_o] - 1) / (n_cb[cb] - 1), 0.0)
        e = np.where(n_cb[cb] > 1, (n_cb_ob[inv_cb_ob] - 1) / (n_cb[cb] - 1), 0.0) * p7
    return a, b, d, e


def _ranges(lengths: np.ndarray) -> np.ndarray:
    """Concatenation of arange(k) for every k in lengths."""
    lengths = np.asarray(lengths, dtype=np.int64)
    total = int(lengths.sum())
    if total == 0:
        return np.zeros(0, dtype=np.int64)
    starts = np.cumsum(lengths) - lengths
    return np.arange(total, dtype=np.int64) - np.repeat(starts, lengths)


def _lookup(sorted_keys: np.ndarray, keys: np.ndarray) -> np.ndarray:
    """Index of every key in sorted_keys, -1 when absent."""
    i = np.searchsorted(sorted_keys, keys)
    i = np.minimum(i, max(sorted_keys.size - 1, 0))
    hit = sorted_keys.size > 0
    return np.where(hit & (sorted_keys[i] == keys), i, -1) if hit else np.full(keys.shape, -1, dtype=np.int64)


def _count(keys: np.ndarray, weights: np.ndarray, query: np.ndarray) -> np.ndarray:
    """Summed weight of each query key among (keys, weights); 0 when absent."""
    uniq, inv = np.unique(keys, return_inverse=True)
    tot = np.bincount(inv, weights=weights, minlength=uniq.size)
    i = _lookup(uniq, query)
    return np.where(i >= 0, tot[np.maximum(i, 0)], 0.0)


def smoother_names() -> list[str]:
    """Names of the registered word-class functions (the `register_smoothers` hook)."""
    from treegram.plugin_manager import smoothers

    return sorted(smoothers())


def make_classes(name: str, **options) -> ClassFn:
    from treegram.plugin_manager import smoothers

    found = smoothers()
    if name not in found:
        raise InputError(f"unknown smoother {name!r}", hint=f"use one of: none, {', '.join(sorted(found))}")
    return found[name].obj(**options)
