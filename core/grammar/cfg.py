"""`WeightedCFG`: the log-probability-weighted context-free grammar every chart decoder runs on.

Every formalism (PCFG, TSG via the Goodman transform, TIG, OSTAG, STSG) reaches the parsers through this one
type, so it is built for size: rules live in parallel numpy arrays (int32 symbols, float64 log weights) and the
indexes the decoders need (binary rules grouped by left child and by parent, unary rules by parent, lexical
rules by word, the unary closure) are built once, on first use, and cached.

Three rule kinds:
  binary   A -> B C   (nonterminals)
  unary    A -> B     (nonterminals)
  lexical  A -> w     (w from the terminal vocabulary `words`)
Each nonterminal also has a coarse *category* (an id in `categories`; identity by default) that pruning masks
are stated in, so a mask can talk about "NP" while the grammar has NP^S, NP@3, ...
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import attrs
import numpy as np

from treegram.errors import InputError, ModelFileError
from treegram.grammar.closure import UnaryClosure, compute_unary_closure
from treegram.grammar.symbols import SymbolTable
from treegram.io import load_bundle, save_bundle

FORMAT = "treegram.WeightedCFG"
VERSION = 1


def _readonly(a: np.ndarray, dtype) -> np.ndarray:
    """A private read-only copy, so neither the caller nor the decoders can change a grammar in place."""
    a = np.array(a, dtype=dtype, copy=True).reshape(-1) if np.ndim(a) <= 1 else np.array(a, dtype=dtype)
    a.flags.writeable = False
    return a


def _csr(keys: np.ndarray, size: int, *tiebreak: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(ptr, order): `order` sorts rows by key (then tiebreak arrays); ptr[k]:ptr[k+1] are the rows of key k."""
    order = np.lexsort(tuple(reversed(tiebreak)) + (keys,)) if len(keys) else np.zeros(0, np.int64)
    ptr = np.zeros(size + 1, np.int64)
    ptr[1:] = np.cumsum(np.bincount(keys, minlength=size)) if len(keys) else 0
    return ptr, order.astype(np.int64)


@attrs.frozen(eq=False)
class GrammarIndex:
    """Rule arrays regrouped for the decoders (all CSR: `*_ptr[x]:*_ptr[x+1]` are the rules of group x)."""

    # binary rules by left child, sorted by right child within a group
    bl_ptr: np.ndarray
    bl_right: np.ndarray
    bl_parent: np.ndarray
    bl_logp: np.ndarray
    bl_rule: np.ndarray
    # binary rules by parent
    bp_ptr: np.ndarray
    bp_left: np.ndarray
    bp_right: np.ndarray
    bp_logp: np.ndarray
    bp_rule: np.ndarray
    # unary rules by parent
    up_ptr: np.ndarray
    up_child: np.ndarray
    up_logp: np.ndarray
    up_rule: np.ndarray
    # lexical rules by word, sorted by parent within a word
    lw_ptr: np.ndarray
    lw_parent: np.ndarray
    lw_logp: np.ndarray
    lw_rule: np.ndarray
    closure: UnaryClosure
    # the closure's inside weights regrouped by parent (for top-down sampling)
    cp_child: np.ndarray
    cp_inside_logw: np.ndarray


@attrs.frozen(eq=False)
class LexicalInput:
    """What a sentence offers the chart at length-1 spans: sparse (position, symbol, logp) triples.

    Sorted by (position, symbol); `ptr[i]:ptr[i+1]` are the entries of position i.  `rule` is the index of the
    grammar's lexical rule each entry came from, or -1 for scores supplied from outside (a tagger, a
    Goodman-transformed lexicon...).  Several entries for the same (position, symbol) are allowed: Viterbi takes
    the best, inside sums them.
    """

    n: int
    position: np.ndarray  # int32
    symbol: np.ndarray  # int32
    logp: np.ndarray  # float64
    rule: np.ndarray  # int32
    ptr: np.ndarray  # int64 [n+1]

    @classmethod
    def from_triples(cls, n: int, positions: Sequence[int] | np.ndarray, symbols: Sequence[int] | np.ndarray,
                     logps: Sequence[float] | np.ndarray, rules: Sequence[int] | np.ndarray | None = None
                     ) -> LexicalInput:
        pos = np.asarray(positions, np.int64).ravel()
        sym = np.asarray(symbols, np.int64).ravel()
        lp = np.asarray(logps, np.float64).ravel()
        rl = np.full(pos.shape[0], -1, np.int64) if rules is None else np.asarray(rules, np.int64).ravel()
        if not (pos.shape == sym.shape == lp.shape == rl.shape):
            raise InputError("lexical input: positions, symbols, logps (and rules) must have the same length")
        if n < 0:
            raise InputError(f"lexical input: sentence length {n} is negative")
        if pos.size and (pos.min() < 0 or pos.max() >= n):
            raise InputError(f"lexical input: positions must lie in [0, {n})")
        if sym.size and sym.min() < 0:
            raise InputError("lexical input: symbol ids must be >= 0")
        if np.isnan(lp).any():
            raise InputError("lexical input: a log probability is NaN")
        order = np.lexsort((sym, pos))
        ptr = np.zeros(n + 1, np.int64)
        ptr[1:] = np.cumsum(np.bincount(pos, minlength=n)) if n else 0
        return cls(n=int(n), position=pos[order].astype(np.int32), symbol=sym[order].astype(np.int32),
                   logp=lp[order], rule=rl[order].astype(np.int32), ptr=ptr)

    def __len__(self) -> int:
        return int(self.position.shape[0])

    def uncovered_positions(self) -> list[int]:
        """Positions with no entry at all (the sentence cannot be parsed)."""
        return [int(i) for i in np.flatnonzero(np.diff(self.ptr) == 0)]

    def with_fallback(self, symbols: np.ndarray, logps: np.ndarray, positions: Sequence[int] | None = None
                      ) -> LexicalInput:
        """A copy where each of `positions` (default: the uncovered ones) also gets the entries (symbols, logps) —
        the open-class fallback for unknown words whose signature class never occurred in training."""
        if positions is None:
            positions = self.uncovered_positions()
        if not len(positions):
            return self
        symbols = np.asarray(symbols, np.int64)
        k, m = len(symbols), len(positions)
        return LexicalInput.from_triples(
            self.n,
            np.concatenate([self.position, np.repeat(np.asarray(positions, np.int64), k)]),
            np.concatenate([self.symbol, np.tile(symbols, m)]),
            np.concatenate([self.logp, np.tile(np.asarray(logps, np.float64), m)]),
            np.concatenate([self.rule, np.full(k * m, -1, np.int64)]))


def _frozen_table(table: SymbolTable) -> SymbolTable:
    """A frozen SymbolTable with the same symbols, never freezing the caller's object.

    An already frozen table is shared (it cannot change); a mutable plain SymbolTable is copied (dict + list
    copies, O(#symbols) in C); a subclass that manages its own state is asked to `freeze()` itself (it decides
    whether that means anything for its owner).
    """
    if type(table) is SymbolTable:
        if table.frozen:
            return table
        copy = SymbolTable.__new__(SymbolTable)
        copy._ids = dict(table._ids)
        copy._symbols = list(table._symbols)
        copy._frozen = True
        return copy
    return table.freeze()


class WeightedCFG:
    """An immutable weighted CFG on numpy arrays; see the module docstring.

    The `nonterminals`, `words` and `categories` tables are snapshotted: a frozen table is kept as is, a
    mutable one is copied and the copy frozen, so the caller's tables stay mutable (later additions to them do
    not reach the grammar).
    """

    def __init__(self, *, nonterminals: SymbolTable, words: SymbolTable, start: int,
                 bin_parent, bin_left, bin_right, bin_logp, un_parent, un_child, un_logp,
                 lex_parent, lex_word, lex_logp, categories: SymbolTable | None = None, category=None):
        self.nonterminals = _frozen_table(nonterminals)
        self.words = _frozen_table(words)
        nsym = len(nonterminals)
        if not 0 <= int(start) < nsym:
            raise InputError(f"start symbol id {start} is not a nonterminal id (grammar has {nsym})")
        self.start = int(start)
        self.bin_parent = _readonly(bin_parent, np.int32)
        self.bin_left = _readonly(bin_left, np.int32)
        self.bin_right = _readonly(bin_right, np.int32)
        self.bin_logp = _readonly(bin_logp, np.float64)
        self.un_parent = _readonly(un_parent, np.int32)
        self.un_child = _readonly(un_child, np.int32)
        self.un_logp = _readonly(un_logp, np.float64)
        self.lex_parent = _readonly(lex_parent, np.int32)
        self.lex_word = _readonly(lex_word, np.int32)
        self.lex_logp = _readonly(lex_logp, np.float64)
        if categories is None:
            if category is not None:
                raise InputError("a category array needs its categories symbol table")
            categories = SymbolTable(nonterminals.to_list())
            category = np.arange(nsym)
        self.categories = _frozen_table(categories)
        self.category = _readonly(category, np.int32)
        self._check()
        self._index: GrammarIndex | None = None

    def _check(self) -> None:
        nsym, nw = len(self.nonterminals), len(self.words)
        groups = {
            "binary": ((self.bin_parent, nsym), (self.bin_left, nsym), (self.bin_right, nsym), self.bin_logp),
            "unary": ((self.un_parent, nsym), (self.un_child, nsym), self.un_logp),
            "lexical": ((self.lex_parent, nsym), (self.lex_word, nw), self.lex_logp),
        }
        for kind, (*ids, logp) in groups.items():
            for arr, bound in ids:
                if arr.ndim != 1 or arr.shape != logp.shape:
                    raise InputError(f"{kind} rule arrays must be 1-d and of equal length")
                if arr.size and (arr.min() < 0 or arr.max() >= bound):
                    raise InputError(f"{kind} rules mention a symbol id outside the symbol table")
            if np.isnan(logp).any() or (logp == np.inf).any():
                raise InputError(f"{kind} rules have a NaN or +inf log probability")
        if self.category.shape != (nsym,):
            raise InputError(f"category array has shape {self.category.shape}, expected ({nsym},)")
        if nsym and (self.category.min() < 0 or self.category.max() >= len(self.categories)):
            raise InputError("category array mentions an id outside the categories table")

    # -- constructors ----------------------------------------------------------------------
    @classmethod
    def from_rules(cls, start: str, binary: Iterable[tuple[str, str, str, float]] = (),
                   unary: Iterable[tuple[str, str, float]] = (), lexical: Iterable[tuple[str, str, float]] = (),
                   category: Callable[[str], str] | None = None) -> WeightedCFG:
        """A grammar from string rules: (A, B, C, logp), (A, B, logp), (A, word, logp)."""
        nts = SymbolTable([start])
        words = SymbolTable()
        b = [(nts.add(a), nts.add(l), nts.add(r), float(p)) for a, l, r, p in binary]
        u = [(nts.add(a), nts.add(c), float(p)) for a, c, p in unary]
        lx = [(nts.add(a), words.add(w), float(p)) for a, w, p in lexical]
        b_arr = np.array(b, dtype=object).reshape(-1, 4)
        u_arr = np.array(u, dtype=object).reshape(-1, 3)
        l_arr = np.array(lx, dtype=object).reshape(-1, 3)
        cats, cat = (None, None)
        if category is not None:
            cats, cat = cls._categories_from(nts, category)
        return cls(nonterminals=nts, words=words, start=0,
                   bin_parent=b_arr[:, 0].astype(np.int32), bin_left=b_arr[:, 1].astype(np.int32),
                   bin_right=b_arr[:, 2].astype(np.int32), bin_logp=b_arr[:, 3].astype(np.float64),
                   un_parent=u_arr[:, 0].astype(np.int32), un_child=u_arr[:, 1].astype(np.int32),
                   un_logp=u_arr[:, 2].astype(np.float64),
                   lex_parent=l_arr[:, 0].astype(np.int32), lex_word=l_arr[:, 1].astype(np.int32),
                   lex_logp=l_arr[:, 2].astype(np.float64), categories=cats, category=cat)

    @classmethod
    def from_arrays(cls, nonterminals: SymbolTable | Sequence[str], words: SymbolTable | Sequence[str],
                    start: int | str, *, binary: tuple = ((), (), (), ()), unary: tuple = ((), (), ()),
                    lexical: tuple = ((), (), ()), categories: SymbolTable | Sequence[str] | None = None,
                    category: np.ndarray | Callable[[str], str] | None = None) -> WeightedCFG:
        """A grammar from id arrays: binary=(parent, left, right, logp), unary=(parent, child, logp),
        lexical=(parent, word, logp).  `category` is an id array (with `categories`) or a str -> str callable."""
        nts = nonterminals if isinstance(nonterminals, SymbolTable) else SymbolTable.from_list(nonterminals)
        wds = words if isinstance(words, SymbolTable) else SymbolTable.from_list(words)
        start_id = nts[start] if isinstance(start, str) else int(start)
        cats = categories
        if callable(category):
            cats, category = cls._categories_from(nts, category)
        elif cats is not None and not isinstance(cats, SymbolTable):
            cats = SymbolTable.from_list(cats)
        return cls(nonterminals=nts, words=wds, start=start_id,
                   bin_parent=binary[0], bin_left=binary[1], bin_right=binary[2], bin_logp=binary[3],
                   un_parent=unary[0], un_child=unary[1], un_logp=unary[2],
                   lex_parent=lexical[0], lex_word=lexical[1], lex_logp=lexical[2],
                   categories=cats, category=category)

    @staticmethod
    def _categories_from(nts: SymbolTable, fn: Callable[[str], str]) -> tuple[SymbolTable, np.ndarray]:
        cats = SymbolTable()
        return cats, np.array([cats.add(fn(s)) for s in nts], dtype=np.int32)

    # -- sizes -----------------------------------------------------------------------------
    @property
    def num_symbols(self) -> int:
        return len(self.nonterminals)

    @property
    def num_binary(self) -> int:
        return int(self.bin_parent.shape[0])

    @property
    def num_unary(self) -> int:
        return int(self.un_parent.shape[0])

    @property
    def num_lexical(self) -> int:
        return int(self.lex_parent.shape[0])

    @property
    def num_rules(self) -> int:
        return self.num_binary + self.num_unary + self.num_lexical

    def __repr__(self) -> str:
        return (f"WeightedCFG(start={self.nonterminals.symbol(self.start)!r}, {self.num_symbols} nonterminals, "
                f"{len(self.words)} words, {len(self.categories)} categories, {self.num_binary} binary + "
                f"{self.num_unary} unary + {self.num_lexical} lexical rules)")

    # -- readable rules (debugging, tests) -------------------------------------------------
    def rule_str(self, kind: str, index: int) -> str:
        nt = self.nonterminals.symbol
        if kind == "binary":
            return f"{nt(self.bin_parent[index])} -> {nt(self.bin_left[index])} {nt(self.bin_right[index])}"
        if kind == "unary":
            return f"{nt(self.un_parent[index])} -> {nt(self.un_child[index])}"
        if kind == "lexical":
            return f"{nt(self.lex_parent[index])} -> {self.words.symbol(int(self.lex_word[index]))!r}"
        raise ValueError(f"unknown rule kind {kind!r}")

    # -- indexes ---------------------------------------------------------------------------
    @property
    def index(self) -> GrammarIndex:
        """Decoder indexes, built on first use (the unary closure may raise InputError for divergent cycles)."""
        if self._index is None:
            self._index = self._build_index()
        return self._index

    def _build_index(self) -> GrammarIndex:
        nsym, nw = self.num_symbols, len(self.words)
        i32, i64 = np.int32, np.int64
        bl_ptr, o = _csr(self.bin_left, nsym, self.bin_right)
        bl = (self.bin_right[o].astype(i32), self.bin_parent[o].astype(i32), self.bin_logp[o], o.astype(i32))
        bp_ptr, o2 = _csr(self.bin_parent, nsym)
        bp = (self.bin_left[o2].astype(i32), self.bin_right[o2].astype(i32), self.bin_logp[o2], o2.astype(i32))
        up_ptr, o3 = _csr(self.un_parent, nsym)
        up = (self.un_child[o3].astype(i32), self.un_logp[o3], o3.astype(i32))
        lw_ptr, o4 = _csr(self.lex_word, nw, self.lex_parent)
        lw = (self.lex_parent[o4].astype(i32), self.lex_logp[o4], o4.astype(i32))
        closure = compute_unary_closure(nsym, self.un_parent, self.un_child, self.un_logp,
                                        symbol_name=self.nonterminals.symbol)
        return GrammarIndex(bl_ptr=bl_ptr.astype(i64), bl_right=bl[0], bl_parent=bl[1], bl_logp=bl[2], bl_rule=bl[3],
                            bp_ptr=bp_ptr, bp_left=bp[0], bp_right=bp[1], bp_logp=bp[2], bp_rule=bp[3],
                            up_ptr=up_ptr, up_child=up[0], up_logp=up[1], up_rule=up[2],
                            lw_ptr=lw_ptr, lw_parent=lw[0], lw_logp=lw[1], lw_rule=lw[2],
                            closure=closure, cp_child=closure.child[closure.by_parent],
                            cp_inside_logw=closure.inside_logw[closure.by_parent])

    # -- sentences -------------------------------------------------------------------------
    def lexical_input(self, tokens: Sequence[str]) -> LexicalInput:
        """The grammar's lexical rules for each token; tokens not in `words` get no entries (map unknowns first)."""
        idx = self.index
        wid = np.array(self.words.ids(tokens), dtype=np.int64).reshape(-1)
        n = wid.shape[0]
        known = np.flatnonzero(wid >= 0)
        lo = idx.lw_ptr[wid[known]]
        counts = idx.lw_ptr[wid[known] + 1] - lo
        total = int(counts.sum())
        pos = np.repeat(known, counts)
        offsets = np.arange(total) - np.repeat(np.cumsum(counts) - counts, counts)
        rows = np.repeat(lo, counts) + offsets
        return LexicalInput.from_triples(n, pos, idx.lw_parent[rows], idx.lw_logp[rows], idx.lw_rule[rows])

    # -- persistence -----------------------------------------------------------------------
    def to_bundle(self) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
        meta = {"format": FORMAT, "version": VERSION, "start": self.start,
                "nonterminals": self.nonterminals.to_list(), "words": self.words.to_list(),
                "categories": self.categories.to_list()}
        arrays = {name: getattr(self, name) for name in (
            "bin_parent", "bin_left", "bin_right", "bin_logp", "un_parent", "un_child", "un_logp",
            "lex_parent", "lex_word", "lex_logp", "category")}
        return meta, arrays

    @classmethod
    def from_bundle(cls, meta: dict[str, Any], arrays: dict[str, np.ndarray], *, source: str = "bundle"
                    ) -> WeightedCFG:
        if meta.get("format") != FORMAT:
            raise ModelFileError(f"{source}: not a weighted CFG (format {meta.get('format')!r})",
                                 hint="pass a file written by WeightedCFG.save")
        if meta.get("version") != VERSION:
            raise ModelFileError(f"{source}: weighted CFG version {meta.get('version')} is not supported "
                                 f"(this treegram reads version {VERSION})", hint="re-create the grammar")
        check_cfg_bundle(meta, arrays)
        try:
            return cls(nonterminals=SymbolTable.from_list(meta["nonterminals"]),
                       words=SymbolTable.from_list(meta["words"]), start=meta["start"],
                       categories=SymbolTable.from_list(meta["categories"]),
                       **{k: arrays[k] for k in ("bin_parent", "bin_left", "bin_right", "bin_logp", "un_parent",
                                                 "un_child", "un_logp", "lex_parent", "lex_word", "lex_logp",
                                                 "category")})
        except KeyError as exc:
            raise ModelFileError(f"{source}: weighted CFG is missing {exc}", hint="re-create the grammar") from None

    def save(self, path: str | os.PathLike) -> None:
        meta, arrays = self.to_bundle()
        save_bundle(path, meta, arrays)

    @classmethod
    def load(cls, path: str | os.PathLike) -> WeightedCFG:
        meta, arrays = load_bundle(path)
        return cls.from_bundle(meta, arrays, source=str(path))


def check_cfg_bundle(meta: dict[str, Any], arrays: dict[str, np.ndarray], where: str = "cfg") -> None:
    """Types, shapes, counts and index ranges of a saved weighted CFG (`treegram.schema`; raises SchemaError)."""
    from treegram.schema import Arr, Dict, Int, List, Str, validate

    validate(meta, Dict({"nonterminals": List(Str(), min_len=1), "words": List(Str()), "categories": List(Str()),
                         "start": Int(min=0)}), where)
    validate(meta["start"], Int(max=len(meta["nonterminals"]) - 1), f"{where}.start")
    nt, nw, nc = len(meta["nonterminals"]), len(meta["words"]), len(meta["categories"])
    sym = Arr("iu", ndim=1, min=0, max=nt - 1)
    logp = Arr("f", ndim=1, max=1e-6)  # log rule weights: no NaN, at most log 1
    validate(arrays, Dict({
        "bin_parent": Arr("iu", shape=("bin",), min=0, max=nt - 1), "bin_left": sym, "bin_right": sym,
        "bin_logp": logp,
        "un_parent": Arr("iu", shape=("un",), min=0, max=nt - 1), "un_child": sym, "un_logp": logp,
        "lex_parent": Arr("iu", shape=("lex",), min=0, max=nt - 1), "lex_word": Arr("iu", ndim=1, min=0, max=nw - 1),
        "lex_logp": logp,
        "category": Arr("iu", shape=(nt,), min=0, max=max(nc - 1, 0))}), f"{where} arrays")
    for group, names in (("bin", ("bin_left", "bin_right", "bin_logp")), ("un", ("un_child", "un_logp")),
                         ("lex", ("lex_word", "lex_logp"))):
        n = len(arrays[f"{group}_parent"])
        for name in names:
            if len(arrays[name]) != n:
                validate(arrays[name], Arr(shape=(n,)), f"{where} arrays.{name}")


def _cfg_bundle_problem(bundle: dict[str, Any]) -> None:
    check_cfg_bundle(bundle["meta"], bundle["arrays"], "cfg")


def cfg_schema():
    """A saved weighted CFG as a `treegram.schema.Bundle` (models embed it with `treegram.schema.Embedded`)."""
    from treegram.schema import Bundle, Dict, Int, Str, Where

    return Bundle(meta=Dict({"format": Str(choices=(FORMAT,)), "version": Int(min=VERSION, max=VERSION)}),
                  parts=(Where(_cfg_bundle_problem),))
