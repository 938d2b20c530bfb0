"""The corrections plugin's hook implementations (registered through the `treegram` entry-point group):
the `corrections` formalism (`treegram train corrections`), `treegram corrections` and
`treegram eval-corrections`."""

from __future__ import annotations

from treegram.plugin_manager import hookimpl


@hookimpl
def register_formalisms(register):
    from treegram.plugins.corrections.formalism import CorrectionsFormalism

    register(CorrectionsFormalism())


@hookimpl
def register_commands(register):
    from treegram.plugins.corrections.cli import COMMANDS

    for command in COMMANDS:
        register(command)
