"""McDonald (2006) discriminative sentence compression: word deletion as sequence labelling over kept-word bigrams.

A compression of x_1..x_n keeps positions 0 = i_0 < i_1 < ... < i_m < i_{m+1} = n+1 (0 and n+1 are the START and
END symbols).  Its score factors over adjacent kept words (McDonald's eq. 1):

    s(x, y) = sum_{t=1}^{m+1} w . f(x, i_{t-1}, i_t)

so the best compression is an exact Viterbi search over kept-word bigrams in O(n^2) (`viterbi`): C[j] = max_{i<j}
C[i] + s(i, j) (+ a per-kept-word reward lambda for length control).  `viterbi_length` fixes the number of kept
words exactly (C[l, j], O(n^2 L)), which is how `rate=` is honoured.

Feature families of f(x, i, j) (McDonald's section 3.2, over treegram's own source parse; POS tags are the
parse's preterminals, dependencies are read off the constituents with the Collins head rules of
`treegram.trees.heads`, so no second parser is needed):

* word/POS bigram features of the kept pair: POS[i] & POS[j], with and without "adjacent in the source";
  word[i] & POS[j], POS[i] & word[j], word[i] & word[j]; POS[i] & POS[i+1] & POS[j]; POS[i] & POS[j-1] & POS[j];
  the kept word's own POS, word and POS context POS[j-1] & POS[j] & POS[j+1]; the (binned) number of dropped words;
* features of the dropped span i+1..j-1, per dropped word k: POS[k], word[k], POS[i] & POS[k] & POS[j];
* dependency features: whether i heads j or j heads i (with both POS); per dropped word k its POS & its head's POS
  and the labels of its maximal projection and of that projection's parent, each conjoined with whether k's head
  lies outside the dropped span (k roots a dropped subtree) or inside it;
* syntactic-constituent features: whether the dropped span is exactly a constituent (its label and its parent's),
  and for each maximal constituent lying entirely inside the dropped span its label & its parent's label
  (McDonald's "soft syntactic evidence": the model may still delete across constituents).

Features are integer-coded (vocabularies of words, tags and labels stored in the model file) and hashed into a
weight vector of 2^bits entries.  Training (`train_weights`): the averaged structured perceptron or 1-best MIRA
(Crammer & Singer 2003: the smallest update making the gold compression outscore the prediction by its Hamming loss,
step capped by C) over several epochs in a seeded order; the averaged weights are saved (sparse) as NPZ data.
"""

from __future__ import annotations

import time
from collections import Counter
from typing import Any

import numba
import numpy as np

from treegram.compression.compressor import ParsedCompressor
from treegram.errors import InputError, ModelFileError
from treegram.trees import Tree
from treegram.trees.heads import base_category, head_child

from treegram.plugins.stsg.model import Vocab as IdVocab

__all__ = ["SentenceFeatures", "Vocab", "extract", "score_matrix", "viterbi", "viterbi_length", "path_features",
           "train_weights", "BigramDecoder", "McDonaldModel", "train_mcdonald"]

START, END, UNK = 1, 2, 0  # reserved ids in every vocabulary (0 = unknown)
FEATURES = "mcdonald-1"  # version of the feature templates and hash: a model's weights only mean this version
_MAXDEPTH = 64


# ---------------------------------------------------------------------------------------------------------------
# Vocabularies and per-sentence integer attributes
# ---------------------------------------------------------------------------------------------------------------
class Vocab(IdVocab):
    """string -> id with 0 = unknown, 1 = START, 2 = END."""

    RESERVED = ("<unk>", "<s>", "</s>")

    def get(self, s: str) -> int:
        return self.ids.get(s, UNK)

    def to_json(self) -> list[str]:
        return self.items[3:]

    @classmethod
    def from_json(cls, items) -> "Vocab":
        if not isinstance(items, list) or not all(isinstance(s, str) for s in items):
            raise ModelFileError("corrupt mcdonald model: a vocabulary is not a list of strings",
                                 hint="re-create it with `treegram train stsg --method mcdonald`")
        return cls(items)


def _sentence_structure(tree: Tree):
    """Words, tags and the constituent structure of a parse: (words, tags, heads, max-projection labels and their
    parents' labels, ancestor chains per word, {(a, b): (label, parent label)} of the highest node of each span).
    Positions are 1-based (0 = START); head 0 = the sentence root."""
    words: list[str] = []
    tags: list[str] = []
    nodes = []  # (start, end, label, parent_index, headword), in pre-order
    preterminal: list[int] = []  # node index of each word's preterminal

    def walk(node, parent: int) -> tuple[int, int, int]:  # returns (start, end, headword)
        if node.is_preterminal:
            words.append(node.children[0])
            tags.append(node.label)
            k = len(words)
            preterminal.append(len(nodes))
            nodes.append((k, k, base_category(node.label) or node.label, parent, k))
            return k, k, k
        me = len(nodes)
        nodes.append(None)
        spans = [walk(c, me) for c in node.children if isinstance(c, Tree)]
        if not spans:  # a node without words (derived trees never have these; be safe)
            nodes[me] = (0, -1, base_category(node.label), parent, 0)
            return 0, -1, 0
        try:
            h = head_child(node)
        except ValueError:
            h = 0
        h = min(h, len(spans) - 1)
        hw = spans[h][2]
        nodes[me] = (spans[0][0], spans[-1][1], base_category(node.label) or node.label, parent, hw)
        return spans[0][0], spans[-1][1], hw

    walk(tree, -1)
    n = len(words)
    head = np.zeros(n + 2, dtype=np.int64)
    maxproj = [""] * (n + 2)
    maxpar = [""] * (n + 2)
    # dependencies: each non-head child's headword depends on the parent's headword
    for idx, nd in enumerate(nodes):
        s, e, lab, par, hw = nd
        if e < s or hw == 0:
            continue
        if par < 0:
            head[hw] = 0
            maxproj[hw], maxpar[hw] = lab, "TOP"
        else:
            ph = nodes[par][4]
            if ph != hw:
                head[hw] = ph
                maxproj[hw], maxpar[hw] = lab, nodes[par][2]
    for k in range(1, n + 1):  # a word heading nothing above its preterminal (only in degenerate trees)
        if not maxproj[k]:
            maxproj[k], maxpar[k] = tags[k - 1], "TOP"
    anc: list[list[int]] = [[] for _ in range(n + 2)]
    for k, idx in enumerate(preterminal, 1):  # from the preterminal of word k up to the root
        chain = []
        j = idx
        while j >= 0:
            chain.append(j)
            j = nodes[j][3]
        anc[k] = chain
    spans: dict[tuple[int, int], tuple[str, str]] = {}
    for idx, nd in enumerate(nodes):
        s, e, lab, par, _ = nd
        if e < s:
            continue
        if (s, e) not in spans:  # pre-order: the first node with a span is the highest
            spans[(s, e)] = (lab, nodes[par][2] if par >= 0 else "TOP")
    return words, tags, head, maxproj, maxpar, anc, nodes, spans


class SentenceFeatures:
    """Integer-coded attributes of one source sentence (positions 0 = START, 1..n words, n+1 = END)."""

    __slots__ = ("n", "att", "anc", "nanc", "exact")

    def __init__(self, n, att, anc, nanc, exact):
        self.n, self.att, self.anc, self.nanc, self.exact = n, att, anc, nanc, exact


# columns of SentenceFeatures.att
_W, _T, _H, _MP, _PP = range(5)


def extract(tree: Tree, words_v: Vocab, tags_v: Vocab, labels_v: Vocab, *, grow: bool = False) -> SentenceFeatures:
    """The integer attributes of a parsed sentence; with `grow`, unseen strings are added to the vocabularies."""
    words, tags, head, maxproj, maxpar, anc, nodes, spans = _sentence_structure(tree)
    n = len(words)
    wid = (lambda s: words_v.add(s)) if grow else words_v.get
    tid = (lambda s: tags_v.add(s)) if grow else tags_v.get
    lid = (lambda s: labels_v.add(s)) if grow else labels_v.get
    att = np.zeros((n + 2, 5), dtype=np.int64)
    att[0] = (START, START, -1, START, START)
    att[n + 1] = (END, END, -1, END, END)
    for k in range(1, n + 1):
        att[k] = (wid(words[k - 1].lower()), tid(tags[k - 1]), head[k], lid(maxproj[k]), lid(maxpar[k]))
    # ancestor chains: (start, end, label id, parent label id) from the preterminal upwards
    depth = max((len(a) for a in anc), default=1)
    depth = min(max(depth, 1), _MAXDEPTH)
    anc_arr = np.zeros((n + 2, depth, 4), dtype=np.int64)
    nanc = np.zeros(n + 2, dtype=np.int64)
    for k in range(1, n + 1):
        chain = anc[k][:depth]
        nanc[k] = len(chain)
        for d, idx in enumerate(chain):
            s, e, lab, par, _ = nodes[idx]
            anc_arr[k, d] = (s, e, lid(lab), lid(nodes[par][2]) if par >= 0 else lid("TOP"))
    exact = np.zeros((n + 2, n + 2, 2), dtype=np.int64)
    for (s, e), (lab, par) in spans.items():
        if 1 <= s <= e <= n:
            exact[s, e] = (lid(lab), lid(par))
    return SentenceFeatures(n, att, anc_arr, nanc, exact)


# ---------------------------------------------------------------------------------------------------------------
# Hashed features of a kept pair (i, j) and the DP over them
# ---------------------------------------------------------------------------------------------------------------
@numba.njit(cache=True)
def _mix(x, v):
    x = (x ^ (np.uint64(v) + np.uint64(0x9E3779B97F4A7C15) + (x << np.uint64(6)) + (x >> np.uint64(2))))
    return x * np.uint64(0xBF58476D1CE4E5B9)


@numba.njit(cache=True)
def _h(mask, t, a, b, c, d):
    """Hash of the feature (template t; values a, b, c, d) into [0, mask]."""
    x = _mix(_mix(_mix(_mix(np.uint64(t) * np.uint64(0x9E3779B97F4A7C15), a + 7), b + 7), c + 7), d + 7)
    x ^= x >> np.uint64(31)
    return np.int64(x & np.uint64(mask))


@numba.njit(cache=True)
def _pair_features(i, j, att, anc, nanc, exact, mask, out):
    """Write the hashed feature indices of kept pair (i, j) into `out`; return how many."""
    W, T, H, MP, PP = 0, 1, 2, 3, 4
    c = 0
    ti, tj, wi, wj = att[i, T], att[j, T], att[i, W], att[j, W]
    adj = 1 if j == i + 1 else 0
    n1 = att.shape[0] - 1
    # word / POS bigram features of the kept pair
    out[c] = _h(mask, 1, ti, tj, 0, 0); c += 1
    out[c] = _h(mask, 2, ti, tj, adj, 0); c += 1
    out[c] = _h(mask, 3, wi, tj, 0, 0); c += 1
    out[c] = _h(mask, 4, ti, wj, 0, 0); c += 1
    out[c] = _h(mask, 5, wi, wj, 0, 0); c += 1
    out[c] = _h(mask, 6, ti, att[min(i + 1, n1), T], tj, 0); c += 1
    out[c] = _h(mask, 7, ti, att[max(j - 1, 0), T], tj, 0); c += 1
    out[c] = _h(mask, 8, tj, 0, 0, 0); c += 1
    out[c] = _h(mask, 9, wj, 0, 0, 0); c += 1
    out[c] = _h(mask, 10, att[max(j - 1, 0), T], tj, att[min(j + 1, n1), T], 0); c += 1
    gap = j - i - 1
    out[c] = _h(mask, 11, min(gap, 10), 0, 0, 0); c += 1
    # dependency between the kept pair
    rel = 0
    if att[j, H] == i and i > 0:
        rel = 1
    elif att[i, H] == j and j < n1:
        rel = 2
    out[c] = _h(mask, 12, rel, ti, tj, 0); c += 1
    if gap > 0:
        a, b = i + 1, j - 1
        out[c] = _h(mask, 30, exact[a, b, 0], 0, 0, 0); c += 1
        out[c] = _h(mask, 31, exact[a, b, 0], exact[a, b, 1], 0, 0); c += 1
        for k in range(a, b + 1):
            tk = att[k, T]
            out[c] = _h(mask, 20, tk, 0, 0, 0); c += 1
            out[c] = _h(mask, 21, att[k, W], 0, 0, 0); c += 1
            out[c] = _h(mask, 22, ti, tk, tj, 0); c += 1
            hk = att[k, H]
            outside = 1 if (hk < a or hk > b) else 0
            th = att[hk, T] if hk > 0 else 1
            out[c] = _h(mask, 23, tk, th, outside, 0); c += 1
            out[c] = _h(mask, 24, att[k, MP], att[k, PP], outside, 0); c += 1
            # the maximal constituent inside the dropped span that starts at k (once per such constituent)
            top = -1
            for d in range(nanc[k]):
                if anc[k, d, 0] >= a and anc[k, d, 1] <= b:
                    top = d
                else:
                    break
            if top >= 0 and anc[k, top, 0] == k:
                out[c] = _h(mask, 32, anc[k, top, 2], anc[k, top, 3], 0, 0); c += 1
    return c


@numba.njit(cache=True)
def _score_matrix(w, att, anc, nanc, exact):
    m = att.shape[0]
    mask = w.shape[0] - 1
    s = np.full((m, m), -np.inf)
    buf = np.empty(16 + 6 * m, dtype=np.int64)
    for i in range(m - 1):
        for j in range(i + 1, m):
            c = _pair_features(i, j, att, anc, nanc, exact, mask, buf)
            tot = 0.0
            for q in range(c):
                tot += w[buf[q]]
            s[i, j] = tot
    return s


@numba.njit(cache=True)
def _path_features(path, att, anc, nanc, exact, mask):
    m = att.shape[0]
    buf = np.empty(16 + 6 * m, dtype=np.int64)
    total = 0
    for t in range(1, len(path)):
        total += _pair_features(path[t - 1], path[t], att, anc, nanc, exact, mask, buf)
    out = np.empty(total, dtype=np.int64)
    c = 0
    for t in range(1, len(path)):
        k = _pair_features(path[t - 1], path[t], att, anc, nanc, exact, mask, buf)
        out[c:c + k] = buf[:k]
        c += k
    return out


@numba.njit(cache=True)
def _viterbi(s, reward):
    m = s.shape[0]
    best = np.full(m, -np.inf)
    back = np.zeros(m, dtype=np.int64)
    best[0] = 0.0
    for j in range(1, m):
        bonus = reward if j < m - 1 else 0.0
        for i in range(j):
            v = best[i] + s[i, j] + bonus
            if v > best[j]:
                best[j] = v
                back[j] = i
    keep = np.zeros(m - 2, dtype=np.bool_)
    j = back[m - 1]
    while j > 0:
        keep[j - 1] = True
        j = back[j]
    return keep, best[m - 1]


@numba.njit(cache=True)
def _viterbi_length(s, length):
    m = s.shape[0]
    n = m - 2
    best = np.full((length + 1, m), -np.inf)
    back = np.zeros((length + 1, m), dtype=np.int64)
    best[0, 0] = 0.0
    for l in range(1, length + 1):
        for j in range(l, n + 1):
            for i in range(l - 1, j):
                v = best[l - 1, i] + s[i, j]
                if v > best[l, j]:
                    best[l, j] = v
                    back[l, j] = i
    final = -np.inf
    arg = 0
    for i in range(length, n + 1) if length > 0 else range(0, 1):
        v = best[length, i] + s[i, m - 1]
        if v > final:
            final = v
            arg = i
    keep = np.zeros(n, dtype=np.bool_)
    j, l = arg, length
    while l > 0:
        keep[j - 1] = True
        j = back[l, j]
        l -= 1
    return keep, final


def score_matrix(w: np.ndarray, sf: SentenceFeatures) -> np.ndarray:
    """s[i, j] = w . f(x, i, j) for every kept pair 0 <= i < j <= n+1 (-inf below the diagonal)."""
    return _score_matrix(w, sf.att, sf.anc, sf.nanc, sf.exact)


def viterbi(s: np.ndarray, reward: float = 0.0) -> tuple[np.ndarray, float]:
    """The best keep mask under pair scores `s` plus `reward` per kept word, and its score (exact, O(n^2))."""
    return _viterbi(s, float(reward))


def viterbi_length(s: np.ndarray, length: int) -> tuple[np.ndarray, float]:
    """The best keep mask with exactly `length` kept words (O(n^2 length))."""
    n = s.shape[0] - 2
    if not 0 <= length <= n:
        raise InputError(f"cannot keep {length} of {n} words")
    return _viterbi_length(s, int(length))


def keep_path(keep) -> np.ndarray:
    """0, the kept positions (1-based), n+1."""
    keep = np.asarray(keep, dtype=bool)
    return np.concatenate([[0], np.flatnonzero(keep) + 1, [len(keep) + 1]]).astype(np.int64)


def path_features(keep, sf: SentenceFeatures, bits: int) -> np.ndarray:
    """The hashed feature indices (with repetition) of a compression: f(x, y) as a list of indices."""
    return _path_features(keep_path(keep), sf.att, sf.anc, sf.nanc, sf.exact, (1 << bits) - 1)


# ---------------------------------------------------------------------------------------------------------------
# Training: averaged perceptron / 1-best MIRA
# ---------------------------------------------------------------------------------------------------------------
def _delta(gold_f: np.ndarray, pred_f: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """f(gold) - f(pred) as (indices, counts), zero entries dropped."""
    idx = np.concatenate([gold_f, pred_f])
    sign = np.concatenate([np.ones(len(gold_f)), -np.ones(len(pred_f))])
    uniq, inv = np.unique(idx, return_inverse=True)
    cnt = np.zeros(len(uniq))
    np.add.at(cnt, inv, sign)
    nz = cnt != 0
    return uniq[nz], cnt[nz]


def train_weights(feats: list[SentenceFeatures], golds: list[np.ndarray], *, bits: int = 20, epochs: int = 10,
                  update: str = "mira", C: float = 1.0, seed: int = 0, progress=None, callback=None):
    """Averaged weights of the perceptron / 1-best MIRA over (sentence features, gold keep mask) pairs.

    Returns (averaged weights, per-epoch trace of {"epoch", "mistakes", "hamming"})."""
    if update not in ("mira", "perceptron"):
        raise InputError(f"unknown update {update!r}", hint="use mira or perceptron")
    size = 1 << bits
    w = np.zeros(size)
    u = np.zeros(size)  # sum of (step counter x update): averaged = w - u / c
    c = 1.0
    rng = np.random.default_rng(seed)
    trace = []
    epochs_iter = progress(range(epochs)) if progress else range(epochs)
    for ep in epochs_iter:
        mistakes = 0
        hamming = 0
        for s_i in rng.permutation(len(feats)):
            sf, gold = feats[s_i], golds[s_i]
            pred, _ = viterbi(score_matrix(w, sf))
            loss = int(np.count_nonzero(pred != gold))
            if loss:
                mistakes += 1
                hamming += loss
                idx, cnt = _delta(path_features(gold, sf, bits), path_features(pred, sf, bits))
                if len(idx):
                    if update == "perceptron":
                        tau = 1.0
                    else:
                        margin = float(w[idx] @ cnt)
                        tau = min(C, max(0.0, (loss - margin) / float(cnt @ cnt)))
                    w[idx] += tau * cnt
                    u[idx] += c * tau * cnt
            c += 1.0
        rec = {"epoch": ep + 1, "mistakes": mistakes, "hamming": hamming}
        trace.append(rec)
        if callback:
            callback(rec)
    return w - u / c, trace


# ---------------------------------------------------------------------------------------------------------------
# The model
# ---------------------------------------------------------------------------------------------------------------
class BigramDecoder:
    """One sentence's score matrix as the core's `SentenceDecoder`: Viterbi with a per-word reward, or the best
    compression of exactly k words (`viterbi_length`)."""

    def __init__(self, s: np.ndarray, tokens: list[str]):
        self.s, self.tokens = s, list(tokens)

    def decode(self, reward: float = 0.0):
        from treegram.compression.compressor import Compression

        keep, score = viterbi(self.s, reward)
        return Compression(self.tokens, keep, None, float(score), reward)

    def decode_length(self, k: int):
        from treegram.compression.compressor import Compression

        if not 0 <= k <= len(self.tokens):
            return None
        keep, score = viterbi_length(self.s, k)
        return Compression(self.tokens, keep, None, float(score), 0.0) if np.isfinite(score) else None


class McDonaldModel(ParsedCompressor):
    """Hashed feature weights, the vocabularies that code the features, and the parser for raw sentences."""

    what = "mcdonald"
    formalism = "stsg"
    kind = "mcdonald"

    def __init__(self, weights: np.ndarray, bits: int, words: Vocab, tags: Vocab, labels: Vocab, parser=None,
                 info: dict[str, Any] | None = None):
        if weights.shape != (1 << bits,):
            raise ModelFileError(f"corrupt mcdonald model: {weights.shape[0]} weights for {bits} hash bits",
                                 hint="re-create it with `treegram train stsg --method mcdonald`")
        self.weights, self.bits = weights, bits
        self.words, self.tags, self.labels = words, tags, labels
        self.parser = parser
        self.info = dict(info or {})

    def features(self, tree: Tree) -> SentenceFeatures:
        return extract(tree, self.words, self.tags, self.labels)

    def decoder(self, tree: Tree, tokens: list[str]) -> "BigramDecoder":
        """The compressor contract (`treegram.compression.compressor`): the sentence's bigram score matrix, decoded
        at any reward or at an exact length."""
        sf = self.features(tree)
        if sf.n != len(tokens):
            raise InputError(f"the tree has {sf.n} words but the sentence {len(tokens)}")
        return BigramDecoder(score_matrix(self.weights, sf), tokens)

    # -- persistence: sparse weights as NPZ arrays, vocabularies in the JSON header ------------------------------
    def save(self, path) -> None:
        from treegram.formalism import save_model
        from treegram.compression.compressor import embed_parser

        nz = np.flatnonzero(self.weights)
        parser_meta, arrays = embed_parser(self.parser)
        arrays["mcdonald.index"] = nz.astype(np.int64)
        arrays["mcdonald.weight"] = self.weights[nz].astype(np.float64)
        meta = {"kind": self.kind, "features": FEATURES, "bits": self.bits, "vocab": {"words": self.words.to_json(),
                                                                "tags": self.tags.to_json(),
                                                                "labels": self.labels.to_json()},
                "info": self.info, "parser": parser_meta}
        save_model(path, self, meta, arrays)

    @classmethod
    def from_bundle(cls, meta: dict, arrays: dict) -> "McDonaldModel":
        from treegram.compression.compressor import embedded_parser

        if meta.get("features") != FEATURES:
            raise ModelFileError(f"mcdonald model with feature set {meta.get('features')!r}, but this treegram "
                                 f"computes {FEATURES!r}", hint="retrain it with `treegram train stsg --method "
                                                               "mcdonald`")
        bits = meta.get("bits")
        if not isinstance(bits, int) or isinstance(bits, bool) or not 4 <= bits <= 28:
            raise ModelFileError(f"corrupt mcdonald model: hash bits {bits!r}",
                                 hint="re-create it with `treegram train stsg --method mcdonald`")
        vocab = meta.get("vocab")
        if not isinstance(vocab, dict):
            raise ModelFileError("corrupt mcdonald model: no vocabularies",
                                 hint="re-create it with `treegram train stsg --method mcdonald`")
        idx, val = arrays.get("mcdonald.index"), arrays.get("mcdonald.weight")
        if idx is None or val is None or idx.shape != val.shape or idx.ndim != 1 \
                or (len(idx) and (idx.min() < 0 or idx.max() >= 1 << bits)) or not np.all(np.isfinite(val)):
            raise ModelFileError("corrupt mcdonald model: the weight arrays are missing or inconsistent",
                                 hint="re-create it with `treegram train stsg --method mcdonald`")
        w = np.zeros(1 << bits)
        w[idx.astype(np.int64)] = val
        info = meta.get("info") if isinstance(meta.get("info"), dict) else {}
        return cls(w, bits, Vocab.from_json(vocab.get("words")), Vocab.from_json(vocab.get("tags")),
                   Vocab.from_json(vocab.get("labels")), embedded_parser(meta, arrays), info)

    def describe(self, *, top: int = 20) -> dict[str, Any]:
        out: dict[str, Any] = {"formalism": "stsg", "method": "mcdonald",
                               **{k: v for k, v in self.info.items() if not isinstance(v, (list, dict))},
                               "nonzero_weights": int(np.count_nonzero(self.weights)), "hash_bits": self.bits,
                               "words": len(self.words.items) - 3, "tags": len(self.tags.items) - 3,
                               "parser": getattr(self.parser, "formalism", None)}
        if top:
            out["top_rules"] = self.top_features(top)
        return out

    def top_features(self, top: int) -> list[dict]:
        """The readable part of the hashed weights: the weight of dropping each POS tag (template 20) and the
        strongest kept POS bigrams (template 1), `top` of each by absolute weight."""
        mask = (1 << self.bits) - 1
        tags = self.tags.items
        rows = [{"feature": f"drop a word tagged {tags[t]}", "weight": float(self.weights[_h(mask, 20, t, 0, 0, 0)])}
                for t in range(3, len(tags))]
        rows = sorted(rows, key=lambda r: -abs(r["weight"]))[:top]
        pairs = [{"feature": f"kept bigram {tags[a]} {tags[b]}",
                  "weight": float(self.weights[_h(mask, 1, a, b, 0, 0)])}
                 for a in range(1, len(tags)) for b in range(1, len(tags)) if a != END and b != START]
        rows += sorted(pairs, key=lambda r: -abs(r["weight"]))[:top]
        return [{**r, "weight": round(r["weight"], 4)} for r in rows]


def train_mcdonald(pairs, parser=None, *, trees=None, epochs: int = 10, update: str = "mira", C: float = 1.0,
                   bits: int = 20, min_word_count: int = 2, seed: int = 0, parser_id: str = "", cache_dir=None,
                   ui=None, callback=None) -> McDonaldModel:
    """Train McDonald's compressor on deletion pairs; sources are parsed with `parser` (or given as `trees`)."""
    from treegram.compression.treeprep import parse_sentences, wrap_root

    if not pairs:
        raise InputError("no training pairs", hint="check the --pairs files (one tokenized sentence per line)")
    start = time.perf_counter()
    track = (lambda xs, d: ui.track(xs, description=d)) if ui else (lambda xs, d: xs)
    parse_counts: dict = {}
    if trees is None:
        if parser is None:
            raise InputError("McDonald's compressor needs source parses", hint="pass --parser MODEL")
        trees, parse_counts = parse_sentences([p.source for p in pairs], parser, parser_id=parser_id,
                                              cache_dir=cache_dir, progress=lambda xs: track(xs, "parsing sources"))
    trees = [wrap_root(t) for t in trees]
    counts = Counter(w.lower() for p in pairs for w in p.source)
    words = Vocab(sorted(w for w, c in counts.items() if c >= min_word_count))
    tags, labels = Vocab(), Vocab()
    feats = [extract(t, words, tags, labels, grow=True) for t in trees]
    for sf, p in zip(feats, pairs):
        if sf.n != len(p.source):
            raise InputError(f"line {p.line}: the parse has {sf.n} words but the sentence {len(p.source)}")
    golds = [np.asarray(p.keep, dtype=bool) for p in pairs]
    if ui:
        with ui.task(f"{update} epochs", total=epochs) as advance:
            def cb(rec):
                advance(1, f"mistakes={rec['mistakes']} hamming={rec['hamming']}")
                return callback(rec) if callback else None

            w, trace = train_weights(feats, golds, bits=bits, epochs=epochs, update=update, C=C, seed=seed,
                                     callback=cb)
    else:
        w, trace = train_weights(feats, golds, bits=bits, epochs=epochs, update=update, C=C, seed=seed,
                                 callback=callback)
    info = {"method": "mcdonald", "update": update, "epochs": epochs, "C": C, "seed": seed,
            "training_pairs": len(pairs), "non_deletion_pairs": sum(not p.pure_deletion for p in pairs),
            "parse_failures": parse_counts.get("failed", 0) + parse_counts.get("too_long", 0),
            "trace": trace, "training_seconds": round(time.perf_counter() - start, 2)}
    return McDonaldModel(w, bits, words, tags, labels, parser, info)
