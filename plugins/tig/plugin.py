"""The tig plugin's hook implementations (registered through the `treegram` entry-point group)."""

from __future__ import annotations

from treegram.plugin_manager import hookimpl


@hookimpl
def register_formalisms(register):
    from treegram.plugins.tig.formalism import TIGFormalism

    register(TIGFormalism())
