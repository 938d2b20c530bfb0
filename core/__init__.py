"""treegram: Bayesian tree grammars (TSG, TIG, OSTAG, STSG) for parsing, compression and vocabulary-limited generation.

Import layout: `treegram.trees`, `treegram.corpora`, `treegram.grammar`, `treegram.charts`, `treegram.bayes`,
`treegram.generation`, `treegram.evaluation`, `treegram.cli`; formalism plugins live in `treegram.plugins.*`.
"""

__version__ = "0.1.0"

import os as _os  # noqa: E402

# treegram's numba kernels cache through treegram.jit.PackageCacheLocator (a shipped cache that a fresh clone finds
# ready, see treegram/jit.py), then numba's own locators in numba's order; read when numba is first imported
_os.environ.setdefault("NUMBA_CACHE_LOCATOR_CLASSES", "treegram.jit.PackageCacheLocator,UserProvidedCacheLocator,"
                       "InTreeCacheLocator,UserWideCacheLocator,IPythonCacheLocator,ZipCacheLocator")
if (_numba_config := __import__("sys").modules.get("numba.core.config")) is not None:  # numba came first
    if not _numba_config.CACHE_LOCATOR_CLASSES:
        _numba_config.CACHE_LOCATOR_CLASSES = _os.environ["NUMBA_CACHE_LOCATOR_CLASSES"]

__all__ = ["__version__", "hookimpl"]


def __getattr__(name: str):
    # `treegram.hookimpl` (plugins write `@treegram.hookimpl`) imports the plugin manager on first use, so
    # `import treegram` alone (e.g. for `treegram --version`) stays cheap
    if name == "hookimpl":
        from treegram.plugin_manager import hookimpl

        return hookimpl
    raise AttributeError(f"module 'treegram' has no attribute {name!r}")
