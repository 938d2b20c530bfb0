"""Sequential graph loops over the integer-coded model (numba): productivity, reachability, ancestral sampling.

Array conventions (see GenerationModel): entries e of context c are ctx_ptr[c]..ctx_ptr[c+1]; the contexts
implied by entry e are imp_ctx[imp_ptr[e]:imp_ptr[e+1]].
"""

from __future__ import annotations

import numba
import numpy as np

SAMPLE_OK = 0
SAMPLE_TOO_LARGE = 1
SAMPLE_DEAD_CONTEXT = 2
SAMPLE_NEED_UNIFORMS = 3
SAMPLE_SPINE_TOO_LONG = 4  # generating up (`treegram.generation.constraints`): the spine outgrew its buffer


@numba.njit(cache=True)
def first_above(cum, lo, hi, target):
    """The first k in lo..hi-1 with cum[k] > target (hi - 1 when none), by binary search: the inverse-CDF choice
    among entries lo..hi-1 with cumulative weights cum, for target = u * cum[hi - 1]."""
    a = lo
    b = hi - 1
    while a < b:
        mid = (a + b) // 2
        if cum[mid] > target:
            b = mid
        else:
            a = mid + 1
    return a


@numba.njit(cache=True)
def productive_contexts(ctx_ptr, imp_ptr, imp_ctx, keep, rev_ptr, rev_entry):
    """Least fixpoint: c is productive iff some kept entry of c implies only productive contexts.

    Exactly the contexts from which a finite derivation exists.  Worklist algorithm, linear in the model size.
    rev_entry[rev_ptr[c]:rev_ptr[c+1]] lists, with multiplicity, the entries that imply context c.
    """
    n_ctx = ctx_ptr.size - 1
    n_ent = imp_ptr.size - 1
    ctx_of = np.empty(n_ent, dtype=np.int64)
    for c in range(n_ctx):
        for e in range(ctx_ptr[c], ctx_ptr[c + 1]):
            ctx_of[e] = c
    pending = np.empty(n_ent, dtype=np.int64)
    good = np.zeros(n_ctx, dtype=np.bool_)
    work = np.empty(n_ctx, dtype=np.int64)
    top = 0
    for e in range(n_ent):
        pending[e] = imp_ptr[e + 1] - imp_ptr[e]
        if keep[e] and pending[e] == 0 and not good[ctx_of[e]]:
            good[ctx_of[e]] = True
            work[top] = ctx_of[e]
            top += 1
    while top > 0:
        top -= 1
        c = work[top]
        for k in range(rev_ptr[c], rev_ptr[c + 1]):
            e = rev_entry[k]
            pending[e] -= 1
            if keep[e] and pending[e] == 0 and not good[ctx_of[e]]:
                good[ctx_of[e]] = True
                work[top] = ctx_of[e]
                top += 1
    return good


@numba.njit(cache=True)
def reachable_contexts(ctx_ptr, imp_ptr, imp_ctx, keep, root):
    """Contexts reachable from the root through kept entries (depth-first worklist)."""
    n_ctx = ctx_ptr.size - 1
    seen = np.zeros(n_ctx, dtype=np.bool_)
    work = np.empty(n_ctx, dtype=np.int64)
    seen[root] = True
    work[0] = root
    top = 1
    while top > 0:
        top -= 1
        c = work[top]
        for e in range(ctx_ptr[c], ctx_ptr[c + 1]):
            if not keep[e]:
                continue
            for k in range(imp_ptr[e], imp_ptr[e + 1]):
                d = imp_ctx[k]
                if not seen[d]:
                    seen[d] = True
                    work[top] = d
                    top += 1
    return seen


@numba.njit(cache=True)
def sample_preorder(ctx_ptr, cum, imp_ptr, imp_ctx, root, uniforms, max_nodes, node_ctx, node_entry):
    """One ancestral sample, nodes written in pre-order.  Returns (status, n_nodes, context_at_failure).

    Consumes uniforms[i] for the i-th node.  Stops with SAMPLE_TOO_LARGE as soon as the finished nodes plus the
    still-open contexts exceed max_nodes (each open context becomes at least one node), and with
    SAMPLE_NEED_UNIFORMS when the caller's buffer runs dry (the caller extends it and reruns: same result).
    Choice within a context: `first_above` u * total in the context's cumulative probabilities.
    """
    stack = np.empty(max_nodes + 1, dtype=np.int64)
    stack[0] = root
    top = 1
    n = 0
    while top > 0:
        top -= 1
        c = stack[top]
        lo = ctx_ptr[c]
        hi = ctx_ptr[c + 1]
        if hi == lo or cum[hi - 1] <= 0.0:
            return SAMPLE_DEAD_CONTEXT, n, c
        if n >= uniforms.size:
            return SAMPLE_NEED_UNIFORMS, n, c
        a = first_above(cum, lo, hi, uniforms[n] * cum[hi - 1])
        node_ctx[n] = c
        node_entry[n] = a
        n += 1
        k0 = imp_ptr[a]
        k1 = imp_ptr[a + 1]
        if n + top + (k1 - k0) > max_nodes:
            return SAMPLE_TOO_LARGE, n, c
        for k in range(k1 - 1, k0 - 1, -1):  # leftmost child on top of the stack
            stack[top] = imp_ctx[k]
            top += 1
    return SAMPLE_OK, n, -1
