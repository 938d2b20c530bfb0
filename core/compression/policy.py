"""The deletion policy: what shapes a compressor's decoding besides its own model score, in one place so every
compressor decodes the same way and stores the same settings in its model file.

    best compression = argmax over the deletions the constraints allow of
                       model score  +  significance x sum_kept sig(w)  +  reward x #kept  -  valency drop costs
                                    (+ lm x log P_3gram(compression), over the model's `nbest` best compressions)

- `constraints` (`treegram.compression.constraints.Constraints`): hard rules (heads, arguments, negation, wh-words,
  copula predicates, coordination, punctuation); `None` = none.
- `valency` (`treegram.compression.valency.Valency`): soft costs for deleting a dependent its head selects.
- `significance`, `content_floor`: the weight of the per-word significance score and the least score of a noun,
  verb or number (`treegram.compression.significance`).
- `clause`: a cost for deleting a constituent headed by a verb (a relative, adverbial or participial clause): a
  clause states something, and annotators drop whole propositions far less often than modifiers.
- `reward`: the per-kept-word reward used when the user asks for none (a model's calibrated default length).
- `clean`: repair what deletion leaves after decoding: a/an agreement and dangling punctuation (`tidy`).
- `lm`, `nbest`: rerank the decoder's `nbest` best compressions by adding `lm` times their log probability under the
  English 3-gram model (`treegram.ngramlm`; not decomposable over the tree, hence n-best reranking); 0 = off.
- `target`, `length_prior`: a soft per-sentence length: the decoder takes the best compression of every length k
  (the stratified chart) and subtracts ``length_prior * n * (k / n - target) ** 2`` before choosing, so every
  sentence is shortened about as much as the others unless that costs the model dearly (annotators compress most
  sentences a little rather than a few a lot); 0 = off.

A decoder asks for `drop_costs(t)` (per node, once per tree) and `word_scores(t)` (per word), and passes its keep
mask through `finish(tokens, keep)`.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import attrs
import numpy as np

from treegram.compression.constraints import Constraints, tidy
from treegram.compression.syntax import AnalysedTree
from treegram.compression.valency import Valency

__all__ = ["CompressorOptions", "DeletionPolicy", "PolicyOptions", "apply_options", "read_sentences", "calibrate_reward"]


@attrs.define
class DeletionPolicy:
    constraints: Constraints | None = None
    valency: Valency | None = None
    significance: float = 0.0
    reward: float = 0.0
    clean: bool = False
    lm: float = 0.0
    nbest: int = 20
    target: float | None = None
    length_prior: float = 0.0
    clause: float = 0.0
    content_floor: float = 0.0

    @property
    def active(self) -> bool:
        """Whether the policy changes anything over plain model decoding."""
        return bool(self.constraints is not None or self.valency is not None or self.significance or self.clean
                    or self.lm or self.length_prior or self.clause)

    def relaxed(self, cost: float = 20.0) -> "DeletionPolicy | None":
        """This policy with its hard constraints as a finite `cost` per broken one (None when it has none): what
        `--rate` falls back to when the constraints forbid every length near the asked rate, so that the output
        has that length and breaks as few constraints as it can."""
        if self.constraints is None or math.isfinite(self.constraints.cost):
            return None
        return attrs.evolve(self, constraints=attrs.evolve(self.constraints, cost=cost))

    # -- what decoders ask for -------------------------------------------------------------------------------
    def drop_costs(self, t: AnalysedTree) -> np.ndarray:
        out = np.zeros(len(t))
        if self.constraints is not None:
            out += self.constraints.drop_costs(t)
        if self.valency is not None:
            out += self.valency.drop_costs(t)
        if self.clause:
            for c in range(1, len(t)):
                if t.word_pos[c] < 0 and t.tags[t.head[c]].startswith(("VB", "MD")) and t.head[c] != t.head[t.parent[c]]:
                    out[c] += self.clause
        return out

    def word_scores(self, t: AnalysedTree) -> np.ndarray:
        if not self.significance:
            return np.zeros(len(t.words))
        from treegram.compression.significance import word_significance

        return self.significance * word_significance(t.words, t.tags, self.content_floor)

    def finish(self, tokens: list[str], keep) -> np.ndarray:
        keep = np.asarray(keep, dtype=bool)
        return tidy(list(tokens), keep) if self.clean else keep

    def length_penalty(self, n: int, k: int) -> float:
        """The soft per-sentence length prior's cost of keeping k of n words (0 when off)."""
        if not self.length_prior or self.target is None or n == 0:
            return 0.0
        return self.length_prior * n * (k / n - self.target) ** 2

    def rerank(self, tokens: list[str], candidates: list[tuple[np.ndarray, float]]) -> tuple[np.ndarray, float]:
        """The best of the decoder's candidates (keep mask, score), best first, once each is finished and scored by
        the language model (the first one when `lm` is 0)."""
        if not self.lm or len(candidates) == 1:
            return candidates[0]
        from treegram.ngramlm import english_lm

        lm = english_lm()
        best = None
        for keep, score in candidates:
            done = self.finish(tokens, keep)
            total = score + self.lm * lm.logprob([w for w, k in zip(tokens, done) if k])
            if best is None or total > best[1]:
                best = (done, total)
        return best

    # -- model files -------------------------------------------------------------------------------------------
    def to_json(self) -> dict[str, Any]:
        return {"constraints": self.constraints is not None, "significance": self.significance,
                "reward": self.reward, "clean": self.clean, "lm": self.lm, "nbest": self.nbest,
                "target": self.target, "length_prior": self.length_prior, "clause": self.clause,
                "content_floor": self.content_floor,
                "valency": self.valency.to_json() if self.valency is not None else None}

    @classmethod
    def from_json(cls, d: dict[str, Any] | None) -> "DeletionPolicy":
        if not d:
            return cls()
        return cls(Constraints() if d.get("constraints") else None,
                   Valency.from_json(d["valency"]) if d.get("valency") else None,
                   float(d.get("significance", 0.0)), float(d.get("reward", 0.0)), bool(d.get("clean", False)),
                   float(d.get("lm", 0.0)), int(d.get("nbest", 20)),
                   None if d.get("target") is None else float(d["target"]), float(d.get("length_prior", 0.0)),
                   float(d.get("clause", 0.0)), float(d.get("content_floor", 0.0)))

    def describe(self) -> dict[str, Any]:
        return {"constraints": self.constraints is not None, "significance": self.significance,
                "default_reward": self.reward, "clean_punctuation": self.clean, "lm_weight": self.lm,
                "target_rate": self.target, "length_prior": self.length_prior, "clause_cost": self.clause,
                "content_floor": self.content_floor,
                "valency_heads": len(self.valency.pairs) if self.valency is not None else 0,
                "valency_weight": self.valency.weight if self.valency is not None else 0.0}


def policy_schema():
    """A saved `DeletionPolicy` (`to_json`; null or {} = the plain model): real booleans, finite weights."""
    from treegram.schema import Bool, Dict, Float, Int, Opt

    valency = Dict({"heads": Dict(values=Float(min=0)), "pairs": Dict(values=Dict(values=Float(min=0))),
                    "classes": Dict(values=Dict({"total": Float(min=0), "deps": Dict(values=Float(min=0))}))},
                   optional={"prior": Float(min=0), "weight": Float(min=0)})
    return Opt(Dict(optional={"constraints": Bool(), "significance": Float(), "reward": Float(), "clean": Bool(),
                              "lm": Float(min=0), "nbest": Int(min=1), "target": Opt(Float(min=0)),
                              "length_prior": Float(min=0), "clause": Float(), "content_floor": Float(min=0),
                              "valency": Opt(valency)}, extra=False))


# -- `treegram train` options (every compressor's Settings class inherits them) ---------------------------------
def _option(*a, **k):
    from treegram.formalism import option

    return option(*a, **k)


def _types():
    from treegram import argtypes

    return argtypes


@attrs.frozen
class PolicyOptions:
    """The deletion-policy options of `treegram train channel` / `stsg` (group "decoding")."""

    constraints: bool = _option(False, group="decoding",
                                help="never drop a head, an argument (subject, object, complement, ...), a negation, "
                                     "a wh-word or a copula's predicate; never break a coordination")
    tidy: bool = _option(False, group="decoding",
                         help="repair what deletion leaves: dangling punctuation, a/an before the next word")
    significance: float = _option(0.0, type=_types().nonnegative_float, group="decoding",
                                  help="weight of the per-word significance reward (rare content words go last)")
    content_floor: float = _option(0.0, type=_types().nonnegative_float, group="decoding",
                                   help="least significance of a noun, verb or number (with --significance)")
    valency: float = _option(0.0, type=_types().nonnegative_float, group="decoding",
                             help="weight of the valency costs (keep dependents the head selects); needs "
                                  "--valency-text")
    valency_text: list | None = _option(None, type=Path, nargs="+", group="decoding",
                                        help="tokenized sentences (one per line) whose parses give the valency "
                                             "counts")
    lm: float = _option(0.0, type=_types().nonnegative_float, group="decoding",
                        help="weight of the English 3-gram language model in reranking the n best compressions")
    nbest: int = _option(20, type=_types().positive_int, group="decoding", help="compressions reranked with --lm (default 20)")
    clause: float = _option(0.0, type=_types().nonnegative_float, group="decoding",
                            help="cost of deleting a clause (a constituent headed by a verb); 0 = none")
    length_prior: float = _option(0.0, type=_types().nonnegative_float, group="decoding",
                                  help="strength of a soft per-sentence length around --target-rate (compress most "
                                       "sentences a little rather than a few a lot); 0 = off")
    target_rate: float | None = _option(None, type=_types().open_probability, group="decoding",
                                        help="calibrate the model's default per-word reward so that it keeps this "
                                             "share of the words of --calibrate-text (default: the training long "
                                             "sentences) on average")
    calibrate_text: Path | None = _option(None, type=Path, group="decoding",
                                          help="tokenized sentences for --target-rate")

    def policy(self, valency: Valency | None = None) -> DeletionPolicy:
        if self.valency and valency is None:
            from treegram.errors import InputError

            raise InputError("--valency needs --valency-text (sentences to count dependents in)")
        if valency is not None:
            valency.weight = self.valency
        if self.length_prior and self.target_rate is None:
            from treegram.errors import InputError

            raise InputError("--length-prior needs --target-rate (the per-sentence length it pulls towards)")
        return DeletionPolicy(Constraints() if self.constraints else None, valency if self.valency else None,
                              self.significance, 0.0, self.tidy, self.lm, self.nbest, self.target_rate,
                              self.length_prior, self.clause, self.content_floor)


@attrs.frozen
class CompressorOptions(PolicyOptions):
    """The options every compressor trained on sentence pairs shares, declared once (`treegram train channel` /
    `stsg` subclass it): its inputs, then the deletion-policy options of `PolicyOptions`."""

    pairs: list = _option(required=True, nargs=2, metavar=("LONG", "SHORT"), type=Path,
                          help="line-parallel files: long sentences and their compressions, one tokenized sentence "
                               "per line")
    parser: str = _option(required=True, type=str,
                          help="a treegram parsing model (pcfg, tsg, ...) for the long sentences (parsed with the "
                               "model's default decoder, as `treegram parse` does), or `spacy`: the installed spaCy "
                               "pipeline's dependency parses as dependency-projected trees (spacy-binary: one "
                               "dependent per node)")
    limit: int | None = _option(None, type=_types().positive_int, help="use only the first N pairs")
    parse_cache: Path | None = _option(None, type=Path,
                                       help="directory for cached source parses (bracket files keyed by input + "
                                            "parser)")


def read_sentences(paths) -> list[list[str]]:
    """Tokenized sentences, one per line, from files (empty lines skipped)."""
    from treegram.io import iter_lines

    out = []
    for p in paths:
        for line in iter_lines(str(p)):
            toks = line.split()
            if toks:
                out.append(toks)
    return out


def calibrate_reward(model, sentences: list[list[str]], target: float, *, progress=None, iterations: int = 12,
                     lo: float = -10.0, hi: float = 10.0) -> float:
    """The per-word reward (bisection) at which `model` keeps `target` of the words of `sentences` on average:
    set as its policy's default reward, so that `treegram compress` without --rate or --reward compresses to that
    length on similar text.  Parses once; every step re-decodes the cached charts.  The share actually kept there
    goes to ``model.info["calibration_rate_reached"]`` (None: even the highest reward keeps less; a grammar that
    cannot delete that much stops at `lo`)."""
    trees = []
    items = progress(sentences) if progress else sentences
    for toks in items:
        tree, _status = model.source_tree(toks)
        trees.append((tree, toks))
    total = sum(len(t) for _tr, t in trees)
    model.policy.reward = 0.0
    best, best_rate = hi, None
    for _ in range(iterations):
        mid = (lo + hi) / 2
        rate = sum(int(np.sum(model.compress_tree(tr, toks, reward=mid).keep)) for tr, toks in trees) / total
        if rate >= target:
            best, best_rate, hi = mid, rate, mid
        else:
            lo = mid
    model.policy.reward = best
    model.info["calibration_rate_reached"] = None if best_rate is None else round(best_rate, 4)
    return best


def apply_options(model, options: PolicyOptions | None, *, parser, parser_id: str = "", cache_dir=None,
                  default_text: list[list[str]] = (), ui=None):
    """Give a freshly trained compressor the deletion policy of its `treegram train` options (the valency counts of
    --valency-text parsed with the model's parser) and calibrate its default length (--target-rate, on
    --calibrate-text or else on `default_text`, e.g. the training long sentences).  Every compressor's training
    ends here, so the options mean the same for every formalism."""
    if options is None:
        return model
    valency = None
    if options.valency_text:
        from treegram.compression.syntax import analyse
        from treegram.compression.treeprep import parse_sentences, wrap_root

        sents = read_sentences(options.valency_text)
        track = (lambda xs: ui.track(xs, description="parsing --valency-text")) if ui else None
        trees, _counts = parse_sentences(sents, parser, parser_id=parser_id, cache_dir=cache_dir, progress=track)
        valency = Valency().count_trees(analyse(wrap_root(t)) for t in trees).prune(2)
        model.info["valency_sentences"] = len(sents)
    trained_reward = model.policy.reward if getattr(model, "policy", None) is not None else 0.0
    model.policy = options.policy(valency)
    model.policy.reward = trained_reward  # a length the trainer calibrated (the SVM's bias) stays unless replaced
    if options.target_rate is not None:
        sents = read_sentences([options.calibrate_text]) if options.calibrate_text else list(default_text)[:500]
        track = (lambda xs: ui.track(xs, description="calibrating the default length")) if ui else None
        model.info["default_reward"] = round(calibrate_reward(model, sents, options.target_rate, progress=track), 4)
        model.info["calibrated_rate"] = options.target_rate
    return model
