"""Crash-safety of the run store: a cut anywhere in the file loses at most the record being written."""

from __future__ import annotations

import tempfile
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from serialkit.eval.store import RunStore, run_key, slug

# tmpfs when available: the property appends (and fsyncs) a few hundred records
SCRATCH = "/dev/shm" if Path("/dev/shm").is_dir() else None

records = st.lists(
    st.fixed_dictionaries({"key": st.text(min_size=1, max_size=12), "note": st.text(max_size=30),
                           "value": st.floats(allow_nan=False, allow_infinity=False)}),
    min_size=1, max_size=8, unique_by=lambda r: r["key"],
)


@settings(max_examples=30, deadline=None)
@given(records, st.floats(min_value=0, max_value=1))
def test_a_cut_at_any_byte_keeps_every_complete_record(items: list[dict[str, object]], where: float) -> None:
    with tempfile.TemporaryDirectory(dir=SCRATCH) as tmp:
        store = RunStore(tmp)
        for item in items:
            store.append(item)
        data = store.path.read_bytes()
        cut = int(where * len(data))
        store.path.write_bytes(data[:cut])  # a kill while the line at ``cut`` was being written
        complete = data[:cut].count(b"\n")
        kept = store.records()
        assert [r["key"] for r in kept] == [r["key"] for r in items[:complete]]
        store.repair()
        assert store.path.read_bytes() == (data[:data.rfind(b"\n", 0, cut) + 1] if complete else b"")
        done = store.done()
        for item in items:  # resume: append what is missing
            if item["key"] not in done:
                store.append(item)
        assert [r["key"] for r in store.records()] == [r["key"] for r in items]
        assert store.path.read_bytes().count(b"\n") == len(items)


def test_keys_and_slugs_are_distinct_and_file_safe() -> None:
    a = run_key("t-1", "self-refine", 0, "openai", "gpt/4o:mini")
    b = run_key("t-1", "self-refine", 0, "openai", None)
    assert a != b and b.endswith("|-")
    assert "/" not in slug(a) and ":" not in slug(a) and slug(a) != slug(b)


def test_tmp_folders_are_cleaned_and_commit_replaces_a_stale_folder(tmp_path: Path) -> None:
    store = RunStore(tmp_path)
    stale = store.tmp_dir("k|raw|0|p|-", "aaaa")
    (stale / "x").write_text("half")
    store.clean_tmp()
    assert not stale.exists()
    first = store.tmp_dir("k|raw|0|p|-", "bbbb")
    (first / "candidate.json").write_text("{}")
    rel = store.commit_dir("k|raw|0|p|-", first)
    second = store.tmp_dir("k|raw|0|p|-", "cccc")
    (second / "candidate.json").write_text('{"again": 1}')
    assert store.commit_dir("k|raw|0|p|-", second) == rel
    assert (tmp_path / rel / "candidate.json").read_text() == '{"again": 1}'
