"""The example proposer writes every scheduled slot, with the pitch class the blueprint asks for."""

from __future__ import annotations

import pytest
from serialkit_example_proposer.proposer import ExampleProposer

from serialkit.harness.proposers.base import Request, parse_proposal
from serialkit.harness.tasks import list_tasks, load_task
from serialkit.plugins import registry, reset


@pytest.fixture(autouse=True)
def _fresh_plugins():
    reset()
    yield
    reset()


def test_registered_through_the_entry_point():
    entry = registry("proposers").get("example")
    assert entry.plugin == "example"
    assert entry.load() is ExampleProposer


@pytest.mark.parametrize("name", list_tasks())
def test_section_states_the_scheduled_rows(name):
    task = load_task(name)
    proposer = ExampleProposer()
    for section in task.sections:
        request = Request("c001", "section", task, section.id, 1)
        reply = proposer.propose(request)
        parsed = parse_proposal(reply, task)
        assert parsed.ok and not parsed.errors
        written = {(e.voice, e.form.label, e.position): e for e in parsed.events}
        for voice in task.voice_ids:
            for slot in task.slots(section.id, voice):
                event = written[(voice, slot.form.label, slot.position)]
                assert event.midi % 12 == slot.pc
                assert section.start <= event.onset < section.end
                assert event.onset + event.duration <= section.end


def test_deterministic():
    task = load_task(list_tasks()[0])
    section = task.sections[0].id
    a = ExampleProposer().propose(Request("c001", "section", task, section, 1))
    b = ExampleProposer().propose(Request("c001", "section", task, section, 1))
    assert a.text == b.text
