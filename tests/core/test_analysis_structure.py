"""The analysis reads as a pipeline: steps listed in order, each a function from the state to the
next state, and no function in core/analysis longer than about sixty lines."""

from __future__ import annotations

import ast
import inspect
from pathlib import Path
from typing import get_type_hints

import serialkit.core.analysis as analysis_package
from serialkit.core.analysis import pipeline
from serialkit.core.analysis.state import Assignment

LONGEST = 60


def test_no_function_in_core_analysis_is_longer_than_sixty_lines() -> None:
    long = []
    for path in Path(analysis_package.__file__).parent.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                length = (node.end_lineno or node.lineno) - node.lineno + 1
                if length > LONGEST:
                    long.append(f"{path.name}:{node.name} ({length} lines)")
    assert not long, long


def test_every_step_maps_the_state_to_the_next_state() -> None:
    steps = pipeline.FIRST_READING + pipeline.STEPS
    assert len(steps) >= 10
    for step in steps:
        hints = get_type_hints(step)
        params = list(inspect.signature(step).parameters)
        assert len(params) == 1, step.__name__
        assert hints[params[0]] is Assignment and hints["return"] is Assignment, step.__name__
        assert step.__doc__, step.__name__


def test_the_steps_are_listed_in_the_order_the_module_documents() -> None:
    doc = pipeline.__doc__ or ""
    names = [step.__name__ for step in pipeline.FIRST_READING + pipeline.STEPS]
    places = [doc.index(f"``{name}``") for name in names]
    assert places == sorted(places), names


def test_the_state_is_plain_data() -> None:
    methods = [name for name, value in vars(Assignment).items()
               if callable(value) and not name.startswith("__")]
    assert methods == []
