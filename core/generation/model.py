"""Integer-coded P(o|c) for any generation system, in CSR arrays.

Layout (C contexts, O outcomes, E (context, outcome) entries, W distinct words):

    contexts[c], outcomes[o], words[w]       the Python values behind the ids (edges only)
    ctx_ptr  int64 [C+1]   entries of context c are e in ctx_ptr[c] .. ctx_ptr[c+1]-1, sorted by outcome id
    out_id   int32 [E]     the outcome of entry e
    count    float64 [E]   training count of (c, o) (float: expected counts from EM fit the same slot)
    prob     float64 [E]   P(o|c); logp is derived
    imp_ptr  int64 [E+1]   the contexts entry e implies are imp_ctx[imp_ptr[e] .. imp_ptr[e+1]-1], in order
    imp_ctx  int32 [I]
    word_ptr int64 [O+1]   the words outcome o emits are word_id[word_ptr[o] .. word_ptr[o+1]-1]
    word_id  int32 [Wo]

Everything the constrained generator needs is a gather or a bincount over these arrays: the OOV predicate V(o)
(`oov_outcomes`), products over implied contexts (goodness G(c), Eq. 3), the mean matrix (Eq. 4), and restriction
to a subset of entries with a consistency fixpoint (`restrict`, the FIXUP step of pruning).

Dead contexts.  Discarding rare pairs (min_count) can leave a context that kept outcomes still imply but that has
no outcome left (or only outcomes that lead back into such contexts).  `fit_mle(prune=True)` (the default) calls
`prune_dead()`, which drops, to a fixpoint, every entry implying a context from which no finite derivation exists,
renormalises the survivors, and drops contexts the root no longer reaches.  With `prune=False` the raw estimate is
kept and `is_consistent()` reports False when a reachable context has no outcome.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Hashable, Iterable, Mapping
from functools import cached_property
from pathlib import Path
from typing import Any

import attrs
import numpy as np

from treegram.errors import InputError, ModelFileError
from treegram.generation._kernels import productive_contexts, reachable_contexts
from treegram.generation.protocol import Context, Derivation, GenerationSystem, Outcome, check_derivation
from treegram.generation.sparse import SparseMatrix
from treegram.io import load_bundle, save_bundle

FORMAT = "treegram.generation-model"
VERSION = 1


def _i64(a) -> np.ndarray:
    return np.ascontiguousarray(a, dtype=np.int64)


def _i32(a) -> np.ndarray:
    return np.ascontiguousarray(a, dtype=np.int32)


def _f64(a) -> np.ndarray:
    return np.ascontiguousarray(a, dtype=np.float64)


def system_spec(system: GenerationSystem) -> dict[str, Any]:
    return {"name": system.name, "config": dict(system.config())}


@attrs.frozen(eq=False, repr=False)
class GenerationModel:
    system_spec: dict[str, Any]
    contexts: tuple[Context, ...] = attrs.field(converter=tuple)
    outcomes: tuple[Outcome, ...] = attrs.field(converter=tuple)
    words: tuple[str, ...] = attrs.field(converter=tuple)
    root: int
    ctx_ptr: np.ndarray = attrs.field(converter=_i64)
    out_id: np.ndarray = attrs.field(converter=_i32)
    count: np.ndarray = attrs.field(converter=_f64)
    prob: np.ndarray = attrs.field(converter=_f64)
    imp_ptr: np.ndarray = attrs.field(converter=_i64)
    imp_ctx: np.ndarray = attrs.field(converter=_i32)
    word_ptr: np.ndarray = attrs.field(converter=_i64)
    word_id: np.ndarray = attrs.field(converter=_i32)
    info: dict[str, Any] = attrs.field(factory=dict)

    def __attrs_post_init__(self) -> None:
        problem = self._shape_problem()
        if problem:
            raise ValueError(f"inconsistent GenerationModel arrays: {problem}")

    def _shape_problem(self) -> str | None:
        C, O, W, E = len(self.contexts), len(self.outcomes), len(self.words), self.out_id.size
        checks = [
            (self.ctx_ptr.size == C + 1, "ctx_ptr length"),
            (self.count.size == E and self.prob.size == E, "count/prob length"),
            (self.imp_ptr.size == E + 1, "imp_ptr length"),
            (self.word_ptr.size == O + 1, "word_ptr length"),
            (0 <= self.root < C, "root id"),
        ]
        for ok, what in checks:
            if not ok:
                return what
        for name, ptr, n in (("ctx_ptr", self.ctx_ptr, E), ("imp_ptr", self.imp_ptr, self.imp_ctx.size),
                             ("word_ptr", self.word_ptr, self.word_id.size)):
            if ptr[0] != 0 or ptr[-1] != n or np.any(np.diff(ptr) < 0):
                return f"{name} is not a valid CSR pointer"
        for name, ids, n in (("out_id", self.out_id, O), ("imp_ctx", self.imp_ctx, C), ("word_id", self.word_id, W)):
            if ids.size and (ids.min() < 0 or ids.max() >= n):
                return f"{name} out of range"
        if E > 1:
            same_ctx = self.ctx_of_entry[1:] == self.ctx_of_entry[:-1]
            if np.any(same_ctx & (self.out_id[1:] <= self.out_id[:-1])):
                return "outcomes within a context are not sorted and unique"
        if np.any(~np.isfinite(self.prob)) or np.any(self.prob < 0):
            return "probabilities must be finite and non-negative"
        return None

    # -- sizes and derived views -----------------------------------------------------------
    @property
    def n_contexts(self) -> int:
        return len(self.contexts)

    @property
    def n_outcomes(self) -> int:
        return len(self.outcomes)

    @property
    def n_entries(self) -> int:
        return int(self.out_id.size)

    @cached_property
    def logp(self) -> np.ndarray:
        with np.errstate(divide="ignore"):
            return np.log(self.prob)

    @cached_property
    def ctx_of_entry(self) -> np.ndarray:
        """The context of every entry (the COO row of the CSR)."""
        return np.repeat(np.arange(self.n_contexts, dtype=np.int64), np.diff(self.ctx_ptr))

    @cached_property
    def entry_of_implied(self) -> np.ndarray:
        """For every position of imp_ctx, the entry that implies it."""
        return np.repeat(np.arange(self.n_entries, dtype=np.int64), np.diff(self.imp_ptr))

    @cached_property
    def imp_ctx_i64(self) -> np.ndarray:
        """imp_ctx widened once for the numba kernels (one compiled signature)."""
        return self.imp_ctx.astype(np.int64)

    @cached_property
    def cum(self) -> np.ndarray:
        """Cumulative P(o|c) within each context (the sampler binary-searches it)."""
        cs = np.cumsum(self.prob)
        starts = self.ctx_ptr[:-1]
        if not cs.size:
            return cs
        before = np.where(starts > 0, cs[np.maximum(starts - 1, 0)], 0.0)
        return cs - np.repeat(before, np.diff(self.ctx_ptr))

    @cached_property
    def context_index(self) -> dict[Context, int]:
        return {c: i for i, c in enumerate(self.contexts)}

    @cached_property
    def outcome_index(self) -> dict[Outcome, int]:
        return {o: i for i, o in enumerate(self.outcomes)}

    @cached_property
    def word_index(self) -> dict[str, int]:
        return {w: i for i, w in enumerate(self.words)}

    @cached_property
    def n_outcomes_per_context(self) -> np.ndarray:
        return np.diff(self.ctx_ptr)

    # -- lookups at the edges ---------------------------------------------------------------
    def entry(self, context_id: int, outcome_id: int) -> int:
        """Entry index of (c, o), or -1 when the model has no such pair."""
        lo, hi = self.ctx_ptr[context_id], self.ctx_ptr[context_id + 1]
        k = lo + int(np.searchsorted(self.out_id[lo:hi], outcome_id))
        return k if k < hi and self.out_id[k] == outcome_id else -1

    def implied(self, entry: int) -> np.ndarray:
        return self.imp_ctx[self.imp_ptr[entry]:self.imp_ptr[entry + 1]]

    def distribution(self, context: Context) -> dict[Outcome, float]:
        """P(.|context) as {outcome: probability} (empty for an unknown context)."""
        c = self.context_index.get(context)
        if c is None:
            return {}
        lo, hi = self.ctx_ptr[c], self.ctx_ptr[c + 1]
        return {self.outcomes[o]: float(p) for o, p in zip(self.out_id[lo:hi], self.prob[lo:hi])}

    def prob_of(self, context: Context, outcome: Outcome) -> float:
        c, o = self.context_index.get(context), self.outcome_index.get(outcome)
        if c is None or o is None:
            return 0.0
        e = self.entry(c, o)
        return float(self.prob[e]) if e >= 0 else 0.0

    def encode_derivation(self, derivation: Derivation) -> np.ndarray | None:
        """Entry index of every node in pre-order, or None when some (context, outcome) is not in the model."""
        out = []
        for node in derivation.nodes():
            c, o = self.context_index.get(node.context), self.outcome_index.get(node.outcome)
            e = self.entry(c, o) if c is not None and o is not None else -1
            if e < 0:
                return None
            out.append(e)
        return np.asarray(out, dtype=np.int64)

    def decode_entries(self, entries: np.ndarray) -> Derivation:
        """The Derivation whose pre-order nodes use these entries (inverse of encode_derivation)."""
        entries = np.asarray(entries, dtype=np.int64)
        n_kids = (self.imp_ptr[entries + 1] - self.imp_ptr[entries]).tolist()
        ctxs = self.ctx_of_entry[entries].tolist()
        outs = self.out_id[entries].tolist()
        return Derivation.from_preorder(
            (self.contexts[c], self.outcomes[o], k) for c, o, k in zip(ctxs, outs, n_kids))

    def log_prob(self, derivation: Derivation) -> float:
        """log P(derivation) = sum of log P(o|c) over its nodes; -inf if any pair is unknown."""
        if derivation.context != self.contexts[self.root]:
            return float("-inf")
        entries = self.encode_derivation(derivation)
        if entries is None:
            return float("-inf")
        return float(self.logp[entries].sum())

    # -- structure ---------------------------------------------------------------------------
    def _reverse_index(self) -> tuple[np.ndarray, np.ndarray]:
        order = np.argsort(self.imp_ctx, kind="stable")
        rev_ptr = np.zeros(self.n_contexts + 1, dtype=np.int64)
        np.cumsum(np.bincount(self.imp_ctx, minlength=self.n_contexts), out=rev_ptr[1:])
        return rev_ptr, self.entry_of_implied[order]

    def productive(self, keep: np.ndarray | None = None) -> np.ndarray:
        """Bool per context: a finite derivation exists from it using only `keep` entries (default all)."""
        keep = np.ones(self.n_entries, dtype=np.bool_) if keep is None else np.asarray(keep, dtype=np.bool_)
        rev_ptr, rev_entry = self._reverse_index()
        return productive_contexts(self.ctx_ptr, self.imp_ptr, self.imp_ctx_i64, keep, rev_ptr, rev_entry)

    def reachable(self, keep: np.ndarray | None = None) -> np.ndarray:
        """Bool per context: reachable from the root through `keep` entries (default all)."""
        keep = np.ones(self.n_entries, dtype=np.bool_) if keep is None else np.asarray(keep, dtype=np.bool_)
        return reachable_contexts(self.ctx_ptr, self.imp_ptr, self.imp_ctx_i64, keep, self.root)

    def dead_contexts(self) -> np.ndarray:
        """Bool per context: no outcome at all (sampling there fails)."""
        return self.n_outcomes_per_context == 0

    def is_consistent(self) -> bool:
        """True when every context reachable from the root has at least one outcome with positive mass."""
        mass = np.bincount(self.ctx_of_entry, weights=self.prob, minlength=self.n_contexts)
        return bool(np.all(mass[self.reachable()] > 0))

    def product_over_implied(self, values: np.ndarray) -> np.ndarray:
        """Per entry, the product of values[c'] over its implied contexts c' (1 for none): the shape of Eq. 2-3."""
        out = np.ones(self.n_entries, dtype=np.float64)
        np.multiply.at(out, self.entry_of_implied, np.asarray(values, dtype=np.float64)[self.imp_ctx])
        return out

    def mean_matrix(self) -> SparseMatrix:
        """M[c, c'] = sum_o P(o|c) * (times c' occurs in I(c, o)): expected c' children of a c node (Eq. 4)."""
        rows = self.ctx_of_entry[self.entry_of_implied]
        vals = self.prob[self.entry_of_implied]
        return SparseMatrix.from_triplets(rows, self.imp_ctx, vals, (self.n_contexts, self.n_contexts))

    def oov_outcomes(self, vocabulary: Iterable[str]) -> np.ndarray:
        """V(o) for every outcome: True when the outcome emits a word outside `vocabulary`."""
        known = np.zeros(len(self.words), dtype=np.bool_)
        for w in vocabulary:
            i = self.word_index.get(w)
            if i is not None:
                known[i] = True
        bad_word = (~known[self.word_id]).astype(np.int64)
        owner = np.repeat(np.arange(self.n_outcomes, dtype=np.int64), np.diff(self.word_ptr))
        return np.bincount(owner, weights=bad_word, minlength=self.n_outcomes) > 0

    # -- restriction -------------------------------------------------------------------------
    def restrict(self, keep: np.ndarray, *, renormalize: bool = True, drop_unreachable: bool = True,
                 note: str | None = None) -> GenerationModel:
        """A consistent model using only `keep` entries: the fixpoint that drops entries implying contexts with
        no finite derivation, then (optionally) contexts the root no longer reaches; ids are compacted.

        Raises InputError when the root itself has no finite derivation left.
        """
        keep = np.asarray(keep, dtype=np.bool_)
        if keep.shape != (self.n_entries,):
            raise ValueError(f"keep mask has shape {keep.shape}, expected ({self.n_entries},)")
        good = self.productive(keep)
        if not good[self.root]:
            raise InputError("no complete derivation survives: the root context has no finite derivation left",
                             hint="lower min_count, enlarge the vocabulary or the training data")
        bad_child = np.bincount(self.entry_of_implied, weights=(~good[self.imp_ctx]).astype(np.float64),
                                minlength=self.n_entries) > 0
        keep = keep & good[self.ctx_of_entry] & ~bad_child
        live = good.copy()
        if drop_unreachable:
            live &= self.reachable(keep)
            keep &= live[self.ctx_of_entry]
        return self._compact(keep, live, renormalize, note)

    def prune_dead(self, *, drop_unreachable: bool = True) -> GenerationModel:
        return self.restrict(np.ones(self.n_entries, dtype=np.bool_), drop_unreachable=drop_unreachable,
                             note="prune_dead")

    def _compact(self, keep: np.ndarray, live_ctx: np.ndarray, renormalize: bool, note: str | None) -> GenerationModel:
        new_ctx = np.full(self.n_contexts, -1, dtype=np.int64)
        new_ctx[live_ctx] = np.arange(int(live_ctx.sum()))
        used_out = np.zeros(self.n_outcomes, dtype=np.bool_)
        used_out[self.out_id[keep]] = True
        new_out = np.full(self.n_outcomes, -1, dtype=np.int64)
        new_out[used_out] = np.arange(int(used_out.sum()))

        ent = np.flatnonzero(keep)  # still sorted by (context, outcome): ids are remapped monotonically
        ctx_ptr = np.zeros(int(live_ctx.sum()) + 1, dtype=np.int64)
        np.cumsum(np.bincount(new_ctx[self.ctx_of_entry[ent]], minlength=ctx_ptr.size - 1), out=ctx_ptr[1:])
        prob = self.prob[ent]
        if renormalize and ent.size:
            totals = np.bincount(new_ctx[self.ctx_of_entry[ent]], weights=prob, minlength=ctx_ptr.size - 1)
            prob = prob / totals[new_ctx[self.ctx_of_entry[ent]]]
        n_imp = self.imp_ptr[ent + 1] - self.imp_ptr[ent]
        imp_ptr = np.zeros(ent.size + 1, dtype=np.int64)
        np.cumsum(n_imp, out=imp_ptr[1:])
        imp_pos = np.repeat(self.imp_ptr[ent], n_imp) + (np.arange(imp_ptr[-1]) - np.repeat(imp_ptr[:-1], n_imp))
        imp_ctx = new_ctx[self.imp_ctx[imp_pos]]
        assert np.all(imp_ctx >= 0), "restrict kept an entry implying a dropped context"

        outs = np.flatnonzero(used_out)
        n_w = self.word_ptr[outs + 1] - self.word_ptr[outs]
        word_ptr = np.zeros(outs.size + 1, dtype=np.int64)
        np.cumsum(n_w, out=word_ptr[1:])
        w_pos = np.repeat(self.word_ptr[outs], n_w) + (np.arange(word_ptr[-1]) - np.repeat(word_ptr[:-1], n_w))
        info = dict(self.info)
        if note:
            info["history"] = list(info.get("history", [])) + [note]
        return GenerationModel(
            system_spec=self.system_spec,
            contexts=[c for c, ok in zip(self.contexts, live_ctx) if ok],
            outcomes=[self.outcomes[o] for o in outs],
            words=self.words, root=int(new_ctx[self.root]),
            ctx_ptr=ctx_ptr, out_id=new_out[self.out_id[ent]], count=self.count[ent], prob=prob,
            imp_ptr=imp_ptr, imp_ctx=imp_ctx, word_ptr=word_ptr, word_id=self.word_id[w_pos], info=info)

    # -- construction ------------------------------------------------------------------------
    @staticmethod
    def from_weights(system: GenerationSystem, weights: Mapping[Context, Mapping[Outcome, float]], *,
                     counts: Mapping[tuple[Context, Outcome], float] | None = None,
                     info: dict[str, Any] | None = None) -> GenerationModel:
        """A model with P(o|c) proportional to weights[c][o]; implied contexts come from system.imply.

        Contexts that are implied but absent from `weights` get no outcomes (dead: see `prune_dead`).
        `counts` (default: the weights) fills the count array.
        """
        root = system.root_context()
        ctx_index: dict[Context, int] = {root: 0}
        out_index: dict[Outcome, int] = {}
        word_index: dict[str, int] = {}
        rows: list[tuple[int, int, float, float, tuple[Context, ...]]] = []
        for c, dist in weights.items():
            ci = ctx_index.setdefault(c, len(ctx_index))
            total = float(sum(dist.values()))
            for o, w in dist.items():
                if not np.isfinite(w) or w < 0:
                    raise InputError(f"weight of outcome {o!r} in context {c!r} is {w!r}",
                                     hint="weights must be finite and non-negative")
                oi = out_index.setdefault(o, len(out_index))
                cnt = float(w) if counts is None else float(counts.get((c, o), 0.0))
                rows.append((ci, oi, w / total if total > 0 else 0.0, cnt, tuple(system.imply(c, o))))
        for *_, implied in rows:
            for d in implied:
                ctx_index.setdefault(d, len(ctx_index))
        rows.sort(key=lambda r: (r[0], r[1]))
        contexts = list(ctx_index)
        outcomes = list(out_index)
        word_lists = []
        for o in outcomes:
            ws = system.words_of_outcome(o)
            word_lists.append([word_index.setdefault(w, len(word_index)) for w in ws])
        n_ctx = len(contexts)
        ctx_ptr = np.zeros(n_ctx + 1, dtype=np.int64)
        np.cumsum(np.bincount(np.asarray([r[0] for r in rows], dtype=np.int64), minlength=n_ctx), out=ctx_ptr[1:])
        imp_lens = [len(r[4]) for r in rows]
        imp_ptr = np.zeros(len(rows) + 1, dtype=np.int64)
        np.cumsum(imp_lens, out=imp_ptr[1:])
        word_ptr = np.zeros(len(outcomes) + 1, dtype=np.int64)
        np.cumsum([len(w) for w in word_lists], out=word_ptr[1:])
        return GenerationModel(
            system_spec=system_spec(system), contexts=contexts, outcomes=outcomes, words=list(word_index),
            root=0, ctx_ptr=ctx_ptr, out_id=[r[1] for r in rows], prob=[r[2] for r in rows],
            count=[r[3] for r in rows], imp_ptr=imp_ptr,
            imp_ctx=[ctx_index[d] for r in rows for d in r[4]],
            word_ptr=word_ptr, word_id=[w for ws in word_lists for w in ws], info=dict(info or {}))

    # -- persistence ---------------------------------------------------------------------------
    ARRAYS = ("ctx_ptr", "out_id", "count", "prob", "imp_ptr", "imp_ctx", "word_ptr", "word_id")

    def to_bundle(self, system: GenerationSystem, *, prefix: str = "") -> tuple[dict[str, Any], dict[str, np.ndarray]]:
        """(meta, arrays) for embedding this model in another bundle; array names get `prefix`."""
        meta = {"system": self.system_spec, "root": self.root,
                "contexts": [system.encode_context(c) for c in self.contexts],
                "outcomes": [system.encode_outcome(o) for o in self.outcomes],
                "words": list(self.words), "info": self.info}
        return meta, {prefix + k: getattr(self, k) for k in self.ARRAYS}

    @staticmethod
    def from_bundle(meta: Mapping[str, Any], arrays: Mapping[str, np.ndarray], system: GenerationSystem, *,
                    prefix: str = "") -> GenerationModel:
        """Inverse of `to_bundle` (raises ModelFileError on missing or inconsistent parts)."""
        try:
            return GenerationModel(system_spec=meta["system"],
                                   contexts=[system.decode_context(c) for c in meta["contexts"]],
                                   outcomes=[system.decode_outcome(o) for o in meta["outcomes"]],
                                   words=meta["words"], root=int(meta["root"]), info=meta.get("info", {}),
                                   **{k: arrays[prefix + k] for k in GenerationModel.ARRAYS})
        except (KeyError, ValueError, TypeError) as exc:
            raise ModelFileError(f"corrupt embedded generation model ({exc})", hint="re-create the model file") \
                from None

    def save(self, path: str | Path, system: GenerationSystem) -> None:
        """One bundle: JSON meta with the string tables (encoded by `system`), arrays for the rest."""
        if system_spec(system) != self.system_spec:
            raise InputError(f"saving a model of system {self.system_spec} with system {system_spec(system)}",
                             hint="pass the system the model was trained with")
        meta = {
            "format": FORMAT, "version": VERSION, "system": self.system_spec, "root": self.root,
            "contexts": [system.encode_context(c) for c in self.contexts],
            "outcomes": [system.encode_outcome(o) for o in self.outcomes],
            "words": list(self.words), "info": self.info,
        }
        arrays = {name: getattr(self, name) for name in
                  ("ctx_ptr", "out_id", "count", "prob", "imp_ptr", "imp_ctx", "word_ptr", "word_id")}
        save_bundle(path, meta, arrays)

    @staticmethod
    def load(path: str | Path, system: GenerationSystem | None = None,
             registry: Mapping[str, type] | None = None) -> GenerationModel:
        """Read a bundle written by `save`; the system is rebuilt from the stored spec unless given."""
        meta, arrays = load_bundle(path)
        if meta.get("format") != FORMAT:
            raise ModelFileError(f"{path}: not a generation model (format {meta.get('format')!r})",
                                 hint="load it with the reader for its own kind of model")
        if meta.get("version") != VERSION:
            raise ModelFileError(f"{path}: generation model version {meta.get('version')!r}, expected {VERSION}",
                                 hint="re-train the model with this version of treegram")
        if system is None:
            from treegram.generation.registry import make_system
            system = make_system(meta["system"], registry=registry)
        elif system_spec(system) != meta["system"]:
            raise ModelFileError(f"{path}: model was trained with system {meta['system']}, "
                                 f"not {system_spec(system)}", hint="load it with its own system (or none)")
        contexts = [system.decode_context(c) for c in meta["contexts"]]
        outcomes = [system.decode_outcome(o) for o in meta["outcomes"]]
        if len(set(contexts)) != len(contexts) or len(set(outcomes)) != len(outcomes):
            raise ModelFileError(f"{path}: decoded contexts/outcomes are not distinct",
                                 hint="the system's encode/decode do not round-trip; fix them and re-save")
        try:
            return GenerationModel(system_spec=meta["system"], contexts=contexts, outcomes=outcomes,
                                   words=meta["words"], root=int(meta["root"]), info=meta.get("info", {}),
                                   **{k: arrays[k] for k in ("ctx_ptr", "out_id", "count", "prob", "imp_ptr",
                                                             "imp_ctx", "word_ptr", "word_id")})
        except (KeyError, ValueError) as exc:
            raise ModelFileError(f"{path}: corrupt generation model ({exc})", hint="re-create the file") from None

    def __repr__(self) -> str:
        return (f"GenerationModel(system={self.system_spec['name']!r}, contexts={self.n_contexts}, "
                f"outcomes={self.n_outcomes}, entries={self.n_entries})")


def fit_mle(system: GenerationSystem, examples: Iterable[Any], *, min_count: int = 1,
            prune: bool = True) -> GenerationModel:
    """P(o|c) by relative frequency over the derivations of `examples`.

    Pairs seen fewer than `min_count` times are discarded before normalising (the paper uses min_count=2).
    With `prune` (default) the result is made consistent with `prune_dead()`; otherwise dead contexts stay in
    and `is_consistent()` tells.
    """
    if not isinstance(min_count, int) or min_count < 1:
        raise InputError(f"min_count={min_count!r} must be a positive integer", hint="use 1 to keep every pair")
    counts: Counter[tuple[Context, Outcome]] = Counter()
    imply_cache: dict[tuple[Context, Outcome], tuple[Context, ...]] = {}
    n_examples = 0
    root = system.root_context()
    for i, example in enumerate(examples):
        try:
            derivation = system.derivations(example)
            if derivation.context != root:
                check_derivation(system, derivation)  # raises with the full explanation
            for node in derivation.nodes():  # count and check each node against I(c, o) in one pass
                key = (node.context, node.outcome)
                implied = imply_cache.get(key)
                if implied is None:
                    implied = imply_cache[key] = tuple(system.imply(node.context, node.outcome))
                if len(implied) != len(node.children) or any(
                        k.context != c for k, c in zip(node.children, implied)):
                    check_derivation(system, derivation, imply_cache=imply_cache)
                counts[key] += 1
        except InputError as exc:
            raise InputError(f"training example {i}: {exc}", hint=exc.hint) from None
        n_examples += 1
    if n_examples == 0:
        raise InputError("no training examples", hint="check the corpus path and reader")
    kept = {pair: n for pair, n in counts.items() if n >= min_count}
    weights: dict[Hashable, dict[Hashable, float]] = {}
    for (c, o), n in kept.items():
        weights.setdefault(c, {})[o] = float(n)
    if system.root_context() not in weights:
        raise InputError(f"no outcome of the root context was seen min_count={min_count} times or more",
                         hint="lower min_count or add training data")
    info = {"estimator": "mle", "examples": n_examples, "min_count": min_count,
            "pairs_seen": len(counts), "pairs_kept": len(kept)}
    model = GenerationModel.from_weights(system, weights, info=info)
    return model.prune_dead() if prune else model
