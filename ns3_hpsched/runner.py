"""Run one scenario: build the backend, play the workload, write the results folder."""

from __future__ import annotations

import hashlib
import platform
import time
from importlib import metadata
from pathlib import Path

import pandas as pd

from . import __version__
from .backends.base import Backend
from .driver import Records, play
from .monitor import plan_monitors
from .progress import run_progress
from .results import RUN_ID_KEY, write_run
from .scenario import Scenario
from .store import run_hash
from .transports import BACKEND_OPTIONS

__all__ = ["make_backend", "run_id", "run_scenario", "simulate"]


def run_id(scenario: Scenario) -> str:
    """The run's identity: the hash of its resolved config and of the input files it reads.

    Two runs share it exactly when they would compute the same tables, so it names the
    default results folder and tells an earlier copy of the same run from anything else.
    A scenario that reads no file has the same id as the sweep store's key for it.
    """
    resolved = scenario.resolved()
    files = {key: hashlib.sha256(path.read_bytes()).hexdigest() for key, path in _input_files(scenario).items()}
    return run_hash({**resolved, "input_files": files} if files else resolved)


def _input_files(scenario: Scenario) -> dict[str, Path]:
    """The files the scenario reads (``topology.path``, ``workload.path``, ``*_path``, a
    ``workload.cdf`` given as a file), by field."""
    files = {}
    for table, spec in (("topology", scenario.topology), ("workload", scenario.workload)):
        for key, value in spec.items():
            if (key in ("path", "cdf") or key.endswith("_path")) and isinstance(value, str):
                path = Path(scenario.base_dir, value)  # an absolute value stays absolute
                if path.is_file():
                    files[f"{table}.{key}"] = path
    return files


def make_backend(scenario: Scenario) -> Backend:
    """The backend the scenario asks for, over its topology and with its transport (ns-3
    is imported only here)."""
    topology, transport = scenario.built_topology, scenario.built_transport
    n_classes = scenario.scheduler.n_classes
    if scenario.backend == "fluid":
        from .backends.fluid import FluidBackend

        return FluidBackend(topology, n_classes=n_classes, seed=scenario.seed,
                            latency=scenario.fluid.latency, transport=transport)
    from .backends.packet import PacketBackend

    own = {key: value for key, value in scenario.transport.model_dump().items() if key in BACKEND_OPTIONS}
    return PacketBackend(topology, n_classes=n_classes, seed=scenario.seed, transport=transport, **own)


def simulate(scenario: Scenario) -> tuple[Records, dict, dict[str, pd.DataFrame]]:
    """Run ``scenario``; return its records, its manifest (``run.json``) and the backend's
    tables (``ports``, plus ``queues``/``pfc``/``links`` when ``[monitor]`` asks)."""
    workload = scenario.built_workload
    plan = plan_monitors(scenario)
    backend = make_backend(scenario)
    monitors = plan.attach(backend) if plan else None
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
        RUN_ID_KEY: run_id(scenario),
        "versions": _versions(),
        "wall_s": wall_s,
        "sim_end_s": stats.end_s,
        "events": stats.events,
        "decisions": records.decisions,
    }
    tables = {"ports": backend.ports_table(), **(monitors.tables(stats.end_s) if monitors else {})}
    return records, manifest, tables


def run_scenario(scenario: Scenario, out_dir: Path | str) -> Path:
    """Run ``scenario`` and write its results folder (Parquet tables + run.json) atomically."""
    records, manifest, backend_tables = simulate(scenario)
    tables = {"flows": records.flows, "coflows": records.coflows, "stages": records.stages,
              "jobs": records.jobs, **backend_tables}
    return write_run(out_dir, tables, manifest)


def _versions() -> dict[str, str]:
    versions = {"ns3_hpsched": __version__, "python": platform.python_version()}
    for dist in ("ns3", "numpy", "pandas"):
        try:
            versions[dist] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            versions[dist] = "not installed"
    return versions
