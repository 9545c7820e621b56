"""What a scheduling policy sees: a read-only snapshot of the cluster, built by the driver.

Policies are pure functions of a :class:`View`; they never touch a backend. Ports are the
topology's directed links (see :mod:`ns3_hpsched.topology.base`); demands are converted to
time units (bytes * 8 / capacity) by the policies, so mixed link speeds are right.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

__all__ = ["FlowState", "CoflowState", "JobState", "StageState", "View", "Decision"]


@dataclass(frozen=True)
class FlowState:
    """An unfinished flow of a released coflow."""

    flow_id: int
    coflow_id: int
    src: int
    dst: int
    size_bytes: int
    sent_bytes: int
    ports: tuple[int, ...]

    @property
    def remaining_bytes(self) -> int:
        """Bytes still to deliver."""
        return self.size_bytes - self.sent_bytes


@dataclass(frozen=True)
class CoflowState:
    """A released, unfinished coflow: one synchronisation phase of one job's iteration.

    ``sent_bytes`` counts all of the coflow's bytes delivered so far, including those of
    flows already finished (Aalo and FIFO-LM classify on it).
    """

    coflow_id: int
    job: int
    cojob: int
    stage: int
    iteration: int
    phase: int
    release_s: float
    size_bytes: int
    sent_bytes: int
    flows: tuple[FlowState, ...]


@dataclass(frozen=True)
class JobState:
    """A job running in its cojob's current stage.

    ``iterations`` is N_j (iterations of this stage), ``done_iterations`` k_j (completed),
    ``released_iterations`` how many iterations have released their synchronisation so far
    (k_j or k_j + 1), ``sync_port_bytes`` T_j^p: the bytes one whole synchronisation of the
    job (all phases) puts on each port.
    """

    job: int
    cojob: int
    stage: int
    iterations: int
    done_iterations: int
    released_iterations: int
    compute_s: float
    sync_port_bytes: dict[int, int]
    coflows: tuple[int, ...]


@dataclass(frozen=True)
class StageState:
    """A running stage of a cojob: ``jobs`` are the jobs still unfinished in it."""

    cojob: int
    stage: int
    start_s: float
    jobs: tuple[int, ...]


@dataclass(frozen=True)
class View:
    """Snapshot handed to :meth:`Policy.decide`.

    ``coflows``, ``jobs``, ``stages`` are keyed by their ids and hold only active items,
    in release order.
    """

    now_s: float
    port_capacity_bps: np.ndarray
    n_classes: int
    coflows: dict[int, CoflowState]
    jobs: dict[int, JobState] = field(default_factory=dict)
    stages: dict[tuple[int, int], StageState] = field(default_factory=dict)


@dataclass
class Decision:
    """A policy's answer.

    ``order`` lists classes of flow ids, highest priority first; the driver maps position r
    to queue ``min(r, n_classes - 1)``. Active flows the order omits go to the last queue.
    ``watch`` asks to be called again when a coflow's sent bytes reach a threshold
    (Aalo's queue thresholds, FIFO-LM's heavy threshold). ``rates_bps`` optionally gives
    explicit per-flow rates (Varys' MADD); only the fluid backend honours them.
    """

    order: list[list[int]]
    watch: dict[int, int] = field(default_factory=dict)
    rates_bps: dict[int, float] | None = None
