"""The answer docs/guides/generating.md shows a model giving, near its top, is one the harness takes
as it is: it fits the proposal schema, every note is read, and a run whose model answers section A
with it is released by the raw variant (no repair of any kind)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from serialkit.harness import run
from serialkit.harness.proposers.base import Reply, Request, parse_proposal
from serialkit.harness.proposers.stochastic import StochasticProposer
from serialkit.harness.schemas import validation_errors
from serialkit.harness.tasks import load_task

GUIDE = Path(__file__).resolve().parents[2] / "docs" / "guides" / "generating.md"


def _documented() -> tuple[str, str]:
    """The guide's first section (its heading) and the first JSON block in it."""
    text = GUIDE.read_text(encoding="utf-8")
    sections = re.split(r"^## ", text, flags=re.M)
    first = sections[1]
    block = re.search(r"```json\n(.*?)```", first, flags=re.S)
    assert block is not None, "no JSON example in the guide's first section"
    return first.splitlines()[0], block.group(1)


def test_the_event_format_is_the_guide_s_first_section() -> None:
    heading, _ = _documented()
    assert heading == "What the model returns"
    text = GUIDE.read_text(encoding="utf-8")
    assert text.index("## What the model returns") < text.index("```\nserialkit generate")


def test_the_documented_answer_fits_the_schema_and_is_read_whole() -> None:
    _, example = _documented()
    data = json.loads(example)
    assert validation_errors("proposal", data) == []
    task = load_task("duo-berg")
    parsed = parse_proposal(Reply(example), task)
    assert parsed.ok and parsed.errors == [] and len(parsed.events) == len(data["events"]) == 24
    for event in parsed.events:
        assert event.form is not None and event.position is not None
        assert event.pc == event.midi % 12 == task.row.form(event.form, task.convention)[event.position]


class _Documented:
    """A model that answers section A with the guide's example, and B as the clean stand-in does."""

    name, model = "stochastic", "documented"

    def __init__(self) -> None:
        self.inner = StochasticProposer(seed=1, profile="clean")
        self.example = _documented()[1]

    def propose(self, request: Request) -> Reply:
        if request.section == "A" and request.kind == "section":
            return Reply(self.example)
        return self.inner.propose(request)


def test_a_run_given_the_documented_answer_releases_it_unrepaired() -> None:
    result = run("duo-berg", "raw", proposer=_Documented(), seed=1)
    assert result.released, result.report["failures"]
    wanted: list[Any] = json.loads(_documented()[1])["events"]
    kept = sorted((e.voice, int(e.onset), e.midi) for e in result.piece.events if e.onset < 16)
    assert kept == sorted((e["voice"], int(e["onset"]), e["midi"]) for e in wanted)
