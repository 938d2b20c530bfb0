"""The pluggy plugin manager and the registry of everything plugins contribute."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import attrs
import pluggy

from treegram import hookspecs
from treegram.errors import TreegramError

hookimpl = pluggy.HookimplMarker("treegram")

ENTRY_POINT_GROUP = "treegram"

_lock = threading.Lock()
_manager: pluggy.PluginManager | None = None


def get_plugin_manager() -> pluggy.PluginManager:
    """The process-wide plugin manager: hookspecs added, entry-point plugins and core plugins loaded once."""
    global _manager
    with _lock:
        if _manager is None:
            pm = pluggy.PluginManager("treegram")
            pm.add_hookspecs(hookspecs)
            from treegram.charts import decoders as core_decoders
            from treegram.cli import commands as core_commands
            from treegram.corpora import registry as core_readers
            from treegram.evaluation import metrics as core_metrics
            from treegram.generation import registry as core_systems

            for plugin in (core_commands, core_readers, core_metrics, core_systems, core_decoders):
                pm.register(plugin, name=plugin.__name__)
            pm.load_setuptools_entrypoints(ENTRY_POINT_GROUP)
            _manager = pm
        return _manager


@attrs.define
class Contribution:
    kind: str
    name: str
    plugin: str
    obj: Any


def _collect(hook_name: str, key: Callable[..., tuple[str, Any]]) -> dict[str, Contribution]:
    """Call one register_* hook on every plugin and gather (name -> contribution), refusing duplicate names."""
    pm = get_plugin_manager()
    found: dict[str, Contribution] = {}
    hook = getattr(pm.hook, hook_name)
    for impl in hook.get_hookimpls():
        plugin_name = pm.get_name(impl.plugin) or repr(impl.plugin)

        def register(*args: Any, _plugin: str = plugin_name) -> None:
            name, obj = key(*args)
            if name in found:
                raise TreegramError(
                    f"plugin {_plugin!r} registers {hook_name[9:].rstrip('s')} {name!r}, "
                    f"already registered by {found[name].plugin!r}",
                    hint="rename one of them or uninstall the conflicting plugin",
                )
            found[name] = Contribution(hook_name[9:], name, _plugin, obj)

        impl.function(register=register)
    return found


def formalisms() -> dict[str, Contribution]:
    return _collect("register_formalisms", lambda f: (f.name, f))


def commands() -> dict[str, Contribution]:
    return _collect("register_commands", lambda c: (c.name, c))


def corpus_readers() -> dict[str, Contribution]:
    return _collect("register_corpus_readers", lambda r: (r.name, r))


def generation_systems() -> dict[str, Contribution]:
    return _collect("register_generation_systems", lambda name, factory: (name, factory))


def smoothers() -> dict[str, Contribution]:
    return _collect("register_smoothers", lambda name, factory: (name, factory))


def metrics() -> dict[str, Contribution]:
    return _collect("register_metrics", lambda name, metric: (name, metric))


def decoders() -> dict[str, Contribution]:
    return _collect("register_decoders", lambda d: (d.name, d))


def get_formalism(name: str):
    found = formalisms()
    if name not in found:
        known = ", ".join(sorted(found)) or "none"
        raise TreegramError(f"unknown formalism {name!r} (installed: {known})",
                            hint="run `treegram plugins` to see what is installed")
    return found[name].obj


def plugin_table() -> list[dict[str, Any]]:
    """One row per registered plugin: its name, where it comes from and what it contributes."""
    pm = get_plugin_manager()
    dists = {id(plugin): dist for plugin, dist in pm.list_plugin_distinfo()}
    contributions: dict[str, list[str]] = {}
    for collect in (formalisms, commands, corpus_readers, generation_systems, smoothers, metrics, decoders):
        for c in collect().values():
            contributions.setdefault(c.plugin, []).append(f"{c.kind[:-1] if c.kind.endswith('s') else c.kind}:{c.name}")
    rows = []
    for name, plugin in pm.list_name_plugin():
        dist = dists.get(id(plugin))
        rows.append({
            "name": name,
            "source": (f"{dist.project_name} {dist.version}" if dist is not None
                       else "treegram core" if name.startswith("treegram.") else "runtime"),
            "hooks": sorted(h.name for h in pm.get_hookcallers(plugin) or []),
            "provides": sorted(contributions.get(name, [])),
        })
    return rows
