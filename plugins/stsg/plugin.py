"""The stsg plugin's hook implementation (settings and formalism: `formalism.py`; the trained models:
`compressor.py`, `largemargin.py`, `mcdonald.py`)."""

from __future__ import annotations

from treegram.plugin_manager import hookimpl


@hookimpl
def register_formalisms(register):
    from treegram.plugins.stsg.formalism import STSGFormalism

    register(STSGFormalism())
