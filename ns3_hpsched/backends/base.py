"""The backend interface: what the driver may ask of a network simulator.

Two backends implement it: ``packet`` (ns-3) and ``fluid`` (flow level). The driver
and the schedulers only ever see this interface, which is what makes a packet-vs-fluid
cross-check meaningful.

Time is simulated seconds (float). Sizes are bytes. Priority classes are integers
``0 .. n_classes-1``, 0 highest; every egress port serves them in strict priority.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..errors import ConfigError
from ..topology import Topology, flow_ports
from ..topology.paths import take_paths

__all__ = ["Backend", "FlowBatch", "FlowStart", "RunStats", "FlowsDoneFn", "ThresholdFn"]

#: ``on_flows_done(flow_ids, finish_s)``: flows delivered their last bytes at ``finish_s``
#: (an int64 and a float64 array, in order of finish time; each flow is reported once).
#: ``None``: nobody listens, and a backend may skip the notifications.
FlowsDoneFn = Callable[[np.ndarray, np.ndarray], None]
#: ``on_threshold(coflow_id)``: called once when a watched coflow's sent bytes reach its threshold.
ThresholdFn = Callable[[int], None]


@dataclass(frozen=True)
class FlowStart:
    """A flow handed to a backend.

    ``coflow_id`` groups flows so the backend can count a coflow's sent bytes
    (for :meth:`Backend.watch_coflow`); ``-1`` means no coflow.
    """

    flow_id: int
    src: int
    dst: int
    size_bytes: int
    priority: int = 0
    coflow_id: int = -1


@dataclass(frozen=True)
class FlowBatch:
    """Flows started together (typically one coflow's), as columns.

    Every array has one entry per flow except ``path_ports``/``path_offsets``: the ports
    flow ``i`` crosses are ``path_ports[path_offsets[i]:path_offsets[i + 1]]``, computed
    once by the driver (:attr:`Topology.routes`) and shared with the backend, so no
    one computes a path twice. ``sport``/``dport`` are the five-tuple ports the path was
    hashed from (the packet backend puts them on the wire). ``coflow_id`` ``-1`` means no
    coflow.
    """

    flow_id: np.ndarray      #: int64
    src: np.ndarray          #: int64 host numbers
    dst: np.ndarray          #: int64 host numbers
    size_bytes: np.ndarray   #: int64, > 0
    priority: np.ndarray     #: int64 classes, 0 highest
    coflow_id: np.ndarray    #: int64
    sport: np.ndarray        #: int64 five-tuple source ports
    dport: np.ndarray        #: int64 five-tuple destination ports
    path_offsets: np.ndarray  #: int64, len(flow_id) + 1
    path_ports: np.ndarray   #: int64

    def __len__(self) -> int:
        return len(self.flow_id)

    def take(self, rows: np.ndarray) -> FlowBatch:
        """The flows at positions ``rows`` (in that order), with their paths."""
        rows = np.asarray(rows, dtype=np.int64)
        offsets, ports = take_paths(self.path_offsets, self.path_ports, rows)
        return FlowBatch(*(getattr(self, name)[rows] for name in _FLOW_COLUMNS), offsets, ports)

    @classmethod
    def of(cls, flows: Sequence[FlowStart], topology: Topology) -> FlowBatch:
        """A batch of :class:`FlowStart` records, with their paths from ``topology``."""
        column = lambda name: np.fromiter((getattr(f, name) for f in flows), dtype=np.int64, count=len(flows))
        flow_id, src, dst = column("flow_id"), column("src"), column("dst")
        sport, dport = flow_ports(flow_id)
        offsets, ports = topology.routes.paths(src, dst, sport, dport)
        return cls(flow_id, src, dst, column("size_bytes"), column("priority"), column("coflow_id"), sport, dport,
                   offsets, ports)


def by_time(times_s: np.ndarray) -> list[tuple[float, np.ndarray]]:
    """``(time, positions)`` for every distinct time of ``times_s``, in time order; the
    positions of one time in their order in ``times_s``."""
    times, group = np.unique(times_s, return_inverse=True)
    order = np.argsort(group.reshape(-1), kind="stable")
    bounds = np.searchsorted(group.reshape(-1)[order], np.arange(len(times) + 1))
    return [(time_s, order[bounds[k]:bounds[k + 1]]) for k, time_s in enumerate(times.tolist())]


#: The per-flow columns of a :class:`FlowBatch`, in field order.
_FLOW_COLUMNS = ("flow_id", "src", "dst", "size_bytes", "priority", "coflow_id", "sport", "dport")


@dataclass(frozen=True)
class RunStats:
    """What a backend reports about one finished run (recorded in ``run.json``)."""

    end_s: float
    wall_s: float
    events: int


class Backend(ABC):
    """A network simulator driven by events.

    Subclasses set :attr:`name`. Callbacks given to :meth:`at`, ``on_flows_done`` and
    ``on_threshold`` run inside the simulation at the simulated time they concern; an
    exception raised in one stops the run and propagates out of :meth:`run`.
    Events at equal times run in the order they were scheduled.

    Completions come in batches, so Python does not run once per flow: one
    ``on_flows_done`` call reports the flows that finished at one instant (the fluid
    backend) or one flow (the packet backend, where every delivery is an event of its own).
    A listener that acts only when a coflow's last flow finishes may set
    :attr:`flow_done_may_lag`: then a flow that leaves its coflow unfinished may be
    reported with :meth:`now` past its ``finish_s``, in one batch with the flows that
    finished up to the next event, still in time order with every other callback (the
    fluid backend then returns to Python once per coflow, not per instant a flow finishes).
    """

    name: str = "backend"

    def __init__(self, topology: Topology, *, n_classes: int = 8, seed: int = 1) -> None:
        if not 1 <= n_classes <= 64:
            raise ValueError(f"n_classes must be in 1..64, got {n_classes}")
        self.topology = topology
        self.n_classes = n_classes
        self.seed = seed
        self.on_flows_done: FlowsDoneFn | None = lambda flow_ids, finish_s: None
        self.flow_done_may_lag = False
        self.on_threshold: ThresholdFn = lambda coflow_id: None

    @abstractmethod
    def now(self) -> float:
        """Current simulated time in seconds."""

    @abstractmethod
    def at(self, time_s: float, fn: Callable[[], None]) -> None:
        """Call ``fn()`` at simulated time ``time_s`` (>= now)."""

    @abstractmethod
    def start_flows(self, batch: FlowBatch) -> None:
        """Start the flows of ``batch`` now (one call per coflow, never one per flow).

        ``src != dst`` and ``size_bytes > 0`` for every flow.
        """

    def start_flows_at(self, batch: FlowBatch, start_s: np.ndarray) -> None:
        """Start flow ``i`` of ``batch`` at simulated time ``start_s[i]`` (>= now).

        The open-loop form of :meth:`start_flows`, for flows known before the run (the
        driver's open-loop play, :mod:`ns3_hpsched.driver.openloop`). This default
        schedules one :meth:`start_flows` per distinct time; the shipped backends take the
        whole batch in one step, checked before anything is scheduled.
        """
        for time_s, rows in by_time(self._start_times(batch, start_s)):
            self.at(time_s, lambda sub=batch.take(rows): self.start_flows(sub))

    def _start_times(self, batch: FlowBatch, start_s: np.ndarray) -> np.ndarray:
        """``start_s`` as float64, checked: one finite time per flow of ``batch``, none before now."""
        start_s = np.asarray(start_s, dtype=np.float64)
        if start_s.shape != (len(batch),):
            raise ValueError(f"start_s must hold one time per flow ({len(batch)}), got shape {start_s.shape}")
        early = ~(start_s >= self.now()) | ~np.isfinite(start_s)
        if early.any():
            i = int(np.argmax(early))
            raise ValueError(f"flow {int(batch.flow_id[i])} cannot start at {float(start_s[i])!r} s: "
                             f"the clock is at {self.now()} s")
        return start_s

    @abstractmethod
    def set_priorities(self, flow_ids: np.ndarray, priorities: np.ndarray) -> None:
        """Move live flows to new classes in one call (later packets carry them).

        Finished flows in ``flow_ids`` are left alone. This is how a decision reaches the
        network: one numpy assignment on fluid, one C++ call on packet.
        """

    def start_flow(self, flow: FlowStart) -> None:
        """Start one flow now (a convenience over :meth:`start_flows`, for tests and tools)."""
        self.check_flow(flow)
        self.start_flows(FlowBatch.of([flow], self.topology))

    def check_flow(self, flow: FlowStart) -> None:
        """Raise :class:`ConfigError` naming ``flow N.<field>`` if the flow cannot be started.

        The one check both backends share, so a bad flow gets the same error on either.
        """
        n_hosts = self.topology.n_hosts
        for name in ("src", "dst"):
            host = getattr(flow, name)
            if not (isinstance(host, (int, np.integer)) and 0 <= host < n_hosts):
                raise ConfigError(f"flow {flow.flow_id}.{name}", f"host {host!r} does not exist",
                                  f"use hosts 0..{n_hosts - 1}")
        if flow.src == flow.dst:
            raise ConfigError(f"flow {flow.flow_id}.dst", "equals src", "a flow joins two different hosts")
        if not (isinstance(flow.size_bytes, (int, np.integer)) and flow.size_bytes > 0):
            raise ConfigError(f"flow {flow.flow_id}.size_bytes", f"must be a positive integer, got {flow.size_bytes!r}")
        if not (isinstance(flow.priority, (int, np.integer)) and 0 <= flow.priority < self.n_classes):
            raise ConfigError(f"flow {flow.flow_id}.priority",
                              f"must be in 0..{self.n_classes - 1}, got {flow.priority!r}",
                              "classes are 0 (highest) .. n_classes-1")

    def set_priority(self, flow_id: int, priority: int) -> None:
        """Move one live flow to class ``priority`` (a convenience over :meth:`set_priorities`)."""
        self.set_priorities(np.array([flow_id], dtype=np.int64), np.array([priority], dtype=np.int64))

    @abstractmethod
    def bytes_sent(self, flow_ids: Sequence[int]) -> np.ndarray:
        """Bytes of each flow delivered (acknowledged) so far, as an int64 array."""

    @abstractmethod
    def watch_coflow(self, coflow_id: int, threshold_bytes: int) -> None:
        """Call ``on_threshold(coflow_id)`` once its flows' sent bytes reach ``threshold_bytes``.

        A later call for the same coflow replaces the watch. Thresholds already reached
        fire at once (as an event at the current time). When it fires, :meth:`bytes_sent`
        of the coflow's flows (plus its finished flows' sizes) sums to at least the threshold.
        """

    def set_rates(self, rates_bps: dict[int, float]) -> None:
        """Optional hint of explicit per-flow rates (Varys' MADD); backends may ignore it."""

    @abstractmethod
    def run(self) -> RunStats:
        """Run until no event is left; return what happened."""

    @abstractmethod
    def flows_table(self) -> pd.DataFrame:
        """One row per finished flow: the ``flows`` table columns the backend knows."""

    @abstractmethod
    def ports_table(self) -> pd.DataFrame:
        """One row per port: ``port``, ``name``, ``tx_bytes``, ``drops``, ``ecn_marks``."""

    def describe(self) -> dict:
        """Backend settings for ``run.json``."""
        return {"name": self.name, "n_classes": self.n_classes, "seed": self.seed}
