"""The fluid (flow-level) backend: rates from the project's allocator, exact event times.

Between two events every flow sends at a constant rate. Rates come from the project's
allocator (:mod:`ns3_hpsched.sched.allocator`: strict priority across classes, max-min
inside a class, work conserving, explicit rates first), run compiled
(:func:`ns3_hpsched.sched.fill.allocate_grouped`: the active flows of one path and one
class filled once, as a weighted group) over the topology's ports and the *same* per-flow
ECMP paths as the packet backend: the paths the driver computed once and handed over in
each :class:`FlowBatch`.
Flows are started, re-classed and integrated as columns (no Python step per flow).

The next event is the earliest of: a scheduled callback, a flow's last byte leaving its
sender, a watched coflow crossing its threshold -- all computed exactly from the current
rates. Rates are recomputed lazily: anything that changes them (a flow becoming active
or finishing, a class change, new explicit rates) marks the allocation dirty, and it is
recomputed once before time next advances, so a burst of changes at one instant costs one
allocation. Everything is deterministic: no randomness, no hash-order iteration.

Sizes are bytes, capacities and rates bits per second, times seconds.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numba
import numpy as np
import pandas as pd

from ...errors import ConfigError
from ...sched.allocator import GIVEN_RTOL, allocate
from ...sched.fill import allocate_grouped, gather_hops, lowest_class_on, port_sum
from ...topology import Topology
from ...transports import DEFAULT_TRANSPORT, Transport, make_transport
from ..base import Backend, FlowBatch, FlowStart, RunStats, by_time
from .coflows import CoflowMeter
from .events import EventQueue
from .flows import ACTIVE, DONE, FlowStore

__all__ = ["FluidBackend", "Allocation"]

#: A port whose kept higher-class load leaves less than this fraction of its capacity is
#: saturated (float round-off would otherwise leave crumbs of rate to lower classes).
RESIDUAL_RTOL = 1e-12


@dataclass(frozen=True)
class Allocation:
    """One allocation, as handed to :attr:`FluidBackend.on_allocate` (a debugging hook).

    The rates hold from ``time_s`` until the next allocation.
    """

    time_s: float
    flow_ids: np.ndarray     #: active flows, in activation order
    classes: np.ndarray      #: their priority classes
    rates_bps: np.ndarray    #: their rates
    port_rate_bps: np.ndarray  #: total rate on every port


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
        it, :meth:`~ns3_hpsched.transports.base.Transport.delivery_s`: path propagation,
        store-and-forward of the last packet, and its wait behind the transport's standing
        queue at every port other flows saturate). Default on, so small transfers are not
        free; turn it off to compare with a pure bandwidth model (e.g. the worked oracle of
        SCHEDULERS.md).
    transport:
        The scenario's transport (a :class:`~ns3_hpsched.transports.Transport`, or its
        kind): its fluid model sets the start-up before the first byte (one base RTT and
        slow start from its initial window for TCP kinds, none for ``rdma``).

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
        self._queue = EventQueue()
        self._flows = FlowStore()
        self._coflows = CoflowMeter()
        self._now = 0.0
        self._events = 0
        self._arrived: list[np.ndarray] = []    # records past their handshake, not yet active
        self._pending_s = np.empty(0)           # start_flows_at: arrival times, sorted ...
        self._pending_recs = np.empty(0, dtype=np.int64)  # ... of these records
        self._pending_next = 0                  # ... the first not yet admitted
        self._given = np.empty(0, dtype=np.int64)  # records holding an explicit rate
        self._dirty = False                     # rates must be recomputed
        self._changed_class = n_classes         # ... from this class down
        self._given_ports = np.zeros(topology.n_ports, dtype=bool)  # ports where explicit rates changed
        self._watch_dirty = False               # crossing times must be recomputed
        self._port_rate = np.zeros(topology.n_ports)
        self._port_tx = np.zeros(topology.n_ports)
        self._standing_queue = self.transport.standing_queue_bytes(self._capacity, topology.mtu_bytes)

    # -- the Backend interface ----------------------------------------------------------

    def now(self) -> float:
        """Current simulated time in seconds."""
        return self._now

    def at(self, time_s: float, fn: Callable[[], None]) -> None:
        """Call ``fn()`` at ``time_s`` (>= now), after the events already scheduled then."""
        if not time_s >= self._now:
            raise ValueError(f"cannot schedule at {time_s!r} s: the clock is at {self._now} s")
        self._queue.push(float(time_s), fn)

    def start_flows(self, batch: FlowBatch) -> None:
        """Start the batch's flows now, in one step; each sends after its transport's start-up when ``latency`` is on.

        Raises :class:`ConfigError` naming ``flow N.<field>`` (as :meth:`Backend.check_flow`)
        for the first bad flow, before any flow of the batch is started.
        """
        if not len(batch):
            return
        recs, arrive_s = self._record(batch, self._now)
        if not self.latency:
            self._arrived.append(recs)
            return
        if (arrive_s == arrive_s[0]).all():  # e.g. one flow, or a big switch: one event
            self._queue.push(float(arrive_s[0]), self._arrive, recs)
            return
        for time_s, rows in by_time(arrive_s):  # one event per distinct handshake end
            self._queue.push(time_s, self._arrive, recs[rows])

    def start_flows_at(self, batch: FlowBatch, start_s: np.ndarray) -> None:
        """Start flow ``i`` of the batch at ``start_s[i]``, all recorded now, in one step.

        The flows wait in a sorted array of arrival times (start plus start-up), which the
        event loop admits from as the clock passes them: no Python event per flow. Checked
        as :meth:`start_flows`, before any flow is recorded.
        """
        start_s = self._start_times(batch, start_s)
        if not len(batch):
            return
        recs, arrive_s = self._record(batch, start_s)
        times = np.concatenate([self._pending_s[self._pending_next:], arrive_s])
        recs = np.concatenate([self._pending_recs[self._pending_next:], recs])
        order = np.argsort(times, kind="stable")  # ties in record order, as events pushed in start order
        self._pending_s, self._pending_recs, self._pending_next = times[order], recs[order], 0

    def _record(self, batch: FlowBatch, start_s: float | np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Check and record the batch's flows as starting at ``start_s``; return their
        records and when each sends its first byte (after the transport's start-up)."""
        self._check_batch(batch)
        coflow = self._coflows.indices(batch.coflow_id)
        recs = self._flows.add_batch(batch.flow_id, batch.src, batch.dst, batch.size_bytes, batch.priority,
                                     coflow, batch.path_offsets, batch.path_ports, start_s)
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
        f = self._flows
        recs = f.records(flow_ids)
        bad, top = _reclass(recs, priorities, f.state, f.klass, self.n_classes)
        if bad >= 0:
            raise ValueError(f"priority class must be in 0..{self.n_classes - 1}, got {priorities[bad]}")
        if top < self.n_classes:
            self._changed(top)

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
            self._given_changed(touched[changed])

    def bytes_sent(self, flow_ids: Sequence[int]) -> np.ndarray:
        """Bytes of each flow sent so far (fluid: sent = delivered), rounded up to int64.

        Rounding up keeps the backend's promise that once ``on_threshold`` has fired, the
        coflow's flows report at least the threshold (their float sum reached it); rounding
        to nearest could show a byte short, and a policy would re-arm the same watch forever.
        """
        recs = self._flows.records(flow_ids)
        return np.ceil(self._flows.sent_at(recs, self._now)).astype(np.int64)

    def watch_coflow(self, coflow_id: int, threshold_bytes: int) -> None:
        """Call ``on_threshold(coflow_id)`` when its sent bytes reach ``threshold_bytes``."""
        idx = self._coflows.index(coflow_id)
        self._tally()
        if self._coflows.sent[idx] >= threshold_bytes:
            self._coflows.unwatch(idx)
            self._queue.push(self._now, self._threshold_crossed, coflow_id)
        else:
            self._coflows.watch(idx, float(threshold_bytes))
            self._watch_dirty = True

    def run(self) -> RunStats:
        """Run until no event is left.

        ``events`` counts the queue events processed: scheduled callbacks, flows ending
        their handshake (one event per instant), flow completions and threshold
        notifications.
        """
        wall = time.perf_counter()
        while True:
            if self._queue.next_time() <= self._now:
                fn, args = self._queue.pop()
                self._events += 1
                fn(*args)
                continue
            if self._next_arrival() <= self._now:
                self._admit()
                continue
            self._prepare()
            t = min(self._queue.next_time(), self._next_finish(), self._coflows.next_time(), self._next_arrival())
            if t == math.inf:
                break
            self._advance(t)
        self._tally()
        return RunStats(end_s=self._now, wall_s=time.perf_counter() - wall, events=self._events)

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
        self._tally()
        n = self.topology.n_ports
        return pd.DataFrame({
            "port": np.arange(n), "name": [self.topology.port_name(p) for p in range(n)],
            "tx_bytes": np.rint(self._port_tx).astype(np.int64),
            "drops": np.zeros(n, dtype=np.int64), "ecn_marks": np.zeros(n, dtype=np.int64),
        })

    def describe(self) -> dict:
        """Backend settings for ``run.json``."""
        return {**super().describe(), "latency": self.latency, "transport": self.transport.name}

    # -- the event loop -----------------------------------------------------------------

    def _prepare(self) -> None:
        """Before time advances: admit arrived flows, reallocate if dirty, update crossings."""
        if self._arrived or self._dirty:
            self._tally()
            if self._arrived:
                recs = np.concatenate(self._arrived)
                self._arrived = []
                self._changed(self._flows.klass[recs].min())
                self._given_changed(recs[self._flows.given_bps[recs] > 0])
                self._flows.activate(recs)
            self._allocate()
            self._dirty = False
            self._watch_dirty = True
        if self._watch_dirty and self._coflows.watching:
            self._tally()
            f = self._flows
            self._coflows.update_crossings(self._now, f.coflow[f.active], f.rate_bps)
        self._watch_dirty = False

    def _allocate(self) -> None:
        """New rates for the active flows, and their finish times.

        Strict priority means a class's rates depend only on the flows of its own and higher
        classes: flows above the highest class that changed keep their rates, and only the
        classes from there down are refilled, in what the kept flows and every flow's
        explicit rate leave. Explicit rates are granted across all classes first, so when
        one of them changes (set, cleared, or its flow arriving or finishing) every class
        is refilled.
        """
        f = self._flows
        flow_group, group_route, group_class = f.groups(self.n_classes)
        hop_group, hop_port = gather_hops(f.route_path, group_route)
        given = f.given_bps[f.active]
        top = lowest_class_on(hop_group, hop_port, group_class, self._given_ports, self._changed_class)
        rate, over = allocate_grouped(hop_group, hop_port, flow_group, group_class, given, self._capacity,
                                      f.rate_bps, top, self.n_classes, GIVEN_RTOL, RESIDUAL_RTOL)
        if over >= 0:
            allocate(f.incidence(), f.klass[f.active], self._capacity, given_rate=given)  # raises, naming the port
        self._changed_class = self.n_classes
        self._given_ports[:] = False
        f.set_rates(rate, self._now)
        group_rate = np.bincount(flow_group, weights=rate, minlength=len(group_class))
        self._port_rate = port_sum(hop_group, hop_port, group_rate, self.topology.n_ports)
        if self.on_allocate is not None:
            self.on_allocate(Allocation(self._now, f.flow_id[f.active], f.klass[f.active], rate.copy(),
                                        self._port_rate.copy()))

    def _changed(self, klass: int) -> None:
        """Rates of class ``klass`` and below must be recomputed."""
        self._changed_class = min(self._changed_class, int(klass))
        self._dirty = True

    def _given_changed(self, recs: np.ndarray) -> None:
        """Records ``recs`` gained, lost or changed an explicit rate while sending.

        Explicit rates come out of every class's share of their ports, so every class with
        a flow on one of those ports must be refilled (:func:`lowest_class_on` finds the
        highest such class at the next allocation); classes on other ports keep their rates.
        """
        if len(recs):
            ports = self._flows.paths(recs)
            self._given_ports[ports[ports >= 0]] = True
            self._dirty = True

    def _next_finish(self) -> float:
        """When the next active flow sends its last byte (``inf`` if none)."""
        return float(self._flows.finish_at.min()) if len(self._flows.active) else math.inf

    def _advance(self, t: float) -> None:
        """Move the clock to ``t``; finish the flows and fire the watches due by then."""
        f = self._flows
        due = f.finish_at <= t
        crossed = self._coflows.pop_due(t)
        self._now = t
        if due.any():
            self._tally()
            recs, crumbs = f.finish(due)
            self._changed(f.klass[recs].min())
            self._given_changed(recs[f.given_bps[recs] > 0])
            self._coflows.add(f.coflow[recs], crumbs)
            delay = (self.transport.delivery_s(f.paths(recs), f.size[recs], self._delay, self._capacity,
                                               self.topology.mtu_bytes, port_rate_bps=self._port_rate,
                                               sending_s=(t - f.start_s[recs]) - f.startup_s[recs],
                                               queue_bytes=self._standing_queue)
                     if self.latency else np.zeros(len(recs)))
            f.finish_s[recs] = t + delay
            if self.on_flow_done is not None:  # nobody listens: no event per flow
                for flow_id, finish_s in zip(f.flow_id[recs].tolist(), f.finish_s[recs].tolist()):
                    self._queue.push(finish_s, self._flow_done, flow_id, finish_s)
        for coflow_id in crossed:
            self._queue.push(t, self._threshold_crossed, coflow_id)

    def _tally(self) -> None:
        """Bring flows', coflows' and ports' byte counts up to the current time."""
        f = self._flows
        dt = self._now - f.tallied_s
        if dt == 0:
            return
        f.tally(self._now, self._coflows.sent)
        self._port_tx += self._port_rate * dt / 8

    def _next_arrival(self) -> float:
        """When the next flow of :meth:`start_flows_at` sends its first byte (``inf`` if none)."""
        return float(self._pending_s[self._pending_next]) if self._pending_next < len(self._pending_s) else math.inf

    def _admit(self) -> None:
        """The flows of :meth:`start_flows_at` arriving by now join the active set at the next allocation."""
        stop = int(np.searchsorted(self._pending_s, self._now, side="right"))
        self._arrived.append(self._pending_recs[self._pending_next:stop])
        self._pending_next = stop
        self._events += 1

    def _arrive(self, recs: np.ndarray) -> None:
        """Flows' handshakes are over: they join the active set at the next allocation."""
        self._arrived.append(recs)

    def _flow_done(self, flow_id: int, finish_s: float) -> None:
        self.on_flow_done(flow_id, finish_s)

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


@numba.njit(cache=True)
def _reclass(recs, priorities, state, klass, n_classes):
    """Give records ``recs`` their new classes, in order (finished records keep theirs).

    Returns ``(bad, top)``: the index of the first class out of range (``-1`` if none; then
    nothing is changed) and the highest class a sending flow left or joined (``n_classes``
    if none), from which the rates must be refilled.
    """
    for i in range(len(priorities)):
        if not 0 <= priorities[i] < n_classes:
            return i, n_classes
    top = n_classes
    for i in range(len(recs)):
        r = recs[i]
        if state[r] != DONE and klass[r] != priorities[i]:
            if state[r] == ACTIVE:
                top = min(top, priorities[i], klass[r])
            klass[r] = priorities[i]
    return -1, top
