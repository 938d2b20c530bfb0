"""What every compression model shares: the decoded `Compression`, the protocol `treegram compress` uses, parsing a
raw sentence with the model's own parser, and that parser's storage inside the compression model file.

A *compressor* is a model with

    source_tree(tokens) -> (ROOT-wrapped tree, status)     status: ok / failed (flat fallback) / too_long
    compress_tree(tree, tokens, *, rate=None, reward=0.0) -> Compression

`rate` asks for a share of kept words (rate control); `reward` is a log-scale bonus per kept word.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import numpy as np

from treegram.errors import InputError, ModelFileError, ParseFailure, TreegramError
from treegram.formalism import flat_fallback
from treegram.io import load_bundle

from treegram.compression.treeprep import wrap_root

__all__ = ["Compression", "ParsedCompressor", "is_compressor", "parse_source", "embed_parser", "embedded_parser", "rate_search",
           "MAX_PARSE_LENGTH", "load_parser", "parser_fingerprint"]

MAX_PARSE_LENGTH = 100  # longer sentences get the flat fallback tree (parsing is cubic)


class Compression:
    __slots__ = ("tokens", "keep", "tree", "score")

    def __init__(self, tokens, keep, tree, score):
        self.tokens, self.keep, self.tree, self.score = tokens, keep, tree, score

    @property
    def compressed(self) -> list[str]:
        return [w for w, k in zip(self.tokens, self.keep) if k]

    @property
    def rate(self) -> float:
        return float(np.mean(self.keep)) if len(self.keep) else 1.0


class ParsedCompressor:
    """What every compressor that decodes over the parse of the long sentence shares: ``source_tree`` parses with
    the embedded ``parser`` (flat fallback, length limit), ``compress`` = parse, then the subclass's
    ``compress_tree(tree, tokens, rate=, reward=)``.  ``what`` names the model in errors."""

    what = "compression"
    parser = None

    def source_tree(self, tokens: list[str]):
        """(ROOT-wrapped parse, status) with status ok / failed (flat fallback tree) / too_long."""
        return parse_source(self.parser, tokens, what=self.what)

    def compress(self, tokens: list[str], *, rate: float | None = None, reward: float = 0.0) -> Compression:
        if not tokens:
            raise InputError("empty sentence", hint="give at least one token")
        tree, _ = self.source_tree(tokens)
        return self.compress_tree(tree, tokens, rate=rate, reward=reward)


def is_compressor(model) -> bool:
    """Whether `treegram compress` can use the model."""
    return callable(getattr(model, "source_tree", None)) and callable(getattr(model, "compress_tree", None))


def parse_source(parser, tokens: list[str], *, what: str = "compression"):
    """(ROOT-wrapped parse, status) with status ok / failed (flat fallback tree) / too_long."""
    if parser is None:
        raise TreegramError(f"this {what} model has no parser", hint="retrain with --parser MODEL")
    if len(tokens) > MAX_PARSE_LENGTH:
        return wrap_root(flat_fallback(tokens)), "too_long"
    try:
        return wrap_root(parser.parse(list(tokens))), "ok"
    except ParseFailure:
        return wrap_root(flat_fallback(tokens)), "failed"


def load_parser(spec):
    """The parser a compressor is trained with: ``spacy`` for the pinned spaCy pipeline's dependency parses read as
    dependency-projected trees (`treegram.depparse`), else the path of a treegram parsing model (pcfg, tsg, ...)."""
    from treegram.depparse import FORMALISM, DependencyParser
    from treegram.formalism import load_model

    if str(spec) in ("spacy", FORMALISM):
        return DependencyParser()
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
    from treegram.depparse import FORMALISM, pipeline_version
    from treegram.compression.treeprep import model_fingerprint

    if str(spec) in ("spacy", FORMALISM):
        return pipeline_version()
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


def rate_search(decode, rate: float, *, iterations: int = 14, lo: float = -30.0, hi: float = 30.0,
                keep=lambda out: out[0]):
    """Rate control: the output of `decode(reward)` for the smallest per-kept-word reward in [lo, hi] (bisection,
    `iterations` steps) whose compression (`keep(output)`: its keep mask) keeps at least `rate` of the words."""
    from treegram.errors import InputError

    if not 0.0 <= rate <= 1.0:
        raise InputError(f"--rate must be between 0 and 1, got {rate}")
    best = None
    for _ in range(iterations):
        mid = (lo + hi) / 2
        out = decode(mid)
        if np.mean(keep(out)) >= rate - 1e-9:
            best, hi = out, mid
        else:
            lo = mid
    return best if best is not None else decode(hi)
