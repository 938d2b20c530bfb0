"""The trained compression model (`treegram compress`), the parsed training corpus and the model of a Gibbs run."""

from __future__ import annotations

import math
import time
from collections import Counter, defaultdict
from typing import Any

import attrs

from treegram.compression.align import Pair
from treegram.compression.compressor import PolicyCompressor, embed_parser, embedded_parser
from treegram.compression.treeprep import derive_target, parse_sentences, wrap_root
from treegram.formalism import save_model

from treegram.plugins.stsg.grammar import FiniteSTSG

__all__ = ["STSGData", "STSGModel", "gibbs_model", "prepare_corpus", "embed_parser", "embedded_parser"]


class STSGModel(PolicyCompressor):
    """A finite STSG (`grammar`) for prediction plus the parser that turns raw sentences into source trees."""

    what = "STSG"
    formalism = "stsg"

    # -- compression --------------------------------------------------------------------------------------------
    def decoder(self, tree, tokens: list[str], policy=None):
        """The compressor contract (`treegram.compression.compressor`): the sentence's tree chart under the model's
        deletion policy (`treegram.compression.policy`), or under `policy` if given."""
        return self.grammar.decoder(wrap_root(tree), tokens, self.policy if policy is None else policy)

    # -- persistence --------------------------------------------------------------------------------------------
    def save(self, path) -> None:
        parser_meta, arrays = embed_parser(self.parser)
        save_model(path, self, {"grammar": self.grammar.to_json(), "info": self.info, "parser": parser_meta,
                                "policy": self.policy.to_json()}, arrays)

    @classmethod
    def from_bundle(cls, meta: dict, arrays: dict) -> "STSGModel":
        from treegram.schema import COMMON_OPTIONAL, Dict, Opt, Str, validate

        validate(meta, Dict({"grammar": Dict()}, optional={**COMMON_OPTIONAL,
                                                          "parser": Opt(Dict({"formalism": Str()})),
                                                          "policy": Opt(Dict())}), "meta")
        parser = embedded_parser(meta, arrays)
        policy = cls.read_policy(meta)
        return cls(FiniteSTSG.from_json(meta["grammar"]), parser, meta.get("info"), policy)

    def describe(self, *, top: int = 20) -> dict[str, Any]:
        g = self.grammar
        seen = [r for r in g.rules if r.count > 0]
        cats = Counter(r.category for r in seen)
        out: dict[str, Any] = {"formalism": "stsg",
                               **{k: v for k, v in self.info.items() if not isinstance(v, (list, dict))},
                               "rules_with_counts": len(seen), "rules_total": len(g.rules),
                               "deletion_rules": sum(1 for r in seen if r.target is None),
                               "root_pairs": len(cats),
                               "parser": getattr(self.parser, "formalism", None)}
        if top:
            # like the paper's Tables 3-4: the most probable rules of the ROOT/ROOT and S/S root pairs that delete
            # something, then the most frequent rules overall
            by_cat = defaultdict(list)
            for r in seen:
                by_cat[r.category].append(r)
            rows = []
            for cat in ("ROOT / ROOT", "S / S"):
                deleting = [r for r in by_cat.get(cat, []) if "[]" in r.text or _drops_words(r)]
                deleting.sort(key=lambda r: -r.logp)
                rows += [_row(r) for r in deleting[:top]]
            rest = sorted(seen, key=lambda r: -r.count)
            rows += [_row(r) for r in rest[:top] if _row(r) not in rows]
            out["top_rules"] = rows
        return out


def _drops_words(rule) -> bool:
    return rule.target is not None and len(rule.target.leaves()) < len(rule.source.leaves())


def _row(r) -> dict:
    return {"root pair": r.category, "rule": r.text, "count": round(r.count, 2), "prob": round(math.exp(r.logp), 4)}


# -- training ------------------------------------------------------------------------------------------------------

def prepare_corpus(pairs: list[Pair], parser, *, parser_id: str = "", cache_dir=None, beta: float = 0.1,
                   progress=None):
    """Parse the sources (cached), derive target trees and build the integer-coded training corpus."""
    from treegram.plugins.stsg.model import PairCorpus

    trees, counts = parse_sentences([p.source for p in pairs], parser, parser_id=parser_id, cache_dir=cache_dir,
                                    progress=progress)
    sources = [wrap_root(t) for t in trees]
    targets = [derive_target(s, p.keep) for s, p in zip(sources, pairs)]
    return PairCorpus(sources, targets, [p.keep for p in pairs], beta=beta), counts


@attrs.define
class STSGData:
    """What `treegram train stsg` trains on: the pairs, the parser (and its fingerprint for the parse cache), the
    integer-coded corpus of the parsed pairs (None until parsed) and when loading started (for the model's
    training_seconds)."""

    pairs: list
    parser: Any
    parser_id: str = ""
    cache_dir: Any = None
    corpus: Any = None
    parse_counts: dict = attrs.Factory(dict)
    started: float = attrs.Factory(time.perf_counter)


def _info(method: str, pairs: list[Pair], parse_counts: dict, alpha: float, beta: float, seed: int) -> dict:
    return {"method": method, "training_pairs": len(pairs),
            "non_deletion_pairs": sum(not p.pure_deletion for p in pairs),
            "alpha": alpha, "beta": beta, "seed": seed,
            "parse_failures": parse_counts.get("failed", 0) + parse_counts.get("too_long", 0)}


def gibbs_model(state, data: STSGData, *, alpha: float, beta: float, seed: int, iterations: int, trace: list,
                samples=None, averaging_info=None) -> STSGModel:
    """The model of a Gibbs run (`STSGFormalism.extract_model`): the MAP counts of the final state -- or their mean
    over the averaged states `samples` (`treegram.bayes.averaging`: snapshots of the alignment, newest first) --
    with Laplace smoothing and the copy/delete rules of the training sources (`FiniteSTSG.from_counts`)."""
    from treegram.plugins.stsg.model import averaged_fragments

    corpus = data.corpus
    if samples is not None and len(samples) > 1:
        counts = averaged_fragments(corpus, [s["alignment"] for s in samples])
    else:
        counts = state.fragments()
    grammar = FiniteSTSG.from_counts(counts, corpus.sources, pseudo=1.0)
    info = _info("gibbs", data.pairs, data.parse_counts, alpha, beta, seed)
    info.update({"iterations": iterations, "sweeps_run": len(trace),
                 "final_log_likelihood": round(trace[-1]["log_likelihood"], 2) if trace else None,
                 "map_rules": state.num_rules,
                 "trace": [{"sweep": r["sweep"], "temperature": round(r["temperature"], 4),
                            "log_likelihood": round(r["log_likelihood"], 2), "rules": r.get("rules"),
                            "seconds": round(r["seconds"], 4)} for r in trace]})
    info.update(averaging_info or {})
    info["training_seconds"] = round(time.perf_counter() - data.started, 2)
    return STSGModel(grammar, data.parser, info)
