"""Generation systems by name: the built-in ones are contributed through `register_generation_systems`."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from treegram.errors import InputError, ModelFileError
from treegram.generation.ngram import NgramSystem
from treegram.generation.pcfg_system import PCFGSystem
from treegram.generation.protocol import GenerationSystem

BUILTIN_SYSTEMS: dict[str, type] = {"pcfg": PCFGSystem, "ngram": NgramSystem}


def make_system(spec: Mapping[str, Any], registry: Mapping[str, type] | None = None) -> GenerationSystem:
    """Instantiate {"name": ..., "config": {...}} (the form a saved model stores) from `registry`."""
    if registry is None:
        from treegram.plugin_manager import generation_systems

        registry = {name: c.obj for name, c in generation_systems().items()}
    name = spec.get("name")
    cls = registry.get(name)
    if cls is None:
        raise ModelFileError(f"unknown generation system {name!r} (known: {', '.join(sorted(registry))})",
                             hint="install the plugin that provides it, or pass the system explicitly")
    try:
        return cls(**dict(spec.get("config") or {}))
    except (TypeError, InputError) as exc:
        raise ModelFileError(f"cannot build generation system {name!r} from {spec.get('config')!r}: {exc}",
                             hint="the stored configuration does not match this version of the system") from None


