"""The pluggy plugin manager and the registry of everything plugins contribute.

Plugins come from the ``treegram`` entry-point group: the core's own contributions (:mod:`treegram.corehooks`) and
the built-in formalisms load through it exactly as third-party plugins do, so this module imports nothing above it.
A plugin that cannot be imported, or whose ``register_*`` hook raises, is *contained*: it is skipped, recorded in
:func:`plugin_failures` and listed with its error by ``treegram plugins``; every other command (``--version``
included) keeps working.

``TREEGRAM_LOAD_PLUGINS`` (like llm's ``LLM_LOAD_PLUGINS``) limits which entry-point plugins of *other*
distributions load: a comma-separated list of entry-point or distribution names; set but empty = none of them.
The plugins shipped in the treegram distribution itself always load.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from importlib import metadata
from typing import Any

import attrs
import pluggy

from treegram import hookspecs
from treegram.errors import TreegramError

hookimpl = pluggy.HookimplMarker("treegram")

ENTRY_POINT_GROUP = "treegram"
LOAD_PLUGINS_ENV = "TREEGRAM_LOAD_PLUGINS"
CORE_DISTRIBUTION = "treegram"
CORE_PLUGIN = "core"  # the entry point of the core's own hooks (treegram.corehooks)

_lock = threading.RLock()
_manager: pluggy.PluginManager | None = None
_dists: dict[str, Any] = {}  # plugin name -> importlib.metadata.Distribution
_failures: dict[str, PluginFailure] = {}


@attrs.define
class PluginFailure:
    """A plugin that was skipped: it could not be imported, or one of its hooks raised."""

    name: str
    source: str
    stage: str  # "import" or the hook's name
    error: str


def _normalize(name: str) -> str:
    return name.strip().lower().replace("_", "-")


def allowed_plugins() -> set[str] | None:
    """The names in TREEGRAM_LOAD_PLUGINS (None when the variable is unset: load everything installed)."""
    value = os.environ.get(LOAD_PLUGINS_ENV)
    if value is None:
        return None
    return {_normalize(n) for n in value.split(",") if n.strip()}


def _dist_name(dist) -> str:
    return dist.metadata["Name"] or "?"


def _load_entry_points(pm: pluggy.PluginManager) -> None:
    allowed = allowed_plugins()
    seen: set[str] = set()
    for dist in metadata.distributions():
        dname = _dist_name(dist)
        for ep in dist.entry_points:
            if ep.group != ENTRY_POINT_GROUP or ep.name in seen:
                continue
            seen.add(ep.name)
            if pm.get_plugin(ep.name) is not None or pm.is_blocked(ep.name):
                continue
            builtin = _normalize(dname) == CORE_DISTRIBUTION
            if not builtin and allowed is not None and not ({_normalize(ep.name), _normalize(dname)} & allowed):
                continue
            source = f"{dname} {dist.version}"
            try:
                plugin = ep.load()
                pm.register(plugin, name=ep.name)
            except Exception as exc:  # noqa: BLE001 - contained: listed by `treegram plugins`, skipped
                _failures[ep.name] = PluginFailure(ep.name, source, "import", f"{type(exc).__name__}: {exc}")
                continue
            _dists[ep.name] = dist


def get_plugin_manager() -> pluggy.PluginManager:
    """The process-wide plugin manager: hookspecs added, entry-point plugins (the core's included) loaded once."""
    global _manager
    with _lock:
        if _manager is None:
            pm = pluggy.PluginManager("treegram")
            pm.add_hookspecs(hookspecs)
            _load_entry_points(pm)
            _manager = pm
        return _manager


def plugin_failures() -> list[PluginFailure]:
    """Plugins skipped so far (import errors; hooks that raised)."""
    get_plugin_manager()
    return list(_failures.values())


def record_failure(plugin: str, stage: str, exc: BaseException) -> None:
    """Contain a plugin's exception: remember it for `treegram plugins` (the caller skips the contribution)."""
    _failures.setdefault(plugin, PluginFailure(plugin, _source(plugin), stage, f"{type(exc).__name__}: {exc}"))


def is_core(plugin: str) -> bool:
    """Whether `plugin` is the core's own hooks (not a formalism plugin, not a third party)."""
    return plugin == CORE_PLUGIN


def _source(plugin: str) -> str:
    dist = _dists.get(plugin)
    if dist is not None:
        return f"{_dist_name(dist)} {dist.version}"
    return "treegram core" if plugin.startswith("treegram.") else "runtime"


def plugin_distribution(plugin: str) -> dict[str, Any]:
    """The distribution a plugin came from: package, version and where to report bugs (when it says)."""
    dist = _dists.get(plugin)
    if dist is None:
        return {"package": CORE_DISTRIBUTION} if plugin.startswith("treegram.") else {}
    out: dict[str, Any] = {"package": _dist_name(dist), "package_version": dist.version}
    urls = dist.metadata.get_all("Project-URL") or []
    pick = None
    for entry in urls:
        label, _, url = entry.partition(",")
        if any(w in label.lower() for w in ("issue", "bug", "tracker")):
            pick = url.strip()
            break
    if pick is None and urls:
        pick = urls[0].partition(",")[2].strip()
    pick = pick or dist.metadata.get("Home-page")
    if pick is None:
        author = dist.metadata.get("Author-email") or dist.metadata.get("Author")
        if author:
            pick = f"the author ({author})"
    if pick:
        out["url"] = pick
    return out


@attrs.define
class Contribution:
    kind: str
    name: str
    plugin: str
    obj: Any


def _collect(hook_name: str, key: Callable[..., tuple[str, Any]]) -> dict[str, Contribution]:
    """Call one register_* hook on every plugin and gather (name -> contribution), refusing duplicate names.

    A hook that raises (anything but a name clash) is contained: its plugin's contributions to this hook are
    dropped and the failure is listed by `treegram plugins`."""
    pm = get_plugin_manager()
    found: dict[str, Contribution] = {}
    hook = getattr(pm.hook, hook_name)
    for impl in hook.get_hookimpls():
        plugin_name = pm.get_name(impl.plugin) or repr(impl.plugin)
        mine: dict[str, Contribution] = {}

        def register(*args: Any, _plugin: str = plugin_name, _mine: dict = mine) -> None:
            name, obj = key(*args)
            if name in found or name in _mine:
                raise _Clash(
                    f"plugin {_plugin!r} registers {hook_name[9:].rstrip('s')} {name!r}, "
                    f"already registered by {(found.get(name) or _mine[name]).plugin!r}",
                    hint="rename one of them or uninstall the conflicting plugin",
                )
            _mine[name] = Contribution(hook_name[9:], name, _plugin, obj)

        try:
            impl.function(register=register)
        except _Clash:
            raise
        except Exception as exc:  # noqa: BLE001 - a plugin's bug must not break the other plugins
            record_failure(plugin_name, hook_name, exc)
            continue
        found.update(mine)
    return found


class _Clash(TreegramError):
    """Two plugins register the same name."""


def formalisms() -> dict[str, Contribution]:
    return _collect("register_formalisms", lambda f: (f.name, f))


def sampler_moves() -> dict[str, Contribution]:
    return _collect("register_sampler_moves", lambda m: (m.name, m))


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


def exercise_kinds() -> dict[str, Contribution]:
    """Raw contributions; `treegram.exercises.exercise_kinds()` is the checked, ordered registry."""
    return _collect("register_exercise_kinds", lambda k: (getattr(k, "name", None), k))


def export_formats() -> dict[str, Contribution]:
    """Raw contributions; `treegram.exercises.export_formats()` is the checked, ordered registry."""
    return _collect("register_export_formats", lambda f: (getattr(f, "name", None), f))


def failure_note() -> str:
    """'; skipped plugins: a (ImportError: ...), b (...)' when plugins failed to load, else ''."""
    failed = plugin_failures()
    if not failed:
        return ""
    return "; skipped plugins: " + ", ".join(f"{f.name} ({f.error})" for f in failed)


def get_formalism(name: str):
    found = formalisms()
    if name not in found:
        known = ", ".join(sorted(found)) or "none"
        raise TreegramError(f"unknown formalism {name!r} (installed: {known}){failure_note()}",
                            hint="run `treegram plugins` to see what is installed")
    return found[name].obj


def plugin_table() -> list[dict[str, Any]]:
    """One row per plugin: its name, where it comes from, what it contributes, and (skipped ones) its error."""
    pm = get_plugin_manager()
    contributions: dict[str, list[str]] = {}
    for collect in (formalisms, sampler_moves, commands, corpus_readers, generation_systems, smoothers, metrics,
                    decoders, exercise_kinds, export_formats):
        for c in collect().values():
            kind = c.kind[:-1] if c.kind.endswith("s") else c.kind
            contributions.setdefault(c.plugin, []).append(f"{kind}:{c.name}")
    rows = []
    failed = {f.name: f for f in _failures.values()}
    for name, plugin in pm.list_name_plugin():
        row = {
            "name": name,
            "source": _source(name),
            "hooks": sorted(h.name for h in pm.get_hookcallers(plugin) or []),
            "provides": sorted(contributions.get(name, [])),
        }
        if name in failed:
            row["error"] = f"{failed[name].stage}: {failed[name].error}"
        rows.append(row)
    for f in failed.values():
        if pm.get_plugin(f.name) is None:
            rows.append({"name": f.name, "source": f.source, "hooks": [], "provides": [],
                         "error": f"{f.stage}: {f.error}"})
    return rows
