"""Every hook specification, exercised by a plugin registered at run time and used for real."""

from __future__ import annotations

from collections.abc import Iterator
from fractions import Fraction
from pathlib import Path
from typing import Any

import click
import pytest
from click.testing import CliRunner

from serialkit.core.errors import PluginError
from serialkit.core.piece import Event, Piece, Voice
from serialkit.plugins import (
    KINDS,
    hookimpl,
    hookspecs,
    load_commands,
    ordered,
    plugin_infos,
    register_plugin,
    registry,
    reset,
    unregister_plugin,
)
from serialkit.plugins.hookspecs import Register


@pytest.fixture(autouse=True)
def _fresh() -> Iterator[None]:
    reset()
    yield
    reset()


def _piece(midis: list[int]) -> Piece:
    events = tuple(
        Event(id=f"n{i}", voice="v", onset=Fraction(i), duration=Fraction(1), midi=m)
        for i, m in enumerate(midis)
    )
    return Piece(events=events, voices=(Voice("v"),))


def test_every_hookspec_has_a_registry_kind() -> None:
    specs = {name for name in dir(hookspecs) if name.startswith("register_")}
    assert specs == {f"register_{kind}" for kind in KINDS}
    for name in specs:
        assert getattr(hookspecs, name).__doc__, f"{name} is undocumented"


# register_proposers ---------------------------------------------------------------------


class Echo:
    """A proposer stand-in that remembers its options."""

    def __init__(self, seed: int = 0, **options: Any) -> None:
        self.seed, self.options = seed, options


class ProposerPlugin:
    @hookimpl
    def register_proposers(self, register: Register) -> None:
        register("echo", Echo, description="echoes")
        register("lazy-echo", "tests.plugins.test_hooks:Echo")


def test_register_proposers_eager_and_lazy() -> None:
    register_plugin(ProposerPlugin(), "proposer-plugin")
    reg = registry("proposers")
    assert reg.get("echo").obj is Echo
    assert reg.get("echo").plugin == "proposer-plugin"
    assert reg.get("echo").description == "echoes"
    lazy = reg.get("lazy-echo")
    assert lazy.load() is Echo
    made = lazy.obj(seed=3, temperature=1)  # calling a lazy reference calls the target
    assert isinstance(made, Echo) and made.seed == 3 and made.options == {"temperature": 1}
    assert "seed" in __import__("inspect").signature(lazy.obj).parameters


def test_proposer_reaches_the_harness_factory() -> None:
    import serialkit.harness.session as session
    register_plugin(ProposerPlugin(), "proposer-plugin")
    made = session.make_proposer("lazy-echo", {}, seed=7)
    assert isinstance(made, Echo) and made.seed == 7


def test_duplicate_names_name_both_plugins() -> None:
    register_plugin(ProposerPlugin(), "first")
    register_plugin(ProposerPlugin(), "second")
    with pytest.raises(PluginError, match="'echo' registered twice.*first.*second"):
        registry("proposers")


def test_unknown_name_lists_known() -> None:
    register_plugin(ProposerPlugin(), "proposer-plugin")
    with pytest.raises(PluginError, match=r"unknown proposer 'nope' \(known: .*echo"):
        registry("proposers").get("nope")


# register_readers / register_writers ----------------------------------------------------


def _read_tone(path: Path) -> Piece:
    """Reads a 'tone' file: MIDI numbers, one per line after the magic line."""
    lines = Path(path).read_text().split()
    return _piece([int(x) for x in lines[1:]])


def _write_tone(piece: Piece, out: Path) -> None:
    from serialkit.io.files.atomic import atomic_write

    atomic_write(out, "TONE\n" + "\n".join(str(e.midi) for e in piece.events) + "\n")


class FormatPlugin:
    @hookimpl
    def register_readers(self, register: Register) -> None:
        register("tone", _read_tone, extensions=(".TONE",), sniff=lambda head: head.startswith(b"TONE"))

    @hookimpl
    def register_writers(self, register: Register) -> None:
        register("tone", _write_tone, extensions=".tone")


def test_reader_and_writer_plugins_round_trip(tmp_path: Path) -> None:
    import serialkit.io as io
    register_plugin(FormatPlugin(), "tone-format")
    assert registry("readers").get("tone").meta["extensions"] == (".tone",)  # normalised
    assert [e.name for e in registry("writers").for_extension(".TONE")] == ["tone"]
    piece = _piece([60, 62, 64])
    out = tmp_path / "x.tone"
    io.write_score(piece, out)
    assert out.read_text().startswith("TONE")
    back = io.read_score(out)
    assert [e.midi for e in back.events] == [60, 62, 64]


@pytest.mark.parametrize("bad", [None, (), ("tone",), "tone"])
def test_readers_need_dotted_extensions(bad: Any) -> None:
    class Bad:
        @hookimpl
        def register_readers(self, register: Register) -> None:
            register("bad", _read_tone, extensions=bad)

    register_plugin(Bad(), "bad-reader")
    with pytest.raises(PluginError, match="reader 'bad' .*bad-reader.* needs extensions"):
        registry("readers")


def test_builtin_readers_are_registered_through_the_hook() -> None:
    entry = registry("readers").for_extension(".musicxml")[0]
    assert entry.plugin == "serialkit.plugins.builtins"


# register_predicates --------------------------------------------------------------------


def _high_notes(piece: Piece, rules: Any) -> list[Any]:
    from serialkit.core.predicates import Violation

    return [Violation("HIGH", (e.id,), f"{e.id} is above C6", "") for e in piece.events if e.midi > 84]


class PredicatePlugin:
    @hookimpl
    def register_predicates(self, register: Register) -> None:
        register("HIGH", _high_notes, needs_tags=False)


def test_predicate_plugin_runs_in_check_piece() -> None:
    import importlib

    checking = importlib.import_module("serialkit.check")
    register_plugin(PredicatePlugin(), "high-notes")
    assert registry("predicates").get("HIGH").meta["strict_only"] is False
    report = checking.check_piece(_piece([60, 90, 62]))
    found = [v for v in report.verdict.violations if v.code == "HIGH"]
    assert [v.event_ids for v in found] == [("n1",)]
    clean = checking.check_piece(_piece([60, 61, 62]))
    assert not [v for v in clean.verdict.violations if v.code == "HIGH"]


@pytest.mark.parametrize("code,meta", [("high", {}), ("HIGH", {"strict_only": "yes"})])
def test_predicate_codes_and_flags_are_validated(code: str, meta: dict[str, Any]) -> None:
    class Bad:
        @hookimpl
        def register_predicates(self, register: Register) -> None:
            register(code, _high_notes, **meta)

    register_plugin(Bad(), "bad-predicate")
    with pytest.raises(PluginError, match="predicate"):
        registry("predicates")


def test_objects_must_be_callable() -> None:
    class Bad:
        @hookimpl
        def register_predicates(self, register: Register) -> None:
            register("LOUD", 42)

    register_plugin(Bad(), "bad-object")
    with pytest.raises(PluginError, match="'LOUD' .*not callable"):
        registry("predicates")


# register_repair_rungs ------------------------------------------------------------------


def _rung(*args: Any) -> None:
    return None


def _rung_plugin(ranks: dict[str, Any]) -> object:
    class Rungs:
        @hookimpl
        def register_repair_rungs(self, register: Register) -> None:
            for name, rank in ranks.items():
                if rank is None:
                    register(name, _rung)
                else:
                    register(name, _rung, rank=rank)

    return Rungs()


def test_ladder_order_comes_from_rank_not_hook_order() -> None:
    # registered late, ranked early: the ladder must put it first
    register_plugin(_rung_plugin({"zz_last_registered": -5, "middle": 35}), "late-rungs")
    names = [e.name for e in ordered("repair_rungs")]
    ranks = [e.meta["rank"] for e in ordered("repair_rungs")]
    assert names[0] == "zz_last_registered"
    assert ranks == sorted(ranks)
    assert "middle" in names


def test_ladder_order_is_independent_of_registration_order() -> None:
    register_plugin(_rung_plugin({"a": 300, "b": 100}), "one")
    register_plugin(_rung_plugin({"c": 200}), "two")
    first = [e.name for e in ordered("repair_rungs") if e.name in "abc"]
    reset()
    register_plugin(_rung_plugin({"c": 200}), "two")
    register_plugin(_rung_plugin({"a": 300, "b": 100}), "one")
    second = [e.name for e in ordered("repair_rungs") if e.name in "abc"]
    assert first == second == ["b", "c", "a"]


def test_missing_rank_is_an_error() -> None:
    register_plugin(_rung_plugin({"unranked": None}), "sloppy")
    with pytest.raises(PluginError, match="repair rung 'unranked' .*sloppy.* has no rank"):
        ordered("repair_rungs")


def test_duplicate_rank_is_an_error_naming_both() -> None:
    register_plugin(_rung_plugin({"x1": 1001}), "p1")
    register_plugin(_rung_plugin({"x2": 1001}), "p2")
    with pytest.raises(PluginError, match="'x1' .*p1.*'x2' .*p2.* both have rank 1001"):
        ordered("repair_rungs")


@pytest.mark.parametrize("rank", ["10", 1.5, True])
def test_rank_must_be_an_integer(rank: Any) -> None:
    register_plugin(_rung_plugin({"odd": rank}), "odd-rank")
    with pytest.raises(PluginError, match="rank must be an integer"):
        ordered("repair_rungs")


def test_builtin_ladder_is_ranked() -> None:
    rungs = ordered("repair_rungs")
    assert len(rungs) >= 3
    assert all(e.plugin == "serialkit.plugins.builtins" for e in rungs)
    ranks = [e.meta["rank"] for e in rungs]
    assert ranks == sorted(ranks) and len(set(ranks)) == len(ranks)
    assert rungs[0].meta["rank"] == min(e.meta["rank"] for e in registry("repair_rungs"))


# register_commands ----------------------------------------------------------------------


@click.command("hello")
@click.argument("who")
def hello(who: str) -> None:
    """Say hello."""
    click.echo(f"hello {who}")


class CliStylePlugin:
    @hookimpl
    def register_commands(self, cli: Any) -> None:
        @cli.command(name="shout")
        @click.argument("text")
        def shout(text: str) -> None:
            """Shout."""
            click.echo(text.upper())

        cli.add_command(hello)


class RegisterStylePlugin:
    @hookimpl
    def register_commands(self, register: Register) -> None:
        register("greet", hello)


def test_commands_from_both_styles_run() -> None:
    register_plugin(CliStylePlugin(), "cli-style")
    register_plugin(RegisterStylePlugin(), "register-style")
    group = click.Group("test")
    added = load_commands(group)
    assert {"shout", "hello", "greet"} <= set(added)
    runner = CliRunner()
    assert runner.invoke(group, ["shout", "hi"]).output == "HI\n"
    assert runner.invoke(group, ["greet", "you"]).output == "hello you\n"
    assert registry("commands").get("shout").plugin == "cli-style"


def test_command_name_clash_is_an_error() -> None:
    register_plugin(RegisterStylePlugin(), "register-style")
    group = click.Group("test")
    group.add_command(hello, "greet")
    with pytest.raises(PluginError, match="register-style registers command 'greet'"):
        load_commands(group)


# the manager ------------------------------------------------------------------------------


def test_unknown_hook_is_rejected() -> None:
    class Typo:
        @hookimpl
        def register_proposer(self, register: Register) -> None:  # missing "s"
            register("x", Echo)

    with pytest.raises(PluginError, match="typo.*unknown hook"):
        register_plugin(Typo(), "typo")
    assert "typo" not in {p.name for p in plugin_infos()}


def test_hook_failure_names_the_plugin() -> None:
    class Broken:
        @hookimpl
        def register_proposers(self, register: Register) -> None:
            raise RuntimeError("boom")

    register_plugin(Broken(), "broken")
    with pytest.raises(PluginError, match="plugin broken: register_proposers failed: RuntimeError: boom"):
        registry("proposers")


def test_unregister_forgets_entries() -> None:
    register_plugin(ProposerPlugin(), "proposer-plugin")
    assert "echo" in registry("proposers")
    unregister_plugin("proposer-plugin")
    assert "echo" not in registry("proposers")
    with pytest.raises(PluginError, match="no plugin named"):
        unregister_plugin("proposer-plugin")


def test_plugin_infos_list_builtins_first() -> None:
    infos = plugin_infos()
    builtin = [i.builtin for i in infos]
    assert builtin == sorted(builtin, reverse=True)
    for info in infos:
        if info.builtin:
            assert info.dist == "serialkit" and info.module == info.name


def test_plugin_rungs_run_in_rank_order_inside_the_harness() -> None:
    import serialkit.harness.runner as runner
    log: list[tuple[str, str]] = []

    def spy(label: str) -> Any:
        def rung(cand: Any, problems: Any, ctx: Any) -> None:
            log.append((label, cand.id))
            return None  # fixes nothing: the ladder goes on

        return rung

    class Spies:
        @hookimpl
        def register_repair_rungs(self, register: Register) -> None:
            register("spy_late", spy("late"), rank=11)  # registered first, ranked later
            register("spy_first", spy("first"), rank=1)

    register_plugin(Spies(), "spies")
    runner.run("duo-berg", proposer="stochastic", seed=0)
    assert log, "the harness never consulted the plugin rungs"
    first_seen: dict[str, str] = {}
    for label, cand in log:
        first_seen.setdefault(cand, label)
    assert set(first_seen.values()) == {"first"}
