"""The console's progress bars: nested bars share one display, a bar's clock can start late, and the ETA is
estimated over minutes (so a bar whose steps take longer than rich's 30-second default still shows one)."""

from __future__ import annotations

import io

from rich.console import Console

from treegram.cli.ui import UI


def _ui() -> UI:
    return UI(stderr=Console(file=io.StringIO(), force_terminal=True, width=120))


def test_nested_bars_share_one_display_and_a_late_clock():
    ui = _ui()
    with ui.task("outer", 3, start=False) as outer:
        live = ui._live
        assert live is not None and live.tasks[0].start_time is None  # not started: no elapsed time, no ETA
        with ui.task("inner", 2) as inner:
            assert ui._live is live and len(live.tasks) == 2  # a second line, not a second live display
            inner(2)
        outer.start()
        assert live.tasks[0].start_time is not None
        outer(0.5)
        outer(completed=2)
        assert live.tasks[0].completed == 2
    assert ui._live is None


def test_eta_window_covers_slow_steps():
    ui = _ui()
    assert ui._progress().speed_estimate_period >= 300
