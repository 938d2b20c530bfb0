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
import re
import unicodedata
from functools import lru_cache
from pathlib import Path

import numpy as np

from treegram.errors import ModelFileError
from treegram.trees.depproject import SUBJECT_RELATIONS

SOURCE_NAME = "graded-enja"


def sentence_key(tokens_or_text) -> str:
    """The copy-detection key: lowercase, every space removed ("I don't know." == "I do n't know .")."""
    s = tokens_or_text if isinstance(tokens_or_text, str) else "".join(tokens_or_text)
    return "".join(s.split()).lower()


def dedup_key(text: str) -> str:
    """The key under which two corpus sentences are one: NFKC, lowercase, curly apostrophes straight, then only
    letters, digits and apostrophes ("Hello, Tom!" == "hello tom."; "It's" != "Its")."""
    s = unicodedata.normalize("NFKC", text).lower().replace("\u2019", "'").replace("\u2018", "'")
    return _NOT_KEY.sub("", s)


_NOT_KEY = re.compile(r"[^\w']|_")


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
                  all_keys, meta: dict, tatoeba: list[tuple[int, str] | None] | None = None
                  ) -> tuple[dict, dict[str, np.ndarray]]:
    """The excerpt as arrays.  `file_ids` index `files` (-1 = not in graded-enja: a Tatoeba-only sentence, no
    Japanese); `tatoeba[i]` is the (sentence id, contributor) of sentence i when it is a Tatoeba sentence."""
    offs: list[int] = []
    counts = []
    for t, toks in zip(texts, tokens):
        o = split_offsets(t, toks)
        if tokenize_with(t, o) != tuple(toks):
            raise ValueError(f"tokens do not tile the text: {t!r}")
        offs.extend(o)
        counts.append(len(o))
    hashes = np.unique(np.asarray([key_hash(k) for k in all_keys], dtype=np.uint64)).astype(np.uint32)
    if len(files) >= 255:
        raise ValueError("too many graded-enja files for the uint8 file column")
    arrays = {
        "text_xz": np.frombuffer(lzma.compress("\n".join(texts).encode("utf-8"), preset=9), dtype=np.uint8),
        "ja_xz": np.frombuffer(lzma.compress("\n".join(ja).encode("utf-8"), preset=9), dtype=np.uint8),
        "split_count": np.asarray(counts, dtype=np.uint8), "split_offset": np.asarray(offs, dtype=np.uint8),
        "file": np.asarray([NO_FILE if f < 0 else f for f in file_ids], dtype=np.uint8),
        "line": np.asarray(lines, dtype=np.uint32),
        "hash_delta": np.diff(hashes.astype(np.int64), prepend=0).astype(np.uint32),
    }
    meta = dict(meta, files=files, sentences=len(texts))
    if tatoeba is not None:
        users = sorted({a[1] for a in tatoeba if a is not None})
        uidx = {u: k for k, u in enumerate(users)}
        arrays["tatoeba_id"] = np.asarray([a[0] if a else 0 for a in tatoeba], dtype=np.uint32)
        arrays["tatoeba_user"] = np.asarray([uidx[a[1]] if a else 0 for a in tatoeba], dtype=np.uint16)
        meta["tatoeba_users"] = users
    return meta, arrays


#: the file column's value for a sentence that is not in graded-enja (a Tatoeba-only sentence)
NO_FILE = 255


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
            self.tatoeba_id = np.asarray(arrays["tatoeba_id"]) if "tatoeba_id" in arrays else None
            self.tatoeba_user = np.asarray(arrays["tatoeba_user"]) if "tatoeba_user" in arrays else None
            self.tatoeba_users = list(meta.get("tatoeba_users", []))
        except (KeyError, lzma.LZMAError, UnicodeDecodeError, ValueError) as exc:
            raise ModelFileError(f"corrupt corpus data ({exc})", hint="reinstall treegram") from None
        if not (len(self.texts) == len(self.ja) == len(counts) == len(self.file) == len(self.line)):
            raise ModelFileError("corrupt corpus data (column lengths differ)", hint="reinstall treegram")
        ptr = np.concatenate([[0], np.cumsum(counts)]).tolist()
        offl = offs.tolist()  # plain lists: slicing a numpy array per sentence costs more than the tokenizing
        self.tokens = [tokenize_with(t, offl[ptr[i]:ptr[i + 1]]) if ptr[i] != ptr[i + 1] else tuple(t.split())
                       for i, t in enumerate(self.texts)]
        self.files = list(meta.get("files", []))
        self.meta = meta
        self._by_key: dict[str, int] | None = None
        self._by_token: dict[str, list[int]] | None = None
        self._missing: dict[tuple, dict[int, frozenset[str]]] = {}

    @staticmethod
    def load(path: str | Path) -> CorpusIndex:
        from treegram.io import load_bundle

        meta, arrays = load_bundle(path)
        return CorpusIndex(meta, arrays)

    def __len__(self) -> int:
        return len(self.texts)

    def provenance(self, i: int) -> str:
        """Where sentence i comes from, with its licence: the graded-enja file and line, and for a Tatoeba sentence
        its id and contributor (CC BY 2.0 FR asks for both wherever the sentence is shown)."""
        parts = []
        f = int(self.file[i])
        if f != NO_FILE:
            parts.append(f"{SOURCE_NAME} {self.files[f]}:{int(self.line[i])} (CC BY-SA 4.0)")
        tid = int(self.tatoeba_id[i]) if self.tatoeba_id is not None else 0
        if tid:
            parts.append(f"tatoeba.org #{tid} ({self.tatoeba_users[int(self.tatoeba_user[i])]}) (CC BY 2.0 FR)")
        return "; ".join(parts)

    @property
    def by_key(self) -> dict[str, int]:
        """copy key -> sentence index (built on first use: only generation needs it)."""
        if self._by_key is None:
            self._by_key = {sentence_key(t): i for i, t in enumerate(self.texts)}
        return self._by_key

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

    def _missing_of(self, vocab, ids) -> dict[int, frozenset[str]]:
        """The (lowercase) tokens `vocab` does not allow in each sentence of `ids` (cached per vocabulary, computed
        only for sentences a sheet looks at: a whole A2 excerpt takes ~1 s, a word's candidates milliseconds)."""
        key = (vocab.name, len(vocab.words), len(vocab.phrases), len(vocab.names))
        cache = self._missing.setdefault(key, {})
        for i in ids:
            if i not in cache:
                cache[i] = frozenset(t.lower() for t in vocab.missing(self.tokens[i]))
        return cache

    def candidates(self, vocab, forms: set[str]) -> list[int]:
        """Sentences containing one of `forms` whose every other word is in `vocab`."""
        ids: set[int] = set()
        idx = self.by_token()
        for f in forms:
            ids.update(idx.get(f, ()))
        miss = self._missing_of(vocab, ids)
        return sorted(i for i in ids if miss[i] <= forms)


@lru_cache(maxsize=2)
def load_corpus(path: str) -> CorpusIndex:
    return CorpusIndex.load(path)


# -- which real sentences may be corpus items ----------------------------------------------------------------------
#: all-capital words that are ordinary in a beginners' sentence (anything else in capitals is shouting or an acronym)
_CAPS_OK = frozenset({"I", "OK", "TV", "CD", "DVD", "PC", "UK", "US", "USA", "A", "AM", "PM", "DJ", "ID"})
_ODD_CHARS = frozenset('"()[]{}:;/\\*_#@&%$~<>|=+…“”‘')


def fragment_reason(dep) -> str | None:
    """Why a parsed sentence is not a complete sentence for a worksheet, or None.  Complete = the root is a verb
    with a subject, or an imperative (a base-form verb root with none: "Open the door."); and the root clause is not
    introduced by a subordinating conjunction ("Because the train did not wait for me." is an answer, not a
    sentence: its root has a `mark` dependent)."""
    roots = [i for i, h in enumerate(dep.heads, start=1) if h == 0]
    if len(roots) != 1:
        return "more than one root"
    r = roots[0]
    tag = dep.tags[r - 1]
    rels = dep.relations or ("",) * len(dep.words)
    kids = [k for k, h in enumerate(dep.heads, start=1) if h == r]
    if not (tag.startswith("VB") or tag == "MD"):
        return f"no verb at the root ({dep.words[r - 1]}/{tag})"
    if any(rels[k - 1] == "mark" for k in kids):
        return f"a subordinate clause alone ({dep.words[kids[0] - 1]} ...)"
    if not any(rels[k - 1] in SUBJECT_RELATIONS for k in kids) and tag != "VB":
        return "no subject"
    return None


def text_reason(text: str) -> str | None:
    """Why a sentence's text looks unfit for a worksheet, or None: it must start with a capital letter or a digit
    and end with . ! or ? (one sentence, no ellipsis), have no quotes, brackets, colons or symbols, and no word in
    capitals beyond I, OK, TV and the like."""
    t = text.strip()
    if not t or not (t[0].isupper() or t[0].isdigit()):
        return "does not start with a capital letter"
    if t[-1] not in ".!?" or t.endswith("..") or any(c in t[:-1] for c in "!?"):
        return "not one sentence ending in . ! or ?"
    if any(c in _ODD_CHARS for c in t):
        return "quotes, brackets or symbols"
    for w in re.findall(r"[A-Za-z]+", t):
        if len(w) > 1 and w.isupper() and w not in _CAPS_OK:
            return f"a word in capitals ({w})"
    return None
