"""Numba building blocks that compile quickly, and the "compiling (first run only)" status line.

Every numba kernel is compiled on its first call and cached on disk (`cache=True`, in the folder below), so only
the first run of a command after an install or an edit pays for it.  What that first run costs is mostly numba's
own front end, per function and per type specialisation, and numpy's sorts are among its most expensive functions
to compile (a generic quicksort / mergesort built from closures: about a second each).  The sorts below are a few
lines each and compile in a fraction of that; sorting numbers (no payload) or distinct keys has one result, so
swapping them in changes no output.

**The shipped cache.**  A fresh clone has an empty cache, so its first commands would compile for many seconds.
`core/data/numba-cache/` holds the compiled kernels of the README's commands (built by `python -m treegram.jit
ship`, see `ship`), and `PackageCacheLocator` (numba's cache locator for treegram's own modules, put first through
NUMBA_CACHE_LOCATOR_CLASSES by `treegram/__init__.py`) copies them into the user's cache on first use.  numba keys
every entry by the source file's content hash, the function's bytecode, the numba and Python versions and the CPU
(name and features), so a stale entry or one for another CPU is never used: that kernel compiles, as without the
shipped cache.  numba does not see a change in a *called* function of another module, so the shipped entries are
used only while every treegram module that mentions numba is as it was shipped (`manifest.json`; `python -m
treegram.jit check` lists the differences).  The cache lives in NUMBA_CACHE_DIR when set, else numba's user cache folder (~/.cache/numba), under
treegram/<module>/<source hash>: a read-only install works, two checkouts with different sources never
overwrite each other's entries, and the oldest versions of a module go when a new one arrives (KEEP_VERSIONS).

`announce_compilation` prints one status line on stderr when a command has to compile (a cache hit prints
nothing); benchmarks/RESULTS.md `coldstart` has the cold and warm times.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import sys
import threading
from pathlib import Path

import numba
from numba.core import caching, config

SHIPPED = Path(__file__).resolve().parent / "data" / "numba-cache"
KEEP_VERSIONS = 8  # cached source versions kept per module (PackageCacheLocator._prune_versions)


def _treegram_cache_root() -> Path:
    if config.CACHE_DIR:
        return Path(config.CACHE_DIR) / "treegram"
    from numba.misc.appdirs import AppDirs

    return Path(AppDirs(appname="numba", appauthor=False).user_cache_dir) / "treegram"


class PackageCacheLocator(caching._CacheLocator):
    """numba cache locator for functions of treegram's own modules (others: None, numba's own locators follow)."""

    _seeded: set = set()

    def __init__(self, py_func, py_file):
        self._py_file = py_file
        self._lineno = py_func.__code__.co_firstlineno
        st = os.stat(py_file)
        # the stamp numba's own locators use: the source file's content hash
        self._stamp = caching._hash_source_file(py_file, st.st_mtime, st.st_size)
        self._subdir = Path(py_func.__module__, self._stamp.hex()[:16])
        self._cache_path = str(_treegram_cache_root() / self._subdir)

    def get_cache_path(self):
        return self._cache_path

    def get_source_stamp(self):
        return self._stamp

    def get_disambiguator(self):
        return str(self._lineno)

    @classmethod
    def from_function(cls, py_func, py_file):
        module = getattr(py_func, "__module__", "") or ""
        if not module.startswith("treegram.") or not os.path.isfile(py_file):
            return None
        self = cls(py_func, py_file)
        try:
            new = not os.path.isdir(self._cache_path)
            self.ensure_cache_path()
            if new:
                self._prune_versions()
            self._seed()
        except OSError:
            return None  # not writable: numba's next locator
        return self

    def _prune_versions(self):
        """A new source version of a module: keep the KEEP_VERSIONS most recently written folders of the module
        (several checkouts may share the cache; one whose folder went recompiles once), remove older ones."""
        folders = [p for p in Path(self._cache_path).parent.iterdir() if p.is_dir()]
        folders.sort(key=lambda p: p.stat().st_mtime, reverse=True)
        for old in folders[KEEP_VERSIONS:]:
            shutil.rmtree(old, ignore_errors=True)

    def _seed(self):
        """Copy the shipped entries of this module version into the cache once (never over existing files)."""
        if self._cache_path in self._seeded:
            return
        self._seeded.add(self._cache_path)
        shipped = SHIPPED / self._subdir
        if not shipped.is_dir() or all(Path(self._cache_path, f.name).exists() for f in shipped.iterdir()):
            return
        if kernel_sources() != _shipped_manifest():
            # numba keys an entry by its own module's source only: a shipped caller would keep the code of a
            # changed callee in another module.  So the shipped set is used only with every kernel module as it
            # was shipped.
            return
        for f in shipped.iterdir():
            target = Path(self._cache_path, f.name)
            if target.exists():
                continue
            tmp = target.with_name(f"{target.name}.{os.getpid()}.tmp")
            shutil.copyfile(f, tmp)
            os.replace(tmp, target)  # atomic: a concurrent process sees the whole file or none


def kernel_sources() -> dict[str, str]:
    """{path relative to treegram's package folder: sha256[:16]} of every treegram module that mentions numba."""
    global _kernel_sources
    if _kernel_sources is None:
        import treegram

        roots = [Path(treegram.__file__).resolve().parent]
        plugins = sys.modules.get("treegram.plugins")
        if plugins is None:
            import importlib.util

            spec = importlib.util.find_spec("treegram.plugins")
            plugins_dir = Path(spec.origin).parent if spec and spec.origin else None
        else:
            plugins_dir = Path(plugins.__file__).resolve().parent
        out = {}
        for root, prefix in ((roots[0], ""), (plugins_dir, "plugins/")):
            if root is None:
                continue
            for f in sorted(root.rglob("*.py")):
                data = f.read_bytes()
                if b"numba" in data:
                    out[prefix + f.relative_to(root).as_posix()] = hashlib.sha256(data).hexdigest()[:16]
        _kernel_sources = out
    return _kernel_sources


_kernel_sources: dict[str, str] | None = None


def _shipped_manifest() -> dict[str, str] | None:
    import json

    try:
        return json.loads((SHIPPED / "manifest.json").read_text(encoding="utf-8"))["kernel_sources"]
    except (OSError, ValueError, KeyError, TypeError):
        return None


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


# -- the shipped cache ------------------------------------------------------------------------------------------
SHIP_JOBS = (
    ["exercises", "--vocab", "cefr:A1", "--words", "school,book,family,water", "--per-word", "3"],
    ["compress", "Police said on Monday that the man, a teacher from Ohio, was arrested after a long chase."],
)


def ship(treebank: Path, out: Path = SHIPPED) -> int:
    """Rebuild the shipped cache: run the README's two jobs and a PCFG train + parse (mpd and maxrule, the TSG
    default's kernels) with an empty cache, then keep what they compiled of treegram's modules.  Returns its size
    in bytes.  Run it after changing a kernel those commands use (a stale entry is only a miss, never wrong)."""
    import subprocess
    import tempfile

    from treegram.trees import read_treebank

    treebank = Path(treebank).resolve()  # the jobs run in a temporary folder

    with tempfile.TemporaryDirectory(prefix="treegram-ship-") as tmpname:
        tmp = Path(tmpname)
        env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp / "cache"))
        env.pop("NUMBA_CACHE_LOCATOR_CLASSES", None)  # the child sets treegram's own
        sentences = tmp / "five.txt"
        trees = []
        for t in read_treebank(treebank):
            trees.append(t)
            if len(trees) == 5:
                break
        sentences.write_text("".join(" ".join(t.leaves()) + "\n" for t in trees), encoding="utf-8")
        model = tmp / "pcfg.model"
        jobs = [*SHIP_JOBS, ["train", "pcfg", "--treebank", str(treebank), "--out", str(model)]]
        jobs += [["parse", "--model", str(model), "--input", str(sentences), "--decoder", d, "--out", "-"]
                 for d in ("mpd", "maxrule")]
        for job in jobs:
            subprocess.run([sys.executable, "-m", "treegram.cli.app", "-q", *job], env=env, check=True,
                           stdout=subprocess.DEVNULL, cwd=tmp)
        built = tmp / "cache" / "treegram"
        if out.exists():
            shutil.rmtree(out)
        out.mkdir(parents=True)
        for folder in built.glob("*/*"):  # <module>/<source hash> folders holding entries (not empty ones)
            if any(folder.iterdir()):
                shutil.copytree(folder, out / folder.relative_to(built))
        import json

        (out / "manifest.json").write_text(json.dumps({"kernel_sources": kernel_sources()}, indent=0,
                                                      sort_keys=True) + "\n", encoding="utf-8")
    return sum(f.stat().st_size for f in out.rglob("*") if f.is_file())


def stale_shipped() -> list[str]:
    """Kernel modules (paths) changed, added or removed since the last `ship`: while there are any, the shipped
    entries are not used (every kernel compiles on first use, as without them).  Re-ship to fix."""
    shipped = _shipped_manifest()
    if shipped is None:
        return ["(no shipped cache)"]
    now = kernel_sources()
    return sorted(k for k in set(shipped) | set(now) if shipped.get(k) != now.get(k))


if __name__ == "__main__":  # python -m treegram.jit ship --treebank TREEBANK | check
    import argparse

    ap = argparse.ArgumentParser(prog="python -m treegram.jit", description="rebuild or check the shipped numba cache")
    ap.add_argument("command", choices=["ship", "check"])
    ap.add_argument("--treebank", type=Path, help="ship: a bracketed treebank for the PCFG job")
    a = ap.parse_args()
    if a.command == "check":
        print("stale (re-ship):", ", ".join(stale_shipped()) or "none")
    elif a.treebank is None:
        ap.error("ship needs --treebank")
    else:
        print(f"{SHIPPED}: {ship(a.treebank) / 1e6:.1f} MB")
