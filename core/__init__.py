"""treegram: Bayesian tree grammars (TSG, TIG, OSTAG, STSG) for parsing, compression and vocabulary-limited generation.

Import layout: `treegram.trees`, `treegram.corpora`, `treegram.grammar`, `treegram.charts`, `treegram.bayes`,
`treegram.generation`, `treegram.evaluation`, `treegram.cli`; formalism plugins live in `treegram.plugins.*`.
"""

__version__ = "0.1.0"

__all__ = ["__version__", "hookimpl"]


def __getattr__(name: str):
    # `treegram.hookimpl` (plugins write `@treegram.hookimpl`) imports the plugin manager on first use, so
    # `import treegram` alone (e.g. for `treegram --version`) stays cheap
    if name == "hookimpl":
        from treegram.plugin_manager import hookimpl

        return hookimpl
    raise AttributeError(f"module 'treegram' has no attribute {name!r}")
