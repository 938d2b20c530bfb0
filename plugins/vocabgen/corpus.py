"""Corpus items: real graded sentences (with their Japanese reference translation and provenance) for sheets.

The embedded excerpt (`data/default-corpus.npz`, built by build_default.py) holds the distinct, safety-filtered
graded-enja sentences whose every word is in cefr:A1 + names, stored compactly: the original English text and the
Japanese text as xz-compressed UTF-8, the parser's token boundaries inside the text (only where two tokens touch,
e.g. "do|n't", "school|."), and the file and line of each sentence.  It also keeps a sorted array of 32-bit hashes of
every other training sentence, so a generated sentence that copies any training sentence is recognised as a copy even
when the excerpt does not hold it.
"""

from __future__ import annotations

import hashlib
import lzma
from functools import lru_cache
from pathlib import Path

import numpy as np

from treegram.errors import ModelFileError

SOURCE_NAME = "graded-enja"


def sentence_key(tokens_or_text) -> str:
    """The copy-detection key: lowercase, every space removed ("I don't know." == "I do n't know .")."""
    s = tokens_or_text if isinstance(tokens_or_text, str) else "".join(tokens_or_text)
    return "".join(s.split()).lower()


def key_hash(key: str) -> int:
    return int.from_bytes(hashlib.blake2b(key.encode("utf-8"), digest_size=4).digest(), "little")


def split_offsets(text: str, tokens) -> list[int]:
    """Character offsets in `text` where one token ends and the next begins with no space between (ValueError
    when the tokens are not the text's non-space characters in order)."""
    out, pos = [], 0
    for k, tok in enumerate(tokens):
        start = text.index(tok, pos)
        if text[pos:start].strip():
            raise ValueError(f"text between tokens: {text!r}")
        pos = start + len(tok)
        if k + 1 < len(tokens) and pos < len(text) and not text[pos].isspace():
            out.append(pos)
    return out


def tokenize_with(text: str, offsets) -> tuple[str, ...]:
    pieces, last = [], 0
    for off in offsets:
        pieces.append(text[last:off])
        last = off
    pieces.append(text[last:])
    return tuple(t for p in pieces for t in p.split())


def encode_corpus(texts: list[str], tokens: list[list[str]], ja: list[str], files: list[str], file_ids, lines,
                  all_keys, meta: dict) -> tuple[dict, dict[str, np.ndarray]]:
    offs: list[int] = []
    counts = []
    for t, toks in zip(texts, tokens):
        o = split_offsets(t, toks)
        if tokenize_with(t, o) != tuple(toks):
            raise ValueError(f"tokens do not tile the text: {t!r}")
        offs.extend(o)
        counts.append(len(o))
    hashes = np.unique(np.asarray([key_hash(k) for k in all_keys], dtype=np.uint64)).astype(np.uint32)
    arrays = {
        "text_xz": np.frombuffer(lzma.compress("\n".join(texts).encode("utf-8"), preset=9), dtype=np.uint8),
        "ja_xz": np.frombuffer(lzma.compress("\n".join(ja).encode("utf-8"), preset=9), dtype=np.uint8),
        "split_count": np.asarray(counts, dtype=np.uint8), "split_offset": np.asarray(offs, dtype=np.uint8),
        "file": np.asarray(file_ids, dtype=np.uint8), "line": np.asarray(lines, dtype=np.uint32),
        "hash_delta": np.diff(hashes.astype(np.int64), prepend=0).astype(np.uint32),
    }
    return dict(meta, files=files, sentences=len(texts)), arrays


class CorpusIndex:
    """The embedded corpus items with lookup by word and copy detection."""

    def __init__(self, meta: dict, arrays: dict[str, np.ndarray]):
        try:
            self.texts = lzma.decompress(bytes(arrays["text_xz"])).decode("utf-8").split("\n")
            self.ja = lzma.decompress(bytes(arrays["ja_xz"])).decode("utf-8").split("\n")
            counts = np.asarray(arrays["split_count"], dtype=np.int64)
            offs = np.asarray(arrays["split_offset"], dtype=np.int64)
            self.file = np.asarray(arrays["file"])
            self.line = np.asarray(arrays["line"])
            self.hashes = np.cumsum(np.asarray(arrays["hash_delta"], dtype=np.int64))
        except (KeyError, lzma.LZMAError, UnicodeDecodeError, ValueError) as exc:
            raise ModelFileError(f"corrupt corpus data ({exc})", hint="reinstall treegram") from None
        if not (len(self.texts) == len(self.ja) == len(counts) == len(self.file) == len(self.line)):
            raise ModelFileError("corrupt corpus data (column lengths differ)", hint="reinstall treegram")
        ptr = np.concatenate([[0], np.cumsum(counts)])
        self.tokens = [tokenize_with(t, offs[ptr[i]:ptr[i + 1]].tolist()) for i, t in enumerate(self.texts)]
        self.files = list(meta.get("files", []))
        self.meta = meta
        self.by_key = {sentence_key(t): i for i, t in enumerate(self.texts)}
        self._by_token: dict[str, list[int]] | None = None
        self._missing: dict[tuple, list[frozenset[str]]] = {}

    @staticmethod
    def load(path: str | Path) -> CorpusIndex:
        from treegram.io import load_bundle

        meta, arrays = load_bundle(path)
        return CorpusIndex(meta, arrays)

    def __len__(self) -> int:
        return len(self.texts)

    def provenance(self, i: int) -> str:
        return f"{SOURCE_NAME} {self.files[int(self.file[i])]}:{int(self.line[i])} (CC BY-SA 4.0)"

    def find_copy(self, tokens) -> int | None:
        """Index of the excerpt sentence these tokens copy (None if not in the excerpt)."""
        return self.by_key.get(sentence_key(tokens))

    def is_training_sentence(self, tokens) -> bool:
        """Whether the tokens copy any training sentence: one of the excerpt, or one whose 32-bit hash is in the set
        of the others (~3e-5 false hits)."""
        key = sentence_key(tokens)
        if key in self.by_key:
            return True
        h = key_hash(key)
        pos = int(np.searchsorted(self.hashes, h))
        return pos < len(self.hashes) and int(self.hashes[pos]) == h

    def by_token(self) -> dict[str, list[int]]:
        if self._by_token is None:
            idx: dict[str, list[int]] = {}
            for i, toks in enumerate(self.tokens):
                for t in set(x.lower() for x in toks):
                    idx.setdefault(t, []).append(i)
            self._by_token = idx
        return self._by_token

    def missing_sets(self, vocab) -> list[frozenset[str]]:
        """Per sentence, the (lowercase) tokens `vocab` does not allow there (computed once per vocabulary)."""
        key = (vocab.name, len(vocab.words), len(vocab.phrases), len(vocab.names))
        if key not in self._missing:
            self._missing[key] = [frozenset(t.lower() for t in vocab.missing(toks)) for toks in self.tokens]
        return self._missing[key]

    def candidates(self, vocab, forms: set[str]) -> list[int]:
        """Sentences containing one of `forms` whose every other word is in `vocab`."""
        miss = self.missing_sets(vocab)
        ids: set[int] = set()
        idx = self.by_token()
        for f in forms:
            ids.update(idx.get(f, ()))
        return sorted(i for i in ids if miss[i] <= forms)


@lru_cache(maxsize=2)
def load_corpus(path: str) -> CorpusIndex:
    return CorpusIndex.load(path)
