"""Properties of the registries: ladder order is a function of ranks alone; names stay unique."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from serialkit.core.errors import PluginError
from serialkit.plugins.registry import Entry, LazyRef, Registry, order_entries


def _fn(*args: Any) -> None:
    return None


# A ladder: distinct rung names with integer ranks, each owned by one of a few plugins.
ladders = st.lists(
    st.tuples(st.text("abcdefghij_", min_size=1, max_size=8),
              st.integers(-1000, 1000), st.sampled_from(["p1", "p2", "p3"])),
    min_size=1, max_size=12, unique_by=lambda t: t[0],
)


@settings(max_examples=60, deadline=None)
@given(ladder=ladders, data=st.data())
def test_ladder_order_depends_on_ranks_only(ladder: list[tuple[str, int, str]], data: Any) -> None:
    shuffled = data.draw(st.permutations(ladder))
    entries = [Entry(name, _fn, plugin, {"rank": rank}) for name, rank, plugin in shuffled]
    ranks = [rank for _, rank, _ in ladder]
    if len(set(ranks)) < len(ranks):
        with pytest.raises(PluginError, match="both have rank"):
            order_entries(entries, "rank", "repair rung")
        return
    ordered = order_entries(entries, "rank", "repair rung")
    assert [e.meta["rank"] for e in ordered] == sorted(ranks)
    again = order_entries(list(reversed(entries)), "rank", "repair rung")
    assert [e.name for e in again] == [e.name for e in ordered]


@settings(max_examples=60, deadline=None)
@given(names=st.lists(st.sampled_from(["a", "b", "c", "d"]), min_size=1, max_size=8))
def test_registry_keeps_first_of_each_name_or_raises(names: list[str]) -> None:
    reg = Registry("proposers")
    seen: set[str] = set()
    for i, name in enumerate(names):
        entry = Entry(name, _fn, f"plugin{i}")
        if name in seen:
            with pytest.raises(PluginError, match=f"'{name}' registered twice"):
                reg.add(entry)
        else:
            reg.add(entry)
            seen.add(name)
    assert reg.names() == list(dict.fromkeys(names))
    assert len(reg) == len(seen)


@settings(max_examples=40, deadline=None)
@given(exts=st.lists(st.text("abcXYZ", min_size=1, max_size=4), min_size=1, max_size=4))
def test_extensions_are_normalised_and_found(exts: list[str]) -> None:
    reg = Registry("writers")
    reg.add(Entry("w", _fn, "p", {"extensions": tuple("." + e for e in exts)}))
    for ext in exts:
        assert [e.name for e in reg.for_extension("." + ext.upper())] == ["w"]
        assert [e.name for e in reg.for_extension("." + ext.lower())] == ["w"]


@pytest.mark.parametrize("ref", ["nodots", "a:b:c", ":x", "mod:", "1mod:x", "mod:x y"])
def test_bad_lazy_references_are_rejected(ref: str) -> None:
    with pytest.raises(PluginError, match="bad lazy reference"):
        LazyRef(ref)


def test_lazy_reference_to_a_missing_target_names_it() -> None:
    with pytest.raises(PluginError, match="cannot load 'json:no_such_thing'"):
        LazyRef("json:no_such_thing").load()
