"""The channel plugin's hook implementations (settings and formalism: `formalism.py`; the model: `model.py`)."""

from __future__ import annotations

from treegram.plugin_manager import hookimpl


@hookimpl
def register_formalisms(register):
    from treegram.plugins.channel.formalism import ChannelFormalism

    register(ChannelFormalism())
