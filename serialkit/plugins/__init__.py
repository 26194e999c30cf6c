"""Plugin manager and registries: built-ins and entry-point plugins register through one set of hooks.

Outside plugins are packages declaring ``[project.entry-points.serialkit] name = "module"``.
``SERIALKIT_LOAD_PLUGINS`` (comma-separated entry-point or distribution names) limits which
outside plugins load; set to the empty string, none load. Built-ins always load.
Nothing here is imported by ``serialkit`` or ``serialkit.core``: the manager is built on first use.
"""

from __future__ import annotations

import importlib
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass, replace
from importlib.metadata import EntryPoint, entry_points
from typing import Any

import pluggy

from serialkit import __version__
from serialkit.core.errors import PluginError
from serialkit.plugins import hookspecs
from serialkit.plugins.hookspecs import hookimpl
from serialkit.plugins.registry import KIND_SPECS, KINDS, Entry, LazyRef, Registry, order_entries

__all__ = [
    "BUILTIN_MODULES",
    "ENV_VAR",
    "KINDS",
    "Entry",
    "LazyRef",
    "PluginInfo",
    "Registry",
    "each",
    "get_plugin_manager",
    "hookimpl",
    "load_commands",
    "ordered",
    "plugin_infos",
    "register_plugin",
    "registry",
    "reset",
    "skipped_plugins",
    "survey",
    "unregister_plugin",
]

BUILTIN_MODULES: tuple[str, ...] = ("serialkit.plugins.builtins",)
"""The module holding every built-in hook implementation, registered exactly like outside plugins."""
ENTRY_POINT_GROUP = "serialkit"
ENV_VAR = "SERIALKIT_LOAD_PLUGINS"


@dataclass(frozen=True)
class PluginInfo:
    """Where one loaded plugin comes from: name, module, distribution and version."""

    name: str
    module: str
    dist: str | None
    version: str | None
    builtin: bool
    hooks: tuple[str, ...]

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {
            "name": self.name,
            "module": self.module,
            "dist": self.dist,
            "version": self.version,
            "builtin": self.builtin,
            "hooks": list(self.hooks),
        }


_PM: pluggy.PluginManager | None = None
_INFOS: dict[str, PluginInfo] = {}
_SKIPPED: list[dict[str, str]] = []
_EPS: dict[str, EntryPoint] = {}  # outside plugins' entry points, for their dist and version
_REGISTRIES: dict[str, Registry] = {}


def _norm(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def allowed_plugins() -> set[str] | None:
    """Normalised names from ``SERIALKIT_LOAD_PLUGINS``, or None when unset (load all)."""
    value = os.environ.get(ENV_VAR)
    if value is None:
        return None
    return {_norm(v.strip()) for v in value.split(",") if v.strip()}


def _hooks_of(pm: pluggy.PluginManager, plugin: object) -> tuple[str, ...]:
    return tuple(sorted(c.name for c in pm.get_hookcallers(plugin) or ()))


def _register(pm: pluggy.PluginManager, module: object, info: PluginInfo) -> None:
    try:
        pm.register(module, name=info.name)
    except ValueError as exc:  # pluggy: name or object already registered
        raise PluginError(f"plugin {info.name!r} ({info.module}) cannot register: {exc}") from exc
    except pluggy.PluginValidationError as exc:
        raise PluginError(f"plugin {info.name!r} ({info.module}) is invalid: {exc}") from exc
    try:
        pm.check_pending()  # a hookimpl whose name matches no hookspec (a typo) is an error
    except pluggy.PluginValidationError as exc:
        pm.unregister(module)
        raise PluginError(
            f"plugin {info.name!r} ({info.module}) implements an unknown hook: {exc}; known hooks: "
            + ", ".join(KIND_SPECS[k].hook for k in KINDS)
        ) from exc
    _INFOS[info.name] = PluginInfo(
        info.name, info.module, info.dist, info.version, info.builtin, _hooks_of(pm, module)
    )


def _dist_of(ep: EntryPoint) -> tuple[str | None, str | None]:
    """(distribution name, version) of an entry point, read from its metadata."""
    if ep.dist is None:
        return None, None
    return ep.dist.name, ep.dist.version


def _outside_entry_points() -> list[EntryPoint]:
    seen: set[tuple[str, str]] = set()
    found: list[EntryPoint] = []
    for ep in entry_points(group=ENTRY_POINT_GROUP):
        if (ep.name, ep.value) not in seen:  # the same dist on sys.path twice
            seen.add((ep.name, ep.value))
            found.append(ep)
    return sorted(found, key=lambda ep: ep.name)


def get_plugin_manager() -> pluggy.PluginManager:
    """The process-wide plugin manager: built-ins first, then the ``serialkit`` entry points."""
    global _PM
    if _PM is not None:
        return _PM
    pm = pluggy.PluginManager(ENTRY_POINT_GROUP)
    pm.add_hookspecs(hookspecs)
    _INFOS.clear()
    _SKIPPED.clear()
    _EPS.clear()
    for name in BUILTIN_MODULES:
        module = importlib.import_module(name)
        _register(pm, module, PluginInfo(name, name, "serialkit", __version__, True, ()))
    allowed = allowed_plugins()
    found: set[str] = set()
    for ep in _outside_entry_points():
        if allowed is not None:  # reading dist metadata costs; only when filtering by it
            names = {_norm(ep.name), _norm(_dist_of(ep)[0] or "")}
            found |= names
            if not names & allowed:
                _SKIPPED.append({"name": ep.name, "reason": f"not listed in {ENV_VAR}"})
                continue
        try:
            module = ep.load()
        except Exception as exc:  # a broken plugin must name itself and the way around it
            raise PluginError(
                f"plugin {ep.name!r} ({ep.value}, from {_dist_of(ep)[0] or 'unknown dist'}) "
                f"failed to load: {type(exc).__name__}: {exc}; "
                f"set {ENV_VAR} to load only the plugins you need"
            ) from exc
        _register(pm, module, PluginInfo(ep.name, ep.value, None, None, False, ()))
        _EPS[ep.name] = ep
    for name in sorted((allowed or set()) - found):
        _SKIPPED.append({"name": name, "reason": f"named in {ENV_VAR} but not installed"})
    _PM = pm
    return pm


def register_plugin(plugin: object, name: str, *, dist: str | None = None) -> None:
    """Register a plugin object (module or instance with ``@hookimpl`` methods) at run time."""
    pm = get_plugin_manager()
    module = getattr(plugin, "__name__", type(plugin).__qualname__)
    _register(pm, plugin, PluginInfo(name, str(module), dist, None, False, ()))
    _REGISTRIES.clear()


def unregister_plugin(name: str) -> None:
    """Remove a plugin registered by name (tests, embedding)."""
    pm = get_plugin_manager()
    if pm.get_plugin(name) is None:
        raise PluginError(f"no plugin named {name!r} is registered")
    pm.unregister(name=name)
    _INFOS.pop(name, None)
    _REGISTRIES.clear()


def _plugin_name(pm: pluggy.PluginManager, impl: Any) -> str:
    return pm.get_name(impl.plugin) or repr(impl.plugin)


def _call_impl(pm: pluggy.PluginManager, impl: Any, hook: str, kwargs: dict[str, Any]) -> None:
    plugin = _plugin_name(pm, impl)
    try:
        impl.function(**{k: kwargs[k] for k in impl.argnames})
    except PluginError:
        raise
    except KeyError as exc:
        raise PluginError(f"plugin {plugin}: {hook} takes unknown argument {exc}") from exc
    except Exception as exc:
        raise PluginError(f"plugin {plugin}: {hook} failed: {type(exc).__name__}: {exc}") from exc


def _build(kind: str, errors: list[PluginError] | None) -> Registry:
    """Call every implementation of the kind's hook; collect errors instead of raising if asked."""
    if kind not in KIND_SPECS:
        raise PluginError(f"unknown registry kind {kind!r} (known: {', '.join(KINDS)})")
    pm = get_plugin_manager()
    reg = Registry(kind)
    spec = KIND_SPECS[kind]
    hook = getattr(pm.hook, spec.hook)
    for impl in hook.get_hookimpls():
        plugin = _plugin_name(pm, impl)

        def register(name: str, obj: Any, _plugin: str = plugin, **meta: Any) -> None:
            reg.add(Entry(name, obj, _plugin, meta))

        kwargs: dict[str, Any] = {"register": register}
        if kind == "commands":
            kwargs["cli"] = _CommandCollector(register)
        try:
            _call_impl(pm, impl, spec.hook, kwargs)
        except PluginError as exc:
            if errors is None:
                raise
            errors.append(exc)
    return reg


def registry(kind: str) -> Registry:
    """The registry of one kind: proposers, readers, writers, predicates, repair_rungs, commands."""
    if kind not in _REGISTRIES:
        _REGISTRIES[kind] = _build(kind, None)
    return _REGISTRIES[kind]


def survey(kind: str) -> tuple[Registry, list[PluginError]]:
    """A registry built without stopping at a broken plugin, and the errors met (for listings)."""
    if kind in _REGISTRIES:
        return _REGISTRIES[kind], []
    errors: list[PluginError] = []
    reg = _build(kind, errors)
    if not errors:
        _REGISTRIES[kind] = reg
    return reg, errors


class _CommandCollector:
    """Stands in for the click group so ``cli.add_command``/``@cli.command`` impls register too."""

    def __init__(self, register: Any) -> None:
        self._register = register

    def add_command(self, cmd: Any, name: str | None = None) -> None:
        self._register(name or cmd.name, cmd)

    def command(self, *args: Any, **kwargs: Any) -> Any:
        import click

        def decorator(fn: Any) -> Any:
            cmd = click.command(*args, **kwargs)(fn)
            self.add_command(cmd)
            return cmd

        return decorator

    def group(self, *args: Any, **kwargs: Any) -> Any:
        import click

        def decorator(fn: Any) -> Any:
            grp = click.group(*args, **kwargs)(fn)
            self.add_command(grp)
            return grp

        return decorator


def load_commands(cli: Any) -> list[str]:
    """Add every plugin's commands to the click group; a name already taken is an error."""
    added = []
    for entry in registry("commands"):
        if entry.name in cli.commands:
            raise PluginError(
                f"plugin {entry.plugin} registers command {entry.name!r}, which already exists"
            )
        cli.add_command(entry.load(), entry.name)
        added.append(entry.name)
    return added


def ordered(kind: str = "repair_rungs", key: str = "rank") -> list[Entry]:
    """Entries of a kind sorted by their explicit integer rank (the repair ladder order)."""
    return order_entries(list(registry(kind)), key, KIND_SPECS[kind].noun)


def each(kind: str) -> Iterator[Entry]:
    """Iterate a registry."""
    return iter(registry(kind))


def plugin_infos() -> list[PluginInfo]:
    """Every loaded plugin, built-ins first."""
    get_plugin_manager()
    for name, info in list(_INFOS.items()):
        if not info.builtin and info.dist is None and name in _EPS:
            dist, version = _dist_of(_EPS[name])
            _INFOS[name] = replace(info, dist=dist, version=version)
    return list(_INFOS.values())


def skipped_plugins() -> list[dict[str, str]]:
    """Plugins found but not loaded, with the reason (absent built-in, ``SERIALKIT_LOAD_PLUGINS``)."""
    get_plugin_manager()
    return list(_SKIPPED)


def reset() -> None:
    """Forget the manager and registries (tests, or after changing SERIALKIT_LOAD_PLUGINS)."""
    global _PM
    _PM = None
    _INFOS.clear()
    _SKIPPED.clear()
    _EPS.clear()
    _REGISTRIES.clear()
