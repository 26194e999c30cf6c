"""Registries of extensions: entries, lazy references, per-kind validation and rank order."""

from __future__ import annotations

import importlib
import inspect
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from serialkit.core.errors import PluginError

__all__ = ["KINDS", "KIND_SPECS", "Entry", "KindSpec", "LazyRef", "Registry", "order_entries"]

_REF = re.compile(r"^[A-Za-z_][\w.]*:[A-Za-z_][\w.]*$")
_CODE = re.compile(r"^[A-Z][A-Z0-9_]*$")


class LazyRef:
    """A ``"module:attribute"`` reference imported on first use; calling it calls the target."""

    __slots__ = ("ref", "_target")

    def __init__(self, ref: str) -> None:
        if not _REF.match(ref):
            raise PluginError(f"bad lazy reference {ref!r}: expected 'package.module:attribute'")
        self.ref = ref
        self._target: Any = None

    def load(self) -> Any:
        """Import the module and return the attribute (cached)."""
        if self._target is None:
            module_name, _, attr = self.ref.partition(":")
            try:
                target: Any = importlib.import_module(module_name)
                for part in attr.split("."):
                    target = getattr(target, part)
            except (ImportError, AttributeError) as exc:
                raise PluginError(f"cannot load {self.ref!r}: {exc}") from exc
            self._target = target
        return self._target

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.load()(*args, **kwargs)

    @property
    def __signature__(self) -> inspect.Signature:
        """The target's signature, so ``inspect.signature`` sees through the reference."""
        return inspect.signature(self.load())

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)  # copy/pickle probes must not import the target
        return getattr(self.load(), name)

    def __repr__(self) -> str:
        return f"LazyRef({self.ref!r})"


@dataclass(frozen=True)
class Entry:
    """One registered thing: its name, the object, the plugin that gave it and its metadata."""

    name: str
    obj: Any
    plugin: str
    meta: dict[str, Any] = field(default_factory=dict)

    def load(self) -> Any:
        """The registered object itself (imports a lazy ``"module:attr"`` reference)."""
        return self.obj.load() if isinstance(self.obj, LazyRef) else self.obj

    @property
    def description(self) -> str:
        """The ``description`` meta, else the first sentence of a loaded object's docstring."""
        text = self.meta.get("description")
        if isinstance(text, str):
            return text
        if isinstance(self.obj, LazyRef):
            return ""
        doc = getattr(self.obj, "__doc__", None) or ""
        paragraph = " ".join(doc.strip().split("\n\n")[0].split())
        sentence = paragraph.split(". ")[0].rstrip(".")
        return sentence if len(sentence) <= 90 else sentence[:89] + "…"

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready summary (the object as ``module:qualname`` or its lazy reference)."""
        return {
            "name": self.name,
            "plugin": self.plugin,
            "object": _describe(self.obj),
            "description": self.description,
            "meta": {k: _jsonable(v) for k, v in sorted(self.meta.items())},
        }


def _describe(obj: Any) -> str:
    if isinstance(obj, LazyRef):
        return obj.ref
    module = getattr(obj, "__module__", None) or type(obj).__module__
    qualname = getattr(obj, "__qualname__", None) or type(obj).__qualname__
    return f"{module}:{qualname}"


def _jsonable(value: Any) -> Any:
    if isinstance(value, str | int | float | bool) or value is None:
        return value
    if isinstance(value, list | tuple | set | frozenset):
        return [_jsonable(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    return _describe(value)


def _extensions(entry: Entry, kind: str) -> dict[str, Any]:
    exts = entry.meta.get("extensions")
    if isinstance(exts, str):
        exts = (exts,)
    if not exts or not all(isinstance(e, str) and e.startswith(".") for e in exts):
        raise PluginError(
            f"{kind[:-1]} {entry.name!r} (plugin {entry.plugin}) needs "
            f"extensions=('.ext', ...), got {entry.meta.get('extensions')!r}"
        )
    return {"extensions": tuple(e.lower() for e in exts)}


def _predicate(entry: Entry, kind: str) -> dict[str, Any]:
    if not _CODE.match(entry.name):
        raise PluginError(
            f"predicate code {entry.name!r} (plugin {entry.plugin}) must be upper case, e.g. 'ROW'"
        )
    strict_only = entry.meta.get("strict_only", False)
    if not isinstance(strict_only, bool):
        raise PluginError(f"predicate {entry.name!r}: strict_only must be True or False")
    return {"strict_only": strict_only}


def _nothing(entry: Entry, kind: str) -> dict[str, Any]:
    return {}


@dataclass(frozen=True)
class KindSpec:
    """What one registry holds: its hook, a noun for messages, and a meta validator."""

    kind: str
    hook: str
    noun: str
    check: Callable[[Entry, str], dict[str, Any]]
    needs_callable: bool = True


KIND_SPECS: dict[str, KindSpec] = {
    spec.kind: spec
    for spec in (
        KindSpec("proposers", "register_proposers", "proposer", _nothing),
        KindSpec("readers", "register_readers", "reader", _extensions),
        KindSpec("writers", "register_writers", "writer", _extensions),
        KindSpec("predicates", "register_predicates", "predicate", _predicate),
        KindSpec("repair_rungs", "register_repair_rungs", "repair rung", _nothing),
        KindSpec("commands", "register_commands", "command", _nothing, needs_callable=False),
    )
}
KINDS: tuple[str, ...] = tuple(KIND_SPECS)


class Registry:
    """Name → Entry for one kind of extension, in registration order (built-ins first)."""

    def __init__(self, kind: str) -> None:
        if kind not in KIND_SPECS:
            raise PluginError(f"unknown registry kind {kind!r} (known: {', '.join(KINDS)})")
        self.kind = kind
        self.spec = KIND_SPECS[kind]
        self._entries: dict[str, Entry] = {}

    def add(self, entry: Entry) -> Entry:
        """Validate and add one entry; a name registered twice is an error naming both plugins."""
        if not isinstance(entry.name, str) or not entry.name:
            raise PluginError(f"plugin {entry.plugin} registered a {self.spec.noun} without a name")
        if entry.name in self._entries:
            raise PluginError(
                f"{self.spec.noun} {entry.name!r} registered twice "
                f"(by {self._entries[entry.name].plugin} and {entry.plugin})"
            )
        obj = LazyRef(entry.obj) if isinstance(entry.obj, str) else entry.obj
        if self.spec.needs_callable and not callable(obj):
            raise PluginError(
                f"{self.spec.noun} {entry.name!r} (plugin {entry.plugin}) is not callable: {obj!r}"
            )
        meta = {**entry.meta, **self.spec.check(entry, self.kind)}
        entry = Entry(entry.name, obj, entry.plugin, meta)
        self._entries[entry.name] = entry
        return entry

    def get(self, name: str) -> Entry:
        """The entry called ``name``; unknown names raise ``PluginError`` listing the known ones."""
        try:
            return self._entries[name]
        except KeyError:
            known = ", ".join(self._entries) or "none"
            raise PluginError(f"unknown {self.spec.noun} {name!r} (known: {known})") from None

    def for_extension(self, suffix: str) -> list[Entry]:
        """Readers or writers that claim a file suffix such as ``.musicxml`` (case-insensitive)."""
        suffix = suffix.lower()
        return [e for e in self._entries.values() if suffix in e.meta.get("extensions", ())]

    def by_plugin(self, plugin: str) -> list[Entry]:
        """Entries one plugin registered."""
        return [e for e in self._entries.values() if e.plugin == plugin]

    def __contains__(self, name: object) -> bool:
        return name in self._entries

    def __iter__(self) -> Iterator[Entry]:
        return iter(list(self._entries.values()))

    def __len__(self) -> int:
        return len(self._entries)

    def names(self) -> list[str]:
        """Registered names in registration order."""
        return list(self._entries)

    def __repr__(self) -> str:
        return f"Registry({self.kind!r}, {self.names()!r})"


def order_entries(entries: list[Entry], key: str, noun: str) -> list[Entry]:
    """Sort entries by an explicit integer meta ``key``; missing or duplicate keys are errors."""
    seen: dict[int, Entry] = {}
    for entry in entries:
        if key not in entry.meta:
            raise PluginError(
                f"{noun} {entry.name!r} (plugin {entry.plugin}) has no {key}: "
                f"register it with register({entry.name!r}, fn, {key}=N)"
            )
        value = entry.meta[key]
        if isinstance(value, bool) or not isinstance(value, int):
            raise PluginError(
                f"{noun} {entry.name!r} (plugin {entry.plugin}): {key} must be an integer, "
                f"got {value!r}"
            )
        if value in seen:
            other = seen[value]
            raise PluginError(
                f"{noun}s {other.name!r} (plugin {other.plugin}) and {entry.name!r} "
                f"(plugin {entry.plugin}) both have {key} {value}; ranks must be unique"
            )
        seen[value] = entry
    return [seen[v] for v in sorted(seen)]
