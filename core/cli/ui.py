"""The console every command talks through: progress bars, tables, trees, JSON output and one-line errors.

Human-facing output (progress, tables, notes) goes to stderr when `--json` is on, or when a command's output file is
stdout itself (``--out -``, ``/dev/stdout``), so stdout stays machine-readable.

Text is never Rich markup.  Every string handed to the UI (`note`, `print`, `table` titles, headers and cells,
progress descriptions, `error`) is printed literally, so a path such as ``d[/b].json`` or a word ``[red]`` from the
user's data can neither crash the console nor change what is shown.  Styling is explicit: pass a
``rich.text.Text`` (see `styled`), or a ``label=`` to `note`.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any, TypeVar

from rich.console import Console
from rich.progress import (BarColumn, MofNCompleteColumn, Progress, SpinnerColumn, TextColumn,
                           TimeElapsedColumn, TimeRemainingColumn)
from rich.table import Table
from rich.text import Text

T = TypeVar("T")


class UI:
    def __init__(self, *, json_mode: bool = False, quiet: bool = False,
                 stdout: Console | None = None, stderr: Console | None = None, stdout_is_output: bool = False):
        self.json_mode = json_mode
        #: the command writes its result to stdout: tables and notes must not be mixed into it
        self.stdout_is_output = stdout_is_output
        self.quiet = quiet
        self.out = stdout or Console(soft_wrap=True)
        self.err = stderr or Console(stderr=True, soft_wrap=True)
        self._live: Progress | None = None  # the progress display open now; nested bars join it

    @property
    def human(self) -> Console:
        """Where tables and notes go: stdout normally, stderr in --json mode."""
        return self.err if (self.json_mode or self.stdout_is_output) else self.out

    # -- progress ------------------------------------------------------------------------------
    #: seconds of recent progress the ETA is estimated from: long enough that a bar whose steps take minutes (a
    #: blocked-sampler sweep) still gets an estimate (rich's default of 30 s shows none once a step takes longer)
    ETA_WINDOW = 600.0

    def _progress(self) -> Progress:
        return Progress(SpinnerColumn(), TextColumn("{task.description}", style="bold", markup=False), BarColumn(),
                        MofNCompleteColumn(), TimeElapsedColumn(), TimeRemainingColumn(),
                        TextColumn("{task.fields[info]}", markup=False), console=self.err, transient=False,
                        disable=self.quiet, speed_estimate_period=self.ETA_WINDOW)

    @contextmanager
    def _display(self) -> Iterator[Progress]:
        """The open progress display, or a new one for the time of the block: a bar opened inside another (a
        training's TSG initialisation inside its sampler bar) is a second line of the same display, not a second
        live display fighting over the terminal."""
        if self._live is not None:
            yield self._live
            return
        with self._progress() as progress:
            self._live = progress
            try:
                yield progress
            finally:
                self._live = None

    def track(self, items: Iterable[T], *, total: int | None = None, description: str = "") -> Iterator[T]:
        """Iterate with a progress bar on stderr."""
        if total is None and isinstance(items, Sequence):
            total = len(items)
        with self._display() as progress:
            task = progress.add_task(description, total=total, info="")
            for item in items:
                yield item
                progress.advance(task)

    @contextmanager
    def task(self, description: str, total: int | None, *, start: bool = True):
        """A progress bar driven by hand: `advance(n=1, info='LL -123.4')` updates it (`n` may be a fraction of a
        step; `advance(completed=k)` sets the count).  With `start=False` its clock (elapsed time and ETA) starts
        at `advance.start()`, e.g. when sampling begins after the data is prepared."""
        with self._display() as progress:
            task = progress.add_task(description, total=total, info="", start=start)

            def advance(n: float = 1, info: str | None = None, *, completed: float | None = None) -> None:
                progress.start_task(task)  # no-op once started
                progress.update(task, **({"completed": completed} if completed is not None else {"advance": n}),
                                **({"info": info} if info is not None else {}))

            advance.start = lambda: progress.start_task(task)
            yield advance

    # -- output --------------------------------------------------------------------------------
    def note(self, message: str | Text, *, label: str | None = None, style: str = "yellow") -> None:
        """A note on stderr, printed literally; ``label`` ("note", "skipped", ...) is shown styled in front."""
        if not self.quiet:
            text = plain(message)
            if label:
                text = Text.assemble((f"{label}:", style), " ", text)
            self.err.print(text, highlight=False)

    def print(self, *objects: Any, **kwargs: Any) -> None:
        """Print to the human console; strings literally (never markup), renderables (Text, Table, Tree) as they are."""
        kwargs.pop("markup", None)
        kwargs.setdefault("highlight", False)
        self.human.print(*(plain(o) if isinstance(o, str) else o for o in objects), **kwargs)

    def table(self, title: str | Text, columns: Sequence[str | Text], rows: Iterable[Sequence[Any]]) -> Table:
        table = Table(title=plain(title), title_justify="left")
        for i, col in enumerate(columns):
            table.add_column(plain(col), justify="left" if i == 0 else "right")
        for row in rows:
            table.add_row(*(_fmt(v) for v in row))
        self.human.print(table)
        return table

    def emit_json(self, obj: Any) -> None:
        sys.stdout.write(json.dumps(obj, ensure_ascii=False, indent=2) + "\n")
        sys.stdout.flush()

    def error(self, message: str, hint: str | None = None) -> None:
        text = Text.assemble(("error:", "bold red"), " ", plain(message))
        if hint:
            text.append(f" ({hint})", style="dim")
        self.err.print(text, highlight=False)


def plain(text: str | Text) -> Text:
    """`text` as a literal rich Text (no markup is interpreted); a Text is returned as it is."""
    return text if isinstance(text, Text) else Text(str(text))


def styled(*parts: str | tuple[str, str] | Text) -> Text:
    """Literal text with explicit styles: ``styled(("count 3", "bold"), "  root ", user_label)``."""
    return Text.assemble(*parts)


def escape(text: str) -> str:
    """Rich-markup escaping, for the rare caller that must build a markup string itself."""
    from rich.markup import escape as _escape

    return _escape(text)


def _fmt(v: Any) -> Text:
    if isinstance(v, Text):
        return v
    if isinstance(v, float):
        return Text(f"{v:.2f}")
    return Text(str(v))
