"""Checks of the benchmark scripts' own helpers (`python -m pytest benchmarks/`): not part of the default test run,
which never imports a benchmark script."""

from __future__ import annotations

from pathlib import Path

import pytest

SHARED_DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """../shared/data beside the project; checks that need it skip with a clear reason when it is absent."""
    if not SHARED_DATA.is_dir():
        pytest.skip(f"needs the shared corpora at {SHARED_DATA} (absent on this machine)")
    return SHARED_DATA
