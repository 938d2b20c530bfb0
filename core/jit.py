"""Numba building blocks that compile quickly, and the "compiling (first run only)" status line.

Every numba kernel is compiled on its first call and cached on disk (`cache=True`: beside the source when that is
writable, else in the user's cache directory, ~/.cache/numba, or NUMBA_CACHE_DIR), so only the first run of a
command after an install or an edit pays for it.  What that first run costs is mostly numba's own front end, per
function and per type specialisation, and numpy's sorts are among its most expensive functions to compile
(a generic quicksort / mergesort built from closures: about a second each).  The sorts below are a few lines each
and compile in a fraction of that; they sort integer keys, where the result is unique, so swapping them in
changes no output.

`announce_compilation` prints one status line on stderr when a command has to compile (a cache hit prints
nothing); benchmarks/RESULTS.md `coldstart` has the cold and warm times.
"""

from __future__ import annotations

import sys
import threading

import numba


@numba.njit(cache=True)
def sort_prefix(a, n):
    """Sort a[:n] ascending in place: insertion sort for short runs, else heapsort (one loop, no helper calls)."""
    if n <= 16:
        for i in range(1, n):
            x = a[i]
            j = i - 1
            while j >= 0 and a[j] > x:
                a[j + 1] = a[j]
                j -= 1
            a[j + 1] = x
        return
    end = n
    start = n // 2
    while True:
        if start > 0:  # heapify: sift down every inner node
            start -= 1
        else:  # sort: move the maximum behind the heap, sift the new root down
            end -= 1
            if end == 0:
                break
            t = a[0]
            a[0] = a[end]
            a[end] = t
        root = start
        x = a[root]
        while True:
            child = 2 * root + 1
            if child >= end:
                break
            if child + 1 < end and a[child + 1] > a[child]:
                child += 1
            if a[child] <= x:
                break
            a[root] = a[child]
            root = child
        a[root] = x


@numba.njit(cache=True)
def sort_by_key(keys, items, n):
    """Sort keys[:n] ascending in place and permute items[:n] alongside (distinct keys: a unique result)."""
    end = n
    start = n // 2
    while n > 1:
        if start > 0:
            start -= 1
        else:
            end -= 1
            if end == 0:
                break
            t = keys[0]
            keys[0] = keys[end]
            keys[end] = t
            u = items[0]
            items[0] = items[end]
            items[end] = u
        root = start
        x = keys[root]
        y = items[root]
        while True:
            child = 2 * root + 1
            if child >= end:
                break
            if child + 1 < end and keys[child + 1] > keys[child]:
                child += 1
            if keys[child] <= x:
                break
            keys[root] = keys[child]
            items[root] = items[child]
            root = child
        keys[root] = x
        items[root] = y


_lock = threading.Lock()
_listener = None
_stream = None  # where the status line goes: None = sys.stderr when it is a terminal
_announced = False


def announce_compilation(stream=None) -> None:
    """From now on, say once per process when numba starts compiling (a cache hit says nothing).

    The line goes to `stream` if given, else to stderr when stderr is a terminal (like the progress bars: a script
    reading stderr, or a test, gets no extra line).
    """
    global _listener, _stream
    from numba.core import event

    with _lock:
        _stream = stream
        if _listener is not None:
            return

        class _Announce(event.Listener):
            def on_start(self, ev):
                global _announced
                with _lock:
                    if _announced:
                        return
                    out = _stream
                    if out is None:
                        out = sys.stderr
                        if not getattr(out, "isatty", lambda: False)():
                            return
                    _announced = True
                try:
                    out.write(COMPILING + "\n")
                    out.flush()
                except (OSError, ValueError):
                    pass

            def on_end(self, ev):
                pass

        _listener = _Announce()
        event.register("numba:compile", _listener)


COMPILING = "compiling treegram's numba kernels (first run only: later runs load them from the cache) ..."
