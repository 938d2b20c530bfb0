"""Checks of the benchmark scripts' own helpers (`python -m pytest benchmarks/`): not part of the default test run,
which never imports a benchmark script."""

from __future__ import annotations

import pytest
from _results import SHARED


@pytest.fixture(scope="session")
def shared_data():
    """../shared/data beside the project (the checks that need it skip, saying so, when it is absent)."""
    return SHARED if SHARED.is_dir() else pytest.skip(f"needs the shared corpora at {SHARED} (absent here)")
