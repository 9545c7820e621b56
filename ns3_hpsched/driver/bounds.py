"""Lower bounds on stage times: pure functions of the workload and the topology.

Every run records per stage ``isolated_s`` (the slowest job's stage time alone on the
network) and ``demand_bound_s`` (the stage's whole demand on its busiest port), and their
maximum as ``lower_bound_s``, so SCTs can be reported as ratios to it.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from ..topology import Topology, flow_ports
from .flows import flow_columns
from ..workload.spec import Job

__all__ = ["SyncDemand", "sync_demands", "isolated_stage_s", "demand_bound_s"]


@dataclass(frozen=True)
class SyncDemand:
    """One synchronisation of a job: T_j^p (bytes per port, by port) and its time alone (s)."""

    port_bytes: dict[int, int]
    isolated_s: float


def sync_demands(jobs: Sequence[Job], topology: Topology) -> list[SyncDemand]:
    """What one synchronisation of each of ``jobs`` asks of the network, in one pass.

    Host links are exact. Inside the fabric each flow's path depends on its five-tuple,
    which differs per iteration; the paths of a canonical five-tuple (the flow's index
    in its job's synchronisation) stand in for them. Phases run one after another, so the
    time alone is the sum over phases of each phase's busiest port. The paths of every
    flow of every job come from one compiled walk, and the bytes per (phase, port) from
    one ``bincount``; only the per-job dicts are built in Python.
    """
    phases = [phase for job in jobs for phase in job.sync.phases]
    src, dst, size, _ = flow_columns([f for phase in phases for f in phase])
    job_flows = np.array([sum(map(len, job.sync.phases)) for job in jobs], dtype=np.int64)
    local = np.arange(len(src), dtype=np.int64) - np.repeat(np.cumsum(job_flows) - job_flows, job_flows)
    offsets, ports = topology.routes.paths(src, dst, *flow_ports(local))
    hops = np.diff(offsets)
    hop_phase = np.repeat(np.repeat(np.arange(len(phases)), [len(p) for p in phases]), hops)
    used, inverse = np.unique(hop_phase * topology.n_ports + ports, return_inverse=True)
    load = np.bincount(inverse, weights=np.repeat(size, hops), minlength=len(used)).astype(np.int64)
    phase, port = np.divmod(used, topology.n_ports)
    seconds = load * 8 / topology.port_capacity_bps[port]
    bounds = np.searchsorted(phase, np.arange(len(phases) + 1)).tolist()
    port, load, seconds = port.tolist(), load.tolist(), seconds.tolist()
    demands, first = [], 0
    for job in jobs:
        total: dict[int, int] = defaultdict(int)
        isolated_s = 0.0
        for k in range(first, first + len(job.sync.phases)):
            lo, hi = bounds[k], bounds[k + 1]
            isolated_s += max(seconds[lo:hi], default=0.0)
            for p, b in zip(port[lo:hi], load[lo:hi]):
                total[p] += b
        first += len(job.sync.phases)
        demands.append(SyncDemand(dict(sorted(total.items())), isolated_s))
    return demands


def isolated_stage_s(job: Job, iterations: int, demand: SyncDemand) -> float:
    """A job's stage time alone on the network (fluid ideal: bottleneck per phase)."""
    return iterations * (job.compute_s + demand.isolated_s)


def demand_bound_s(jobs: Iterable[tuple[int, SyncDemand]], topology: Topology) -> float:
    """``max_p D_s^p`` at stage start: the stage's whole demand on its busiest port.

    ``jobs`` gives, for each job of the stage, its iterations and its synchronisation demand.
    """
    capacity = topology.port_capacity_bps
    load: dict[int, float] = defaultdict(float)
    for iterations, demand in jobs:
        for p, b in demand.port_bytes.items():
            load[p] += iterations * b * 8 / capacity[p]
    return max(load.values(), default=0.0)
