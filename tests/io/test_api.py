"""The public surface of serialkit.io: every exported name resolves; importing it stays light."""

from __future__ import annotations

import dataclasses
import subprocess
import sys

import pytest

import serialkit.io as sio
from serialkit.io import Annotation


def test_every_exported_name_resolves() -> None:
    for name in sio.__all__:
        assert getattr(sio, name) is not None, name
    with pytest.raises(AttributeError):
        sio.no_such_thing  # noqa: B018


def test_importing_io_does_not_load_music21_or_verovio() -> None:
    code = "import sys, serialkit.io; print('music21' in sys.modules, 'verovio' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "False"]


def test_annotation_is_a_frozen_value() -> None:
    a = Annotation("P0:3", "#FF0000")
    assert a == Annotation("P0:3", "#FF0000") and hash(a) == hash(Annotation("P0:3", "#FF0000"))
    with pytest.raises(dataclasses.FrozenInstanceError):
        a.label = "x"  # type: ignore[misc]
    assert not hasattr(a, "__dict__")
