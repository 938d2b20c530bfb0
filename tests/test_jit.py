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


def test_package_locator_covers_treegram_modules_only(tmp_path, monkeypatch):
    from numba.core import config

    from treegram.charts import kernels

    monkeypatch.setattr(config, "CACHE_DIR", str(tmp_path / "cache"))
    py_file = kernels.__file__
    loc = jit.PackageCacheLocator.from_function(kernels.fill_chart.py_func, py_file)
    path = loc.get_cache_path()
    assert path.startswith(str(tmp_path / "cache" / "treegram" / "treegram.charts.kernels"))
    # keyed by the source's content hash, the stamp numba compares: another source, another folder
    import hashlib
    from pathlib import Path

    digest = hashlib.sha256(Path(py_file).read_bytes()).digest()
    assert loc.get_source_stamp() == digest and path.endswith(digest.hex()[:16])

    def outsider(x):
        return x

    assert jit.PackageCacheLocator.from_function(outsider, __file__) is None


def test_shipped_entries_are_copied_once_and_never_over_existing(tmp_path, monkeypatch):
    from numba.core import config

    from treegram.charts import kernels

    monkeypatch.setattr(config, "CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(jit.PackageCacheLocator, "_seeded", set())
    probe = jit.PackageCacheLocator(kernels.fill_chart.py_func, kernels.__file__)
    shipped = tmp_path / "shipped"
    (shipped / probe._subdir).mkdir(parents=True)
    (shipped / probe._subdir / "a.nbi").write_bytes(b"shipped")
    (shipped / probe._subdir / "b.nbi").write_bytes(b"shipped")
    monkeypatch.setattr(jit, "SHIPPED", shipped)
    import json
    from pathlib import Path

    # a kernel module changed since the shipping (here: a manifest that differs in one file): nothing is copied
    changed = dict(jit.kernel_sources(), **{"charts/kernels.py": "0" * 16})
    (shipped / "manifest.json").write_text(json.dumps({"kernel_sources": changed}))
    loc = jit.PackageCacheLocator.from_function(kernels.fill_chart.py_func, kernels.__file__)
    assert list(Path(loc.get_cache_path()).iterdir()) == []
    assert jit.stale_shipped() == ["charts/kernels.py"]

    # every kernel module as shipped: copied, never over a file the cache has
    (shipped / "manifest.json").write_text(json.dumps({"kernel_sources": jit.kernel_sources()}))
    assert jit.stale_shipped() == []
    monkeypatch.setattr(jit.PackageCacheLocator, "_seeded", set())
    Path(probe.get_cache_path(), "b.nbi").write_bytes(b"mine")
    loc = jit.PackageCacheLocator.from_function(kernels.fill_chart.py_func, kernels.__file__)
    assert Path(loc.get_cache_path(), "a.nbi").read_bytes() == b"shipped"
    assert Path(loc.get_cache_path(), "b.nbi").read_bytes() == b"mine"
    assert not list(Path(loc.get_cache_path()).glob("*.tmp"))



def test_a_new_source_version_prunes_the_oldest_cached_versions(tmp_path, monkeypatch):
    import os
    from pathlib import Path

    from numba.core import config

    from treegram.charts import kernels

    monkeypatch.setattr(config, "CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(jit, "KEEP_VERSIONS", 3)
    probe = jit.PackageCacheLocator(kernels.fill_chart.py_func, kernels.__file__)
    module_dir = Path(probe.get_cache_path()).parent
    for k in range(5):  # older versions, oldest first
        d = module_dir / f"old{k}"
        d.mkdir(parents=True)
        os.utime(d, (1000 + k, 1000 + k))
    jit.PackageCacheLocator.from_function(kernels.fill_chart.py_func, kernels.__file__)
    left = sorted(p.name for p in module_dir.iterdir())
    assert left == sorted(["old3", "old4", Path(probe.get_cache_path()).name])
    jit.PackageCacheLocator.from_function(kernels.fill_chart.py_func, kernels.__file__)  # existing: no pruning
    assert sorted(p.name for p in module_dir.iterdir()) == left
