"""The analysis notebooks run headless on a small store and write the figures."""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest
from jupyter_client.kernelspec import KernelSpecManager
from nbclient import NotebookClient

from ns3_hpsched.sweep import run_sweep

from .test_sweep import SCENARIO

NOTEBOOKS = sorted((Path(__file__).parents[1] / "analysis").glob("*.ipynb"))


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    """A small store of real fluid runs: 2 loads x 2 schedulers x 2 seeds."""
    root = tmp_path_factory.mktemp("notebooks")
    (root / "tiny.toml").write_text(SCENARIO)
    run_sweep(root / "tiny.toml", {"workload.arrival_rate": [10.0, 40.0]}, ["fair", "beamer"],
              [1, 2], root / "store", workers=2, progress=False)
    return root / "store"


def test_python3_kernel_is_installed():
    """The notebooks' kernel (python3, from ipykernel) is available."""
    assert "python3" in KernelSpecManager().find_kernel_specs()


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_notebook_runs_and_writes_figures(path, store, tmp_path, monkeypatch):
    """Every cell runs without error and the notebook writes the store's figures."""
    monkeypatch.setenv("HPSCHED_STORE", str(store))
    monkeypatch.setenv("HPSCHED_FIGURES", str(tmp_path / "figures"))
    notebook = nbformat.read(path, as_version=4)
    NotebookClient(notebook, kernel_name="python3", timeout=300,
                   resources={"metadata": {"path": str(Path(__file__).parents[1])}}).execute()
    images = [o for c in notebook.cells for o in c.get("outputs", []) if "image/png" in o.get("data", {})]
    assert len(images) >= 4
    assert {p.name for p in (tmp_path / "figures").glob("*.png")} >= {
        "sct_vs_load.png", "sct_cdf.png", "sct_lower_bound.png", "cct_cdf.png"}
