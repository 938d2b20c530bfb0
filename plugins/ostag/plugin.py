"""The ostag plugin's hook implementations: the `ostag` and `ostag-bayes` formalisms (`formalism.py`) and the
`treegram ostag-grammar` and `treegram convert` commands (`cli.py`)."""

from __future__ import annotations

from treegram.plugin_manager import hookimpl


@hookimpl
def register_formalisms(register):
    from treegram.plugins.ostag.formalism import BayesianOSTAG, OSTAGFormalism

    register(OSTAGFormalism())
    register(BayesianOSTAG())


@hookimpl
def register_commands(register):
    from treegram.cli.commands import Command
    from treegram.plugins.ostag.cli import configure_convert, configure_grammar, run_convert, run_grammar

    register(Command("ostag-grammar", "list an OSTAG model's initial, auxiliary or wrapping auxiliary trees",
                     configure_grammar, run_grammar))
    register(Command("convert", "turn an OSTAG model (ostag-bayes) into a TSG with the same derivations (Yamangil & "
                                "Shieber 2013, sec. 5): cubic-time parsing", configure_convert, run_convert))
