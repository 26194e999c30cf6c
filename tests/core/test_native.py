"""The compiled build of the chain search (``serialkit.core.native``) finds what the source does.

``make native`` compiles ``serialkit/core/analysis/chains.py`` with mypyc. These tests compare it
with the module's own source, run as written: chain by chain on drawn pieces and claims
(hypothesis), and analysis by analysis on whole pieces (a second interpreter with
``SERIALKIT_PURE=1``). Without a build they skip — in CI, where ``make test`` builds first, they fail.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import types
from fractions import Fraction
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from serialkit.core import native
from serialkit.core.analysis import chains
from serialkit.core.analysis.index import EventIndex
from serialkit.core.piece import Event
from serialkit.core.rows import ALL_FORMS, Row

ROOT = Path(__file__).resolve().parents[2]

if not chains.NATIVE:
    if os.environ.get("CI") and not os.environ.get("SERIALKIT_PURE"):
        pytest.fail(f"no compiled chain search in CI: {native.status()}", pytrace=False)
    pytest.skip(f"chain search not compiled: {native.status()}", allow_module_level=True)


def _pure() -> types.ModuleType:
    """The chain search module as written, run by the interpreter (not the compiled build)."""
    text = Path(chains.__file__).read_text(encoding="utf-8")
    module = types.ModuleType("serialkit_pure_chains")
    module.__file__ = chains.__file__
    sys.modules[module.__name__] = module  # dataclasses look their module up
    exec(compile(native.source_before_mark(text), chains.__file__, "exec"), module.__dict__)
    return module


PURE = _pure()
ROW = Row.parse("0 11 7 8 3 1 2 10 6 5 4 9")
FORMS = [ROW.form(f) for f in ALL_FORMS]


def test_the_compiled_build_is_the_one_running() -> None:
    assert native.status()["serialkit.core.analysis.chains"] == "compiled"
    assert chains.build_chain is not PURE.build_chain
    assert type(chains.SHORT) is chains.Chain


@st.composite
def _setting(draw: st.DrawFn) -> tuple[list[Event], list[tuple[int, int, int]], int, int, int, int, bool]:
    """Notes in up to four voices, some of them claimed by statements, and a chain's seed."""
    n = draw(st.integers(2, 60))
    events = [Event(id=f"e{i}", voice=f"v{draw(st.integers(0, 3))}",
                    onset=Fraction(draw(st.integers(0, n)), draw(st.sampled_from([1, 2, 4]))),
                    duration=Fraction(draw(st.integers(1, 8)), 2), midi=draw(st.integers(48, 84)))
              for i in range(n)]
    owned = draw(st.lists(st.tuples(st.integers(0, n - 1), st.integers(0, 5), st.integers(0, 11)), max_size=n))
    return (events, owned, draw(st.integers(0, 47)), draw(st.integers(0, n - 1)), draw(st.integers(0, 11)),
            draw(st.sampled_from([chains.VOICE_MODE, chains.TIME_MODE])), draw(st.booleans()))


def _claims(module: types.ModuleType, n: int, owned: list[tuple[int, int, int]]) -> object:
    claims = module.Claims(n)
    for e, owner, pos in owned:
        if claims.owner[e] == chains.FREE:
            claims.owner[e], claims.pos[e] = owner, pos
        elif claims.second[e] == chains.FREE:
            claims.second[e], claims.second_pos[e] = owner, pos
    return claims


def _as_tuple(chain: object) -> object:
    if chain is None:
        return None
    return (chain.form, chain.mode, chain.start, chain.start_pos, list(chain.evs), list(chain.poss),
            list(chain.kinds), [round(c, 12) for c in chain.costs], round(chain.score, 12), chain.distinct,
            chain.skips)


@given(_setting())
@settings(max_examples=300, deadline=None)
def test_a_chain_is_the_same_compiled_and_as_written(setting: tuple) -> None:
    """From every note, in both modes: the same chain, link by link, and the same notes read."""
    events, owned, form, _start, _pos, mode, abort = setting
    ix = EventIndex(events)
    for start in range(ix.n):
        pos = FORMS[form].index(ix.pc[start])  # a chain starts where its form has the note's pitch class
        found = []
        for module in (PURE, chains):
            reached: list[int] = []
            chain = module.build_chain(ix, form, FORMS[form], start, pos, mode, _claims(module, ix.n, owned),
                                       abort=abort, reached=reached)
            found.append((_as_tuple(chain), reached))
        assert found[0] == found[1]


_SUMMARY = """
import json, sys
sys.path.insert(0, {root!r})
from serialkit.core.analysis import analyze, chains
from tests import synth
out = {{"native": chains.NATIVE}}
for family, seed, size in {pieces!r}:
    s = synth.whole(family, seed, size)
    a = analyze(s.piece, s.row)
    out[f"{{family}} {{seed}} {{size}}"] = [sorted((e, str(t)) for e, t in a.tags.items()), sorted(a.unexplained),
                                          [(str(st.form), list(st.event_ids)) for st in a.statements]]
print(json.dumps(out))
"""


@pytest.mark.slow
def test_whole_analyses_are_the_same_compiled_and_as_written() -> None:
    pieces = [("concurrent", 1, 600), ("repeats", 2, 500), ("piano_hands", 3, 500), ("chords", 4, 400),
              ("pivot_voice_change", 5, 500), ("elided", 6, 400)]
    code = _SUMMARY.format(root=str(ROOT), pieces=pieces)
    runs = []
    for pure in (True, False):
        env = {k: v for k, v in os.environ.items() if k != "SERIALKIT_PURE"}
        if pure:
            env["SERIALKIT_PURE"] = "1"
        done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=ROOT,
                              timeout=600)
        assert done.returncode == 0, done.stderr[-2000:]
        runs.append(json.loads(done.stdout))
    assert runs[0].pop("native") is False and runs[1].pop("native") is True
    assert runs[0] == runs[1]
