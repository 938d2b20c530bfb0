"""treegram.jit: the quick-to-compile sorts agree with numpy's; the compile status line appears once, on a compile."""

import io

import numba
import numpy as np

from treegram import jit


def test_sort_prefix_matches_numpy_and_leaves_the_tail():
    rng = np.random.default_rng(1)
    for n in (0, 1, 2, 3, 5, 16, 17, 18, 31, 100, 1000):
        for dtype in (np.int32, np.int64, np.float64):
            a = rng.integers(-50, 50, n + 3).astype(dtype)
            b = a.copy()
            jit.sort_prefix(a, n)
            assert (a[:n] == np.sort(b[:n])).all(), (n, dtype)
            assert (a[n:] == b[n:]).all()


def test_sort_by_key_permutes_items_like_argsort():
    rng = np.random.default_rng(2)
    for n in (0, 1, 2, 7, 64, 513):
        keys = rng.permutation(n + 2).astype(np.int64)
        items = rng.integers(0, 9, n + 2)
        k0, i0 = keys.copy(), items.copy()
        jit.sort_by_key(keys, items, n)
        order = np.argsort(k0[:n])
        assert (keys[:n] == k0[:n][order]).all() and (items[:n] == i0[:n][order]).all()
        assert (keys[n:] == k0[n:]).all() and (items[n:] == i0[n:]).all()


def test_compile_status_line_once_and_only_when_compiling(monkeypatch):
    buf = io.StringIO()
    monkeypatch.setattr(jit, "_announced", False)
    jit.announce_compilation(stream=buf)
    try:
        @numba.njit  # a new function: it must compile
        def plus_one(x):
            return x + 1

        @numba.njit
        def plus_two(x):
            return x + 2

        assert buf.getvalue() == ""  # nothing compiled yet
        assert plus_one(1) == 2
        assert buf.getvalue() == jit.COMPILING + "\n"
        assert plus_two(1) == 3 and plus_one(2) == 3
        assert buf.getvalue() == jit.COMPILING + "\n"  # once per process
    finally:
        jit.announce_compilation(stream=None)
