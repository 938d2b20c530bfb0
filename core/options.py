"""Settings classes whose attrs fields are also command-line options: the neutral layer under the contract.

A formalism's settings (and the core's shared option groups) are attrs classes whose fields are declared with
:func:`option`; :func:`add_settings_options` turns them into argparse options and :func:`settings_from_args`
builds the settings back.  It lives below :mod:`treegram.formalism`, :mod:`treegram.training` and the CLI so that
each of them (and `treegram.bayes.averaging`'s ``--average``/``--thin`` fields) can declare options without
importing one another; plugins keep importing ``option`` from :mod:`treegram.formalism`, which re-exports it.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any, Collection

import attrs

OPTION_KEY = "treegram.option"


@attrs.frozen
class Option:
    """How one settings field appears on the command line (stored in the attrs field's metadata)."""

    help: str
    flag: str | None = None  # default: --field-name
    type: Callable[[str], Any] | None = None  # argparse type (use treegram.argtypes for ranges and seeds)
    choices: tuple | Callable[[], Any] | None = None  # a callable is evaluated when the parser is built
    group: str | None = None  # argparse help group ("model", "sampling", ...)
    metavar: str | tuple | None = None
    nargs: str | int | None = None
    required: bool = False
    deprecated: tuple[str, ...] = ()  # old spellings of the flag: accepted, hidden from --help


def option(default: Any = attrs.NOTHING, *, help: str, flag: str | None = None, type: Callable | None = None,
           choices: tuple | list | Callable[[], Any] | None = None, group: str | None = None,
           metavar: str | tuple | None = None, nargs: str | int | None = None, required: bool = False,
           deprecated: tuple[str, ...] = ()) -> Any:
    """An attrs field that is also a ``treegram train NAME`` option::

        @attrs.frozen
        class Settings:
            order: int = option(2, help="Markov order of the sibling model", type=positive_int, group="model")
            lowercase: bool = option(False, help="lowercase words first")  # bool + False -> a store_true flag

    ``required=True`` fields have no default (they are keyword-only).  ``type`` defaults to the type of the
    default.  ``choices`` may be a callable (evaluated when the parser is built, e.g. names other plugins
    register); a mutable default is given as ``attrs.Factory(list)``.
    """
    if choices is not None and not callable(choices):
        choices = tuple(choices)
    meta = Option(help=help, flag=flag, type=type, choices=choices,
                  group=group, metavar=metavar, nargs=nargs, required=required, deprecated=tuple(deprecated))
    if required:
        return attrs.field(metadata={OPTION_KEY: meta}, kw_only=True)
    return attrs.field(default=default, metadata={OPTION_KEY: meta})


def option_fields(settings_cls: type) -> list[tuple[attrs.Attribute, Option]]:
    """The (field, option) pairs of a settings class, in declaration order."""
    return [(f, f.metadata[OPTION_KEY]) for f in attrs.fields(settings_cls) if OPTION_KEY in f.metadata]


def option_group(parser: argparse.ArgumentParser, title: str | None, groups: dict[str, Any]):
    """The argparse group titled `title` (made once per parser; None = the parser itself)."""
    if title is None:
        return parser
    if title not in groups:
        existing = [g for g in parser._action_groups if g.title == title]
        groups[title] = existing[0] if existing else parser.add_argument_group(title)
    return groups[title]


def add_settings_options(parser: argparse.ArgumentParser, settings_cls: type,
                         groups: dict[str, Any] | None = None, *, skip: Collection[str] = (),
                         group: str | None = None) -> None:
    """Add one argparse option per :func:`option` field of `settings_cls` (dest = the field name), except the
    fields named in `skip`; `group` puts them all in that help group instead of their own (a formalism offering
    another's options behind a flag: `treegram.formalism.Formalism.aliases`)."""
    groups = {} if groups is None else groups
    for field, opt in option_fields(settings_cls):
        if field.name in skip:
            continue
        target = option_group(parser, group or opt.group, groups)
        flag = opt.flag or "--" + field.name.replace("_", "-")
        kwargs: dict[str, Any] = {"dest": field.name, "help": opt.help}
        default = None if field.default is attrs.NOTHING else field.default
        if isinstance(default, attrs.Factory):  # type: ignore[arg-type]
            default = default.factory()
        if opt.required:
            kwargs["required"] = True
        if isinstance(default, bool) and opt.type is None and not opt.required:
            kwargs["action"] = "store_false" if default else "store_true"
        else:
            kwargs["default"] = default
            typ = opt.type
            if typ is None and default is not None and isinstance(default, (int, float, str)):
                typ = type(default)
            # A raw int/float would take 1e400, nan and 20-digit counts: give them the shared checked types.
            if typ is int or typ is float:
                from treegram import argtypes

                typ = argtypes.integer if typ is int else argtypes.finite_float
            if typ is not None:
                kwargs["type"] = typ
            if opt.choices is not None:
                kwargs["choices"] = tuple(opt.choices()) if callable(opt.choices) else opt.choices
            if opt.nargs is not None:
                kwargs["nargs"] = opt.nargs
            if opt.metavar is not None:
                kwargs["metavar"] = opt.metavar
        target.add_argument(flag, **kwargs)
        for old in opt.deprecated:  # same destination, no default of its own, not in --help
            target.add_argument(old, **{**kwargs, "default": argparse.SUPPRESS, "help": argparse.SUPPRESS,
                                        "required": False})


def settings_from_args(settings_cls: type, args: argparse.Namespace) -> Any:
    """Build the settings object from parsed options (the fields added by :func:`add_settings_options`)."""
    values = {}
    for field, _opt in option_fields(settings_cls):
        value = getattr(args, field.name)
        values[field.name] = value
    return settings_cls(**values)


class SettingsRecord:
    """Base of a flat attrs settings class: `to_dict` is what a model file or checkpoint stores under "settings",
    `from_dict` builds the settings back from it."""

    __slots__ = ()

    def to_dict(self) -> dict[str, Any]:
        return attrs.asdict(self)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Any:
        return cls(**d)
