"""The fluid (flow-level) backend: rates from the project's allocator, exact event times.

Between two events every flow sends at a constant rate. Rates are the project's rate
model (:mod:`ns3_hpsched.sched.allocator`: strict priority across classes, max-min
inside a class, work conserving, explicit rates first), computed by compiled
water-filling (:mod:`.waterfill`) over groups of active flows (:mod:`.groups`: the flows
of one path and one class, which max-min gives one rate), kept up to date as flows come
and go, over the topology's ports and the *same* per-flow ECMP paths as the packet
backend: the paths the driver computed once and handed over in each :class:`FlowBatch`.

The next event is the earliest of: a scheduled callback, a flow's first byte leaving its
sender (after its transport's start-up), its last byte leaving, a watched coflow
crossing its threshold -- all computed exactly from the current rates. Rates are
recomputed lazily: anything that changes them (a flow becoming active or finishing, a
class change, new explicit rates) marks the allocation dirty, and it is recomputed once
before time next advances, so a burst of changes at one instant costs one allocation.
The fluid model's own events run in compiled code (:mod:`.core`); Python runs only the
callbacks and the notifications someone listens to. Everything is deterministic: no
randomness, no hash-order iteration.

Sizes are bytes, capacities and rates bits per second, times seconds.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numba
import numpy as np
import pandas as pd

from ...errors import ConfigError
from ...sched.allocator import Incidence, allocate
from ...topology import Topology
from ...transports import DEFAULT_TRANSPORT, Transport, make_transport
from ..base import Backend, FlowBatch, FlowStart, RunStats
from . import core
from .coflows import CoflowMeter, link_flows
from .events import EventQueue
from .flows import ACTIVE, DONE, FlowStore
from .groups import N_CLASS_MOVES, N_FROZEN, N_RELEVELED, N_RESUMED, N_STEPPED, STAMP, GroupTable
from .waterfill import scratch

__all__ = ["FluidBackend", "Allocation"]


@dataclass(frozen=True)
class Allocation:
    """One allocation, as handed to :attr:`FluidBackend.on_allocate` (a debugging hook).

    The rates hold from ``time_s`` until the next allocation.
    """

    time_s: float
    flow_ids: np.ndarray        #: the active flows, in start order
    classes: np.ndarray         #: their priority classes
    rates_bps: np.ndarray       #: their rates
    port_class_bps: np.ndarray  #: the rate of every (port, class): ``[port, class]``

    @property
    def port_rate_bps(self) -> np.ndarray:
        """The total rate on every port."""
        return self.port_class_bps.sum(axis=1)


class FluidBackend(Backend):
    """Flow-level simulation of a network of strict-priority ports.

    Parameters
    ----------
    topology:
        The network; its ports, capacities and ECMP paths are used as they are.
    n_classes:
        Number of priority classes (0 highest).
    seed:
        Recorded only: the fluid model draws no random numbers.
    latency:
        Add the per-flow latency term of the transport's fluid model
        (:meth:`~ns3_hpsched.transports.base.Transport.startup_s` before sending; after
        it, :func:`~ns3_hpsched.transports.base.flow_delivery_s`: path propagation,
        store-and-forward of the last packet, and its wait behind the transport's standing
        queue at every port other flows saturate). Default on, so small transfers are not
        free; turn it off to compare with a pure bandwidth model (e.g. the worked oracle of
        SCHEDULERS.md).
    transport:
        The scenario's transport (a :class:`~ns3_hpsched.transports.Transport`, or its
        kind): its fluid model sets the start-up before the first byte (one base RTT and
        slow start from its initial window for TCP kinds, none for ``rdma``) and the
        standing queue at busy ports.

    Attributes
    ----------
    on_allocate:
        ``None`` or a callable receiving an :class:`Allocation` after every allocation
        (tests use it to check conservation; costs nothing when unset).
    """

    name = "fluid"

    def __init__(self, topology: Topology, *, n_classes: int = 8, seed: int = 1,
                 latency: bool = True, transport: str | Transport = DEFAULT_TRANSPORT) -> None:
        super().__init__(topology, n_classes=n_classes, seed=seed)
        if not isinstance(latency, bool):
            raise ConfigError("fluid.latency", f"must be true or false, got {latency!r}",
                              "true adds one RTT and the path delay per flow; false is pure bandwidth")
        self.latency = latency
        self.transport = make_transport(transport)
        self.on_allocate: Callable[[Allocation], None] | None = None
        self._capacity = topology.port_capacity_bps
        self._delay = topology.port_delay_s
        self._standing_queue = self.transport.standing_queue_bytes(self._capacity, topology.mtu_bytes)
        self._queue = EventQueue()
        self._flows = FlowStore()
        self._groups = GroupTable(topology.n_ports, n_classes, capacity=len(self._flows.flow_id))
        self._coflows = CoflowMeter()
        self._scratch = scratch(topology.n_ports)
        self._events = 0                        # Python callbacks run (the core counts its own)
        self._given = np.empty(0, dtype=np.int64)  # records holding an explicit rate
        self._given_port = np.zeros(topology.n_ports)
        self._given_marked = np.zeros(topology.n_ports, dtype=bool)
        self._port_rate = np.zeros(topology.n_ports)
        self._clock = core.new_clock()
        self._loop = core.new_loop(n_classes, latency, topology.mtu_bytes)

    # -- the Backend interface ----------------------------------------------------------

    def now(self) -> float:
        """Current simulated time in seconds."""
        return float(self._clock[core.NOW])

    def at(self, time_s: float, fn: Callable[[], None]) -> None:
        """Call ``fn()`` at ``time_s`` (>= now), after the events already scheduled then."""
        if not time_s >= self.now():
            raise ValueError(f"cannot schedule at {time_s!r} s: the clock is at {self.now()} s")
        self._queue.push(float(time_s), fn)

    def start_flows(self, batch: FlowBatch) -> None:
        """Start the batch's flows now, in one step; each sends after its transport's start-up when ``latency`` is on.

        Raises :class:`ConfigError` naming ``flow N.<field>`` (as :meth:`Backend.check_flow`)
        for the first bad flow, before any flow of the batch is started.
        """
        if len(batch):
            recs, send_s = self._record(batch, self.now())
            self._flows.schedule(recs, send_s, counted=self.latency)

    def start_flows_at(self, batch: FlowBatch, start_s: np.ndarray) -> None:
        """Start flow ``i`` of the batch at ``start_s[i]``, all recorded now, in one step.

        The flows wait in the sorted queue of pending arrivals (start plus start-up), which
        the event loop admits from as the clock passes them: no Python event per flow.
        Checked as :meth:`start_flows`, before any flow is recorded.
        """
        start_s = self._start_times(batch, start_s)
        if len(batch):
            recs, send_s = self._record(batch, start_s)
            self._flows.schedule(recs, send_s, counted=True)

    def _record(self, batch: FlowBatch, start_s: float | np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Check and record the batch's flows as starting at ``start_s``; return their
        records and when each sends its first byte (after the transport's start-up)."""
        self._check_batch(batch)
        coflow = self._coflows.indices(batch.coflow_id)
        f = self._flows
        recs = f.add_batch(batch.flow_id, batch.src, batch.dst, batch.size_bytes, batch.priority, coflow,
                           batch.path_offsets, batch.path_ports, start_s)
        not_done = int(self._loop[core.N_ACTIVE]) + f.n_waiting() + len(recs)  # the batch waits to be scheduled
        self._groups.reserve(not_done, f.n_routes, f.route_path.shape[1])
        link_flows(self._coflows.arrays(), f.arrays(), recs)
        offsets, ports = batch.path_offsets, batch.path_ports
        self._coflows.add_ports(coflow, ports[offsets[:-1]], ports[offsets[1:] - 1], self._capacity)
        if not self.latency:
            return recs, start_s + np.zeros(len(recs))
        startup_s = self.transport.startup_s(batch.path_offsets, batch.path_ports, batch.size_bytes,
                                             self._delay, self._capacity, self.topology.mtu_bytes)
        self._flows.startup_s[recs] = startup_s
        return recs, start_s + startup_s

    def _check_batch(self, batch: FlowBatch) -> None:
        """Raise the :meth:`Backend.check_flow` error of the first flow of ``batch`` that has one."""
        i = _first_bad_flow(batch.src, batch.dst, batch.size_bytes, batch.priority, self.topology.n_hosts,
                            self.n_classes)
        if i >= 0:
            self.check_flow(FlowStart(*(int(getattr(batch, name)[i]) for name in
                                        ("flow_id", "src", "dst", "size_bytes", "priority", "coflow_id"))))

    def set_priorities(self, flow_ids: np.ndarray, priorities: np.ndarray) -> None:
        """Move flows to new classes (one compiled pass); finished flows are left alone."""
        priorities = np.asarray(priorities, dtype=np.int64)
        bad = core.reclass(self._core(), self._flows.records(flow_ids), priorities)
        if bad >= 0:
            raise ValueError(f"priority class must be in 0..{self.n_classes - 1}, got {priorities[bad]}")

    def set_rates(self, rates_bps: dict[int, float]) -> None:
        """Replace the explicit rates: the flows named get theirs first, all others none.

        The allocator grants them before anything else and then hands leftover capacity
        out in class order (see :mod:`ns3_hpsched.sched.allocator`); rates that overload a
        port make the next allocation raise ``ValueError``. An explicit rate comes out of
        every class's leftover on its flow's ports, so a change on a sending flow refills
        every class with a flow on those ports (and the classes below); rates set again to
        what they were, or changed only on flows not sending yet, refill nothing.
        """
        f = self._flows
        recs = f.records(list(rates_bps))
        rates = np.fromiter(rates_bps.values(), dtype=np.float64, count=len(rates_bps))
        if not np.all(np.isfinite(rates) & (rates >= 0)):
            raise ValueError("explicit rates must be finite and >= 0 bits per second")
        touched = np.concatenate([self._given, recs])
        before = f.given_bps[touched]
        f.given_bps[self._given] = 0.0
        f.given_bps[recs] = rates
        self._given = recs
        changed = (f.given_bps[touched] != before) & (f.state[touched] == ACTIVE)
        if changed.any():
            core.regive(self._core(), np.unique(touched[changed]))

    def bytes_sent(self, flow_ids: Sequence[int]) -> np.ndarray:
        """Bytes of each flow sent so far (fluid: sent = delivered), rounded up to int64.

        Rounding up keeps the backend's promise that once ``on_threshold`` has fired, the
        coflow's flows report at least the threshold (their float sum reached it); rounding
        to nearest could show a byte short, and a policy would re-arm the same watch forever.
        """
        sent = core.sent_of(self._core(), self._flows.records(flow_ids))
        return np.ceil(sent).astype(np.int64)

    def watch_coflow(self, coflow_id: int, threshold_bytes: int) -> None:
        """Call ``on_threshold(coflow_id)`` when its sent bytes reach ``threshold_bytes``.

        A watch already armed for that threshold is left as it is (the loop keeps its
        crossing time up to date): Aalo arms every coflow's again at each decision, and
        starting those afresh took 0.56 s of the whole Facebook trace.
        """
        idx = self._coflows.index(coflow_id)
        if self._coflows.watching(idx, threshold_bytes):
            return
        if core.coflow_bytes(self._core(), idx) >= threshold_bytes:
            self._coflows.unwatch(idx)
            self._queue.push(self.now(), self._threshold_crossed, coflow_id)
        else:
            self._coflows.watch(idx, float(threshold_bytes))
            self._loop[core.WATCH_DIRTY] = 1

    def run(self) -> RunStats:
        """Run until no event is left.

        ``events`` counts the events processed: scheduled callbacks, flows starting to
        send (one per started batch and instant), flow completions and threshold
        notifications.
        """
        wall = time.perf_counter()
        notify = (core.NOTIFY_NONE if self.on_flows_done is None
                  else core.NOTIFY_LAST if self.flow_done_may_lag else core.NOTIFY_EACH)
        while True:
            if self._queue.next_time() <= self.now():
                fn, args = self._queue.pop()
                self._events += 1
                fn(*args)
                continue
            why = core.run_until(self._core(), self._queue.next_time(), notify, self.on_allocate is not None)
            if self._loop[core.N_DONE] or self._loop[core.N_CROSSED]:
                self._notify()  # under NOTIFY_LAST, flows may have finished whatever the loop returned for
            elif why == core.IDLE:
                break
            if why == core.ALLOCATED:
                self.on_allocate(self._allocation())
            elif why == core.OVERLOADED:
                self._raise_overload()
        core.tally(self._core())
        events = self._events + int(self._loop[core.EVENTS])
        return RunStats(end_s=self.now(), wall_s=time.perf_counter() - wall, events=events)

    def flows_table(self) -> pd.DataFrame:
        """One row per finished flow: ``flow_id, src, dst, bytes, start_s, finish_s, fct_s``."""
        f = self._flows
        done = np.flatnonzero(f.state[:f.n] == DONE)
        table = pd.DataFrame({
            "flow_id": f.flow_id[done], "src": f.src[done], "dst": f.dst[done],
            "bytes": f.size[done].astype(np.int64), "start_s": f.start_s[done], "finish_s": f.finish_s[done],
        })
        table["fct_s"] = table["finish_s"] - table["start_s"]
        return table.sort_values("flow_id", ignore_index=True)

    def ports_table(self) -> pd.DataFrame:
        """One row per port: bytes sent through it; the fluid model never drops or marks."""
        n = self.topology.n_ports
        tx = core.port_bytes(self._core(), self._flows.n)
        return pd.DataFrame({
            "port": np.arange(n), "name": [self.topology.port_name(p) for p in range(n)],
            "tx_bytes": np.rint(tx).astype(np.int64),
            "drops": np.zeros(n, dtype=np.int64), "ecn_marks": np.zeros(n, dtype=np.int64),
        })

    def allocation_counts(self) -> tuple[int, int]:
        """Allocations made so far, and the sum over them of the flows sending (for benchmarks)."""
        return int(self._loop[core.ALLOCATIONS]), int(self._loop[core.ACTIVE_SUM])

    def fill_counts(self) -> dict[str, int]:
        """The rate core's work so far (for benchmarks): class fills, of which relevelled
        (levels worked out again), stepped (redone over the recorded fill's steps) and resumed
        (heap fill continued from a recorded step), the rest filled whole; groups frozen one by
        one by water-filling; classes moved whole."""
        counts = self._groups.counts
        return {"fills": int(counts[STAMP]), "relevelled": int(counts[N_RELEVELED]),
                "stepped": int(counts[N_STEPPED]), "resumed": int(counts[N_RESUMED]),
                "frozen": int(counts[N_FROZEN]),
                "class_moves": int(counts[N_CLASS_MOVES])}

    def describe(self) -> dict:
        """Backend settings for ``run.json``."""
        return {**super().describe(), "latency": self.latency, "transport": self.transport.name}

    # -- the event loop -----------------------------------------------------------------

    def _core(self) -> core.Core:
        """The state the compiled loop works on (the current arrays; they grow in Python)."""
        return core.Core(self._flows.arrays(), self._groups.arrays(), self._scratch, self._coflows.arrays(),
                         self._capacity, self._delay, self._standing_queue, self._given_port, self._given_marked,
                         self._port_rate, self._clock, self._loop)

    def _raise_overload(self) -> None:
        """Raise the allocator's error naming the port the explicit rates overload."""
        f = self._flows
        recs = f.active_recs()
        hops = f.paths(recs)
        flow, hop = np.nonzero(hops >= 0)
        allocate(Incidence(flow, hops[flow, hop], len(recs)), f.klass[recs], self._capacity,
                 given_rate=f.given_bps[recs])
        raise RuntimeError("the compiled allocator found an overload the numpy one does not")

    def _notify(self) -> None:
        """Schedule what the loop calls for: flow completions, then crossed watches (at once).

        Completions come in order of finish time, ties in the loop's order. Those already
        past (held back under :data:`~.core.NOTIFY_LAST`) are one event, due at once: no
        other event can lie between them, since the loop stops at every callback. Each
        later finish time gets an event of its own, after the ones already scheduled then.
        """
        f = self._flows
        recs = f.done[:self._loop[core.N_DONE]]
        if self.on_flows_done is not None and len(recs):
            order = np.argsort(f.finish_s[recs], kind="stable")
            ids, finish_s = f.flow_id[recs][order], f.finish_s[recs][order]
            past = int(np.searchsorted(finish_s, self.now()))
            if past:
                self._queue.push(float(finish_s[0]), self._flows_done, ids[:past], finish_s[:past])
            times, first = np.unique(finish_s[past:], return_index=True)
            bounds = [*(first + past).tolist(), len(ids)]
            for k, time_s in enumerate(times.tolist()):
                batch = slice(bounds[k], bounds[k + 1])
                self._queue.push(time_s, self._flows_done, ids[batch], finish_s[batch])
        crossed = self._coflows.crossed[:self._loop[core.N_CROSSED]]
        for coflow_id in self._coflows.ids(crossed):
            self._queue.push(self.now(), self._threshold_crossed, coflow_id)
        self._loop[[core.N_DONE, core.N_CROSSED]] = 0

    def _allocation(self) -> Allocation:
        """The allocation just made, for the ``on_allocate`` hook."""
        f, g = self._flows, self._groups
        recs = np.sort(core.active_records(self._core()))
        grp = f.group[recs]
        rate = g.usage.copy()
        for k in g.live_groups()[g.given[g.live_groups()] > 0].tolist():
            path = g.path[k]
            rate[path[path >= 0], g.klass[k]] += g.given[k]
        return Allocation(self.now(), f.flow_id[recs], f.klass[recs], g.given[grp] + g.fill[grp], rate)

    def _flows_done(self, flow_ids: np.ndarray, finish_s: np.ndarray) -> None:
        """Flows delivered their last bytes: one ``on_flows_done`` call for all of them.

        One event stands for one completion per flow (as if each had its own event, in
        the order they were scheduled: nothing else was scheduled between them).
        """
        self._events += len(flow_ids) - 1
        self.on_flows_done(flow_ids, finish_s)

    def _threshold_crossed(self, coflow_id: int) -> None:
        self.on_threshold(coflow_id)


@numba.njit(cache=True)
def _first_bad_flow(src, dst, size_bytes, priority, n_hosts, n_classes):
    """Index of the first flow :meth:`Backend.check_flow` would reject (``-1`` if none)."""
    for i in range(len(src)):
        if not (0 <= src[i] < n_hosts and 0 <= dst[i] < n_hosts and src[i] != dst[i]
                and size_bytes[i] > 0 and 0 <= priority[i] < n_classes):
            return i
    return -1
