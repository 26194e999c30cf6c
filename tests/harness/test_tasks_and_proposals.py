"""Tasks (schema, validation, bundled examples, bank) and proposal parsing."""

from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path

import pytest

from serialkit.core.errors import TaskError
from serialkit.harness import Task, list_tasks, load_task
from serialkit.harness.prompts import messages
from serialkit.harness.proposers.base import Reply, Request, extract_json, parse_proposal, to_time
from serialkit.harness.proposers.stochastic import PROFILES, StochasticProposer
from serialkit.harness.schemas import validation_errors
from serialkit.harness.seeded_tasks import generate_task, seam_clashes


@pytest.mark.parametrize("name", list_tasks())
def test_bundled_tasks_round_trip_and_validate(name: str) -> None:
    task = load_task(name)
    data = task.to_dict()
    assert validation_errors("task", data) == []
    assert Task.from_dict(data) == task
    assert seam_clashes(task) == []
    assert len(task.all_slots()) == sum(12 * len(e.forms) for e in task.blueprint.entries)


def test_bank_tasks_are_valid_and_seeded() -> None:
    tasks = [generate_task(i) for i in range(25)]
    assert generate_task(3) == tasks[3]
    assert len({t.digest() for t in tasks}) == 25
    for task in tasks:
        assert validation_errors("task", task.to_dict()) == []
        assert seam_clashes(task) == []


def _broken(tmp_path: Path, **changes: object) -> Path:
    data = load_task("duo-berg").to_dict()
    data.update(changes)
    path = tmp_path / "task.json"
    path.write_text(json.dumps(data))
    return path


@pytest.mark.parametrize(("changes", "message"), [
    ({"row": [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 10]}, "pitch class 10 appears twice"),
    ({"bars": 7}, "sections end at"),
    ({"meter": "4/5"}, "meter"),
    ({"voices": [{"id": "vn", "low": 60, "high": 65}, {"id": "vc", "low": 36, "high": 64}]}, "fewer than 12"),
    ({"blueprint": [{"section": "A", "voice": "viola", "forms": ["P0"]}]}, "unknown voice 'viola'"),
    ({"blueprint": [{"section": "A", "voice": "vn", "forms": ["Q3"]}]}, "forms"),
    ({"texture": {"min_duration": 2, "max_duration": 2}}, "do not fit"),
    ({"texture": {"min_duration": 3}}, "texture needs"),
])
def test_bad_tasks_name_file_and_problem(tmp_path: Path, changes: dict[str, object], message: str) -> None:
    path = _broken(tmp_path, **changes)
    with pytest.raises(TaskError) as info:
        load_task(path)
    assert str(path) in str(info.value) and message in str(info.value)


def test_invalid_json_task_names_line(tmp_path: Path) -> None:
    path = tmp_path / "t.json"
    path.write_text('{\n  "row": [0,\n')
    with pytest.raises(TaskError, match=r"t\.json: line 3: invalid JSON"):
        load_task(path)


def test_extract_json_variants() -> None:
    assert extract_json('{"events": []}') == {"events": []}
    assert extract_json('Sure:\n```json\n{"events": [1]}\n```\nbye') == {"events": [1]}
    assert extract_json('I think {"events": [2]} works, {"x": 1}') == {"events": [2]}
    with pytest.raises(ValueError):
        extract_json("no json here {broken")


def test_to_time_is_exact() -> None:
    assert to_time("3/2", "t") == Fraction(3, 2)
    assert to_time(0.3333333333, "t") == Fraction(1, 3)
    assert to_time(2, "t") == 2
    with pytest.raises(ValueError):
        to_time(True, "t")


def test_parse_proposal_skips_bad_events_with_messages() -> None:
    task = load_task("duo-berg")
    text = json.dumps({"events": [
        {"voice": "vn", "onset": 0, "duration": 1, "midi": 67, "form": "P0", "position": 0, "pc": 7},
        {"voice": "viola", "onset": 0, "duration": 1, "midi": 60},
        {"voice": "vc", "onset": "1/2", "duration": 0, "midi": 60},
        {"voice": "vc", "onset": 1, "duration": 1, "midi": 60.5},
        {"voice": "vc", "onset": 1, "duration": 1, "midi": 62, "position": 12},
        {"voice": "vc", "onset": 1.5, "duration": "1/2", "midi": 62, "form": "I5", "position": 0},
    ]})
    parsed = parse_proposal(Reply(text), task)
    assert parsed.ok and len(parsed.events) == 2
    assert [e.split(":")[0] for e in parsed.errors] == ["events[1]", "events[2]", "events[3]", "events[4]"]
    assert parsed.events[1].onset == Fraction(3, 2)
    assert not parse_proposal(Reply(None, error="HTTP 500"), task).ok


def test_stochastic_proposer_is_seeded_and_rates_matter() -> None:
    task = load_task("trio-schoenberg")
    request = Request("c001", "section", task, "A", 1)
    a = StochasticProposer(seed=1).propose(request).text
    assert a == StochasticProposer(seed=1).propose(request).text
    assert a != StochasticProposer(seed=2).propose(request).text
    clean = extract_json(StochasticProposer(seed=1, profile="clean").propose(request).text or "")
    slots = {(s.voice, s.form.label, s.position): s.pc for v in task.voice_ids for s in task.slots("A", v)}
    assert all(slots[(e["voice"], e["form"], e["position"])] == e["midi"] % 12 for e in clean["events"])
    sloppy = StochasticProposer(seed=1, profile="clean", rates={"wrong_pc": 1.0}).propose(request).text or ""
    events = extract_json(sloppy)["events"]
    assert all(slots[(e["voice"], e["form"], e["position"])] != e["midi"] % 12 for e in events)
    assert set(PROFILES) >= {"clean", "default", "paper-raw"}


def test_soft_rules_prompt_carries_the_rules_and_raw_does_not() -> None:
    task = load_task("duo-berg")
    soft = messages(Request("c1", "section", task, "A", 1, soft_rules=True))[1]["content"]
    raw = messages(Request("c1", "section", task, "A", 1))[1]["content"]
    assert "Two voices never sound the same pitch class" in soft
    assert "Two voices never sound the same pitch class" not in raw
    assert "REQUEST {" in raw and "P0 = 7 10 2 6" in raw
