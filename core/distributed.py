"""Dask `distributed` clusters for treegram's batch commands (`treegram mine-revisions`, `treegram parse --workers`).

A command either starts a `LocalCluster` of ``workers`` processes with one thread each (the parsers and miners are
pure Python holding the GIL, so processes, not threads, give the speed-up) or joins a running cluster at
``scheduler`` (``dask scheduler`` + ``dask worker ADDRESS`` on any machines that have treegram installed and see the
same files).  No process pool of our own: scheduling, worker restarts and the task stream are Dask's.

Worker lifetime: the worker processes of a local cluster die with the command that started them, even when it is
killed with SIGKILL (no `finally` runs then).  Each worker runs `dask_setup` at start-up (a Dask *preload*): on
Linux it asks the kernel for SIGKILL when its parent goes (``prctl(PR_SET_PDEATHSIG)``), and everywhere a small
watchdog thread exits the process as soon as its parent process id changes (it was re-parented, so the parent is
gone).  Dask's own parent-pipe check only fires once the worker gets the interpreter lock, which a busy worker on
a loaded machine may take seconds to do.

`bounded_as_completed` keeps at most ``limit`` tasks in flight, so a driver streaming a huge input (a 100 GB revision
history, millions of sentences) holds a bounded amount of it in memory, and yields results as they finish (which is
what feeds the progress bar); writing results in input order is the caller's job (checkpoints + final assembly).
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from typing import Any

from treegram.errors import InputError

#: seconds to wait for a running scheduler (TREEGRAM_SCHEDULER_TIMEOUT overrides it; tests use a short one)
CONNECT_TIMEOUT = 15.0


def connect_timeout() -> float:
    raw = os.environ.get("TREEGRAM_SCHEDULER_TIMEOUT")
    try:
        return float(raw) if raw else CONNECT_TIMEOUT
    except ValueError:
        return CONNECT_TIMEOUT


def default_workers() -> int:
    """One worker process per core."""
    return max(1, os.cpu_count() or 1)


#: how often the worker watchdog looks at its parent process id (seconds)
WATCHDOG_PERIOD = 0.2
_PR_SET_PDEATHSIG = 1


def die_with_parent() -> None:
    """Make this process end when its parent process ends (see the module docstring)."""
    import signal
    import sys
    import threading
    import time

    parent = os.getppid()
    if sys.platform.startswith("linux"):
        try:
            import ctypes

            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(_PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0)
        except (OSError, AttributeError):  # no prctl: the watchdog below still does it
            pass
    if os.getppid() != parent or parent == 1:  # the parent went before the request took effect
        os._exit(1)

    def watch() -> None:
        while True:
            time.sleep(WATCHDOG_PERIOD)
            if os.getppid() != parent:
                os._exit(1)

    threading.Thread(target=watch, name="treegram parent watchdog", daemon=True).start()


def dask_setup(worker=None) -> None:
    """Dask preload hook: run in every worker process of the local clusters `start_client` starts."""
    die_with_parent()


def start_client(workers: int | None, scheduler: str | None):
    """``(client, cluster)``: a `distributed.Client` on a running scheduler (cluster None), or on a new LocalCluster of
    `workers` processes, 1 thread each (the cluster is returned so the caller can close it)."""
    from distributed import Client, LocalCluster

    if scheduler:
        timeout = connect_timeout()
        try:
            return Client(scheduler, timeout=f"{timeout}s"), None
        except (OSError, TimeoutError, ValueError, TypeError) as exc:
            raise InputError(f"cannot reach the Dask scheduler at {scheduler} ({type(exc).__name__}: {exc})",
                             hint="start one with `dask scheduler` (and `dask worker ADDRESS`), check the address "
                                  "(e.g. tcp://127.0.0.1:8786), or use --workers N for a local cluster") from None
    if workers is not None and workers < 1:
        raise InputError(f"--workers must be at least 1, got {workers}", hint="e.g. --workers 2")
    cluster = LocalCluster(n_workers=workers or default_workers(), threads_per_worker=1, processes=True,
                           dashboard_address=":0", silence_logs=logging.ERROR,
                           preload=["treegram.distributed"])  # workers die with this process (`dask_setup`)
    return Client(cluster), cluster


@contextmanager
def cluster_client(workers: int | None = None, scheduler: str | None = None, client=None) -> Iterator[Any]:
    """A client for the duration of a run: `client` as given (not closed), else one from `start_client`, closed with
    its local cluster at the end."""
    if client is not None:
        yield client
        return
    client, cluster = start_client(workers, scheduler)
    try:
        yield client
    finally:
        client.close()
        if cluster is not None:
            cluster.close()


def worker_count(client) -> int:
    """Workers the scheduler knows now (0 for a client without a scheduler, e.g. a test double)."""
    if not hasattr(client, "scheduler_info"):
        return 0
    return len(client.scheduler_info(n_workers=-1)["workers"])


def bounded_as_completed(client, submissions: Iterable[Callable[[], Any] | None], limit: int) -> Iterator[Any]:
    """Submit tasks one by one from `submissions` (each a thunk returning a future, or None for nothing to do) with
    at most `limit` in flight; yield each future as it completes (any order).  A task's exception is raised by
    ``future.result()`` in the caller."""
    from distributed import as_completed

    ac = as_completed()
    inflight = 0
    for submit in submissions:
        if submit is None:
            continue
        ac.add(submit())
        inflight += 1
        while inflight >= limit:
            yield next(ac)
            inflight -= 1
    yield from ac


__all__ = ["CONNECT_TIMEOUT", "bounded_as_completed", "cluster_client", "connect_timeout", "dask_setup",
           "default_workers", "die_with_parent", "start_client", "worker_count"]
