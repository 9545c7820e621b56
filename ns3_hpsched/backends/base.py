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

from ..topology import Topology

__all__ = ["Backend", "FlowStart", "RunStats", "FlowDoneFn", "ThresholdFn"]

#: ``on_flow_done(flow_id, finish_s)``: called once when the last byte of a flow is delivered.
FlowDoneFn = Callable[[int, float], None]
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
class RunStats:
    """What a backend reports about one finished run (recorded in ``run.json``)."""

    end_s: float
    wall_s: float
    events: int


class Backend(ABC):
    """A network simulator driven by events.

    Subclasses set :attr:`name`. Callbacks given to :meth:`at`, ``on_flow_done`` and
    ``on_threshold`` run inside the simulation at the simulated time they concern; an
    exception raised in one stops the run and propagates out of :meth:`run`.
    Events at equal times run in the order they were scheduled.
    """

    name: str = "backend"

    def __init__(self, topology: Topology, *, n_classes: int = 8, seed: int = 1) -> None:
        if not 1 <= n_classes <= 64:
            raise ValueError(f"n_classes must be in 1..64, got {n_classes}")
        self.topology = topology
        self.n_classes = n_classes
        self.seed = seed
        self.on_flow_done: FlowDoneFn = lambda flow_id, finish_s: None
        self.on_threshold: ThresholdFn = lambda coflow_id: None

    @abstractmethod
    def now(self) -> float:
        """Current simulated time in seconds."""

    @abstractmethod
    def at(self, time_s: float, fn: Callable[[], None]) -> None:
        """Call ``fn()`` at simulated time ``time_s`` (>= now)."""

    @abstractmethod
    def start_flow(self, flow: FlowStart) -> None:
        """Start a flow now. ``flow.src != flow.dst`` and ``flow.size_bytes > 0``."""

    @abstractmethod
    def set_priority(self, flow_id: int, priority: int) -> None:
        """Move a live flow to class ``priority`` (later packets carry it)."""

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
