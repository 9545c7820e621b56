"""Run one scenario: build the backend, play the workload, write the results folder."""

from __future__ import annotations

import platform
import time
from importlib import metadata
from pathlib import Path

import pandas as pd

from . import __version__
from .backends.base import Backend
from .driver import Records, play
from .progress import run_progress
from .results import write_run
from .scenario import Scenario

__all__ = ["make_backend", "run_scenario", "simulate"]


def make_backend(scenario: Scenario) -> Backend:
    """The backend the scenario asks for, over its topology (ns-3 is imported only here)."""
    topology = scenario.built_topology
    n_classes = scenario.scheduler.n_classes
    if scenario.backend == "fluid":
        from .backends.fluid import FluidBackend

        return FluidBackend(topology, n_classes=n_classes, seed=scenario.seed,
                            latency=scenario.fluid.latency)
    from .backends.packet import PacketBackend

    params = scenario.transport.model_dump()
    kind = params.pop("kind")
    return PacketBackend(topology, n_classes=n_classes, seed=scenario.seed, transport=kind, **params)


def simulate(scenario: Scenario) -> tuple[Records, dict, pd.DataFrame]:
    """Run ``scenario``; return its records, its manifest (``run.json``) and the ports table."""
    workload = scenario.built_workload
    backend = make_backend(scenario)
    started = time.perf_counter()
    with run_progress(workload.n_flows()) as progress:
        records = play(workload, backend, scenario.built_policy,
                       control_delay_s=scenario.scheduler.control_delay_s, progress=progress)
    wall_s = time.perf_counter() - started
    stats = records.stats
    manifest = {
        "scenario": scenario.resolved(),
        "backend": backend.describe(),
        "scheduler": {**scenario.built_policy.describe(),
                      "n_classes": scenario.scheduler.n_classes,
                      "control_delay_s": scenario.scheduler.control_delay_s},
        "topology": scenario.built_topology.describe(),
        "workload": {"bytes_scale": workload.bytes_scale, **workload.source},
        "seed": scenario.seed,
        "versions": _versions(),
        "wall_s": wall_s,
        "sim_end_s": stats.end_s,
        "events": stats.events,
        "decisions": records.decisions,
    }
    return records, manifest, backend.ports_table()


def run_scenario(scenario: Scenario, out_dir: Path | str) -> Path:
    """Run ``scenario`` and write its results folder (Parquet tables + run.json) atomically."""
    records, manifest, ports = simulate(scenario)
    tables = {"flows": records.flows, "coflows": records.coflows, "stages": records.stages,
              "jobs": records.jobs, "ports": ports}
    return write_run(out_dir, tables, manifest)


def _versions() -> dict[str, str]:
    versions = {"ns3_hpsched": __version__, "python": platform.python_version()}
    for dist in ("ns3", "numpy", "pandas"):
        try:
            versions[dist] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            versions[dist] = "not installed"
    return versions
