"""The tsg plugin's hook implementations (registered through the `treegram` entry-point group)."""

from __future__ import annotations

from treegram.plugin_manager import hookimpl


@hookimpl
def register_formalisms(register):
    from treegram.plugins.tsg.formalism import TSGFormalism

    register(TSGFormalism())


@hookimpl
def register_commands(register):
    from treegram.cli.commands import Command
    from treegram.plugins.tsg.cli import configure_trees, run_trees

    register(Command("tsg-trees", "draw the most frequent elementary trees of a TSG model", configure_trees,
                     run_trees))
