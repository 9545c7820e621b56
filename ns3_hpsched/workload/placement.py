"""Placement of jobs' workers on GPU hosts.

A cluster is ``n_hosts`` hosts of ``gpus_per_host`` GPUs; a worker occupies one GPU.
:class:`Cluster` tracks free GPUs so that the jobs running at the same time never share
one; a job's GPUs return to the pool when it stops (:meth:`Cluster.release`).

Policies:

* ``packed``: fill hosts in host order, so a job spans as few hosts (and its ring as few
  network hops) as possible;
* ``spread``: each worker on the host with the most free GPUs (lowest number first on
  ties), so a job spans as many hosts as possible;
* ``random``: free GPUs drawn uniformly without replacement from a seeded generator.

A job's hosts are returned sorted, so workers sharing a host sit next to each other in
the ring and their exchange stays inside the host.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from .. import validate
from ..errors import ConfigError
from .spec import Stage

__all__ = ["PLACEMENTS", "Cluster", "place_stages"]

#: Placement policy names.
PLACEMENTS: tuple[str, ...] = ("packed", "spread", "random")


class Cluster:
    """Free GPUs of ``n_hosts`` hosts with ``gpus_per_host`` GPUs each.

    Parameters
    ----------
    n_hosts:
        Number of hosts (the topology's hosts).
    gpus_per_host:
        GPUs per host (>= 1).
    policy:
        One of :data:`PLACEMENTS`.
    rng:
        Generator used by the ``random`` policy (required for it).
    """

    def __init__(self, n_hosts: int, gpus_per_host: int = 1, policy: str = "packed",
                 rng: np.random.Generator | None = None) -> None:
        validate.integer("workload.gpus_per_host", gpus_per_host, low=1, fix="e.g. 1, 4 or 8")
        validate.size("workload.gpus_per_host", n_hosts * gpus_per_host, "GPU slots (hosts x gpus_per_host)")
        validate.choice("workload.placement", policy, PLACEMENTS, "placement")
        if policy == "random" and rng is None:
            raise ValueError("the random placement needs a numpy Generator")
        self.n_hosts = n_hosts
        self.gpus_per_host = gpus_per_host
        self.policy = policy
        self.rng = rng
        self.free = np.full(n_hosts, gpus_per_host, dtype=np.int64)

    def allocate(self, workers: int) -> tuple[int, ...]:
        """Take ``workers`` free GPUs by the policy; return their hosts, sorted.

        Raises :class:`ConfigError` when fewer GPUs are free, naming the sizes involved.
        """
        available = int(self.free.sum())
        if workers > available:
            total = self.n_hosts * self.gpus_per_host
            raise ConfigError(
                "workload.workers",
                f"a job of {workers} workers does not fit: {available} of {total} GPUs "
                f"({self.n_hosts} hosts x {self.gpus_per_host}) are free while the jobs "
                f"running with it hold the rest",
                "use fewer workers or configurations per cojob, more gpus_per_host, or a larger topology")
        if self.policy == "packed":
            hosts = np.repeat(np.arange(self.n_hosts), self.free)[:workers]
        elif self.policy == "spread":
            hosts = self._spread(workers)
        else:
            slots = np.repeat(np.arange(self.n_hosts), self.free)
            hosts = self.rng.choice(slots, size=workers, replace=False)
        hosts = np.sort(hosts)
        np.subtract.at(self.free, hosts, 1)
        return tuple(int(h) for h in hosts)

    def _spread(self, workers: int) -> np.ndarray:
        free = self.free.copy()
        hosts = np.empty(workers, dtype=np.int64)
        for i in range(workers):
            hosts[i] = int(np.argmax(free))  # argmax takes the lowest host on ties
            free[hosts[i]] -= 1
        return hosts

    def release(self, hosts: tuple[int, ...]) -> None:
        """Return the GPUs of a stopped job to the pool."""
        np.add.at(self.free, list(hosts), 1)


def place_stages(stages: Sequence[Stage], workers: int, cluster: Cluster) -> dict[int, tuple[int, ...]]:
    """Hosts of every job of one cojob, placed stage by stage.

    The jobs of stage 0 are placed first; at each later stage the jobs that stopped give
    their GPUs back before the joiners are placed, so only jobs that run at the same time
    compete for GPUs. The GPUs of the jobs of the last stage are released at the end, so
    the cluster is empty again for the next cojob.
    """
    hosts: dict[int, tuple[int, ...]] = {}
    running: set[int] = set()
    for stage in stages:
        for job in sorted(running - set(stage.jobs)):
            cluster.release(hosts[job])
        for job in stage.jobs:
            if job not in hosts:
                hosts[job] = cluster.allocate(workers)
        running = set(stage.jobs)
    for job in sorted(running):
        cluster.release(hosts[job])
    return hosts
