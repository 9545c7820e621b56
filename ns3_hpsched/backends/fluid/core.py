"""The fluid backend's event loop, compiled: it runs until Python has something to do.

:func:`run_until` plays the fluid model's own events -- flows starting to send, flows
sending their last byte, watched coflows crossing their thresholds -- and reallocates
rates between them, all in compiled code. It hands control back to Python only when
Python must act:

* a callback scheduled with :meth:`~ns3_hpsched.backends.base.Backend.at` is due
  (``t_python``, the earliest one, is passed in);
* flows finished and someone listens for them, or a watch was crossed
  (:data:`STEPPED`: Python schedules the notifications);
* an allocation was made and the backend's ``on_allocate`` hook is set
  (:data:`ALLOCATED`);
* explicit rates overload a port (:data:`OVERLOADED`: Python raises, naming it);
* nothing is left to do (:data:`IDLE`).

So a run whose flows are all known ahead (open-loop play) is one call, and a closed-loop
run returns to Python once per instant at which something happens that the driver sees.

The loop is the one the backend always had, step for step: admit the flows due to send,
reallocate if anything changed (:func:`_prepare`), move the clock to the earliest next
event and finish what is due then (:func:`_advance`). Every floating-point operation is
the one the array version did, in the same order, so results are identical.

The state is a :class:`Core`: the arrays of the flow store, the coflow meter and the
ports, with the loop's scalars in two small arrays (:attr:`Core.clock`, :attr:`Core.loop`).
"""

from __future__ import annotations

from typing import NamedTuple

import numba
import numpy as np

from ...sched.allocator import GIVEN_RTOL
from ...sched.fill import allocate_grouped, gather_hops, lowest_class_on, port_sum
from ...transports.base import flow_delivery_s
from .coflows import _next_crossing, _pop_crossed, _update_crossings
from .flows import N_ACTIVE, N_PENDING, NEXT, _activate, _finish_due, _finish_times, _groups, _integrate

__all__ = ["Core", "run_until", "tally", "refill_from", "IDLE", "PYTHON", "STEPPED", "ALLOCATED", "OVERLOADED",
           "NOW", "TALLIED", "EVENTS", "DIRTY", "CHANGED_CLASS", "WATCH_DIRTY", "N_DONE", "N_CROSSED", "OVER",
           "RESIDUAL_RTOL"]

#: Why :func:`run_until` returned.
IDLE, PYTHON, STEPPED, ALLOCATED, OVERLOADED = 0, 1, 2, 3, 4

#: Entries of :attr:`Core.clock`: the current time, and when byte counts were last tallied.
NOW, TALLIED = 0, 1
#: Entries of :attr:`Core.loop`: events processed by the loop (admissions); rates must be
#: recomputed; from this class down; crossing times must be recomputed; flows finished and
#: watches crossed at the last step; the port explicit rates overload (-1: none); the
#: backend's settings (latency on, number of classes, MTU bytes).
(EVENTS, DIRTY, CHANGED_CLASS, WATCH_DIRTY, N_DONE, N_CROSSED, OVER, LATENCY, N_CLASSES,
 MTU) = range(10)

#: A port whose kept higher-class load leaves less than this fraction of its capacity is
#: saturated (float round-off would otherwise leave crumbs of rate to lower classes).
RESIDUAL_RTOL = 1e-12


class Core(NamedTuple):
    """Everything the compiled loop reads and writes (arrays only; shared, never copied)."""

    # per record (FlowStore)
    size: np.ndarray
    klass: np.ndarray
    coflow: np.ndarray            #: dense coflow index (CoflowMeter), -1 for none
    given_bps: np.ndarray
    sent: np.ndarray
    start_s: np.ndarray
    finish_s: np.ndarray
    startup_s: np.ndarray
    state: np.ndarray
    route: np.ndarray
    pos: np.ndarray
    route_path: np.ndarray
    # active set and pending arrivals (FlowStore)
    active: np.ndarray
    rate_bps: np.ndarray
    finish_at: np.ndarray
    group_slot: np.ndarray
    pending_s: np.ndarray
    pending_recs: np.ndarray
    pending_tag: np.ndarray
    flow_counts: np.ndarray
    # coflows (CoflowMeter)
    coflow_sent: np.ndarray
    watched: np.ndarray
    threshold: np.ndarray
    cross_at: np.ndarray
    watch_count: np.ndarray
    crossed: np.ndarray           #: output: coflow indices crossed at the last step
    # ports
    capacity: np.ndarray
    delay: np.ndarray
    standing_queue: np.ndarray
    port_rate: np.ndarray         #: total rate per port in the current allocation
    port_tx: np.ndarray           #: bytes sent per port, as of the last tally
    given_ports: np.ndarray       #: ports whose explicit rates changed since the last allocation
    # the loop
    clock: np.ndarray
    loop: np.ndarray
    done: np.ndarray              #: output: records finished at the last step


@numba.njit(cache=True)
def run_until(c, t_python, stop_on_done, stop_on_allocate):
    """Play the fluid model's events until Python must act (see the module docstring).

    ``t_python`` is the time of the earliest Python callback (``inf``: none). With
    ``stop_on_done``, a step that finishes flows returns :data:`STEPPED` (their records
    are ``c.done[:c.loop[N_DONE]]``); a step that crosses watches always does. With
    ``stop_on_allocate``, every allocation returns :data:`ALLOCATED` before time moves.
    """
    while True:
        now = c.clock[NOW]
        if t_python <= now:
            return PYTHON
        if _next_arrival(c) <= now:
            _admit(c)
            continue
        allocated = _prepare(c)
        if c.loop[OVER] >= 0:
            return OVERLOADED
        if allocated and stop_on_allocate:
            return ALLOCATED
        t = min(t_python, _next_finish(c), _next_crossing(c.cross_at, c.watch_count), _next_arrival(c))
        if t == np.inf:
            return IDLE
        _advance(c, t)
        if (stop_on_done and c.loop[N_DONE] > 0) or c.loop[N_CROSSED] > 0:
            return STEPPED


@numba.njit(cache=True)
def tally(c):
    """Bring flows', coflows' and ports' byte counts up to the current time."""
    dt = c.clock[NOW] - c.clock[TALLIED]
    if dt == 0:
        return
    _integrate(c.active, c.flow_counts[N_ACTIVE], c.rate_bps, dt, c.sent, c.coflow, c.coflow_sent)
    c.clock[TALLIED] = c.clock[NOW]
    for p in range(len(c.port_tx)):
        c.port_tx[p] += c.port_rate[p] * dt / 8


@numba.njit(cache=True)
def _next_arrival(c):
    """When the next pending flow sends its first byte (``inf`` if none)."""
    k = c.flow_counts[NEXT]
    return c.pending_s[k] if k < c.flow_counts[N_PENDING] else np.inf


@numba.njit(cache=True)
def _admit(c):
    """The pending flows due by now become active; one event per batch that had flows due."""
    counts = c.flow_counts
    first, stop, now = counts[NEXT], counts[NEXT], c.clock[NOW]
    while stop < counts[N_PENDING] and c.pending_s[stop] <= now:
        tag = c.pending_tag[stop]
        if tag >= 0 and (stop == first or tag != c.pending_tag[stop - 1]):
            c.loop[EVENTS] += 1
        stop += 1
    counts[NEXT] = stop
    refill_from(c, _arrivals_top(c, c.pending_recs[first:stop]))
    _activate(c.pending_recs[first:stop], c.state, c.active, c.rate_bps, c.finish_at, c.pos, counts)


@numba.njit(cache=True)
def _arrivals_top(c, recs):
    """The highest class of arriving records, after marking the ports of those with explicit rates."""
    top = c.loop[N_CLASSES]
    for r in recs:
        top = min(top, c.klass[r])
        if c.given_bps[r] > 0:
            _mark_path(c, r)
    return top


@numba.njit(cache=True)
def _mark_path(c, r):
    """Record ``r``'s ports had their explicit rates change: classes crossing them are refilled."""
    for p in c.route_path[c.route[r]]:
        if p >= 0:
            c.given_ports[p] = True
    c.loop[DIRTY] = 1


@numba.njit(cache=True)
def refill_from(c, klass):
    """Rates of class ``klass`` and below must be recomputed (nothing if ``klass`` is N_CLASSES)."""
    if klass < c.loop[N_CLASSES]:
        c.loop[CHANGED_CLASS] = min(c.loop[CHANGED_CLASS], klass)
        c.loop[DIRTY] = 1


@numba.njit(cache=True)
def _prepare(c):
    """Before time advances: reallocate if anything changed, update crossing times.

    Returns whether rates were reallocated (a tally at now precedes any change).
    """
    allocated = False
    if c.loop[DIRTY]:
        tally(c)
        _allocate(c)
        if c.loop[OVER] >= 0:
            return False
        c.loop[DIRTY] = 0
        c.loop[WATCH_DIRTY] = 1
        allocated = True
    if c.loop[WATCH_DIRTY] and c.watch_count[0] > 0:
        tally(c)
        _update_crossings(c.clock[NOW], c.active, c.flow_counts[N_ACTIVE], c.coflow, c.rate_bps, c.coflow_sent,
                          c.watched, c.threshold, c.cross_at, c.watch_count)
    c.loop[WATCH_DIRTY] = 0
    return allocated


@numba.njit(cache=True)
def _allocate(c):
    """New rates for the active flows, and their finish times.

    Strict priority means a class's rates depend only on the flows of its own and higher
    classes: flows above the highest class that changed keep their rates, and only the
    classes from there down are refilled, in what the kept flows and every flow's
    explicit rate leave. Explicit rates are granted across all classes first, so when
    one of them changes (set, cleared, or its flow arriving or finishing) every class
    crossing the ports it uses is refilled.
    """
    n, n_classes = c.flow_counts[N_ACTIVE], c.loop[N_CLASSES]
    active = c.active[:n]
    flow_group, group_route, group_class = _groups(active, n, c.route, c.klass, n_classes, c.group_slot)
    hop_group, hop_port = gather_hops(c.route_path, group_route)
    given = np.empty(n)
    for i in range(n):
        given[i] = c.given_bps[active[i]]
    top = lowest_class_on(hop_group, hop_port, group_class, c.given_ports, c.loop[CHANGED_CLASS])
    rate, over = allocate_grouped(hop_group, hop_port, flow_group, group_class, given, c.capacity,
                                  c.rate_bps[:n], top, n_classes, GIVEN_RTOL, RESIDUAL_RTOL)
    if over >= 0:
        c.loop[OVER] = over
        return
    c.loop[CHANGED_CLASS] = n_classes
    c.given_ports[:] = False
    c.rate_bps[:n] = rate
    _finish_times(c.active, n, c.size, c.sent, c.rate_bps, c.clock[NOW], c.finish_at)
    group_rate = np.zeros(len(group_class))
    for i in range(n):
        group_rate[flow_group[i]] += rate[i]
    c.port_rate[:] = port_sum(hop_group, hop_port, group_rate, len(c.port_rate))


@numba.njit(cache=True)
def _next_finish(c):
    """When the next active flow sends its last byte (``inf`` if none)."""
    t = np.inf
    for i in range(c.flow_counts[N_ACTIVE]):
        t = min(t, c.finish_at[i])
    return t


@numba.njit(cache=True)
def _advance(c, t):
    """Move the clock to ``t``; finish the flows and pop the watches due by then.

    Finished flows get their finish time: ``t`` plus, with latency, the transport's
    delivery delay (:func:`~ns3_hpsched.transports.base.flow_delivery_s`, charged with
    the port rates of the allocation they finished in).
    """
    due = False
    for i in range(c.flow_counts[N_ACTIVE]):
        if c.finish_at[i] <= t:
            due = True
            break
    c.loop[N_CROSSED] = _pop_crossed(t, c.watched, c.threshold, c.cross_at, c.watch_count, c.crossed)
    c.clock[NOW] = t
    c.loop[N_DONE] = 0
    if not due:
        return
    tally(c)
    n = _finish_due(t, c.active, c.rate_bps, c.finish_at, c.pos, c.flow_counts, c.size, c.sent, c.state,
                    c.coflow, c.coflow_sent, c.done)
    c.loop[N_DONE] = n
    top = c.loop[N_CLASSES]
    latency, mtu = c.loop[LATENCY], float(c.loop[MTU])
    for j in range(n):
        r = c.done[j]
        top = min(top, c.klass[r])
        if c.given_bps[r] > 0:
            _mark_path(c, r)
        delay = 0.0
        if latency:
            delay = flow_delivery_s(c.route_path[c.route[r]], c.size[r], (t - c.start_s[r]) - c.startup_s[r],
                                    c.delay, c.capacity, mtu, c.port_rate, c.standing_queue)
        c.finish_s[r] = t + delay
    refill_from(c, top)
