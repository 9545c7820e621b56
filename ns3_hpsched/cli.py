"""What the ``invoke`` tasks do, as plain functions (``tasks.py`` only parses arguments)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pandas as pd

from .errors import ConfigError
from .results import check_target, read_run
from .runner import run_id, run_scenario
from .scenario import Scenario, apply_overrides, load_scenario, scenario_from_dict

__all__ = ["simulate", "crosscheck", "parse_overrides", "parse_grid", "hpcc_scenario", "summary",
           "default_folder_name", "header"]

RESULTS_DIR = Path("results")


def parse_overrides(pairs: list[str]) -> dict[str, Any]:
    """``["scheduler.name=varys", "topology.k=8"]`` -> ``{"scheduler.name": "varys", ...}``."""
    out = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise ConfigError("--set", f"{pair!r} is not KEY=VALUE", "e.g. --set topology.k=8")
        out[key.strip()] = value.strip()
    return out


def hpcc_scenario(topology: Path, flows: Path, overrides: dict[str, Any]) -> Scenario:
    """A scenario running HPCC's ``topology.txt`` + ``flow.txt`` with their pinned classes."""
    raw = {"name": f"hpcc-{Path(flows).stem}", "backend": "packet",
           "topology": {"kind": "hpcc", "path": str(Path(topology).resolve())},
           "workload": {"kind": "hpcc_flows", "path": str(Path(flows).resolve())},
           "scheduler": {"name": "pinned"}}
    return scenario_from_dict(apply_overrides(raw, overrides))


def simulate(scenario: str = "default", overrides: dict[str, Any] | None = None,
             out: str | None = None, topology: str | None = None, flows: str | None = None) -> Path:
    """Run one scenario (or an HPCC topology + flow list), write its folder, print a summary.

    The folder is ``out``, or by default ``results/<readable name>-<run id>``, unique per
    resolved configuration and input files. It is checked before the run starts: an
    existing target must be empty or an earlier copy of the same run (which is replaced),
    and nothing else of the user's is ever moved or deleted.
    """
    overrides = overrides or {}
    if (topology is None) != (flows is None):
        raise ConfigError("--topology/--flows", "only one was given", "give both HPCC files, or neither")
    sc = hpcc_scenario(Path(topology), Path(flows), overrides) if topology else load_scenario(scenario, overrides)
    identity = run_id(sc)
    out_dir = Path(out) if out else RESULTS_DIR / default_folder_name(sc, identity)
    check_target(out_dir, identity)
    print(header(sc, overrides, out_dir), flush=True)
    path = run_scenario(sc, out_dir)
    if topology:
        from .interchange.hpcc import write_fct

        tables, _ = read_run(path)
        write_fct(tables["flows"], path / "fct.txt")
    print(summary(path))
    return path


def default_folder_name(sc: Scenario, identity: str) -> str:
    """``<scenario>-<scheduler>-<backend>-<transport>-seed<seed>-<run id>``, safe as a file name.

    The readable part is for people; the run id (:func:`~ns3_hpsched.runner.run_id`, 8 hex
    digits of it) keeps two runs that differ in any resolved field apart.
    """
    readable = f"{sc.name}-{sc.scheduler.name}-{sc.backend}-{sc.transport.kind}-seed{sc.seed}"
    return f"{re.sub(r'[^A-Za-z0-9._+-]+', '_', readable)}-{identity[:8]}"


def header(sc: Scenario, overrides: dict[str, Any], out_dir: Path) -> str:
    """What is about to run: backend, transport, K, scheduler, seed, every override, where to."""
    topo = sc.built_topology
    lines = [f"running {sc.name!r} on the {sc.backend} backend: transport {sc.transport.kind}, "
             f"K={sc.scheduler.n_classes} classes, scheduler {sc.scheduler.name!r}, "
             f"{topo.describe()['kind']} with {topo.n_hosts} hosts, seed {sc.seed}"]
    if overrides:
        lines.append("  overrides: " + ", ".join(f"{key}={value}" for key, value in overrides.items()))
    lines.append(f"  results: {out_dir}")
    return "\n".join(lines)


def summary(run_dir: Path, rows: int = 20) -> str:
    """A short text summary of a results folder: per-stage SCT, or per-flow FCT for flow lists."""
    tables, manifest = read_run(run_dir)
    stages, flows, coflows = tables["stages"], tables["flows"], tables["coflows"]
    if manifest["workload"].get("kind") not in ("flows", "size_cdf"):
        view = stages[["cojob", "stage", "jobs", "iterations", "sct_s", "lower_bound_s"]].copy()
        view["sct/bound"] = view["sct_s"] / view["lower_bound_s"]
        lines = ["stages:", *_head(view, rows),
                 f"average SCT {stages['sct_s'].mean():.4g} s over {len(stages)} stages; "
                 f"average CCT {coflows['cct_s'].mean():.4g} s over {len(coflows)} coflows"]
    else:
        lines = ["flows:", *_head(flows[["flow_id", "src", "dst", "bytes", "start_s", "fct_s"]], rows)]
    lines.append(f"{manifest['events']:,} events, {manifest['wall_s']:.1f} s wall; results in {run_dir}")
    return "\n".join(lines)


def _head(frame, rows: int) -> list[str]:
    """The first ``rows`` rows of ``frame`` as text lines, and how many more there are."""
    lines = [frame.head(rows).to_string(index=False, float_format=lambda v: f"{v:.4g}")]
    if len(frame) > rows:
        lines.append(f"... {len(frame) - rows} more rows")
    return lines


def crosscheck(scenario: str, schedulers: list[str] | None = None, overrides: dict[str, Any] | None = None,
               store: str | None = None, external: str | None = None, workers: int = 1) -> Path:
    """Run ``scenario`` on both backends per scheduler (or check an external CSV); report errors.

    Runs go through the sweep store (``store``, default ``results/crosscheck-<scenario>``),
    each in its own process, so a crosscheck that is interrupted resumes where it stopped.
    Writes ``crosscheck.parquet`` (every matched coflow and stage with its relative error),
    ``crosscheck_summary.csv`` and ``crosscheck.png`` into the store folder.
    """
    from . import crosscheck as cc
    from .sched import POLICIES
    from .store import load_store
    from .sweep import run_sweep

    overrides = dict(overrides or {})
    base = load_scenario(scenario, overrides)
    store_dir = Path(store) if store else RESULTS_DIR / f"crosscheck-{base.name}"
    flow_workload = base.workload.get("kind") in cc.FLOW_WORKLOADS
    if external or (flow_workload and not schedulers):
        schedulers = [base.scheduler.name]  # a flow list's classes are its own (pinned)
    schedulers = schedulers or list(POLICIES)
    seed = int(overrides.pop("seed", base.seed))
    grid = {key: [value] for key, value in overrides.items()}
    grid["backend"] = ["packet"] if external else ["packet", "fluid"]
    index = run_sweep(scenario, grid, schedulers, [seed], store_dir, workers=workers)
    failed = index[index["status"] != "ok"]
    if len(failed):
        raise RuntimeError(f"{len(failed)} runs failed, e.g. {failed.iloc[0]['error']}")
    tables = load_store(store_dir)
    if not external and flow_workload:
        print(cc.flow_crosscheck(tables, schedulers, store_dir), f"\nwritten to {store_dir}", sep="")
        return store_dir
    frames = []
    for name in schedulers:
        runs = {backend: {t: tables[t][(tables[t]["scheduler"] == name) & (tables[t]["backend"] == backend)]
                          for t in ("coflows", "stages")} for backend in grid["backend"]}
        other, value = cc.read_external(external) if external else (runs["fluid"], None)
        pairs = cc.compare(runs["packet"], other, value=value)
        pairs.insert(0, "scheduler", name)
        frames.append(pairs)
    pairs = pd.concat(frames, ignore_index=True)
    summary_table = cc.summarize(pairs, by=["scheduler"], other="external" if external else "fluid")
    pairs.to_parquet(store_dir / "crosscheck.parquet", index=False)
    summary_table.to_csv(store_dir / "crosscheck_summary.csv", index=False)
    cc.scatter(pairs, store_dir / "crosscheck.png", other_label="external" if external else "fluid")
    print(cc.summary_markdown(summary_table))
    print(f"written to {store_dir}")
    return store_dir


def parse_grid(axes: list[str]) -> dict[str, list[Any]]:
    """``["workload.arrival_rate=0.5,1,2"]`` -> ``{"workload.arrival_rate": [0.5, 1, 2]}``."""
    from .scenario import parse_value

    grid = {}
    for axis in axes:
        key, sep, values = axis.partition("=")
        if not sep or not key or not values:
            raise ConfigError("--grid", f"{axis!r} is not KEY=V1,V2,...", "e.g. --grid workload.arrival_rate=0.5,1,2")
        grid[key.strip()] = [parse_value(v.strip()) for v in values.split(",")]
    return grid
