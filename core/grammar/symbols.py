"""Dense integer ids for strings (nonterminals, words, categories).

Every hot loop in treegram works on int32 symbol ids; a `SymbolTable` is the one place where the strings live.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from treegram.errors import InputError


class SymbolTable:
    """A bijection str <-> 0..n-1 that only grows, in insertion order; `freeze()` makes it read-only."""

    __slots__ = ("_ids", "_symbols", "_frozen")

    def __init__(self, symbols: Iterable[str] = ()):
        self._ids: dict[str, int] = {}
        self._symbols: list[str] = []
        self._frozen = False
        for s in symbols:
            self.add(s)

    # -- building --------------------------------------------------------------------------
    def add(self, symbol: str) -> int:
        """The id of `symbol`, adding it first if new (idempotent)."""
        i = self._ids.get(symbol)
        if i is not None:
            return i
        if self._frozen:
            raise InputError(f"symbol {symbol!r} is not in this frozen symbol table",
                             hint="map unknown symbols before lookup, or build a new table")
        if not isinstance(symbol, str):
            raise TypeError(f"symbols must be str, got {type(symbol).__name__}")
        i = len(self._symbols)
        self._ids[symbol] = i
        self._symbols.append(symbol)
        return i

    def freeze(self) -> SymbolTable:
        self._frozen = True
        return self

    @property
    def frozen(self) -> bool:
        return self._frozen

    # -- lookup ----------------------------------------------------------------------------
    def __getitem__(self, symbol: str) -> int:
        return self._ids[symbol]

    def get(self, symbol: str, default: int = -1) -> int:
        return self._ids.get(symbol, default)

    def symbol(self, i: int) -> str:
        return self._symbols[i]

    def ids(self, symbols: Iterable[str], default: int = -1) -> list[int]:
        """Ids of many symbols at once (`default` for unknown ones)."""
        get = self._ids.get
        return [get(s, default) for s in symbols]

    def __len__(self) -> int:
        return len(self._symbols)

    def __contains__(self, symbol: object) -> bool:
        return symbol in self._ids

    def __iter__(self) -> Iterator[str]:
        return iter(self._symbols)

    def to_list(self) -> list[str]:
        return list(self._symbols)

    @property
    def symbols(self) -> list[str]:
        """The symbols in id order: the table's own list, for fast indexing (do not modify it; `to_list` copies)."""
        return self._symbols

    @classmethod
    def from_list(cls, symbols: Iterable[str], *, frozen: bool = False) -> SymbolTable:
        table = cls()
        for s in symbols:
            if s in table._ids:
                raise InputError(f"duplicate symbol {s!r} in symbol list", hint="symbol lists must be unique")
            table.add(s)
        if frozen:
            table.freeze()
        return table

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, SymbolTable):
            return NotImplemented
        return self._symbols == other._symbols

    def __hash__(self) -> int:  # mutable until frozen; identity hash keeps it usable as a dict key
        return id(self)

    def __repr__(self) -> str:
        head = ", ".join(repr(s) for s in self._symbols[:5])
        more = ", ..." if len(self._symbols) > 5 else ""
        return f"SymbolTable({len(self)} symbols: [{head}{more}]{' frozen' if self._frozen else ''})"
