"""Benchmark: what the plugin system costs at start-up, against anchors measured in this run.

1. ``serialkit --help`` (imports every command module and plugin module, builds the command
   registry) against ``python -c "import click"`` (the floor any click CLI pays) and against
   ``import music21`` (what an eager plugin that imported its library at top level would add).
   Target: start-up stays within 12x of bare click — plugins must stay lazy.
2. Building the plugin manager (built-ins + entry points, with dedup, SERIALKIT_LOAD_PLUGINS and
   hook validation) against pluggy's own ``load_setuptools_entrypoints``.
3. Building all six registries in-process against pluggy's plain hook call (one
   ``pm.hook.register_*`` per kind, no validation, no attribution): the ratio is the price of
   per-plugin attribution, metadata validation and lazy references.
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import time
from typing import Any

RUNS = 5
TARGET_STARTUP_RATIO = 12.0


def _wall(code: str) -> float:
    """Median wall seconds of a fresh interpreter running ``code``."""
    times = []
    for _ in range(RUNS):
        started = time.perf_counter()
        subprocess.run([sys.executable, "-c", code], check=True, capture_output=True)
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def _registries() -> float:
    import serialkit.plugins as plugins

    plugins.reset()
    for kind in plugins.KINDS:  # first build imports the hook modules' lazy parts
        plugins.registry(kind)
    times = []
    for _ in range(RUNS * 4):
        plugins._REGISTRIES.clear()  # keep the manager, rebuild the registries
        started = time.perf_counter()
        for kind in plugins.KINDS:
            plugins.registry(kind)
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def _manager() -> tuple[float, float]:
    """Building serialkit's manager vs pluggy's own ``load_setuptools_entrypoints``."""
    import pluggy

    import serialkit.plugins as plugins
    from serialkit.plugins import hookspecs

    ours, theirs = [], []
    for _ in range(RUNS * 4):
        plugins.reset()
        started = time.perf_counter()
        plugins.get_plugin_manager()
        ours.append(time.perf_counter() - started)
        started = time.perf_counter()
        pm = pluggy.PluginManager("serialkit")
        pm.add_hookspecs(hookspecs)
        for name in plugins.BUILTIN_MODULES:
            pm.register(__import__(name, fromlist=["_"]), name=name)
        pm.load_setuptools_entrypoints("serialkit")
        theirs.append(time.perf_counter() - started)
    return statistics.median(ours), statistics.median(theirs)


def _collector(found: list[tuple[str, Any]]) -> Any:
    def register(name: str, obj: Any, **meta: Any) -> None:
        found.append((name, obj))

    return register


def _plain_pluggy() -> float:
    from serialkit.plugins import KIND_SPECS, KINDS, get_plugin_manager, reset

    reset()
    pm = get_plugin_manager()
    times = []
    for _ in range(RUNS * 4):
        started = time.perf_counter()
        for kind in KINDS:
            found: list[tuple[str, Any]] = []
            hook = getattr(pm.hook, KIND_SPECS[kind].hook)
            kwargs: dict[str, Any] = {"register": _collector(found)}
            if kind == "commands":
                import click

                kwargs["cli"] = click.Group("bench")
            hook(**kwargs)
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def main() -> int:
    """Print the figures; exit 1 when start-up misses its target."""
    python = _wall("pass")
    click_floor = _wall("import click")
    music21 = _wall("import music21")
    help_time = _wall(
        "import sys; sys.argv = ['serialkit', '--help']\n"
        "from serialkit.cli import cli\n"
        "try:\n    cli(prog_name='serialkit')\nexcept SystemExit:\n    pass\n"
    )
    ratio = help_time / click_floor
    print(f"interpreter start            {python * 1000:8.1f} ms")
    print(f"anchor: import click         {click_floor * 1000:8.1f} ms")
    print(f"anchor: import music21       {music21 * 1000:8.1f} ms")
    print(f"serialkit --help             {help_time * 1000:8.1f} ms  "
          f"= {ratio:.2f}x click (target <= {TARGET_STARTUP_RATIO:.0f}x), "
          f"{help_time / music21:.2f}x import music21")
    built, loaded = _manager()
    print(f"plugin manager (serialkit)   {built * 1000:8.3f} ms")
    print(f"anchor: pluggy entry points  {loaded * 1000:8.3f} ms  -> ratio {built / loaded:.2f}x")
    ours, plain = _registries(), _plain_pluggy()
    print(f"all registries (serialkit)   {ours * 1000:8.3f} ms")
    print(f"anchor: plain pluggy calls   {plain * 1000:8.3f} ms  -> ratio {ours / plain:.2f}x")
    return 0 if ratio <= TARGET_STARTUP_RATIO else 1


if __name__ == "__main__":
    raise SystemExit(main())
