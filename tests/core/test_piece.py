"""The piece model and its JSON form: exact time, validation naming the field, lossless round trips."""

from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from serialkit.core.errors import PieceError, ScoreReadError
from serialkit.core.piece import Event, Piece, Source, Tag, TimeSignature, Voice
from serialkit.core.predicates import Locator
from serialkit.core.rows import RowForm
from serialkit.io.jsonio import dumps_piece, load_piece, piece_schema, save_piece
from tests.strategies import row_statement_pieces


def _minimal(**event: object) -> dict[str, object]:
    base: dict[str, object] = {"id": "e1", "voice": "v1", "onset": 0, "duration": "1/2", "midi": 60}
    base.update(event)
    return {"format": "serialkit-piece", "version": 1, "events": [base]}


def _write(tmp_path: Path, data: object, name: str = "piece.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def test_event_values_are_exact_and_validated() -> None:
    e = Event("a", "v1", "3/2", "1/3", 61)  # type: ignore[arg-type]
    assert e.onset == Fraction(3, 2) and e.end == Fraction(11, 6) and e.pc == 1
    with pytest.raises(PieceError, match="float"):
        Event("a", "v1", 0.5, 1, 60)  # type: ignore[arg-type]
    with pytest.raises(PieceError, match="negative"):
        Event("a", "v1", 0, -1, 60)
    with pytest.raises(PieceError, match="out of range"):
        Event("a", "v1", 0, 1, 128)
    with pytest.raises(PieceError, match="grace"):
        Event("a", "v1", 0, 0, 60)
    assert Event("g", "v1", 0, 0, 60, grace=True).duration == 0


def test_piece_rejects_duplicate_ids_and_undeclared_voices() -> None:
    with pytest.raises(PieceError, match="twice"):
        Piece((Event("a", "v1", 0, 1, 60), Event("a", "v1", 1, 1, 61)))
    with pytest.raises(PieceError, match="not declared"):
        Piece((Event("a", "v2", 0, 1, 60),), voices=(Voice("v1"),))


def test_locate_and_describe_use_meter_and_pickup() -> None:
    piece = Piece(
        (Event("a", "v1", Fraction(1), 1, 60), Event("b", "v1", Fraction(13, 2), 1, 61,
                                                      source=Source(part="P1", measure="2")),),
        time_signatures=(TimeSignature(3, 4),),
        pickup=Fraction(1),
    )
    assert piece.locate(Fraction(0)) == ("0", Fraction(1))
    assert piece.locate(Fraction(1)) == ("1", Fraction(1))
    assert piece.locate(Fraction(13, 2)) == ("2", Fraction(7, 2))
    assert piece.describe(piece.events[1]) == "voice v1, bar 2, beat 7/2"  # the file's bar is the same
    named = piece.copy(voices=(Voice("v1", "Horn 2 in F"),))
    moved = named.with_events([piece.events[1].copy(source=Source(part="P1", measure="2a", line=9))])
    assert moved.describe(moved.events[0]) == "Horn 2 in F, bar 2, beat 7/2 (numbered 2a in the file, line 9)"
    locator = Locator(piece)  # the predicates' cached locator says the same
    assert [locator.describe(e) for e in piece.events] == [piece.describe(e) for e in piece.events]


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(row_statement_pieces(max_voices=3, max_statements=2))
def test_json_round_trip_keeps_every_note(tmp_path: Path, piece: Piece) -> None:
    path = save_piece(piece, tmp_path / "rt.json")
    again = load_piece(path)
    assert again.events == piece.events
    assert again.voices == piece.voices and again.row == piece.row
    assert again.metadata["source_path"] == str(path)


def test_dumps_puts_one_event_per_line_and_never_floats() -> None:
    piece = Piece((Event("a", "v1", Fraction(1, 3), Fraction(2, 3), 60, tag=Tag(RowForm("RI", 5), 11, "s")),))
    text = dumps_piece(piece)
    assert '"onset": "1/3"' in text and "0.33" not in text
    assert sum(1 for line in text.splitlines() if line.lstrip().startswith('{"id"')) == 1
    assert json.loads(dumps_piece(piece, indent=None))["events"][0]["tag"]["form"] == "RI5"


def test_schemas_are_valid_and_shipped() -> None:
    from jsonschema import Draft202012Validator

    Draft202012Validator.check_schema(piece_schema())
    schemas = Path(__file__).resolve().parents[2] / "schemas"
    assert (schemas / "piece.schema.json").is_file()
    Draft202012Validator.check_schema(json.loads((schemas / "report.schema.json").read_text("utf-8")))


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        ({"midi": 130}, r"events\[0\]\.midi: MIDI pitch 130 is out of range 0\.\.127"),
        ({"midi": -1}, r"events\[0\]\.midi: MIDI pitch -1 is out of range"),
        ({"duration": -1}, r"events\[0\]\.duration: -1 is negative"),
        ({"duration": "-1/2"}, r"events\[0\]\.duration: '-1/2' is negative"),
        ({"onset": 0.5}, r"events\[0\]\.onset: 0\.5 is a float"),
        ({"onset": "half"}, r"events\[0\]\.onset: 'half' is not an exact time"),
        ({"tag": {"form": "Q3", "position": 1}}, r"events\[0\]\.tag"),
        ({"tag": {"form": "P3", "position": 12}}, r"events\[0\]\.tag"),
    ],
)
def test_bad_events_name_file_and_json_path(tmp_path: Path, change: dict[str, object], expected: str) -> None:
    path = _write(tmp_path, _minimal(**change))
    with pytest.raises(PieceError, match=expected) as info:
        load_piece(path)
    assert str(path) in str(info.value)


@pytest.mark.parametrize("field", ["id", "voice", "onset", "duration", "midi"])
def test_missing_event_fields_are_named(tmp_path: Path, field: str) -> None:
    data = _minimal()
    del data["events"][0][field]  # type: ignore[index]
    with pytest.raises(PieceError, match=rf"events\[0\]: {field!r} is missing"):
        load_piece(_write(tmp_path, data))


def test_missing_events_and_bad_json_and_missing_file(tmp_path: Path) -> None:
    with pytest.raises(PieceError, match="'events' is missing"):
        load_piece(_write(tmp_path, {"format": "serialkit-piece"}))
    bad = tmp_path / "bad.json"
    bad.write_text('{"events": [\n  {"id": }\n]}', encoding="utf-8")
    with pytest.raises(ScoreReadError, match=r"bad\.json: line 2, column"):
        load_piece(bad)
    with pytest.raises(ScoreReadError, match="no such file"):
        load_piece(tmp_path / "absent.json")


def test_zero_duration_without_grace_is_caught_after_the_schema(tmp_path: Path) -> None:
    with pytest.raises(PieceError, match=r"piece\.json: .*duration is 0 but it is not a grace note"):
        load_piece(_write(tmp_path, _minimal(duration=0)))


def test_save_is_atomic(tmp_path: Path) -> None:
    target = tmp_path / "out.json"
    target.write_text("old", encoding="utf-8")
    piece = Piece((Event("a", "v1", 0, 1, 60),), metadata={"bad": object()})
    with pytest.raises(Exception):  # noqa: B017 - whatever the JSON encoder raises
        save_piece(piece, target)
    assert target.read_text(encoding="utf-8") == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["out.json"]


def test_fixture_pieces_load(fixtures: Path) -> None:
    demo = load_piece(fixtures / "pieces" / "demo-piece.json")
    clean = load_piece(fixtures / "pieces" / "clean-piece.json")
    assert len(demo.events) == len(clean.events) > 24
    assert demo.row == clean.row is not None and demo.blueprint is not None


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.sampled_from([(3, 4), (4, 4), (5, 8), (7, 16)]), min_size=1, max_size=3),
    st.sampled_from([Fraction(0), Fraction(1), Fraction(1, 2)]),
    st.lists(st.fractions(min_value=0, max_value=40, max_denominator=12), min_size=1, max_size=12),
)
def test_predicate_locator_agrees_with_piece_locate(
    meters: list[tuple[int, int]], pickup: Fraction, onsets: list[Fraction]
) -> None:
    sigs = tuple(TimeSignature(n, d, bar=3 * k) for k, (n, d) in enumerate(meters))
    events = tuple(Event(f"e{k}", "v1", t, 1, 60) for k, t in enumerate(onsets))
    piece = Piece(events, time_signatures=sigs, pickup=pickup)
    locator = Locator(piece)
    for t in onsets:
        assert locator.locate(t) == piece.locate(t)
