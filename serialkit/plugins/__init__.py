"""Plugin manager and registries: built-ins and entry-point plugins register through one set of hooks."""

from __future__ import annotations

import importlib
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from importlib.metadata import entry_points
from typing import Any

import pluggy

from serialkit.core.errors import PluginError
from serialkit.plugins import hookspecs
from serialkit.plugins.hookspecs import hookimpl

__all__ = ["Entry", "Registry", "hookimpl", "get_plugin_manager", "registry", "KINDS"]

# Modules holding the built-in hook implementations, registered exactly like outside plugins.
BUILTIN_MODULES: tuple[str, ...] = (
    "serialkit.io._plugin",
    "serialkit.checking",
    "serialkit.harness._plugin",
)

KINDS = ("proposers", "readers", "writers", "predicates", "repair_rungs")


@dataclass(frozen=True)
class Entry:
    """One registered thing: its name, the object, metadata and the plugin that gave it."""

    name: str
    obj: Any
    plugin: str
    meta: dict[str, Any] = field(default_factory=dict)


class Registry:
    """Name → Entry for one kind of extension."""

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self._entries: dict[str, Entry] = {}

    def add(self, entry: Entry) -> None:
        if entry.name in self._entries:
            raise PluginError(
                f"{self.kind}: {entry.name!r} registered twice "
                f"(by {self._entries[entry.name].plugin} and {entry.plugin})"
            )
        self._entries[entry.name] = entry

    def get(self, name: str) -> Entry:
        try:
            return self._entries[name]
        except KeyError:
            known = ", ".join(sorted(self._entries)) or "none"
            raise PluginError(f"unknown {self.kind[:-1].replace('_', ' ')} {name!r} (known: {known})") from None

    def __contains__(self, name: object) -> bool:
        return name in self._entries

    def __iter__(self) -> Iterator[Entry]:
        return iter(self._entries.values())

    def names(self) -> list[str]:
        return list(self._entries)


_PM: pluggy.PluginManager | None = None
_REGISTRIES: dict[str, Registry] = {}


def _allowed() -> set[str] | None:
    value = os.environ.get("SERIALKIT_LOAD_PLUGINS")
    if value is None:
        return None
    return {v.strip() for v in value.split(",") if v.strip()}


def get_plugin_manager() -> pluggy.PluginManager:
    """The process-wide plugin manager, built-ins first, then the ``serialkit`` entry points."""
    global _PM
    if _PM is not None:
        return _PM
    pm = pluggy.PluginManager("serialkit")
    pm.add_hookspecs(hookspecs)
    for name in BUILTIN_MODULES:
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as exc:
            if exc.name == name:
                continue  # that subsystem is not present in this build
            raise
        pm.register(module, name=name)
    allowed = _allowed()
    for ep in entry_points(group="serialkit"):
        if allowed is not None and ep.name not in allowed:
            continue
        try:
            module = ep.load()
        except Exception as exc:  # a broken plugin must name itself
            raise PluginError(f"plugin {ep.name!r} ({ep.value}) failed to load: {exc}") from exc
        pm.register(module, name=ep.name)
    _PM = pm
    return pm


def _plugin_name(pm: pluggy.PluginManager, impl: Any) -> str:
    return pm.get_name(impl.plugin) or repr(impl.plugin)


def registry(kind: str) -> Registry:
    """The registry of one kind (``proposers``, ``readers``, ``writers``, ``predicates``, ``repair_rungs``)."""
    if kind not in KINDS:
        raise PluginError(f"unknown registry kind {kind!r}")
    if kind in _REGISTRIES:
        return _REGISTRIES[kind]
    pm = get_plugin_manager()
    reg = Registry(kind)
    hook = getattr(pm.hook, f"register_{kind}")
    for impl in hook.get_hookimpls():
        plugin = _plugin_name(pm, impl)

        def register(name: str, obj: Any, _plugin: str = plugin, **meta: Any) -> None:
            reg.add(Entry(name, obj, _plugin, meta))

        impl.function(register=register)
    _REGISTRIES[kind] = reg
    return reg


def reset() -> None:
    """Forget the manager and registries (tests, or after changing SERIALKIT_LOAD_PLUGINS)."""
    global _PM
    _PM = None
    _REGISTRIES.clear()


def each(kind: str) -> Iterator[Entry]:
    """Iterate a registry."""
    return iter(registry(kind))


Factory = Callable[..., Any]
