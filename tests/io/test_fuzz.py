"""Damaged files never crash the readers: they read, or raise ScoreReadError naming the file."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from lxml import etree

from serialkit.core.errors import ScoreReadError
from serialkit.io import read_score

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "scores"
JUNK = st.sampled_from(["", "x", "-1", "0", "1.5", "999999", "  3 ", "1e9", "NaN", "#7", "3/4"])


def _mutate(data: bytes, picks: list[tuple[int, int, str]]) -> bytes:
    root = etree.fromstring(data)
    elements = [el for el in root.iter() if isinstance(el.tag, str)]
    for index, action, junk in picks:
        el = elements[index % len(elements)]
        if action == 0 and el.getparent() is not None:
            el.getparent().remove(el)
            elements = [e for e in root.iter() if isinstance(e.tag, str)]
        elif action == 1:
            el.text = junk
        elif action == 2 and el.attrib:
            key = sorted(el.attrib)[index % len(el.attrib)]
            el.set(key, junk)
    return etree.tostring(root, xml_declaration=True, encoding="UTF-8")


@pytest.mark.parametrize("name", ["features.musicxml", "features.mei"])
@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(picks=st.lists(st.tuples(st.integers(0, 10_000), st.integers(0, 2), JUNK), min_size=1, max_size=4))
def test_damaged_scores_read_or_fail_cleanly(
    name: str, picks: list[tuple[int, int, str]], tmp_path_factory: pytest.TempPathFactory
) -> None:
    path = tmp_path_factory.mktemp("fuzz") / name
    path.write_bytes(_mutate((FIXTURES / name).read_bytes(), picks))
    try:
        piece = read_score(path)
    except ScoreReadError as exc:
        assert str(path) in str(exc)
    else:
        assert piece.events
