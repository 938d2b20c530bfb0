"""The compressor contract: what a model supplies to get `treegram compress`, `treegram eval-compression --model`,
rate control and batch compression on Dask (`--workers` / `--scheduler`) without code of its own for them.

A *compressor* is a model (of any formalism, registered through ``register_formalisms`` like every model) that
implements the `Compressor` protocol below -- two methods:

    source_tree(tokens) -> (tree, status)     the sentence's source tree; status ok / failed (flat fallback tree) /
                                              too_long.  `ParsedCompressor` supplies it from an embedded parser.
    decoder(tree, tokens) -> SentenceDecoder  the sentence's decoding problem, built once and decoded for any
                                              per-word reward: decode(reward) -> Compression

and, optionally, the decoder's ``decode_length(k) -> Compression | None`` (the best compression keeping exactly
`k` words; None when the model has none), which makes ``--rate`` exact.  Compressors that decode over a core tree
chart (`treegram.charts.treechart`) get both from `TreeChartDecoder`: the plugin gives the chart, the kept words of
each rule application and how a derivation reads as (tree, keep mask); lengths come from the chart's stratified
Viterbi.  The core does the rest:

- `compress_tree(model, tree, tokens, rate=, reward=, tolerance=)` (and the `ParsedCompressor` methods of the same
  name): ``rate=None`` decodes at the reward; a rate runs `rate_search`;
- `rate_search`: among the compressions it meets -- every length `decode_length` offers within the tolerance (and
  the nearest outside it), or else every reward its bisection tries, on both sides of the target -- the one whose
  rate is within `tolerance` of the target with the highest model score (the score without the reward), or, when
  none is within it, the nearest (ties: higher score), with a note saying why the target was missed;
- the commands (`treegram.compression.cli`), their per-line work (`treegram.compression.run`) and the Dask batches
  (`treegram.batchparse`).

A model that only has the older duck-typed ``compress_tree(tree, tokens, *, rate=None, reward=0.0)`` still works
(`is_compressor`); it keeps its own rate control.

`reward` is a log-scale bonus per kept word (> 0: longer output); `rate` a share of kept words.
"""

from __future__ import annotations

import math
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Protocol, Sequence, runtime_checkable

import numpy as np

from treegram.errors import InputError, ModelFileError, ParseFailure, TreegramError
from treegram.formalism import flat_fallback
from treegram.io import load_bundle

from treegram.compression.treeprep import wrap_root

if TYPE_CHECKING:
    from treegram.charts.treechart import TreeChart
    from treegram.trees import Tree

__all__ = ["Compression", "Compressor", "MAX_PARSE_LENGTH", "ParsedCompressor", "RATE_TOLERANCE", "SentenceDecoder",
           "TreeChartDecoder", "compress_tree", "embed_parser", "embedded_parser", "is_compressor", "load_parser",
           "parse_source", "parser_fingerprint", "rate_search", "rate_window"]

MAX_PARSE_LENGTH = 100  # longer sentences get the flat fallback tree (parsing is cubic) and are not decoded
#: `--rate` is met when the output's rate is within this of the target (issue 24: +-0.05)
RATE_TOLERANCE = 0.05


class Compression:
    """A decoded compression: the kept `tokens` (`keep` mask), the target tree (None for word-deletion models),
    the decoder's `score` at `reward` (so `model_score` = score - reward x kept words; None when nothing was
    decoded) and, after a rate search that missed the target, a `note` saying why."""

    __slots__ = ("tokens", "keep", "tree", "score", "reward", "note")

    def __init__(self, tokens, keep, tree, score, reward: float = 0.0, note: str | None = None):
        self.tokens, self.keep, self.tree = tokens, np.asarray(keep, dtype=bool), tree
        self.score = None if score is None else float(score)
        self.reward, self.note = float(reward), note

    @property
    def compressed(self) -> list[str]:
        return [w for w, k in zip(self.tokens, self.keep) if k]

    @property
    def kept(self) -> int:
        return int(np.count_nonzero(self.keep))

    @property
    def rate(self) -> float:
        return float(np.mean(self.keep)) if len(self.keep) else 1.0

    @property
    def model_score(self) -> float:
        """The model's own score of this compression (the per-word reward taken out)."""
        return float("-inf") if self.score is None else self.score - self.reward * self.kept


@runtime_checkable
class SentenceDecoder(Protocol):
    """One sentence's decoding problem (built once per sentence by `Compressor.decoder`).

    ``decode(reward)`` -> the best `Compression` with `reward` added per kept word.  Optional:
    ``decode_length(k)`` -> the best `Compression` keeping exactly `k` words, or None (makes `--rate` exact)."""

    def decode(self, reward: float) -> Compression: ...


@runtime_checkable
class Compressor(Protocol):
    """The compressor contract (see the module docstring): a model with these gets compress, eval-compression,
    rate control and batch compression from the core."""

    formalism: str

    def source_tree(self, tokens: list[str]) -> tuple["Tree", str]: ...

    def decoder(self, tree: "Tree", tokens: list[str]) -> SentenceDecoder: ...
    # optional: ``decoder(tree, tokens, policy=None)`` decodes under another deletion policy than the model's own;
    # `compress_tree` then relaxes the policy's hard constraints when they forbid every length near an asked rate


def is_compressor(model) -> bool:
    """Whether `treegram compress` can use the model: the `Compressor` protocol, or the older duck-typed
    ``source_tree`` + ``compress_tree``."""
    if not callable(getattr(model, "source_tree", None)):
        return False
    return callable(getattr(model, "decoder", None)) or callable(getattr(model, "compress_tree", None))


def compress_tree(model, tree, tokens: list[str], *, rate: float | None = None, reward: float = 0.0,
                  tolerance: float = RATE_TOLERANCE, strict: bool = False) -> Compression:
    """Compress one parsed sentence with any compressor: the core's decoding and rate control over the model's
    `decoder`, or the model's own ``compress_tree`` for the older duck-typed models.  `strict`: when the model's
    deletion policy forbids every length near `rate`, meet it anyway with its hard constraints as costs (fewest
    broken) -- off by default, because those outputs read much worse (benchmarks/RESULTS.md `compression-default`)."""
    if rate is not None and not 0.0 <= rate <= 1.0:
        raise InputError(f"--rate must be between 0 and 1, got {rate}")
    if len(tokens) > MAX_PARSE_LENGTH:
        # The length limit of parsing applies to decoding too: a sentence this long has only the flat fallback
        # tree, and decoding one node with hundreds of children costs time and memory beyond any use.
        return Compression(list(tokens), [True] * len(tokens), tree, None, reward,
                           note=f"longer than {MAX_PARSE_LENGTH} tokens, so not parsed (flat tree) and not compressed")
    dec = getattr(model, "decoder", None)
    if not callable(dec):
        return model.compress_tree(tree, tokens, rate=rate, reward=reward)
    decoder = dec(tree, list(tokens))
    if not isinstance(decoder, SentenceDecoder):
        raise TreegramError(f"{getattr(model, 'formalism', type(model).__name__)} model: decoder() returned a "
                            f"{type(decoder).__name__}, which has no decode(reward)",
                            hint="a compressor's decoder must implement treegram.compression.compressor."
                                 "SentenceDecoder")
    if rate is None:
        return decoder.decode(reward)
    out = rate_search(decoder, len(tokens), rate, tolerance=tolerance)
    if abs(out.rate - rate) > tolerance + 1e-9 and rate_window(len(tokens), rate, tolerance):
        # the deletion policy's hard constraints may forbid every length near the rate: asked for a length, the
        # user gets it, breaking as few constraints as possible, and a note says so
        policy = getattr(model, "policy", None)
        relaxed = policy.relaxed() if policy is not None else None
        if relaxed is not None and _takes_policy(dec):
            if not strict:
                out.note = (out.note or "") + "; --strict-rate may reach it by breaking the deletion constraints"
                return out
            alt = rate_search(dec(tree, list(tokens), policy=relaxed), len(tokens), rate, tolerance=tolerance)
            if abs(alt.rate - rate) <= tolerance + 1e-9:
                alt.note = (f"rate {rate:g} met by breaking the deletion constraints (--strict-rate; under them the "
                            f"nearest length kept {out.kept}/{len(tokens)} = {out.rate:.2f})")
                return alt
    return out


def _takes_policy(decoder_method) -> bool:
    import inspect

    try:
        return "policy" in inspect.signature(decoder_method).parameters
    except (TypeError, ValueError):
        return False


class ParsedCompressor:
    """Base class of compressors that decode over the parse of the long sentence: ``source_tree`` parses with the
    embedded ``parser`` (flat fallback, length limit); a subclass implements ``decoder(tree, tokens)`` and gets
    ``compress_tree`` (rate control included) and ``compress`` (parse, then compress_tree).  ``what`` names the
    model in errors."""

    what = "compression"
    parser = None

    def source_tree(self, tokens: list[str]):
        """(ROOT-wrapped parse, status) with status ok / failed (flat fallback tree) / too_long."""
        return parse_source(self.parser, tokens, what=self.what)

    def compress_tree(self, tree, tokens: list[str], *, rate: float | None = None, reward: float = 0.0,
                      tolerance: float = RATE_TOLERANCE, strict: bool = False) -> Compression:
        """The core's decoding and rate control over ``self.decoder`` (which a subclass implements)."""
        if not callable(getattr(self, "decoder", None)):
            raise NotImplementedError(f"{type(self).__name__} implements neither decoder nor compress_tree")
        return compress_tree(self, tree, tokens, rate=rate, reward=reward, tolerance=tolerance, strict=strict)

    def compress(self, tokens: list[str], *, rate: float | None = None, reward: float = 0.0,
                 tolerance: float = RATE_TOLERANCE) -> Compression:
        if not tokens:
            raise InputError("empty sentence", hint="give at least one token")
        tree, _ = self.source_tree(tokens)
        return self.compress_tree(tree, tokens, rate=rate, reward=reward, tolerance=tolerance)


# -- rate control ------------------------------------------------------------------------------------------------

def rate_window(n: int, rate: float, tolerance: float = RATE_TOLERANCE) -> list[int]:
    """The numbers of kept words k in 1..n whose rate k/n is within `tolerance` of `rate` (empty when none is: a
    3-word sentence has no rate within 0.05 of 0.5)."""
    if n <= 0:
        return []
    lo = max(1, math.ceil((rate - tolerance) * n - 1e-9))
    hi = min(n, math.floor((rate + tolerance) * n + 1e-9))
    return list(range(lo, hi + 1))


def _choose(cands: dict[int, Compression], n: int, rate: float, tolerance: float) -> Compression:
    """Within the tolerance: the highest model score (ties: nearer the target); otherwise the nearest (ties: higher
    score)."""
    window = set(rate_window(n, rate, tolerance))
    inside = [c for k, c in cands.items() if k in window]
    if inside:
        return max(inside, key=lambda c: (c.model_score, -abs(c.kept - rate * n), -c.kept))
    return min(cands.values(), key=lambda c: (abs(c.kept - rate * n), -c.model_score, c.kept))


def _miss_note(n: int, rate: float, tolerance: float, best: Compression, exact: bool) -> str:
    window = rate_window(n, rate, tolerance)
    nearest = f"nearest kept {best.kept}/{n} = {best.rate:.2f}"
    if not window:
        return f"no rate of a {n}-word sentence is within {tolerance:g} of {rate:g}; {nearest}"
    keeping = f"{window[0]}" + (f"-{window[-1]}" if len(window) > 1 else "")
    if exact:
        return f"the model has no compression keeping {keeping} of the {n} words (rate {rate:g} +- {tolerance:g}); " \
               f"{nearest}"
    return f"no reward the search tried gave a compression keeping {keeping} of the {n} words (rate {rate:g} +- " \
           f"{tolerance:g}); {nearest}"


def rate_search(decoder: SentenceDecoder, n: int, rate: float, *, tolerance: float = RATE_TOLERANCE,
                iterations: int = 14, lo: float = -30.0, hi: float = 30.0) -> Compression:
    """Rate control over one sentence's decoder (see the module docstring for the choice).

    With ``decoder.decode_length`` the candidates are the exact best compressions of every length in the window
    (and, when the model has none there, of the nearest lengths outside it).  Without it, the reward is bisected in
    [lo, hi] for `iterations` steps towards the target and every compression met on the way (both sides of the
    target) is a candidate; lengths between two rewards' outputs that no reward produces are not reachable this
    way.  The returned compression carries a `note` when its rate is not within the tolerance."""
    if not 0.0 <= rate <= 1.0:
        raise InputError(f"--rate must be between 0 and 1, got {rate}")
    cands: dict[int, Compression] = {}

    def add(c: Compression | None) -> None:
        if c is not None and (c.kept not in cands or c.model_score > cands[c.kept].model_score):
            cands[c.kept] = c

    by_length = getattr(decoder, "decode_length", None)
    if callable(by_length):
        window = rate_window(n, rate, tolerance)
        for k in window:
            add(by_length(k))
        if not any(k in cands for k in window):
            target = rate * n
            for k in sorted(range(1, n + 1), key=lambda k: (abs(k - target), k)):  # nearest lengths first
                if k in window:
                    continue
                add(by_length(k))
                if cands:
                    best_d = min(abs(c - target) for c in cands)
                    if abs(k - target) > best_d:
                        break
        if not cands:
            add(decoder.decode(0.0))
    else:
        for _ in range(iterations):
            mid = (lo + hi) / 2
            out = decoder.decode(mid)
            add(out)
            if out.rate >= rate - 1e-9:
                hi = mid
            else:
                lo = mid
    best = _choose(cands, n, rate, tolerance)
    if abs(best.rate - rate) > tolerance + 1e-9:
        best.note = _miss_note(n, rate, tolerance, best, callable(by_length))
    return best


class PolicyCompressor(ParsedCompressor):
    """A `ParsedCompressor` whose model is a grammar with an embedded parser, some info and a deletion policy
    (`treegram.compression.policy.DeletionPolicy`; the default one when none is given): the stsg and channel
    models.  ``formalism`` names it in errors about its files."""

    formalism = "compression"

    def __init__(self, grammar, parser=None, info: dict | None = None, policy=None):
        from treegram.compression.policy import DeletionPolicy

        self.grammar = grammar
        self.parser = parser
        self.info = dict(info or {})
        self.policy = policy if policy is not None else DeletionPolicy()

    @classmethod
    def read_policy(cls, meta: dict):
        """The deletion policy saved in a model file's metadata (`ModelFileError` when it is damaged)."""
        from treegram.compression.policy import DeletionPolicy

        try:
            return DeletionPolicy.from_json(meta.get("policy"))
        except (KeyError, TypeError, ValueError) as exc:
            raise ModelFileError(f"corrupt {cls.formalism} model: bad deletion policy ({exc})",
                                 hint=f"re-create it with `treegram train {cls.formalism}`") from None


class TreeChartDecoder:
    """A `SentenceDecoder` over a core tree chart (`treegram.charts.treechart.TreeChart`): `words[e]` = words that
    rule application e keeps (the reward's multiplier; the stratified chart's state increment), `output(apps)` ->
    (target tree or None, keep mask) of a derivation (applications top-down), `roots` = the (node, category) items
    a derivation may end in, tried in order (None: the best category at node 0).  `extra`: a score per application
    added to the chart's own (e.g. a deletion policy's word scores); `policy`
    (`treegram.compression.policy.DeletionPolicy`): its default reward (added to every reward asked for), n-best
    reranking with its language model, and its tidying of every output.

    ``decode(reward)`` is the Viterbi derivation with ``reward * words`` added (with the policy's `lm`: the best of
    the `nbest` best derivations once reranked); ``decode_length(k)`` reads the stratified Viterbi chart (one pass,
    cached, states = kept words 0..n) for the best derivation keeping exactly k words."""

    def __init__(self, chart: "TreeChart", words, tokens: Sequence[str],
                 output: Callable[[list[int]], tuple], roots: Sequence[tuple[int, int]] | None = None,
                 extra=None, policy=None):
        self.chart, self.tokens = chart, list(tokens)
        self.words = np.asarray(words, dtype=np.float64)
        self.output, self.roots = output, list(roots) if roots else None
        self.extra = np.zeros(len(chart)) if extra is None else np.asarray(extra, dtype=np.float64)
        self.policy = policy
        self._by_length = None

    def _root(self, has, score) -> tuple[int, int] | None:
        for item in self.roots or ():
            if has(*item):
                return item
        cats = [c for c in range(self.chart.n_cats) if has(0, c)]
        return (0, max(cats, key=lambda c: score(0, c))) if cats else None

    def _finish(self, tree, keep, score: float, reward: float) -> Compression:
        if self.policy is not None:
            done = self.policy.finish(self.tokens, keep)
            if not np.array_equal(done, keep):
                tree = None if tree is None else _restrict(tree, keep, done)
                keep = done
        return Compression(self.tokens, keep, tree, score, reward)

    def decode(self, reward: float = 0.0) -> Compression:
        if self.policy is not None:
            reward += self.policy.reward  # the model's calibrated default length
        scores = reward * self.words + self.extra
        vit = self.chart.viterbi(scores)
        item = self._root(vit.has, vit.score)
        if item is None:
            raise InputError("no derivation for the source tree (internal error: copy rules should always apply)")
        pol = self.policy
        if pol is not None and pol.length_prior and pol.target is not None:
            return self._decode_by_length(reward, pol)
        if pol is not None and pol.lm:
            cands = []
            for sc, apps in self.chart.kbest(item[0], item[1], pol.nbest, scores):
                tree, keep = self.output(apps)
                cands.append((keep, sc, tree))
            keep, total = pol.rerank(self.tokens, [(k, sc) for k, sc, _t in cands])
            for k, sc, tree in cands:
                if np.array_equal(pol.finish(self.tokens, k), keep):
                    return self._finish(tree, k, sc, reward)
        tree, keep = self.output(vit.derivation(*item))
        return self._finish(tree, keep, vit.score(*item), reward)

    def _decode_by_length(self, reward: float, pol) -> Compression:
        """The policy's soft per-sentence length: the best compression of each length, scored with the reward, the
        length prior and (with `lm`) the language model; the best of them."""
        n = len(self.tokens)
        cands = []
        # lengths far below the target are never worth their prior cost; skipping them keeps this cheap
        for k in range(max(1, math.floor((pol.target - 0.4) * n)), n + 1):
            c = self.decode_length(k)
            if c is not None:
                c.score += reward * c.kept - pol.length_penalty(n, c.kept)
                c.reward = reward
                cands.append(c)
        if not cands:
            return self.decode(reward)
        if pol.lm:
            from treegram.ngramlm import english_lm

            lm = english_lm()
            return max(cands, key=lambda c: c.score + pol.lm * lm.logprob(c.compressed))
        return max(cands, key=lambda c: c.score)

    def decode_length(self, k: int) -> Compression | None:
        n = len(self.tokens)
        if not 0 <= k <= n:
            return None
        if self._by_length is None:
            sv = self.chart.stratified_viterbi(np.rint(self.words).astype(np.int64)[:, None], [n], self.extra)
            roots = {}
            for c in range(self.chart.n_cats):
                row = sv.root_scores(0, c)
                if np.isfinite(row).any():
                    roots[(0, c)] = row
            self._by_length = (sv, roots)
        sv, roots = self._by_length
        order = [r for r in (self.roots or []) if r in roots and np.isfinite(roots[r][k])]
        if not order:
            finite = [r for r, row in roots.items() if np.isfinite(row[k])]
            if not finite:
                return None
            order = [max(finite, key=lambda r: roots[r][k])]
        item = order[0]
        tree, keep = self.output(sv.derivation(item[0], item[1], (k,)))
        return self._finish(tree, keep, float(roots[item][k]), 0.0)


def _restrict(tree, old_keep, new_keep):
    """The output tree (whose words are the `old_keep` ones) without the words tidying dropped (`new_keep`);
    constituents left empty go too.  Tidying only ever restores words when it fixes an article, so a tree that
    would need a word back is returned as it is."""
    from treegram.compression.syntax import project

    old_keep, new_keep = np.asarray(old_keep, bool), np.asarray(new_keep, bool)
    if (new_keep & ~old_keep).any() or len(tree.leaves()) != int(old_keep.sum()):
        return tree
    return project(tree, new_keep[old_keep])


def parse_source(parser, tokens: list[str], *, what: str = "compression"):
    """(ROOT-wrapped parse, status) with status ok / failed (flat fallback tree) / too_long."""
    if parser is None:
        raise TreegramError(f"this {what} model has no parser", hint="retrain with --parser MODEL")
    if len(tokens) > MAX_PARSE_LENGTH:
        return wrap_root(flat_fallback(tokens)), "too_long"
    from treegram.charts.decoders import parse_default

    try:  # the parser model's default decoder, as `treegram parse` runs it
        return wrap_root(parse_default(parser)(list(tokens))), "ok"
    except ParseFailure:
        return wrap_root(flat_fallback(tokens)), "failed"


def load_parser(spec):
    """The parser a compressor is trained with: ``spacy`` for the pinned spaCy pipeline's dependency parses read as
    dependency-projected trees (`treegram.depparse`; ``spacy-binary``: binarized head-outward), else the path of a
    treegram parsing model (pcfg, tsg, ...)."""
    from treegram.depparse import FORMALISM, SPECS, DependencyParser
    from treegram.formalism import load_model

    if str(spec) in SPECS or str(spec) == FORMALISM:
        return DependencyParser(binarize=SPECS.get(str(spec), False))
    path = Path(spec)
    if not path.is_file():
        raise InputError(f"{path}: parser model not found",
                         hint="train one first (`treegram train pcfg --treebank ... --out pcfg.model`) or use "
                              "--parser spacy")
    parser = load_model(path)
    if not hasattr(parser, "parse"):
        raise InputError(f"{path}: a {parser.formalism} model cannot parse sentences",
                         hint="pass a parsing model (pcfg, tsg, tig, ostag) or spacy")
    return parser


def parser_fingerprint(spec) -> str:
    """What identifies a parser's output in parse caches: the model file's hash, or the spaCy pipeline's version."""
    from treegram.compression.treeprep import model_fingerprint
    from treegram.depparse import FORMALISM, SPECS, pipeline_version

    if str(spec) in SPECS or str(spec) == FORMALISM:
        return f"{pipeline_version()} {spec}"
    return model_fingerprint(spec)


def embed_parser(parser) -> tuple[dict | None, dict[str, np.ndarray]]:
    """A compression model's parser as (its model-file metadata, its arrays under `parser.`), to store inside the
    compression model's file; (None, {}) without a parser.  The spaCy dependency parser is stored as its spec."""
    if parser is None:
        return None, {}
    if hasattr(parser, "spec"):
        return parser.spec(), {}
    with tempfile.TemporaryDirectory() as tmp:
        p = Path(tmp) / "parser.model"
        parser.save(p)
        parser_meta, parser_arrays = load_bundle(p)
    return parser_meta, {f"parser.{k}": v for k, v in parser_arrays.items()}


def embedded_parser_schema():
    """The parser a compression model stores (`embed_parser`): null, or a model file's header + metadata (its own
    formalism's schema is checked when `embedded_parser` loads it)."""
    from treegram.schema import Dict, Opt, Str

    return Opt(Dict({"formalism": Str(nonempty=True)}))


def embedded_parser(meta: dict, arrays: dict):
    """The parser stored by `embed_parser` in a compression model's (meta, arrays), or None."""
    from treegram.formalism import model_from_bundle
    from treegram.plugin_manager import formalisms

    pm = meta.get("parser")
    if pm is None:
        return None
    from treegram.depparse import FORMALISM, DependencyParser

    if isinstance(pm, dict) and pm.get("formalism") == FORMALISM:
        return DependencyParser.from_spec(pm)
    if not isinstance(pm, dict) or pm.get("formalism") not in formalisms():
        raise ModelFileError(f"the embedded parser is a {pm.get('formalism') if isinstance(pm, dict) else pm!r} "
                             "model, which no installed plugin provides", hint="install the plugin that trained the parser")
    return model_from_bundle(pm, {k[7:]: v for k, v in arrays.items() if k.startswith("parser.")},
                             "the embedded parser")
