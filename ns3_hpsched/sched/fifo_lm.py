"""FIFO-LM: Baraat's FIFO with limited multiplexing.

Dogar, Karagiannis, Ballani, Rowstron, "Decentralized task-aware scheduling for data
center networks", SIGCOMM 2014.
"""

from __future__ import annotations

import math

import numpy as np

from ..errors import ConfigError
from ..workload.spec import Workload
from .base import Policy
from .classes import class_per_coflow, flow_ids
from .params import check_number, field
from .ties import tie_key
from .view import CoflowState, Decision, View

__all__ = ["FifoLM", "coflow_size_percentile"]


class FifoLM(Policy):
    """Coflows in arrival order; heavy ones let the next coflow share with them.

    A coflow is *heavy* once it has sent ``theta_bytes``. The active set is the FIFO prefix
    up to and including the first light coflow; it shares one class (max-min inside), and
    every later coflow gets its own class in FIFO order. ``theta_bytes = inf`` gives FIFO,
    ``0`` gives per-flow fair sharing. When no coflow is light the whole set shares.

    The decision watches only the first light coflow: it is the only one whose turning
    heavy changes the active set (a later light coflow's bytes are read afresh when it
    becomes the first light one). A coflow's sent bytes only grow, so one found heavy
    stays heavy: its bytes are not read again (a decision reads the coflows from the
    first not yet known heavy to the first light, usually one).

    Parameters
    ----------
    theta_bytes:
        Heavy threshold in bytes (>= 0, ``inf`` allowed). ``None`` (default) learns it in
        :meth:`setup` as the ``theta_percentile``-th percentile of the workload's coflow sizes.
    theta_percentile:
        Percentile (0-100] of coflow sizes used when ``theta_bytes`` is not given (default 90).
    tie_break:
        Order of coflows released at the same time (see :mod:`~ns3_hpsched.sched.ties`).
    """

    name = "fifo-lm"

    def __init__(self, theta_bytes: float | None = None, theta_percentile: float = 90.0,
                 tie_break: str = "release") -> None:
        self.theta_bytes = None if theta_bytes is None else check_number(
            "theta_bytes", theta_bytes, minimum=0.0, allow_inf=True)
        self.theta_percentile = check_number("theta_percentile", theta_percentile, minimum=0.0, strict=True)
        if self.theta_percentile > 100:
            raise ConfigError(field("theta_percentile"), f"must be at most 100, got {theta_percentile!r}",
                              "give a percentile in (0, 100], e.g. 90")
        self.tie_break = tie_break
        self._key = tie_key(tie_break)
        self._theta = self.theta_bytes
        self._heavy: set[int] = set()

    def setup(self, workload: Workload) -> None:
        """Learn the heavy threshold from the workload's coflow sizes unless it was given."""
        self._heavy.clear()
        if self.theta_bytes is None:
            self._theta = coflow_size_percentile(workload, self.theta_percentile)

    def decide(self, view: View) -> Decision:
        """The FIFO order with the light-bounded prefix merged into one class."""
        if self._theta is None:
            raise ConfigError(field("theta_bytes"), "not learnt yet",
                              "call setup(workload) before decide, or give theta_bytes")
        coflows = sorted(view.coflows.values(), key=self._key)
        if not coflows:
            return Decision(order=[])
        first_light = next((i for i, c in enumerate(coflows) if not self._is_heavy(c)), len(coflows) - 1)
        order = [flow_ids(coflows[:first_light + 1]), *class_per_coflow(coflows[first_light + 1:])]
        head = coflows[first_light]
        light = not self._is_heavy(head) and math.isfinite(self._theta)
        watch = {head.coflow_id: math.ceil(self._theta)} if light else {}
        return Decision(order=order, watch=watch)

    def _is_heavy(self, coflow: CoflowState) -> bool:
        """Whether ``coflow`` has sent ``theta`` bytes (remembered once it has)."""
        if coflow.coflow_id in self._heavy:
            return True
        if coflow.sent_bytes < self._theta:
            return False
        self._heavy.add(coflow.coflow_id)
        return True

    def describe(self) -> dict:
        """Name and parameters, with the threshold actually used."""
        return {"name": self.name, "params": {
            "theta_bytes": self._theta, "theta_percentile": self.theta_percentile,
            "tie_break": self.tie_break}}


def coflow_size_percentile(workload: Workload, percentile: float) -> float:
    """The ``percentile``-th percentile of the sizes of every coflow the workload will release.

    Each iteration of a job releases one coflow per synchronisation phase, so a phase's
    size is counted once per iteration of every stage the job runs in (inverted-CDF
    percentile: the result is a size that occurs).
    """
    sizes: list[int] = []
    counts: list[int] = []
    for cojob in workload.cojobs:
        jobs = {job.job_id: job for job in cojob.jobs}
        for stage in cojob.stages:
            for j in stage.jobs:
                for phase in jobs[j].sync.phases:
                    sizes.append(sum(f.bytes for f in phase))
                    counts.append(stage.iterations)
    if sum(counts) == 0:
        raise ConfigError(field("theta_bytes"), "the workload has no coflows to learn it from",
                          "give theta_bytes explicitly")
    return float(np.percentile(sizes, percentile, weights=counts, method="inverted_cdf"))
