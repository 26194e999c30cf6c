"""docs/tutorial.ipynb runs from top to bottom (nbclient, a real kernel) and writes what it says."""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.slow
def test_tutorial_notebook_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    pytest.importorskip("ipykernel")
    pytest.importorskip("verovio")
    monkeypatch.setenv("SERIALKIT_TUTORIAL_OUT", str(tmp_path))
    nb = nbformat.read(ROOT / "docs" / "tutorial.ipynb", as_version=4)
    nbclient.NotebookClient(nb, timeout=240, kernel_name="python3",
                            resources={"metadata": {"path": str(ROOT)}}).execute()
    shown = nb.cells[[c.source for c in nb.cells].index("result")].outputs
    assert any("<svg" in o.get("data", {}).get("text/html", "") for o in shown)
    written = sorted(p.name for p in tmp_path.iterdir())
    assert any(n.endswith(".svg") for n in written) and "labelled.musicxml" in written, written
