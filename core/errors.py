"""Errors with a message a user can act on.  The CLI prints `message` (and `hint`) as one red line, no traceback."""

from __future__ import annotations


class TreegramError(Exception):
    """Base class: `str(err)` says what went wrong and where; `hint` says how to fix it."""

    def __init__(self, message: str, *, hint: str | None = None):
        super().__init__(message)
        self.hint = hint


class InputError(TreegramError):
    """Malformed or unusable user input (files, trees, sentences, vocabularies)."""


class TreeSyntaxError(InputError):
    """A bracketed tree that does not parse; the message names file, line and column."""


class ModelFileError(TreegramError):
    """A model file that is missing, corrupt or of the wrong kind/version."""


class ParseFailure(TreegramError):
    """A sentence the grammar cannot derive (the caller may fall back to a flat tree)."""
