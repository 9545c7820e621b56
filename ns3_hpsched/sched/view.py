"""What a scheduling policy sees: the cluster's active coflows, jobs and stages.

Policies are pure functions of a :class:`View`; they never touch a backend. Ports are the
topology's directed links (see :mod:`ns3_hpsched.topology.base`); demands are converted to
time units (bytes * 8 / capacity) by the policies, so mixed link speeds are right.

The driver keeps one view for a whole run and updates it as coflows are released and
finish, jobs run iterations and stages start and end; byte counts are read from the
backend at most once per decision. A view is therefore valid during the
:meth:`~ns3_hpsched.sched.base.Policy.decide` call it is handed to: a policy that keeps
something for later keeps ids or numbers, not the view's objects. Tests build views by
hand from the same classes (:class:`CoflowState` with a tuple of :class:`FlowState`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np

from ..topology.paths import path_offsets

__all__ = ["FlowState", "FlowColumns", "port_bytes", "bytes_to_time", "CoflowState", "JobState", "StageState", "View", "Decision"]


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


class FlowColumns(NamedTuple):
    """Unfinished flows as arrays (int64): flow ``i`` crosses ``ports[offsets[i]:offsets[i + 1]]``."""

    flow_id: np.ndarray
    remaining_bytes: np.ndarray
    offsets: np.ndarray
    ports: np.ndarray

    @classmethod
    def of(cls, flows: Sequence[FlowState]) -> FlowColumns:
        """The columns of ``flows``, in their order."""
        n = len(flows)
        column = lambda get: np.fromiter(map(get, flows), dtype=np.int64, count=n)
        hops = column(lambda f: len(f.ports))
        return cls(column(lambda f: f.flow_id), column(lambda f: f.remaining_bytes),
                   path_offsets(hops),
                   np.fromiter((p for f in flows for p in f.ports), dtype=np.int64, count=int(hops.sum())))


def port_bytes(flows: Iterable[FlowState]) -> dict[int, int]:
    """Remaining bytes of ``flows`` on each port they cross (ports without bytes omitted)."""
    load: dict[int, int] = {}
    for flow in flows:
        remaining = flow.remaining_bytes
        if remaining > 0:
            for port in flow.ports:
                load[port] = load.get(port, 0) + remaining
    return load


def bytes_to_time(bytes_by_port: Mapping[int, int], capacity_bps: np.ndarray) -> dict[int, float]:
    """Seconds each port needs to carry ``bytes_by_port`` at full capacity.

    One numpy division for all ports (bytes * 8 are exact in int64, as in Python).
    """
    ports = list(bytes_by_port)
    bits = np.fromiter(bytes_by_port.values(), dtype=np.int64, count=len(ports)) * 8
    return dict(zip(ports, (bits / capacity_bps[ports]).tolist()))


class CoflowState:
    """A released, unfinished coflow: one synchronisation phase of one job's iteration.

    ``sent_bytes`` counts all of the coflow's bytes delivered so far, including those of
    flows already finished (Aalo and FIFO-LM classify on it); ``remaining_bytes`` is what
    is left of the whole coflow. ``flows`` holds its unfinished flows.
    :meth:`flow_ids` and :meth:`port_bytes` answer the two questions policies ask of the
    flows without building one object per flow (the driver's live coflows answer them
    from arrays).
    """

    __slots__ = ("coflow_id", "job", "cojob", "stage", "iteration", "phase", "release_s",
                 "size_bytes", "_sent_bytes", "_flows")

    def __init__(self, coflow_id: int, job: int, cojob: int, stage: int, iteration: int, phase: int,
                 release_s: float, size_bytes: int, sent_bytes: int = 0,
                 flows: tuple[FlowState, ...] = ()) -> None:
        self.coflow_id, self.job, self.cojob, self.stage = coflow_id, job, cojob, stage
        self.iteration, self.phase, self.release_s, self.size_bytes = iteration, phase, release_s, size_bytes
        self._sent_bytes = sent_bytes
        self._flows = tuple(flows)

    @property
    def sent_bytes(self) -> int:
        """Bytes of the coflow delivered so far (finished flows included)."""
        return self._sent_bytes

    @property
    def remaining_bytes(self) -> int:
        """Bytes of the coflow still to deliver."""
        return self.size_bytes - self.sent_bytes

    @property
    def flows(self) -> tuple[FlowState, ...]:
        """The unfinished flows (the driver gives them by flow id)."""
        return self._flows

    def flow_ids(self) -> list[int]:
        """Ids of the unfinished flows, increasing."""
        return sorted(f.flow_id for f in self.flows)

    def flow_id_array(self) -> np.ndarray:
        """:meth:`flow_ids` as an int64 array: what the order helpers of :mod:`.classes` join
        (the driver's live coflows have it without a list in between)."""
        return np.array(self.flow_ids(), dtype=np.int64)

    def port_bytes(self) -> dict[int, int]:
        """Remaining bytes on each port the unfinished flows cross (ports without bytes omitted)."""
        return port_bytes(self.flows)

    def flow_columns(self) -> FlowColumns:
        """The unfinished flows as arrays, in :attr:`flows` order (for policies that compute per flow)."""
        return FlowColumns.of(self.flows)

    def demand_s(self, capacity_bps: np.ndarray) -> dict[int, float]:
        """``d_c^p``: seconds each port needs for the remaining bytes (``bytes * 8 / B_p``)."""
        return bytes_to_time(self.port_bytes(), capacity_bps)

    def __repr__(self) -> str:
        return (f"{type(self).__name__}(coflow_id={self.coflow_id}, job={self.job}, cojob={self.cojob}, "
                f"stage={self.stage}, sent_bytes={self.sent_bytes}, size_bytes={self.size_bytes})")


@dataclass
class JobState:
    """A job running in its cojob's current stage.

    ``iterations`` is N_j (iterations of this stage), ``done_iterations`` k_j (completed),
    ``released_iterations`` how many iterations have released their synchronisation so far
    (k_j or k_j + 1), ``sync_port_bytes`` T_j^p: the bytes one whole synchronisation of the
    job (all phases) puts on each port; ``coflows`` its released, unfinished coflows.
    """

    job_id: int
    cojob: int
    stage: int
    iterations: int
    done_iterations: int
    released_iterations: int
    compute_s: float
    sync_port_bytes: dict[int, int]
    coflows: tuple[int, ...]


@dataclass
class StageState:
    """A running stage of a cojob: ``jobs`` are the jobs still unfinished in it."""

    cojob: int
    stage: int
    start_s: float
    jobs: tuple[int, ...]


@dataclass
class View:
    """What :meth:`Policy.decide` is handed (see the module docstring).

    ``coflows``, ``jobs``, ``stages`` are keyed by their ids and hold only active items,
    in release order.
    """

    now_s: float
    port_capacity_bps: np.ndarray
    n_classes: int
    coflows: dict[int, CoflowState]
    jobs: dict[int, JobState] = field(default_factory=dict)
    stages: dict[tuple[int, int], StageState] = field(default_factory=dict)

    def flow_ids(self) -> Sequence[int]:
        """Ids of every unfinished flow, coflow by coflow (the driver's view: one array)."""
        ids: list[int] = []
        for c in self.coflows.values():
            ids.extend(c.flow_ids())
        return ids


@dataclass
class Decision:
    """A policy's answer.

    ``order`` lists classes of flow ids, highest priority first, each a list or an int64
    array (:func:`~.classes.class_per_coflow` and :func:`~.classes.flow_ids` give arrays,
    which the driver joins without a pass over the ids in Python); the driver maps position r
    to queue ``min(r, n_classes - 1)``. Active flows the order omits go to the last queue.
    ``watch`` asks to be called again when a coflow's sent bytes reach a threshold
    (Aalo's queue thresholds, FIFO-LM's heavy threshold). ``rates_bps`` optionally gives
    explicit per-flow rates (Varys' MADD); only the fluid backend honours them.
    """

    order: list[Sequence[int]]
    watch: dict[int, int] = field(default_factory=dict)
    rates_bps: dict[int, float] | None = None
