"""The ns-3 packet backend: real TCP over a fat-tree whose priority queues obey Python.

Per-packet work stays in C++ (ns-3 plus ``cpp/``); Python runs per flow event (start,
finish, threshold) and per scheduling decision, through one long-lived dispatcher.
``ns-3``'s simulator is a process-wide singleton: creating a backend ends the previous
one of the process (its tables stay readable); isolate many runs in processes.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from itertools import count

import numpy as np
import pandas as pd

from ...errors import ConfigError
from ...topology import Topology
from ...transports import Transport, make_transport
from ..base import Backend, FlowBatch, FlowStart, RunStats
from .loader import load
from .network import realise

__all__ = ["PacketBackend"]

_FLOW_DONE, _THRESHOLD, _CALL = 0, 1, 2
_KIND_NAME = {_FLOW_DONE: "on_flows_done", _THRESHOLD: "on_threshold", _CALL: "at"}

#: The backend that owns this process's ns-3 simulator.
_current: PacketBackend | None = None


class PacketBackend(Backend):
    """ns-3 packet-level simulation of a topology.

    Parameters
    ----------
    topology:
        The network; hosts are ns-3 nodes ``0 .. n_hosts-1``, host ``i`` has address
        10.0.0.(i+1); every flow follows ``topology.flow_path``.
    n_classes:
        Strict-priority bands at every egress (host NICs included), 0 highest. The class
        travels in the DSCP field, so at most 64.
    seed:
        ns-3 run number (``RngRun``) of the random streams.
    transport:
        A transport kind (``"dctcp"``, the default, ``"newreno"``, ``"cubic"``, ``"rdma"``)
        or a :class:`~ns3_hpsched.transports.Transport`.
    device_queue_packets:
        Transmit queue of every device, below the queue disc. Keep it at 1-2: with ns-3's
        default of 100 packets a high-priority 100 KB flow was measured 5x slower.
    **transport_options:
        Options of the transport kind (e.g. ``min_rto_s`` of
        :class:`~ns3_hpsched.transports.TcpTransport`, ``dcqcn`` of
        :class:`~ns3_hpsched.transports.RdmaTransport`).

    Notes
    -----
    :meth:`set_rates` is ignored: TCP sets the rates; schedulers act through classes.
    Each priority band has its own buffer of ``topology.buffer_bytes`` (a shared switch
    buffer is not modelled). :meth:`run` stops as soon as every flow has finished and no
    call or threshold event is pending (TCP connection teardown is not simulated).
    """

    name = "packet"

    def __init__(self, topology: Topology, *, n_classes: int = 8, seed: int = 1,
                 transport: str | Transport = "dctcp", device_queue_packets: int = 1,
                 **transport_options) -> None:
        if not (isinstance(n_classes, int) and 1 <= n_classes <= 64):
            raise ConfigError("scheduler.n_classes", f"must be an integer in 1..64, got {n_classes!r}",
                              "8 matches commodity switches")
        if not (isinstance(seed, int) and seed >= 0):
            raise ConfigError("seed", f"must be a non-negative integer, got {seed!r}", "e.g. 1")
        if not (isinstance(device_queue_packets, int) and device_queue_packets >= 1):
            raise ConfigError("transport.device_queue_packets",
                              f"must be a positive integer, got {device_queue_packets!r}", "use 1 or 2")
        super().__init__(topology, n_classes=n_classes, seed=seed)
        self.transport = make_transport(transport, **transport_options)
        self.device_queue_packets = device_queue_packets
        self._lib = load()
        _claim_simulator(self)
        ns, cpp = self._lib.ns, self._lib.cpp
        ns.RngSeedManager.SetSeed(1)
        ns.RngSeedManager.SetRun(seed)
        started = time.perf_counter()
        self.transport.configure(ns, topology)
        self._fabric = realise(cpp, topology, self.transport, n_bands=max(2, n_classes),
                               device_queue_packets=device_queue_packets)
        self._session = cpp.Session()
        self._dispatcher = self._dispatch  # one long-lived callable: converting a new one costs ~90 ms
        self._session.SetDispatcher(self._dispatcher)
        self._flows = self.transport.create_flows(cpp, self._fabric, self._session)
        self._start_batch = cpp.StartBatch[type(self._flows).__cpp_name__]  # instantiated once
        self._warm_up()
        #: Wall seconds spent building the network.
        self.build_s = time.perf_counter() - started
        self._calls: dict[int, Callable[[], None]] = {}
        self._keys = count()
        self._monitors: dict[int, object] = {}
        self._error: tuple[BaseException, int, int, float] | None = None
        self._closed: dict[str, pd.DataFrame] | None = None

    # -- Backend interface --------------------------------------------------------------

    def now(self) -> float:
        return self._lib.ns.Simulator.Now().GetSeconds()

    def at(self, time_s: float, fn: Callable[[], None]) -> None:
        self._check_open()
        if time_s < self.now() - 1e-12:
            raise ValueError(f"at({time_s}) is in the past (now = {self.now()})")
        key = next(self._keys)
        self._calls[key] = fn
        self._session.ScheduleCall(float(time_s), key)

    def start_flows(self, batch: FlowBatch) -> None:
        """Start the batch's flows now, in one C++ call (checked first, as one would be)."""
        self._check_open()
        self._start(batch, np.full(len(batch), self.now()), ahead=False)

    def start_flows_at(self, batch: FlowBatch, start_s: np.ndarray) -> None:
        """Start flow ``i`` of the batch at ``start_s[i]``: one C++ call schedules them all
        (checked first, as :meth:`start_flows`)."""
        self._check_open()
        self._start(batch, self._start_times(batch, start_s), ahead=True)

    def _start(self, batch: FlowBatch, start_s: np.ndarray, *, ahead: bool) -> None:
        """Start the batch's flows at ``start_s``: scheduled ahead of time, or now (the
        two reach the same place among an instant's events: ``Session::ScheduleOpen``)."""
        n = len(batch)
        if n == 0:
            return
        self._check_batch(batch)
        col = lambda a: np.ascontiguousarray(a, dtype=np.int64)
        self._start_batch(self._flows, np.ascontiguousarray(start_s, dtype=np.float64), ahead, n, col(batch.flow_id),
                          col(batch.src), col(batch.dst), col(batch.size_bytes), col(batch.priority),
                          col(batch.coflow_id), col(batch.sport), col(batch.dport))

    def _check_batch(self, batch: FlowBatch) -> None:
        """Raise the :meth:`Backend.check_flow` error of the first bad flow, or for a repeated id."""
        n_hosts = self.topology.n_hosts
        src, dst, size, prio = batch.src, batch.dst, batch.size_bytes, batch.priority
        bad = ((src < 0) | (src >= n_hosts) | (dst < 0) | (dst >= n_hosts) | (src == dst) | (size <= 0)
               | (prio < 0) | (prio >= self.n_classes))
        if bad.any():
            i = int(np.argmax(bad))
            self.check_flow(FlowStart(int(batch.flow_id[i]), int(src[i]), int(dst[i]), int(size[i]),
                                      int(prio[i]), int(batch.coflow_id[i])))
        ids = np.ascontiguousarray(batch.flow_id, dtype=np.int64)
        known = int(self._session.FirstKnown(ids, len(ids)))
        _, first = np.unique(ids, return_index=True) if len(ids) > 1 else (ids, ids)
        if known < 0 and len(first) < len(ids):
            repeated = np.ones(len(ids), dtype=bool)
            repeated[first] = False
            known = int(np.argmax(repeated))
        if known >= 0:
            raise ConfigError(f"flow {ids[known]}.flow_id", "already started", "give every flow a unique id")

    def set_priorities(self, flow_ids: np.ndarray, priorities: np.ndarray) -> None:
        """Move flows to new classes in one C++ call (``KeyError`` for a flow never started)."""
        self._check_open()
        ids = np.ascontiguousarray(flow_ids, dtype=np.int64)
        classes = np.ascontiguousarray(priorities, dtype=np.int64)
        bad = (classes < 0) | (classes >= self.n_classes)
        if bad.any():
            i = int(np.argmax(bad))
            self._check_class(int(ids[i]), int(classes[i]))
        if len(ids):
            unknown = int(self._session.SetClasses(ids, classes, len(ids)))
            if unknown >= 0:
                raise KeyError(f"set_priorities: flow {ids[unknown]} was never started")

    def bytes_sent(self, flow_ids: Sequence[int]) -> np.ndarray:
        self._check_open()
        ids = np.ascontiguousarray(flow_ids, dtype=np.int64)
        out = np.zeros(len(ids), dtype=np.int64)
        if len(ids):
            self._session.BytesSent(ids, len(ids), out)
        return out

    def watch_coflow(self, coflow_id: int, threshold_bytes: int) -> None:
        self._check_open()
        self._session.WatchCoflow(coflow_id, int(threshold_bytes))

    def set_rates(self, rates_bps: dict[int, float]) -> None:
        """Ignored: TCP decides rates; schedulers act through priority classes."""

    def run(self) -> RunStats:
        self._check_open()
        if self._error is not None:
            raise RuntimeError("the simulation already failed in a callback; build a new backend")
        ns = self._lib.ns
        started = time.perf_counter()
        ns.Simulator.Run()
        wall_s = time.perf_counter() - started
        if self._error is not None:
            exc, kind, ident, time_s = self._error
            exc.add_note(f"raised by {_KIND_NAME[kind]} callback (id {ident}) at simulated "
                         f"t={time_s:.9f} s; the packet simulation was stopped there")
            raise exc
        return RunStats(end_s=self.now(), wall_s=wall_s, events=int(ns.Simulator.GetEventCount()))

    def flows_table(self) -> pd.DataFrame:
        if self._closed is not None:
            return self._closed["flows"].copy()
        n = int(self._session.NFlows())
        cols = {name: np.zeros(n, dtype=np.int64) for name in ("flow_id", "src", "dst", "bytes")}
        start, finish = np.zeros(n), np.zeros(n)
        if n:
            self._session.Export(cols["flow_id"], cols["src"], cols["dst"], cols["bytes"], start, finish)
        table = pd.DataFrame({**cols, "start_s": start, "finish_s": finish, "fct_s": finish - start})
        return table[table["finish_s"] >= 0].reset_index(drop=True)

    def ports_table(self) -> pd.DataFrame:
        if self._closed is not None:
            return self._closed["ports"].copy()
        n = self.topology.n_ports
        tx, drops, marks = (np.zeros(n, dtype=np.uint64) for _ in range(3))
        self._fabric.PortStats(tx, drops, marks)
        return pd.DataFrame({
            "port": np.arange(n), "name": [self.topology.port_name(p) for p in range(n)],
            "tx_bytes": tx.astype(np.int64), "drops": drops.astype(np.int64), "ecn_marks": marks.astype(np.int64),
            **self.transport.port_stats(self._flows, n),
        })

    def describe(self) -> dict:
        return {**super().describe(), "transport": self.transport.describe(),
                "device_queue_packets": self.device_queue_packets, "bands": max(2, self.n_classes),
                "queue_disc": "PrioQueueDisc by DSCP", "routing": "per-flow ECMP (topology.flow_path)",
                "build_s": self.build_s}

    # -- extras -------------------------------------------------------------------------

    def monitor_queue(self, port: int, interval_s: float = 10e-6) -> None:
        """Sample the packets queued at ``port`` every ``interval_s`` while flows run."""
        self._check_open()
        if not 0 <= port < self.topology.n_ports:
            raise ConfigError("monitor_queue.port", f"port {port} does not exist",
                              f"use ports 0..{self.topology.n_ports - 1}")
        if not interval_s > 0:
            raise ConfigError("monitor_queue.interval_s", f"must be > 0, got {interval_s!r}")
        self._monitors[port] = self._lib.cpp.QueueMonitor(self._fabric, self._session, port, float(interval_s))

    def queue_samples(self, port: int) -> pd.DataFrame:
        """Samples of a monitored port: ``time_s`` and ``packets`` queued (all bands)."""
        monitor = self._monitors[port]
        n = int(monitor.NSamples())
        times, packets = np.zeros(n), np.zeros(n, dtype=np.int64)
        if n:
            monitor.Export(times, packets)
        return pd.DataFrame({"time_s": times, "packets": packets})

    def close(self) -> None:
        """End this simulation (``Simulator::Destroy``); its tables stay readable."""
        global _current
        if self._closed is None:
            self._closed = {"flows": self.flows_table(), "ports": self.ports_table()}
            self._lib.ns.Simulator.Destroy()
            self._monitors.clear()
            self._flows = self._session = self._fabric = None
            if _current is self:
                _current = None

    # -- internals ----------------------------------------------------------------------

    def _dispatch(self, kind: int, ident: int, time_s: float) -> None:
        """The one entry from C++: route an event to its Python callback, never raise."""
        if self._error is not None:
            return
        try:
            if kind == _FLOW_DONE:
                if self.on_flows_done is not None:  # each delivery is an event of its own: batches of one
                    self.on_flows_done(np.array([ident], dtype=np.int64), np.array([time_s]))
            elif kind == _THRESHOLD:
                self.on_threshold(ident)
            else:
                self._calls.pop(ident)()
        except BaseException as exc:  # noqa: BLE001 - re-raised from run()
            self._error = (exc, kind, ident, time_s)
            self._lib.ns.Simulator.Stop()

    def _warm_up(self) -> None:
        """Call each bulk C++ method once with no flows: cppyy compiles a wrapper on a method's
        first call (up to a second), which belongs to building the network, not to the run."""
        none = np.zeros(1, dtype=np.int64)  # an empty array does not convert to a pointer; n = 0
        self._start_batch(self._flows, np.zeros(1), False, 0, *([none] * 8))
        self._session.SetClasses(none, none, 0)
        self._session.FirstKnown(none, 0)
        self._session.BytesSent(none, 0, none)

    def _check_class(self, flow_id: int, priority: int) -> None:
        if not (isinstance(priority, (int, np.integer)) and 0 <= priority < self.n_classes):
            raise ConfigError(f"flow {flow_id}.priority", f"must be in 0..{self.n_classes - 1}, got {priority!r}",
                              "classes are 0 (highest) .. n_classes-1")

    def _check_open(self) -> None:
        if self._closed is not None:
            raise RuntimeError("this packet simulation was closed (one ns-3 simulation per process at a time)")


def _claim_simulator(backend: PacketBackend) -> None:
    """Make ``backend`` the owner of the process's simulator, ending the previous run."""
    global _current
    if _current is not None:
        _current.close()
    _current = backend
