"""How reproducible is a packet run's per-flow FCT? The floor under any flow model's error.

A flow model is deterministic and continuous in its input: move every flow's start by
less than a frame's time and its FCTs hardly move. A packet simulation need not be: a
flow that arrives 50 ns later can land behind another flow's burst instead of ahead of
it. If the packet backend's per-flow FCTs move by X% under such a nudge, no flow model
can be held to much less than that per flow, whatever it models.

This script plays a flow-size scenario (``websearch-k8``, ``fb-hadoop-k8``) on both
backends: once as given, and ``--draws`` more times with every flow's start moved later
by a uniform draw from ``[0, --jitter-ns)`` (default 100 ns: less than one 9000-byte frame
at 100 Gbps, 720 ns). The order of the starts is kept, so flow ids, five-tuples and ECMP
paths are the same in every run (checked). It prints, per backend, the per-flow
``|FCT change|`` of each nudged run against the run as given (median, p95, and the
median below 100 kB and above 1 MB), and the fluid model's per-flow error against each
packet run and against the per-flow median FCT of all the packet runs (the packet
backend's *typical* outcome, which a deterministic model could at best predict). The last
row is how far that typical outcome, taken over the other packet runs, is from each run
(the mean over the runs): the error a model predicting it exactly would have against one
packet run.

Each run is a fresh process (ns-3's simulator is a process-wide singleton); ``--workers``
run at once (default 2: the machine's cores). Web search / DCTCP takes about 85 CPU
seconds per packet run on this machine, FB Hadoop about 15 s.

Usage::

    python benchmarks/fct_noise.py websearch-k8 [--set transport.kind=rdma] [--draws 3]
    python benchmarks/fct_noise.py fb-hadoop-k8 --set transport.ecn_threshold_bytes=100000
"""

from __future__ import annotations

import argparse
import dataclasses
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from ns3_hpsched.cli import parse_overrides  # noqa: E402
from ns3_hpsched.crosscheck import compare_flows  # noqa: E402

#: Seed of the nudges' generator (draw ``i`` uses ``SEED + i``).
SEED = 12345


def nudged(workload, jitter_s: float, draw: int):
    """``workload`` with every cojob's arrival moved later by a uniform draw from
    ``[0, jitter_s)``, the order of arrivals (ties by position) kept."""
    arrival = np.array([c.arrival_s for c in workload.cojobs])
    order = np.argsort(arrival, kind="stable")
    moved = arrival + np.random.default_rng(SEED + draw).uniform(0.0, jitter_s, len(arrival))
    moved[order] = np.maximum.accumulate(moved[order])
    cojobs = tuple(dataclasses.replace(c, arrival_s=float(t)) for c, t in zip(workload.cojobs, moved))
    return dataclasses.replace(workload, cojobs=cojobs)


def play_one(scenario: str, overrides: list[str], backend: str, jitter_s: float, draw: int, out: str) -> None:
    """One run (in this process): the scenario on ``backend``, nudged as draw ``draw`` (0:
    as given); its flows table goes to ``out``."""
    from ns3_hpsched.driver import play
    from ns3_hpsched.runner import make_backend
    from ns3_hpsched.scenario import load_scenario

    sc = load_scenario(scenario, {**parse_overrides(overrides), "backend": backend})
    workload = nudged(sc.built_workload, jitter_s, draw) if draw else sc.built_workload
    records = play(workload, make_backend(sc), sc.built_policy, control_delay_s=sc.scheduler.control_delay_s)
    records.flows.to_parquet(out)


def _run(args, backend: str, draw: int, folder: Path) -> pd.DataFrame:
    out = folder / f"{backend}-{draw}.parquet"
    sets = [x for pair in args.set for x in ("--set", pair)]
    subprocess.run([sys.executable, __file__, args.scenario, *sets, "--jitter-ns", str(args.jitter_ns),
                    "--one", backend, str(draw), str(out)], check=True, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)
    return pd.read_parquet(out).sort_values("cojob", ignore_index=True)


def _stats(pairs: pd.DataFrame) -> dict:
    err = pairs["rel_error"].abs()
    small, large = pairs["bytes"] < 100_000, pairs["bytes"] > 1_000_000
    return {"median": err.median(), "p95": err.quantile(0.95), "median < 100 kB": err[small].median(),
            "median > 1 MB": err[large].median()}


def report(runs: dict[tuple[str, int], pd.DataFrame]) -> pd.DataFrame:
    """The table this script prints (see the module docstring)."""
    rows = {}
    for (backend, draw), flows in runs.items():
        base = runs[(backend, 0)]
        if not (flows["sport"].to_numpy() == base["sport"].to_numpy()).all():
            raise RuntimeError(f"{backend} draw {draw}: five-tuples moved; the runs are not comparable")
        if draw:
            rows[f"{backend}: draw {draw} vs as given"] = _stats(compare_flows(base, flows))
    fluid = runs[("fluid", 0)]
    packets = [flows for (backend, _), flows in runs.items() if backend == "packet"]
    for i, packet in enumerate(packets):
        rows[f"fluid vs packet {'as given' if i == 0 else f'draw {i}'}"] = _stats(compare_flows(packet, fluid))
    fct = np.stack([p["fct_s"].to_numpy() for p in packets])
    rows["fluid vs per-flow median of the packet runs"] = _stats(compare_flows(packets[0].assign(
        fct_s=np.median(fct, axis=0)), fluid))
    others = [_stats(compare_flows(packet, packet.assign(fct_s=np.median(np.delete(fct, i, axis=0), axis=0))))
              for i, packet in enumerate(packets)]
    rows["per-flow median of the other packet runs vs each (mean)"] = pd.DataFrame(others).mean()
    return pd.DataFrame(rows).T


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("scenario")
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE")
    parser.add_argument("--draws", type=int, default=3, help="nudged runs per backend (default 3)")
    parser.add_argument("--jitter-ns", type=float, default=100.0, help="largest nudge, ns (default 100)")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--one", nargs=3, metavar=("BACKEND", "DRAW", "OUT"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        backend, draw, out = args.one
        play_one(args.scenario, args.set, backend, args.jitter_ns * 1e-9, int(draw), out)
        return
    jobs = [("packet", d) for d in range(args.draws + 1)] + [("fluid", d) for d in range(args.draws + 1)]
    with tempfile.TemporaryDirectory() as tmp, ThreadPoolExecutor(args.workers) as pool:
        futures = {job: pool.submit(_run, args, *job, Path(tmp)) for job in jobs}
        runs = {job: future.result() for job, future in futures.items()}
    print(f"{args.scenario} {' '.join(args.set)}: starts nudged by up to {args.jitter_ns:g} ns, "
          f"{args.draws} draws; per-flow |FCT change| (or error)")
    print(report(runs).to_string(float_format=lambda x: f"{x:.1%}"))


if __name__ == "__main__":
    main()
