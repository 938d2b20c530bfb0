"""Unconstrained ancestral sampling from a GenerationModel.

Open contexts are expanded depth-first, left to right, so nodes come out in pre-order; each choice is a binary
search of a uniform draw in the context's cumulative probabilities (numba kernel, no loop over outcomes).  A PCFG
can be non-terminating (or just produce huge trees), so every sample has a node budget.
"""

from __future__ import annotations

import attrs
import numpy as np

from treegram.errors import InputError, TreegramError
from treegram.generation._kernels import (SAMPLE_DEAD_CONTEXT, SAMPLE_NEED_UNIFORMS, SAMPLE_OK, SAMPLE_TOO_LARGE,
                                          sample_preorder)
from treegram.generation.model import GenerationModel
from treegram.generation.protocol import Derivation, GenerationSystem

_FIRST_BUFFER = 64


class GenerationError(TreegramError):
    """A sample that could not be completed; `reason` is "too_large" or "dead_context"."""

    reason = "failed"


class DerivationTooLarge(GenerationError):
    reason = "too_large"


class DeadContextError(GenerationError):
    reason = "dead_context"


@attrs.frozen
class SampleFailure:
    reason: str     # "too_large" | "dead_context"
    message: str


def as_generator(rng: np.random.Generator | int | None) -> np.random.Generator:
    if isinstance(rng, np.random.Generator):
        return rng
    if rng is None or isinstance(rng, (int, np.integer)):
        return np.random.default_rng(rng)
    raise InputError(f"rng {rng!r} is neither a numpy Generator nor an integer seed",
                     hint="pass np.random.default_rng(seed) or an int")


def sample_entries(model: GenerationModel, rng, *, max_nodes: int = 1000) -> np.ndarray | SampleFailure:
    """One derivation as the entry index of each node in pre-order, or a SampleFailure.

    Uniforms are drawn in a buffer that doubles when exhausted (the kernel then reruns on the extended buffer),
    so the result depends only on the generator state, never on the buffer sizes.
    """
    if not isinstance(max_nodes, (int, np.integer)) or max_nodes < 1:
        raise InputError(f"max_nodes={max_nodes!r} must be a positive integer", hint="e.g. max_nodes=1000")
    rng = as_generator(rng)
    node_ctx = np.empty(max_nodes, dtype=np.int64)
    node_entry = np.empty(max_nodes, dtype=np.int64)
    uniforms = rng.random(min(_FIRST_BUFFER, max_nodes))
    cum, imp_ctx = model.cum, model.imp_ctx_i64
    while True:
        status, n, ctx = sample_preorder(model.ctx_ptr, cum, model.imp_ptr, imp_ctx, model.root, uniforms,
                                         max_nodes, node_ctx, node_entry)
        if status == SAMPLE_NEED_UNIFORMS:
            more = min(uniforms.size, max_nodes - uniforms.size)
            uniforms = np.concatenate([uniforms, rng.random(max(more, 1))])
            continue
        if status == SAMPLE_OK:
            return node_entry[:n].copy()
        if status == SAMPLE_TOO_LARGE:
            return SampleFailure("too_large", f"derivation exceeded max_nodes={max_nodes}")
        assert status == SAMPLE_DEAD_CONTEXT
        return SampleFailure("dead_context", f"context {model.contexts[ctx]!r} has no outcome "
                                             "(the model is inconsistent; call prune_dead())")


def try_sample(model: GenerationModel, rng, *, max_nodes: int = 1000) -> Derivation | SampleFailure:
    """A sampled Derivation, or a SampleFailure saying why not (for callers that retry)."""
    result = sample_entries(model, rng, max_nodes=max_nodes)
    return result if isinstance(result, SampleFailure) else model.decode_entries(result)


def sample(model: GenerationModel, rng, *, max_nodes: int = 1000) -> Derivation:
    """One ancestral sample; raises DerivationTooLarge or DeadContextError."""
    result = try_sample(model, rng, max_nodes=max_nodes)
    if isinstance(result, SampleFailure):
        cls = DerivationTooLarge if result.reason == "too_large" else DeadContextError
        raise cls(result.message, hint="raise max_nodes, or use a model that terminates quickly"
                  if result.reason == "too_large" else "call model.prune_dead() before sampling")
    return result


def sample_text(model: GenerationModel, system: GenerationSystem, rng, n: int, *, max_nodes: int = 1000,
                max_attempts: int | None = None) -> list[list[str]]:
    """n sentences (word lists); failed samples are redrawn, up to max_attempts (default 10 n + 10) draws."""
    rng = as_generator(rng)
    max_attempts = 10 * n + 10 if max_attempts is None else max_attempts
    out: list[list[str]] = []
    failures: dict[str, int] = {}
    attempts = 0
    while len(out) < n:
        if attempts >= max_attempts:
            raise GenerationError(f"only {len(out)} of {n} samples succeeded in {attempts} attempts "
                                  f"(failures: {failures})", hint="raise max_nodes or prune the model")
        attempts += 1
        result = try_sample(model, rng, max_nodes=max_nodes)
        if isinstance(result, SampleFailure):
            failures[result.reason] = failures.get(result.reason, 0) + 1
            continue
        out.append(system.text(result))
    return out
