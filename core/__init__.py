"""treegram: Bayesian tree grammars (TSG, TIG, OSTAG, STSG) for parsing, compression and vocabulary-limited generation.

Import layout: `treegram.trees`, `treegram.corpora`, `treegram.grammar`, `treegram.charts`, `treegram.bayes`,
`treegram.generation`, `treegram.evaluation`, `treegram.cli`; formalism plugins live in `treegram.plugins.*`.
"""

__version__ = "0.1.0"

from treegram.plugin_manager import hookimpl  # noqa: E402  (plugins write `@treegram.hookimpl`)

__all__ = ["__version__", "hookimpl"]
