"""The revisions plugin's hook implementations (registered through the `treegram` entry-point group):
`treegram mine-revisions`."""

from __future__ import annotations

from treegram.plugin_manager import hookimpl


@hookimpl
def register_commands(register):
    from treegram.plugins.revisions.cli import COMMANDS

    for command in COMMANDS:
        register(command)
