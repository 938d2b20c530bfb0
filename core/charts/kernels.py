"""Numba kernels of the chart decoders (log space throughout).

Chart layout (shared by Viterbi and inside charts).  Cell (i, j) has id i * (n + 1) + j and two layers:
  * pre  - symbols built directly over the span: by a lexical entry (length 1) or a binary rule (length > 1);
  * post - symbols after the unary closure: post[A] = max/sum over B in pre of closure(A, B) (+) pre[B].
Binary rules combine *post* entries of the two child cells into *pre* entries of the parent cell.
Each layer of a cell is a contiguous, symbol-sorted slice `[start, start + len)` of flat arrays, so a symbol's
entry is found by binary search.  Filling a cell uses a dense scratch vector of size #symbols and a touched
list, so dense memory is O(#symbols), never O(n^2 #symbols).

Backpointers (Viterbi): pre entries store (rule, split) - for length-1 cells `rule` is the index of the
lexical-input entry and split is -1; post entries store the pre symbol B the closure chain ends in.

Derivation steps come out as rows (kind, rule, parent, start, end, aux) in pre-order:
  kind 0 lexical: rule = grammar lexical rule (or -1 if the entry was supplied from outside), aux = entry index;
  kind 1 unary:   rule = grammar unary rule, aux = child symbol;
  kind 2 binary:  rule = grammar binary rule, aux = split point.
"""

from __future__ import annotations

import numba
import numpy as np

from treegram.jit import sort_prefix

NEG_INF = -np.inf
KIND_LEXICAL = 0
KIND_UNARY = 1
KIND_BINARY = 2


@numba.njit(cache=True, inline="always")
def _acc_add(mx, ln, k, x):
    """Add exp(x) to the sum kept as mx[k] + log(ln[k]) - one exp per term instead of exp + log1p."""
    m = mx[k]
    if x <= m:
        ln[k] += np.exp(x - m)
    elif m == NEG_INF:
        mx[k] = x
        ln[k] = 1.0
    else:
        ln[k] = ln[k] * np.exp(m - x) + 1.0
        mx[k] = x


@numba.njit(cache=True)
def _grow(a, need):
    """`a` with room for at least `need` rows (doubling; same dtype and row shape; the first rows kept)."""
    if need <= a.shape[0]:
        return a
    b = np.empty((max(need, 2 * a.shape[0]),) + a.shape[1:], a.dtype)
    # C order: a's rows are the first a.size elements of b; a flat loop, not a slice assignment (whose
    # shape-mismatch error path costs more to compile than the rest of a kernel)
    af = a.reshape(a.size)
    bf = b.reshape(b.size)
    for t in range(a.size):
        bf[t] = af[t]
    return b


@numba.njit(cache=True)
def _find(sym, lo, hi, s):
    """Index of symbol s in the sorted slice sym[lo:hi], or -1."""
    while lo < hi:
        mid = (lo + hi) >> 1
        v = sym[mid]
        if v < s:
            lo = mid + 1
        elif v > s:
            hi = mid
        else:
            return mid
    return -1


@numba.njit(cache=True)
def _prune(syms, scores, a, b, c, cnt, beam, threshold):
    """Keep the entries within `threshold` nats of the best and at most `beam` of them; stays symbol-sorted."""
    if cnt == 0:
        return 0
    best = scores[0]
    for t in range(1, cnt):
        if scores[t] > best:
            best = scores[t]
    keep = 0
    if threshold < np.inf:
        floor = best - threshold
        for t in range(cnt):
            if scores[t] >= floor:
                syms[keep] = syms[t]
                scores[keep] = scores[t]
                a[keep] = a[t]
                b[keep] = b[t]
                c[keep] = c[t]
                keep += 1
    else:
        keep = cnt
    if beam > 0 and keep > beam:
        # the `beam` best, ties going to the earlier (lower) symbol, kept in symbol order: the beam-th best score
        # is the cutoff; every entry above it stays, and of those equal to it the first ones fill the beam
        tmp = scores[:keep].copy()
        sort_prefix(tmp, keep)
        cutoff = tmp[keep - beam]
        ties = beam
        for t in range(keep):
            if scores[t] > cutoff:
                ties -= 1
        out = 0
        for t in range(keep):
            x = scores[t]
            if x > cutoff or (x == cutoff and ties > 0):
                if x == cutoff:
                    ties -= 1
                syms[out] = syms[t]
                scores[out] = x
                a[out] = a[t]
                b[out] = b[t]
                c[out] = c[t]
                out += 1
        keep = out
    return keep


@numba.njit(cache=True)
def fill_chart(mode, n, nsym,
               lex_ptr, lex_sym, lex_logp,
               bl_ptr, bl_right, bl_parent, bl_logp, bl_rule,
               cl_ptr, cl_parent, cl_logw,
               category, has_mask, pre_mask, post_mask, cell_any, beam, threshold,
               has_look, look_side, look_cat, ext_left, ext_right):
    """Bottom-up chart fill.  mode 0 = Viterbi (max, with backpointers), 1 = inside (log-sum-exp).

    `cl_*` is the unary closure grouped by child (parents sorted) with the mode's weights.  With `has_mask`,
    a pre entry for symbol s in cell (i, j) is kept only if pre_mask[i, j, category[s]], a post entry only if
    post_mask[i, j, category[s]]; `cell_any[i, j]` says whether the cell's pre layer allows anything.
    `beam` (<= 0: off) and `threshold` (inf: off) prune post layers.  With `has_look` (masks only), a post
    entry of a symbol used only as the left (look_side 1) / right (2) child of binary rules whose parents have
    category look_cat is kept only if ext_right[i, j, look_cat] / ext_left[i, j, look_cat]: some span the
    parent could cover is allowed by pre_mask.  Those entries are dead (in no derivation), so dropping them
    changes no other entry's score.
    """
    viterbi = mode == 0
    ncell = (n + 1) * (n + 1)
    pre_start = np.zeros(ncell, np.int64)
    pre_len = np.zeros(ncell, np.int64)
    post_start = np.zeros(ncell, np.int64)
    post_len = np.zeros(ncell, np.int64)
    cap = 4096
    pre_sym = np.empty(cap, np.int32)
    pre_score = np.empty(cap, np.float64)
    pre_rule = np.empty(cap, np.int32)
    pre_split = np.empty(cap, np.int32)
    post_sym = np.empty(cap, np.int32)
    post_score = np.empty(cap, np.float64)
    post_child = np.empty(cap, np.int32)
    npre = 0
    npost = 0

    acc = np.full(nsym, NEG_INF)  # Viterbi: best score; inside: running max of the terms
    lin = np.zeros(nsym)  # inside: sum of exp(term - acc)
    is_t = np.zeros(nsym, np.bool_)
    acc_a = np.zeros(nsym, np.int32)
    acc_b = np.zeros(nsym, np.int32)
    touched = np.empty(nsym, np.int32)
    rscore = np.full(nsym, NEG_INF)
    # per-cell staging for pruning / writing (sized #symbols: a cell never has more entries)
    st_sym = np.empty(nsym, np.int32)
    st_score = np.empty(nsym, np.float64)
    st_a = np.empty(nsym, np.int32)
    st_b = np.empty(nsym, np.int32)
    st_c = np.empty(nsym, np.int32)
    mrow = pre_mask[0, 0]
    mtop = post_mask[0, 0]

    for length in range(1, n + 1):
        for i in range(0, n - length + 1):
            j = i + length
            cell = i * (n + 1) + j
            pre_start[cell] = npre
            post_start[cell] = npost
            if has_mask:
                if not cell_any[i, j]:
                    continue
                mrow = pre_mask[i, j]
                mtop = post_mask[i, j]
            nt = 0
            if length == 1:
                for e in range(lex_ptr[i], lex_ptr[i + 1]):
                    a = lex_sym[e]
                    if has_mask and not mrow[category[a]]:
                        continue
                    x = lex_logp[e]
                    if x == NEG_INF:
                        continue
                    if not is_t[a]:
                        is_t[a] = True
                        touched[nt] = a
                        nt += 1
                        acc[a] = x
                        lin[a] = 1.0
                        acc_a[a] = e
                        acc_b[a] = -1
                    elif viterbi:
                        if x > acc[a]:
                            acc[a] = x
                            acc_a[a] = e
                    else:
                        _acc_add(acc, lin, a, x)
            else:
                for k in range(i + 1, j):
                    lc = i * (n + 1) + k
                    rc = k * (n + 1) + j
                    if post_len[lc] == 0 or post_len[rc] == 0:
                        continue
                    r0 = post_start[rc]
                    r1 = r0 + post_len[rc]
                    for r in range(r0, r1):
                        rscore[post_sym[r]] = post_score[r]
                    l0 = post_start[lc]
                    for li in range(l0, l0 + post_len[lc]):
                        b = post_sym[li]
                        sb = post_score[li]
                        for q in range(bl_ptr[b], bl_ptr[b + 1]):
                            sc = rscore[bl_right[q]]
                            if sc == NEG_INF:
                                continue
                            a = bl_parent[q]
                            if has_mask and not mrow[category[a]]:
                                continue
                            x = sb + sc + bl_logp[q]
                            if not is_t[a]:
                                is_t[a] = True
                                touched[nt] = a
                                nt += 1
                                acc[a] = x
                                lin[a] = 1.0
                                acc_a[a] = bl_rule[q]
                                acc_b[a] = k
                            elif viterbi:
                                if x > acc[a]:
                                    acc[a] = x
                                    acc_a[a] = bl_rule[q]
                                    acc_b[a] = k
                            elif x > NEG_INF:
                                _acc_add(acc, lin, a, x)
                    for r in range(r0, r1):
                        rscore[post_sym[r]] = NEG_INF
            if nt == 0:
                continue
            # write the pre layer (symbol-sorted)
            sort_prefix(touched, nt)  # symbol order
            srt = touched
            need = npre + nt
            if need > pre_sym.shape[0]:
                pre_sym = _grow(pre_sym, need)
                pre_score = _grow(pre_score, need)
                pre_rule = _grow(pre_rule, need)
                pre_split = _grow(pre_split, need)
            for t in range(nt):
                a = srt[t]
                pre_sym[npre + t] = a
                pre_score[npre + t] = acc[a] if viterbi else acc[a] + np.log(lin[a])
                pre_rule[npre + t] = acc_a[a]
                pre_split[npre + t] = acc_b[a]
                acc[a] = NEG_INF
                is_t[a] = False
            p0 = npre
            npre += nt
            pre_len[cell] = nt

            # unary closure: post[A] = best/sum over pre B of closure(A, B) + pre[B]
            nt = 0
            for p in range(p0, npre):
                b = pre_sym[p]
                sb = pre_score[p]
                for c in range(cl_ptr[b], cl_ptr[b + 1]):
                    a = cl_parent[c]
                    if has_mask and not mtop[category[a]]:
                        continue
                    if has_look:
                        side = look_side[a]
                        if side == 1:
                            if not ext_right[i, j, look_cat[a]]:
                                continue
                        elif side == 2:
                            if not ext_left[i, j, look_cat[a]]:
                                continue
                    x = sb + cl_logw[c]
                    if x == NEG_INF:
                        continue
                    if not is_t[a]:
                        is_t[a] = True
                        touched[nt] = a
                        nt += 1
                        acc[a] = x
                        lin[a] = 1.0
                        acc_a[a] = b
                    elif viterbi:
                        if x > acc[a]:
                            acc[a] = x
                            acc_a[a] = b
                    else:
                        _acc_add(acc, lin, a, x)
            sort_prefix(touched, nt)  # symbol order
            srt = touched
            cnt = 0
            for t in range(nt):
                a = srt[t]
                if acc[a] > NEG_INF:
                    st_sym[cnt] = a
                    st_score[cnt] = acc[a] if viterbi else acc[a] + np.log(lin[a])
                    st_a[cnt] = acc_a[a]
                    cnt += 1
                acc[a] = NEG_INF
                is_t[a] = False
            if beam > 0 or threshold < np.inf:
                cnt = _prune(st_sym, st_score, st_a, st_b, st_c, cnt, beam, threshold)
            need = npost + cnt
            if need > post_sym.shape[0]:
                post_sym = _grow(post_sym, need)
                post_score = _grow(post_score, need)
                post_child = _grow(post_child, need)
            for t in range(cnt):
                post_sym[npost + t] = st_sym[t]
                post_score[npost + t] = st_score[t]
                post_child[npost + t] = st_a[t]
            npost += cnt
            post_len[cell] = cnt
    return (pre_start, pre_len, pre_sym[:npre].copy(), pre_score[:npre].copy(), pre_rule[:npre].copy(),
            pre_split[:npre].copy(), post_start, post_len, post_sym[:npost].copy(), post_score[:npost].copy(),
            post_child[:npost].copy())


@numba.njit(cache=True, inline="always")
def _put_row(rows, r, c0, c1, c2, c3, c4, c5):
    """`rows` (a 6-column table, grown if full) with row r = (c0, ..., c5): a derivation step (kind, rule, parent,
    start, end, aux) here, an anchored rule posterior in `decoders`."""
    rows = _grow(rows, r + 1)
    rows[r, 0] = c0
    rows[r, 1] = c1
    rows[r, 2] = c2
    rows[r, 3] = c3
    rows[r, 4] = c4
    rows[r, 5] = c5
    return rows


@numba.njit(cache=True, inline="always")
def _push(stack, sp, a, i, j):
    """Push node (symbol a over (i, j)) onto the top-down stack; the new stack size."""
    stack[sp, 0] = a
    stack[sp, 1] = i
    stack[sp, 2] = j
    return sp + 1


@numba.njit(cache=True)
def _root_stack(n, start, post_start, post_len, post_sym):
    """The top-down stack of a derivation walk holding the root node (start over (0, n)) and its size: 0 if the
    chart has no parse of `start`."""
    stack = np.empty((2 * n + 2, 3), np.int64)
    if _find(post_sym, post_start[n], post_start[n] + post_len[n], start) < 0:
        return stack, 0
    return stack, _push(stack, 0, start, 0, n)


@numba.njit(cache=True)
def viterbi_backtrace(n, start, pre_start, pre_len, pre_sym, pre_rule, pre_split,
                      post_start, post_len, post_sym, post_child,
                      bin_left, bin_right, cl_ptr, cl_parent, cl_next, cl_rule, lex_rule):
    """Pre-order derivation steps of the best parse of `start` over (0, n); empty if there is none."""
    steps = np.empty((4 * n + 8, 6), np.int64)
    ns = 0
    stack, sp = _root_stack(n, start, post_start, post_len, post_sym)
    while sp > 0:
        sp -= 1
        a = stack[sp, 0]
        i = stack[sp, 1]
        j = stack[sp, 2]
        cell = i * (n + 1) + j
        e = _find(post_sym, post_start[cell], post_start[cell] + post_len[cell], a)
        b = post_child[e]
        x = a
        while x != b:
            c = _find(cl_parent, cl_ptr[b], cl_ptr[b + 1], x)
            y = cl_next[c]
            steps = _put_row(steps, ns, KIND_UNARY, cl_rule[c], x, i, j, y)
            ns += 1
            x = y
        p = _find(pre_sym, pre_start[cell], pre_start[cell] + pre_len[cell], b)
        if j - i == 1:
            ent = pre_rule[p]
            steps = _put_row(steps, ns, KIND_LEXICAL, lex_rule[ent], b, i, j, ent)
        else:
            r = pre_rule[p]
            k = pre_split[p]
            steps = _put_row(steps, ns, KIND_BINARY, r, b, i, j, k)
            sp = _push(stack, sp, bin_right[r], k, j)
            sp = _push(stack, sp, bin_left[r], i, k)
        ns += 1
    return steps[:ns].copy()


@numba.njit(cache=True, inline="always")
def _mark_needed(syms, lo, hi, need, need_list, nn):
    """Append syms[lo:hi] not yet marked in `need` to need_list[nn:]; return the new length."""
    for t in range(lo, hi):
        x = syms[t]
        if not need[x]:
            need[x] = True
            need_list[nn] = x
            nn += 1
    return nn


@numba.njit(cache=True)
def outside_pass(n, nsym, start, logz, counts,
                 pre_start, pre_len, pre_sym, pre_score, post_start, post_len, post_sym, post_score,
                 lex_ptr, lex_sym, lex_logp, lex_rule, n_lex_rules,
                 bl_ptr, bl_right, bl_parent, bl_logp, bl_rule, n_bin,
                 up_ptr, up_child, up_logp, up_rule, n_un,
                 cl_ptr, cl_parent, cl_logw, cp_ptr, cp_child, cp_logw):
    """Outside scores for an inside chart, top-down, plus (if `counts`) expected rule counts.

    `cl_*` is the closure grouped by child, `cp_*` the same entries grouped by parent (inside weights; the pass
    reads the by-child view only since issue 16, `cp_*` stays in the signature its callers share).
    Masks restrict the two ends of a unary chain only (the chart's post and pre layers), so a symbol in the
    middle of a chain need not be an entry of the cell.  Per live cell the pass therefore computes, for every
    symbol X (entry or not):
      inside_mid(X)  = sum over pre entries B of closure(X, B) inside_pre(B) (post entries: post_score = this)
      outside_mid(X) = sum over post entries A of outside(A) closure(A, X)   (pre entries: out_pre = this)
    and credits a unary rule X -> Y with outside_mid(X) P(X -> Y) inside_mid(Y) / Z, i.e. every use of the
    rule on any chain between a kept top and a kept bottom.  outside_mid is computed only for the cell's entries
    and the symbols with an inside_mid: the rest (a node over the span from which no kept bottom is derivable)
    has posterior 0 and credits no unary rule.

    Returns out_pre (per pre entry), out_post (per post entry), out_mid (per post entry: outside_mid of its
    symbol), bin/un/lex rule counts, the posterior of every lexical-input entry, and the sparse list of
    (cell, symbol, log posterior) of every symbol with a node over the cell in some derivation (any role on a
    unary chain; an expected count if a symbol can occur twice on a chain).
    """
    npre = pre_sym.shape[0]
    npost = post_sym.shape[0]
    out_pre = np.full(npre, NEG_INF)
    out_post = np.full(npost, NEG_INF)  # running max of the terms until the cell is reached, then the total
    olin = np.zeros(npost)  # sum of exp(term - out_post) until the cell is reached
    out_mid = np.full(npost, NEG_INF)
    bin_c = np.zeros(n_bin)
    un_c = np.zeros(n_un)
    lex_c = np.zeros(n_lex_rules)
    entry_post = np.zeros(lex_sym.shape[0])
    dp = np.full(nsym, NEG_INF)  # outside of pre entries of the current cell
    dr = np.full(nsym, NEG_INF)  # inside of post entries of a cell
    dri = np.zeros(nsym, np.int64)
    om = np.full(nsym, NEG_INF)  # outside_mid of the current cell (running max, then the total)
    oml = np.zeros(nsym)
    om_t = np.zeros(nsym, np.bool_)
    om_list = np.empty(nsym, np.int32)
    im = np.full(nsym, NEG_INF)  # inside_mid of the current cell
    iml = np.zeros(nsym)
    im_t = np.zeros(nsym, np.bool_)
    im_list = np.empty(nsym, np.int32)
    need = np.zeros(nsym, np.bool_)  # symbols whose outside_mid is read in the current cell
    need_list = np.empty(nsym, np.int32)
    po = np.full(nsym, NEG_INF)  # outside of the current cell's post entries, by symbol
    po_idx = np.zeros(nsym, np.int64)
    om_first = np.empty(nsym, np.int64)
    mid_cap = 1024
    mid_cell = np.empty(mid_cap, np.int32)
    mid_sym = np.empty(mid_cap, np.int32)
    mid_lp = np.empty(mid_cap, np.float64)
    nmid = 0

    root = n
    e = _find(post_sym, post_start[root], post_start[root] + post_len[root], start)
    if e < 0:
        return (out_pre, out_post, out_mid, bin_c, un_c, lex_c, entry_post, mid_cell[:0].copy(),
                mid_sym[:0].copy(), mid_lp[:0].copy())
    out_post[e] = 0.0
    olin[e] = 1.0

    for length in range(n, 0, -1):
        for i in range(0, n - length + 1):
            j = i + length
            cell = i * (n + 1) + j
            q0 = post_start[cell]
            q1 = q0 + post_len[cell]
            if q1 == q0:
                continue
            live = False
            for t in range(q0, q1):
                if olin[t] > 0.0:
                    out_post[t] += np.log(olin[t])
                if out_post[t] > NEG_INF:
                    live = True
            p0 = pre_start[cell]
            p1 = p0 + pre_len[cell]
            if live:
                # inside_mid: up from every pre entry through the closure (by child)
                ni = 0
                for t in range(p0, p1):
                    sb = pre_score[t]
                    if sb == NEG_INF:
                        continue
                    b = pre_sym[t]
                    for c in range(cl_ptr[b], cl_ptr[b + 1]):
                        w = sb + cl_logw[c]
                        if w == NEG_INF:
                            continue
                        x = cl_parent[c]
                        if not im_t[x]:
                            im_t[x] = True
                            im_list[ni] = x
                            ni += 1
                            im[x] = w
                            iml[x] = 1.0
                        else:
                            _acc_add(im, iml, x, w)
                for t in range(ni):
                    x = im_list[t]
                    im[x] += np.log(iml[x])
                # outside_mid, computed only for the symbols anything reads it for: the cell's entries and the
                # symbols with an inside_mid (any other closure child of a post entry derives nothing over the
                # span).  Each is summed over its closure parents (by child, parents in symbol order = the post
                # entries' order, so the terms come in the same order as down from each post entry), which on
                # transforms with large unary reach sets (TIG: up to 10^4 closure children per symbol) touches
                # far fewer closure entries than going down from every live post entry.
                nn = _mark_needed(im_list, 0, ni, need, need_list, 0)
                nn = _mark_needed(pre_sym, p0, p1, need, need_list, nn)
                nn = _mark_needed(post_sym, q0, q1, need, need_list, nn)
                for t in range(q0, q1):
                    po[post_sym[t]] = out_post[t]
                    po_idx[post_sym[t]] = t
                no = 0
                for u in range(nn):
                    x = need_list[u]
                    for c in range(cl_ptr[x], cl_ptr[x + 1]):
                        o = po[cl_parent[c]]
                        if o == NEG_INF:
                            continue
                        w = o + cl_logw[c]
                        if w == NEG_INF:
                            continue
                        if not om_t[x]:
                            om_t[x] = True
                            om_first[no] = np.int64(po_idx[cl_parent[c]]) * nsym + x
                            no += 1
                            om[x] = w
                            oml[x] = 1.0
                        else:
                            _acc_add(om, oml, x, w)
                # om_list in first-touch order of a walk down from the post entries (it orders the mid rows)
                sort_prefix(om_first, no)
                srt_first = om_first
                for t in range(no):
                    x = np.int32(srt_first[t] % nsym)
                    om_list[t] = x
                    om[x] += np.log(oml[x])
                for t in range(q0, q1):
                    po[post_sym[t]] = NEG_INF
                for u in range(nn):
                    need[need_list[u]] = False
                for t in range(p0, p1):
                    out_pre[t] = om[pre_sym[t]]
                for t in range(q0, q1):
                    out_mid[t] = om[post_sym[t]]
                # posteriors of every symbol on the span, in any chain role
                if nmid + no > mid_cell.shape[0]:
                    mid_cell = _grow(mid_cell, nmid + no)
                    mid_sym = _grow(mid_sym, nmid + no)
                    mid_lp = _grow(mid_lp, nmid + no)
                for t in range(no):
                    x = om_list[t]
                    if im_t[x]:
                        mid_cell[nmid] = cell
                        mid_sym[nmid] = x
                        mid_lp[nmid] = om[x] + im[x] - logz
                        nmid += 1
                if counts:
                    for t in range(no):
                        x = om_list[t]
                        ox = om[x]
                        for u in range(up_ptr[x], up_ptr[x + 1]):
                            y = up_child[u]
                            if im_t[y]:
                                un_c[up_rule[u]] += np.exp(ox + up_logp[u] + im[y] - logz)
                for t in range(no):
                    x = om_list[t]
                    om[x] = NEG_INF
                    om_t[x] = False
                for t in range(ni):
                    x = im_list[t]
                    im[x] = NEG_INF
                    im_t[x] = False
            if not live:
                continue
            if length == 1:
                for ent in range(lex_ptr[i], lex_ptr[i + 1]):
                    p = _find(pre_sym, p0, p1, lex_sym[ent])
                    if p < 0 or out_pre[p] == NEG_INF:
                        continue
                    w = np.exp(out_pre[p] + lex_logp[ent] - logz)
                    entry_post[ent] = w
                    if counts and lex_rule[ent] >= 0:
                        lex_c[lex_rule[ent]] += w
                continue
            any_p = False
            for t in range(p0, p1):
                dp[pre_sym[t]] = out_pre[t]
                if out_pre[t] > NEG_INF:
                    any_p = True
            if any_p:
                for k in range(i + 1, j):
                    lc = i * (n + 1) + k
                    rc = k * (n + 1) + j
                    if post_len[lc] == 0 or post_len[rc] == 0:
                        continue
                    r0 = post_start[rc]
                    r1 = r0 + post_len[rc]
                    for r in range(r0, r1):
                        dr[post_sym[r]] = post_score[r]
                        dri[post_sym[r]] = r
                    l0 = post_start[lc]
                    for li in range(l0, l0 + post_len[lc]):
                        b = post_sym[li]
                        sb = post_score[li]
                        lm = out_post[li]  # the left entry's sum lives in registers for this loop
                        ll = olin[li]
                        for q in range(bl_ptr[b], bl_ptr[b + 1]):
                            cr = bl_right[q]
                            sc = dr[cr]
                            if sc == NEG_INF:
                                continue
                            pa = dp[bl_parent[q]]
                            if pa == NEG_INF:
                                continue
                            base = pa + bl_logp[q]
                            if base == NEG_INF:
                                continue
                            x = base + sc
                            if x <= lm:
                                ll += np.exp(x - lm)
                            elif lm == NEG_INF:
                                lm = x
                                ll = 1.0
                            else:
                                ll = ll * np.exp(lm - x) + 1.0
                                lm = x
                            _acc_add(out_post, olin, dri[cr], base + sb)
                            if counts:
                                bin_c[bl_rule[q]] += np.exp(base + sb + sc - logz)
                        out_post[li] = lm
                        olin[li] = ll
                    for r in range(r0, r1):
                        dr[post_sym[r]] = NEG_INF
            for t in range(p0, p1):
                dp[pre_sym[t]] = NEG_INF
    return (out_pre, out_post, out_mid, bin_c, un_c, lex_c, entry_post, mid_cell[:nmid].copy(),
            mid_sym[:nmid].copy(), mid_lp[:nmid].copy())


@numba.njit(cache=True)
def sample_derivation(n, start, uniforms,
                      pre_start, pre_len, pre_sym, pre_score, post_start, post_len, post_sym, post_score,
                      lex_ptr, lex_sym, lex_logp, lex_rule,
                      bp_ptr, bp_left, bp_right, bp_logp, bp_rule,
                      up_ptr, up_child, up_logp, up_rule,
                      cl_ptr, cl_parent, cl_logw, cp_ptr, cp_child, cp_logw, nsym):
    """Draw one derivation top-down from an inside chart, exactly from P(d) / Z.

    Consumes `uniforms` in order; returns (steps, logp, used) with used = -1 when they ran out (the caller
    extends the same stream and calls again, which replays the same draws, so the result is exact).
    """
    steps = np.empty((4 * n + 8, 6), np.int64)
    ns = 0
    logp = 0.0
    ui = 0
    nu = uniforms.shape[0]
    dl = np.full(nsym, NEG_INF)
    dr = np.full(nsym, NEG_INF)
    stack, sp = _root_stack(n, start, post_start, post_len, post_sym)
    if sp == 0:
        return steps[:0], NEG_INF, 0
    while sp > 0:
        sp -= 1
        a = stack[sp, 0]
        i = stack[sp, 1]
        j = stack[sp, 2]
        cell = i * (n + 1) + j
        p0 = pre_start[cell]
        p1 = p0 + pre_len[cell]
        ea = _find(post_sym, post_start[cell], post_start[cell] + post_len[cell], a)
        sa = post_score[ea]
        # 1. the bottom B of the unary chain: P(B | A) = closure(A, B) pre[B] / post[A]
        if ui >= nu:
            return steps[:0], NEG_INF, -1
        u = uniforms[ui]
        ui += 1
        cum = 0.0
        b = -1
        last = -1
        for c in range(cp_ptr[a], cp_ptr[a + 1]):
            cand = cp_child[c]
            p = _find(pre_sym, p0, p1, cand)
            if p < 0:
                continue
            w = np.exp(cp_logw[c] + pre_score[p] - sa)
            if w > 0.0:
                last = cand
            cum += w
            if cum > u:
                b = cand
                break
        if b < 0:
            b = last
        # 2. the chain from A down to B: at X, stop (X == B) or take X -> Y, in proportion to
        #    [X == B] and P(X -> Y) closure(Y, B), which sum to closure(X, B)
        x = a
        while True:
            cxb = cl_logw[_find(cl_parent, cl_ptr[b], cl_ptr[b + 1], x)]
            if ui >= nu:
                return steps[:0], NEG_INF, -1
            u = uniforms[ui]
            ui += 1
            cum = 0.0
            chosen = -2
            last = -2
            if x == b:
                cum = np.exp(-cxb)
                last = -1
                if cum > u:
                    chosen = -1
            if chosen == -2:
                for t in range(up_ptr[x], up_ptr[x + 1]):
                    c = _find(cl_parent, cl_ptr[b], cl_ptr[b + 1], up_child[t])
                    if c < 0:
                        continue
                    w = np.exp(up_logp[t] + cl_logw[c] - cxb)
                    if w > 0.0:
                        last = t
                    cum += w
                    if cum > u:
                        chosen = t
                        break
            if chosen == -2:
                chosen = last
            if chosen == -1:
                break
            steps = _put_row(steps, ns, KIND_UNARY, up_rule[chosen], x, i, j, up_child[chosen])
            ns += 1
            logp += up_logp[chosen]
            x = up_child[chosen]
        # 3. how B was built over the span
        pb = _find(pre_sym, p0, p1, b)
        sb = pre_score[pb]
        if ui >= nu:
            return steps[:0], NEG_INF, -1
        u = uniforms[ui]
        ui += 1
        cum = 0.0
        if j - i == 1:
            chosen = -1
            last = -1
            for ent in range(lex_ptr[i], lex_ptr[i + 1]):
                if lex_sym[ent] != b:
                    continue
                w = np.exp(lex_logp[ent] - sb)
                if w > 0.0:
                    last = ent
                cum += w
                if cum > u:
                    chosen = ent
                    break
            if chosen < 0:
                chosen = last
            steps = _put_row(steps, ns, KIND_LEXICAL, lex_rule[chosen], b, i, j, chosen)
            logp += lex_logp[chosen]
            ns += 1
            continue
        chosen = -1
        chosen_k = -1
        last = -1
        last_k = -1
        for k in range(i + 1, j):
            lc = i * (n + 1) + k
            rc = k * (n + 1) + j
            if post_len[lc] == 0 or post_len[rc] == 0:
                continue
            for t in range(post_start[lc], post_start[lc] + post_len[lc]):
                dl[post_sym[t]] = post_score[t]
            for t in range(post_start[rc], post_start[rc] + post_len[rc]):
                dr[post_sym[t]] = post_score[t]
            for q in range(bp_ptr[b], bp_ptr[b + 1]):
                sl = dl[bp_left[q]]
                if sl == NEG_INF:
                    continue
                sr = dr[bp_right[q]]
                if sr == NEG_INF:
                    continue
                w = np.exp(bp_logp[q] + sl + sr - sb)
                if w > 0.0:
                    last = q
                    last_k = k
                cum += w
                if cum > u:
                    chosen = q
                    chosen_k = k
                    break
            for t in range(post_start[lc], post_start[lc] + post_len[lc]):
                dl[post_sym[t]] = NEG_INF
            for t in range(post_start[rc], post_start[rc] + post_len[rc]):
                dr[post_sym[t]] = NEG_INF
            if chosen >= 0:
                break
        if chosen < 0:
            chosen = last
            chosen_k = last_k
        steps = _put_row(steps, ns, KIND_BINARY, bp_rule[chosen], b, i, j, chosen_k)
        logp += bp_logp[chosen]
        ns += 1
        sp = _push(stack, sp, bp_right[chosen], chosen_k, j)
        sp = _push(stack, sp, bp_left[chosen], i, chosen_k)
    return steps[:ns].copy(), logp, ui
