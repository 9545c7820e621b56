"""Lower bounds on stage times: pure functions of the workload and the topology.

Every run records per stage ``isolated_s`` (the slowest job's stage time alone on the
network) and ``demand_bound_s`` (the stage's whole demand on its busiest port), and their
maximum as ``lower_bound_s``, so SCTs can be reported as ratios to it.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

from ..topology import Topology, flow_ports
from .flows import flow_columns
from ..workload.spec import Job

__all__ = ["SyncDemand", "sync_demand", "isolated_stage_s", "demand_bound_s"]


@dataclass(frozen=True)
class SyncDemand:
    """One synchronisation of a job: T_j^p (bytes per port, by port) and its time alone (s)."""

    port_bytes: dict[int, int]
    isolated_s: float


def sync_demand(job: Job, topology: Topology) -> SyncDemand:
    """What one synchronisation of ``job`` asks of the network.

    Host links are exact. Inside the fabric each flow's path depends on its five-tuple,
    which differs per iteration; the paths of a canonical five-tuple (the flow's index
    in the synchronisation) stand in for them. Phases run one after another, so the time
    alone is the sum over phases of each phase's busiest port.
    """
    capacity = topology.port_capacity_bps
    src, dst, size, _ = flow_columns([f for phase in job.sync.phases for f in phase])
    offsets, ports = topology.routes.paths(src, dst, *flow_ports(np.arange(len(src), dtype=np.int64)))
    hop_bytes = np.repeat(size, np.diff(offsets))
    hop_phase = np.repeat(np.repeat(np.arange(len(job.sync.phases)), [len(p) for p in job.sync.phases]),
                          np.diff(offsets))
    total: dict[int, int] = defaultdict(int)
    isolated_s = 0.0
    for phase in range(len(job.sync.phases)):
        hops = hop_phase == phase
        used, inverse = np.unique(ports[hops], return_inverse=True)
        load = np.bincount(inverse, weights=hop_bytes[hops], minlength=len(used)).astype(np.int64)
        isolated_s += max((b * 8 / capacity[p] for p, b in zip(used.tolist(), load.tolist())), default=0.0)
        for p, b in zip(used.tolist(), load.tolist()):
            total[p] += b
    return SyncDemand(dict(sorted(total.items())), isolated_s)


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
