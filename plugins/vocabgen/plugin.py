"""The vocabgen plugin's hook implementations (registered through the `treegram` entry-point group)."""

from __future__ import annotations

from treegram.plugin_manager import hookimpl  # noqa: F401  (hooks are added as the plugin grows)
