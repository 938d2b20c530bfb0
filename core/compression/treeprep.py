"""Trees for compression pairs: parsing sources with any treegram parser (cached on disk), deriving target trees.

Target trees are derived from the source parse rather than parsed separately: the compression keeps an
order-preserving subset of the source words, so deleting the dropped words from the source tree, pruning
constituents left empty and collapsing a constituent that lost children and was left with a single phrasal child
gives the tree a parser would most plausibly assign, without a second round of parse errors that disagree with the
source analysis (an independently parsed target can bracket the kept words in ways no source constituent matches,
which leaves those pairs only derivable by whole-sentence rules).  The collapse step recreates the configurations
the paper's sampler is designed for: two source nodes (an NP and the NP inside it whose PP modifier was deleted)
both able to align with one target node.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from treegram.errors import InputError, ParseFailure, TreeSyntaxError
from treegram.formalism import flat_fallback
from treegram.trees import Tree, parse_brackets

ROOT = "ROOT"

__all__ = ["ROOT", "wrap_root", "derive_target", "parse_sentences", "model_fingerprint"]


def wrap_root(tree: Tree) -> Tree:
    """Every tree gets a ROOT node on top (as the Stanford parser's output has), so root pairs are ROOT/ROOT."""
    if tree.label == ROOT:
        return tree
    return Tree(ROOT, (tree,))


def derive_target(source: Tree, keep) -> Tree:
    """The compression's tree: source tree minus deleted words, empty constituents pruned, and a constituent that lost
    children down to one phrasal child replaced by that child.  ROOT is never removed; with nothing kept the
    result is a bare ROOT."""
    keep = list(map(bool, keep))
    counter = [0]

    def build(node: Tree) -> Tree | None:
        if node.is_preterminal:
            k = keep[counter[0]]
            counter[0] += 1
            return node if k else None
        kids = [build(c) for c in node.children]  # left to right: the counter follows word order
        kept = [c for c in kids if c is not None]
        if not kept:
            return None
        if node.label != ROOT and len(kept) == 1 and len(node.children) > 1 and not kept[0].is_preterminal:
            return kept[0]
        return Tree(node.label, tuple(kept))

    n_words = len(source.leaves())
    if n_words != len(keep):
        raise InputError(f"tree has {n_words} words but the alignment {len(keep)}")
    out = build(source)
    return out if out is not None else Tree(ROOT, ())


def _bracket_safe(tree: Tree) -> Tree:
    """The tree with brackets inside words written as PTB escapes, so its bracket line reads back (the cache
    restores the original words from the input sentence)."""
    from treegram.trees.bracket import escape_word

    return tree.map_words(escape_word)


def _with_words(tree: Tree, tokens) -> Tree | None:
    """The cached tree with its leaves replaced, in order, by the input tokens (None if the counts differ)."""
    if len(tree.leaves()) != len(tokens):
        return None
    it = iter(tokens)
    return tree.map_words(lambda _w: next(it))


def model_fingerprint(path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()[:16]


def parse_sentences(sentences: list[list[str]], parser, *, parser_id: str = "", cache_dir=None, progress=None,
                    max_length: int = 100, workers: int = 1, parser_path=None) -> tuple[list[Tree], dict]:
    """Parse tokenized sentences with any model that has `parse(tokens)`; flat fallback on failure.

    With `cache_dir`, the trees are cached in a bracket file (one tree per line) named by a hash of the input and
    `parser_id` (e.g. the parser file's fingerprint); a second call with the same input returns the cached trees.
    Returns (trees, counts) with counts of ok / failed / too_long sentences.  With `workers` > 1 and the parser's
    file `parser_path`, the sentences are parsed on a local Dask cluster by `treegram.batchparse` (what
    `treegram parse --workers` runs) instead of in this process.
    """
    key = hashlib.sha256(("\n".join(" ".join(s) for s in sentences) + "\0" + parser_id).encode()).hexdigest()[:24]
    cache = Path(cache_dir) / f"parses-{key}.mrg" if cache_dir else None
    if cache is not None and cache.is_file():
        lines = cache.read_text(encoding="utf-8").splitlines()
        if len(lines) == len(sentences) + 1 and lines[0].startswith("# counts "):
            counts = dict(kv.split("=") for kv in lines[0][9:].split())
            try:
                trees = [_with_words(parse_brackets(line)[0], toks) for line, toks in zip(lines[1:], sentences)]
            except TreeSyntaxError:  # written before words with brackets were escaped: parse again
                trees = [None]
            if all(t is not None for t in trees):
                return trees, {k: int(v) for k, v in counts.items()}
    if workers > 1 and parser_path is not None and sentences and not hasattr(parser, "parse_many"):
        trees, counts = _parse_on_dask(sentences, parser_path, workers, max_length)
    else:
        trees, counts = _parse_here(sentences, parser, max_length, progress)
    if cache is not None:
        from treegram.io import atomic_write_text

        cache.parent.mkdir(parents=True, exist_ok=True)
        head = "# counts " + " ".join(f"{k}={v}" for k, v in counts.items())
        atomic_write_text(cache, head + "\n" + "".join(_bracket_safe(t).to_bracket() + "\n" for t in trees))
    return trees, counts


def _parse_here(sentences, parser, max_length: int, progress=None):
    counts = {"ok": 0, "failed": 0, "too_long": 0}
    trees = []
    if hasattr(parser, "parse_many"):  # a batch parser (spaCy): in chunks, so a progress bar still moves
        chunks = [sentences[i:i + 256] for i in range(0, len(sentences), 256)]
        for chunk in (progress(chunks) if progress else chunks):
            ok = [list(t) for t in chunk if len(t) <= max_length]
            parsed = iter(parser.parse_many(ok))
            for toks in chunk:
                if len(toks) > max_length:
                    counts["too_long"] += 1
                    trees.append(flat_fallback(toks))
                else:
                    counts["ok"] += 1
                    trees.append(next(parsed))
        return trees, counts
    from treegram.charts.decoders import parse_default

    parse = parse_default(parser)  # the parser model's default decoder, as `treegram parse` runs it
    iterator = progress(sentences) if progress else sentences
    for toks in iterator:
        if len(toks) > max_length:
            counts["too_long"] += 1
            trees.append(flat_fallback(toks))
            continue
        try:
            trees.append(parse(list(toks)))
            counts["ok"] += 1
        except ParseFailure:
            counts["failed"] += 1
            trees.append(flat_fallback(toks))
    return trees, counts


def _parse_on_dask(sentences, parser_path, workers: int, max_length: int):
    """The sentences parsed by `treegram.batchparse` (the batches of `treegram parse --workers`) on a local Dask
    cluster of `workers` processes; words are restored from the input (the batch parser reads PTB-escaped words)."""
    import tempfile

    from treegram.batchparse import parse_batches

    with tempfile.TemporaryDirectory() as tmp:
        src, out = Path(tmp) / "in.txt", Path(tmp) / "out.mrg"
        src.write_text("".join(" ".join(s) + "\n" for s in sentences), encoding="utf-8")
        summary = parse_batches(str(src), out, model=Path(parser_path), max_length=max_length, workers=workers,
                                batch_size=max(1, -(-len(sentences) // (4 * workers))))
        lines = out.read_text(encoding="utf-8").splitlines()
    trees = [_with_words(parse_brackets(line)[0], toks) for line, toks in zip(lines, sentences)]
    if len(lines) != len(sentences) or any(t is None for t in trees):
        raise InputError("the batch parser returned trees that do not match the sentences (internal error)")
    return trees, {k: int(summary["counts"][k]) for k in ("ok", "failed", "too_long")}
