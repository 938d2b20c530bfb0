"""The console every command talks through: progress bars, tables, trees, JSON output and one-line errors.

Human-facing output (progress, tables, notes) goes to stderr when `--json` is on, so stdout stays machine-readable.
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

T = TypeVar("T")


class UI:
    def __init__(self, *, json_mode: bool = False, quiet: bool = False,
                 stdout: Console | None = None, stderr: Console | None = None):
        self.json_mode = json_mode
        self.quiet = quiet
        self.out = stdout or Console(soft_wrap=True)
        self.err = stderr or Console(stderr=True, soft_wrap=True)

    @property
    def human(self) -> Console:
        """Where tables and notes go: stdout normally, stderr in --json mode."""
        return self.err if self.json_mode else self.out

    # -- progress ------------------------------------------------------------------------------
    def _progress(self) -> Progress:
        return Progress(SpinnerColumn(), TextColumn("[bold]{task.description}"), BarColumn(),
                        MofNCompleteColumn(), TimeElapsedColumn(), TimeRemainingColumn(),
                        TextColumn("{task.fields[info]}"), console=self.err, transient=False,
                        disable=self.quiet)

    def track(self, items: Iterable[T], *, total: int | None = None, description: str = "") -> Iterator[T]:
        """Iterate with a progress bar on stderr."""
        if total is None and isinstance(items, Sequence):
            total = len(items)
        with self._progress() as progress:
            task = progress.add_task(description, total=total, info="")
            for item in items:
                yield item
                progress.advance(task)

    @contextmanager
    def task(self, description: str, total: int | None):
        """A progress bar driven by hand: `advance(n=1, info='LL -123.4')` updates it."""
        with self._progress() as progress:
            task = progress.add_task(description, total=total, info="")

            def advance(n: int = 1, info: str | None = None) -> None:
                progress.update(task, advance=n, **({"info": info} if info is not None else {}))

            yield advance

    # -- output --------------------------------------------------------------------------------
    def note(self, message: str) -> None:
        if not self.quiet:
            self.err.print(message, highlight=False)

    def print(self, *objects: Any, **kwargs: Any) -> None:
        self.human.print(*objects, **kwargs)

    def table(self, title: str, columns: Sequence[str], rows: Iterable[Sequence[Any]]) -> Table:
        table = Table(title=title, title_justify="left")
        for i, col in enumerate(columns):
            table.add_column(col, justify="left" if i == 0 else "right")
        for row in rows:
            table.add_row(*(_fmt(v) for v in row))
        self.human.print(table)
        return table

    def emit_json(self, obj: Any) -> None:
        sys.stdout.write(json.dumps(obj, ensure_ascii=False, indent=2) + "\n")
        sys.stdout.flush()

    def error(self, message: str, hint: str | None = None) -> None:
        text = f"[bold red]error:[/] {escape(message)}"
        if hint:
            text += f" [dim]({escape(hint)})[/]"
        self.err.print(text, highlight=False)


def escape(text: str) -> str:
    from rich.markup import escape as _escape

    return _escape(text)


def _fmt(v: Any) -> str:
    if isinstance(v, float):
        return f"{v:.2f}"
    return escape(str(v))
