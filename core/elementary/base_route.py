"""The base route of a TSG's Goodman grammar, in label space: what another formalism needs to fall back on the
TSG's base distribution exactly as the TSG does.

A TSG parsing grammar (Cohn et al. 2010, section 6; plugins/tsg/model.py) has for every label c a site symbol `c`
and a base symbol `c~base`; the DP posterior predictive P(e | c) = (n_e + alpha_c P0(e)) / (n_c + alpha_c) is
split into the fragment route (`c -> root rule of e`, n_e / (n_c + alpha_c)) and the base route

    c        -> c~base          alpha_c / (n_c + alpha_c)                         (the hop)
    c~base   -> X1 X2           P_pcfg(c -> Y1 Y2) prod_i (beta_Yi or 1 - beta_Yi)  Xi = Yi (stop) or Yi~base (expand)
    c~base   -> w               P_pcfg(c -> w)

so that P0(e) is the product of one base factor per internal node of e.  `read_base_route(cfg)` reads the hop
and base rules off any `WeightedCFG` that follows this naming (symbol `c` and `c + BASE_SUFFIX`), through the
public CFG arrays only; a formalism that builds on the TSG's fragments (OSTAG's `--from-tsg`) adds these rules to
its own parsing CFG to get the TSG's smoothing unchanged.
"""

from __future__ import annotations

import attrs
import numpy as np

from treegram.errors import InputError
from treegram.grammar.cfg import WeightedCFG

BASE_SUFFIX = "~base"
# child kinds of a base rule
CHILD_SITE, CHILD_BASE = 0, 1


@attrs.frozen(eq=False)
class BaseRoute:
    """The hop and base rules of a Goodman TSG grammar over label names (`labels`) and words (`words`).

    hop_label[i], hop_logp[i]: log P(c -> c~base) for label labels[hop_label[i]].
    Binary rules: parent label, (kind, label) of each child (kind CHILD_SITE = the child stops there and is a
    substitution site, CHILD_BASE = it is expanded by the base), log weight.  Unary the same with one child.
    Lexical rules: parent label, word id, log weight."""

    labels: tuple[str, ...]
    words: tuple[str, ...]
    hop_label: np.ndarray
    hop_logp: np.ndarray
    bin_parent: np.ndarray
    bin_lkind: np.ndarray
    bin_left: np.ndarray
    bin_rkind: np.ndarray
    bin_right: np.ndarray
    bin_logp: np.ndarray
    un_parent: np.ndarray
    un_kind: np.ndarray
    un_child: np.ndarray
    un_logp: np.ndarray
    lex_parent: np.ndarray
    lex_word: np.ndarray
    lex_logp: np.ndarray

    @property
    def num_rules(self) -> int:
        return int(self.hop_label.size + self.bin_parent.size + self.un_parent.size + self.lex_parent.size)

    # -- persistence (JSON lists + int/float arrays: no pickle) ---------------------------------------------------
    def bundle(self, prefix: str) -> tuple[dict, dict[str, np.ndarray]]:
        meta = {prefix: {"labels": list(self.labels), "words": list(self.words)}}
        arrays = {f"{prefix}.{f.name}": getattr(self, f.name) for f in attrs.fields(BaseRoute)
                  if f.name not in ("labels", "words")}
        return meta, arrays

    @classmethod
    def from_bundle(cls, meta: dict, arrays: dict[str, np.ndarray], prefix: str) -> BaseRoute:
        m = meta[prefix]
        kw = {}
        for f in attrs.fields(BaseRoute):
            if f.name in ("labels", "words"):
                continue
            key = f"{prefix}.{f.name}"
            if key not in arrays:
                raise InputError(f"model file lacks the array {key}", hint="the file is truncated or not a model")
            a = np.asarray(arrays[key])
            kw[f.name] = a.astype(np.float64) if f.name.endswith("logp") else a.astype(np.int64)
        return cls(labels=tuple(m["labels"]), words=tuple(m["words"]), **kw)


def read_base_route(cfg: WeightedCFG) -> BaseRoute:
    """The base route of a Goodman TSG grammar (see the module docstring); InputError if it has none."""
    nts = cfg.nonterminals
    names = list(nts)
    nsym = len(names)
    is_base = np.zeros(nsym, bool)
    label_of = np.full(nsym, -1, np.int64)  # symbol -> label index (sites and bases)
    labels: list[str] = []
    index: dict[str, int] = {}
    for s, name in enumerate(names):
        if name.endswith(BASE_SUFFIX):
            c = name[: -len(BASE_SUFFIX)]
            site = nts.get(c)
            if site is None or site < 0:
                continue
            i = index.setdefault(c, len(index))
            if i == len(labels):
                labels.append(c)
            is_base[s] = True
            label_of[s] = i
            label_of[site] = i
    if not is_base.any():
        raise InputError("the grammar has no base symbols (`c~base`)", hint="pass a model written by `treegram train tsg`")
    is_site = (label_of >= 0) & ~is_base

    def kind_of(sym: np.ndarray) -> np.ndarray:
        return np.where(is_base[sym], CHILD_BASE, CHILD_SITE)

    up, uc = np.asarray(cfg.un_parent, np.int64), np.asarray(cfg.un_child, np.int64)
    ulp = np.asarray(cfg.un_logp, np.float64)
    hop = is_site[up] & is_base[uc] & (label_of[up] == label_of[uc])
    base_un = is_base[up] & (label_of[uc] >= 0)
    bp, bl, br = (np.asarray(a, np.int64) for a in (cfg.bin_parent, cfg.bin_left, cfg.bin_right))
    base_bin = is_base[bp] & (label_of[bl] >= 0) & (label_of[br] >= 0)
    lp = np.asarray(cfg.lex_parent, np.int64)
    base_lex = is_base[lp]
    lw = np.asarray(cfg.lex_word, np.int64)[base_lex]
    used_words, word_ix = np.unique(lw, return_inverse=True)
    words = tuple(cfg.words.symbol(int(w)) for w in used_words.tolist())
    return BaseRoute(
        labels=tuple(labels), words=words,
        hop_label=label_of[up[hop]], hop_logp=ulp[hop],
        bin_parent=label_of[bp[base_bin]], bin_lkind=kind_of(bl[base_bin]), bin_left=label_of[bl[base_bin]],
        bin_rkind=kind_of(br[base_bin]), bin_right=label_of[br[base_bin]],
        bin_logp=np.asarray(cfg.bin_logp, np.float64)[base_bin],
        un_parent=label_of[up[base_un]], un_kind=kind_of(uc[base_un]), un_child=label_of[uc[base_un]],
        un_logp=ulp[base_un],
        lex_parent=label_of[lp[base_lex]], lex_word=word_ix.astype(np.int64),
        lex_logp=np.asarray(cfg.lex_logp, np.float64)[base_lex])
