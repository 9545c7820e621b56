"""What the ``invoke`` tasks do, as plain functions (``tasks.py`` only parses arguments)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd

from .errors import ConfigError
from .results import read_run
from .runner import run_scenario
from .scenario import Scenario, apply_overrides, load_scenario, scenario_from_dict

__all__ = ["simulate", "crosscheck", "parse_overrides", "hpcc_scenario", "summary"]

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
    """Run one scenario (or an HPCC topology + flow list), write its folder, print a summary."""
    overrides = overrides or {}
    if (topology is None) != (flows is None):
        raise ConfigError("--topology/--flows", "only one was given", "give both HPCC files, or neither")
    sc = hpcc_scenario(Path(topology), Path(flows), overrides) if topology else load_scenario(scenario, overrides)
    out_dir = Path(out) if out else RESULTS_DIR / f"{sc.name}-{sc.scheduler.name}-{sc.backend}-seed{sc.seed}"
    print(f"running {sc.name!r}: {sc.backend} backend, scheduler {sc.scheduler.name!r}, "
          f"{sc.built_topology.describe()['kind']} with {sc.built_topology.n_hosts} hosts, seed {sc.seed}",
          flush=True)
    path = run_scenario(sc, out_dir)
    if topology:
        from .interchange.hpcc import write_fct

        tables, _ = read_run(path)
        write_fct(tables["flows"], path / "fct.txt")
    print(summary(path))
    return path


def summary(run_dir: Path) -> str:
    """A short text summary of a results folder: per-stage SCT, or per-flow FCT for flow lists."""
    tables, manifest = read_run(run_dir)
    stages, flows, coflows = tables["stages"], tables["flows"], tables["coflows"]
    lines = []
    searchy = len(stages) and (stages["iterations"] > 1).any() or (stages.groupby("cojob").size() > 1).any()
    if searchy:
        view = stages[["cojob", "stage", "jobs", "iterations", "sct_s", "lower_bound_s"]].copy()
        view["sct/bound"] = view["sct_s"] / view["lower_bound_s"]
        lines += ["stages:", view.to_string(index=False, float_format=lambda v: f"{v:.4g}"),
                  f"average SCT {stages['sct_s'].mean():.4g} s over {len(stages)} stages; "
                  f"average CCT {coflows['cct_s'].mean():.4g} s over {len(coflows)} coflows"]
    else:
        view = flows[["flow_id", "src", "dst", "bytes", "start_s", "fct_s"]]
        lines += ["flows:", view.head(20).to_string(index=False, float_format=lambda v: f"{v:.4g}")]
        if len(flows) > 20:
            lines.append(f"... {len(flows) - 20} more")
    lines.append(f"{manifest['events']:,} events, {manifest['wall_s']:.1f} s wall; results in {run_dir}")
    return "\n".join(lines)


def crosscheck(scenario: str, schedulers: list[str] | None = None, overrides: dict[str, Any] | None = None,
               out: str | None = None, external: str | None = None) -> Path:
    """Run ``scenario`` on both backends per scheduler (or check an external CSV); report errors.

    Writes ``crosscheck.parquet`` (every matched coflow and stage with its relative error),
    ``crosscheck_summary.csv`` and ``crosscheck.png`` (packet vs fluid scatter, log axes).
    """
    from . import crosscheck as cc
    from .plots import crosscheck_scatter

    overrides = overrides or {}
    base = load_scenario(scenario, overrides)
    out_dir = Path(out) if out else RESULTS_DIR / f"crosscheck-{base.name}"
    if external:
        schedulers = [base.scheduler.name]
    schedulers = schedulers or [base.scheduler.name]
    frames = []
    for name in schedulers:
        runs = {}
        for backend in (["packet"] if external else ["packet", "fluid"]):
            sc = load_scenario(scenario, {**overrides, "backend": backend, "scheduler.name": name})
            path = out_dir / "runs" / f"{name}-{backend}"
            if not (path / "run.json").exists():
                print(f"running {name} on the {backend} backend ...", flush=True)
                run_scenario(sc, path)
            runs[backend] = read_run(path)[0]
        other, value = cc.read_external(external) if external else (runs["fluid"], None)
        pairs = cc.compare(runs["packet"], other, value=value)
        pairs.insert(0, "scheduler", name)
        frames.append(pairs)
    pairs = pd.concat(frames, ignore_index=True)
    summary_table = cc.summarize(pairs, by=["scheduler"])
    out_dir.mkdir(parents=True, exist_ok=True)
    pairs.to_parquet(out_dir / "crosscheck.parquet", index=False)
    summary_table.to_csv(out_dir / "crosscheck_summary.csv", index=False)
    crosscheck_scatter(pairs, out_dir / "crosscheck.png", other_label="external" if external else "fluid")
    print(summary_table.to_string(index=False, float_format=lambda v: f"{v:.3g}"))
    print(f"written to {out_dir}")
    return out_dir
