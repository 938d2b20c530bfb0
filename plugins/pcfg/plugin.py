"""The pcfg plugin's hook implementation, registered through the ``treegram`` entry-point group exactly as a
third-party formalism would be (settings and formalism: `formalism.py`)."""

from __future__ import annotations

from treegram.plugin_manager import hookimpl


@hookimpl
def register_formalisms(register):
    from treegram.plugins.pcfg.formalism import PCFGFormalism

    register(PCFGFormalism())
