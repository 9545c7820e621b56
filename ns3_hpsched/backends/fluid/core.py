"""The fluid backend's event loop, compiled: it runs until Python has something to do.

:func:`run_until` plays the fluid model's own events -- flows starting to send, flows
sending their last byte, watched coflows crossing their thresholds -- and reallocates
rates between them, all in compiled code. It hands control back to Python only when
Python must act:

* a callback scheduled with :meth:`~ns3_hpsched.backends.base.Backend.at` is due
  (``t_python``, the earliest one, is passed in);
* flows finished and someone listens for them, or a watch was crossed
  (:data:`STEPPED`: Python schedules the notifications). A listener that needs to hear
  only of the flows that end a coflow at their time (:data:`NOTIFY_LAST`) gets the others
  with them: the loop keeps their records until then;
* an allocation was made and the backend's ``on_allocate`` hook is set
  (:data:`ALLOCATED`);
* explicit rates overload a port (:data:`OVERLOADED`: Python raises, naming it);
* nothing is left to do (:data:`IDLE`).

So a run whose flows are all known ahead (open-loop play) is one call, and a closed-loop
run returns to Python once per instant at which something happens that the driver acts
on: the FB trace under ``fifo-lm`` (701,486 flows in 526 coflows, 987 decisions) returns
1,050 times, where returning at each instant a flow finishes took 66,971.

One step of the loop: admit the flows due to send (:func:`_admit`), reallocate if
anything changed (:func:`_prepare`), move the clock to the earliest next event and finish
what is due then (:func:`_advance`). Active flows live in groups with virtual clocks
(:mod:`.groups`) and rates come from water-filling over them (:mod:`.waterfill`), so a
step costs the number of groups and the hops of the classes it refills, not the number
of flows.

The state is a :class:`Core`: the arrays of the flow store, the group table, the coflow
meter and the ports, with the loop's scalars in two small arrays (``clock``, ``loop``).
"""

from __future__ import annotations

from typing import NamedTuple

import numba
import numpy as np

from ...sched.allocator import GIVEN_RTOL
from ...sched.fill import sort_by
from ...transports.base import flow_delivery_s
from .coflows import (Coflows, bound_crossings, coflow_sent, flow_finished, flow_moved, next_crossing, pop_crossed,
                      rates_moved)
from .flows import ACTIVE, DONE, FINISH_RTOL, N_PENDING, NEXT, SEQ, WAITING, Flows
from .groups import (N_LIVE, N_OPEN, PARKED_DUE, Groups, bytes_sent, group_for, join, leave, move_class,
                     parked_times, refresh_parked, set_due, stale_below, tally_groups)
from .kernel import kernel
from .waterfill import Scratch, refill

__all__ = ["Core", "run_until", "tally", "reclass", "regive", "sent_of", "coflow_bytes", "port_bytes", "active_records",
           "NOTIFY_NONE", "NOTIFY_EACH", "NOTIFY_LAST", "IDLE", "PYTHON", "STEPPED", "ALLOCATED", "OVERLOADED",
           "NOW", "TALLIED", "new_clock", "EVENTS", "DIRTY", "WATCH_DIRTY", "N_DONE", "N_CROSSED", "ALLOCATIONS",
           "ACTIVE_SUM", "LOOP_SIZE", "new_loop"]

#: Why :func:`run_until` returned.
IDLE, PYTHON, STEPPED, ALLOCATED, OVERLOADED = 0, 1, 2, 3, 4

#: Which finished flows :func:`run_until` returns for: none (nobody listens), each step's,
#: or only a step's that finished the last unfinished flow of a coflow (or a flow of none).
NOTIFY_NONE, NOTIFY_EACH, NOTIFY_LAST = 0, 1, 2

#: Entries of :attr:`Core.clock`: the current time; when byte counts were last tallied; when
#: the next flow sends its last byte, and when the next counts as done (both as of the last
#: allocation, which every change of a group or a rate precedes; ``inf``: none).
NOW, TALLIED, NEXT_FINISH, NEXT_DONE = range(4)
#: Entries of :attr:`Core.loop`: events processed by the loop (admissions); rates must be
#: recomputed; from this class down; explicit rates changed; crossing times must be
#: recomputed; flows finished and watches crossed at the last step; the port explicit
#: rates overload (-1: none); the backend's settings (latency on, classes, MTU bytes);
#: flows sending now; allocations so far, and the sum of the flows sending at each; ports
#: carrying explicit rates.
(EVENTS, DIRTY, CHANGED_CLASS, GIVEN_DIRTY, WATCH_DIRTY, N_DONE, N_CROSSED, OVER, LATENCY, N_CLASSES,
 MTU, N_ACTIVE, ALLOCATIONS, ACTIVE_SUM, N_GIVEN_PORTS) = range(15)
LOOP_SIZE = 15


def new_clock() -> np.ndarray:
    """The loop's times at the start of a run."""
    return np.array([0.0, 0.0, np.inf, np.inf])


def new_loop(n_classes: int, latency: bool, mtu_bytes: int) -> np.ndarray:
    """The loop's scalars at the start of a run."""
    loop = np.zeros(LOOP_SIZE, dtype=np.int64)
    loop[[CHANGED_CLASS, N_CLASSES, OVER, LATENCY, MTU]] = n_classes, n_classes, -1, latency, mtu_bytes
    return loop


class Core(NamedTuple):
    """Everything the compiled loop reads and writes (arrays only; shared, never copied)."""

    f: Flows
    g: Groups
    s: Scratch
    m: Coflows
    capacity: np.ndarray
    delay: np.ndarray
    standing_queue: np.ndarray
    given_port: np.ndarray     #: explicit rates per port
    given_marked: np.ndarray   #: ports whose explicit rates changed since the last allocation
    port_rate: np.ndarray      #: scratch: total rates of the ports of finishing flows
    clock: np.ndarray
    loop: np.ndarray


@kernel
def run_until(c, t_python, notify, stop_on_allocate):
    """Play the fluid model's events until Python must act (see the module docstring).

    ``t_python`` is the time of the earliest Python callback (``inf``: none). Unless
    ``notify`` is :data:`NOTIFY_NONE`, the records of finished flows are kept in
    ``c.f.done[:c.loop[N_DONE]]`` (in the order of the steps, each step's in activation
    order) until Python empties it, whatever the loop returns; a step that finishes flows
    returns :data:`STEPPED` under :data:`NOTIFY_EACH`, and under :data:`NOTIFY_LAST` if one
    of them was the last unfinished flow of its coflow. A step that crosses watches always
    returns. With ``stop_on_allocate``, every allocation returns :data:`ALLOCATED` before
    time moves.
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
        t = next_crossing(c.m, c.f, c.g, min(t_python, c.clock[NEXT_FINISH], _next_arrival(c)), now,
                          now - c.clock[TALLIED])
        if t == np.inf:
            return IDLE
        n_kept = c.loop[N_DONE]
        ended = _advance(c, t)
        if notify == NOTIFY_NONE:
            c.loop[N_DONE] = 0
        elif c.loop[N_DONE] > n_kept and (notify == NOTIFY_EACH or ended):
            return STEPPED
        if c.loop[N_CROSSED] > 0:
            return STEPPED


@kernel
def tally(c):
    """Bring every group's clock up to the current time."""
    dt = c.clock[NOW] - c.clock[TALLIED]
    if dt != 0:
        tally_groups(c.g, dt)
        c.clock[TALLIED] = c.clock[NOW]


@kernel
def _next_arrival(c):
    """When the next pending flow sends its first byte (``inf`` if none)."""
    k = c.f.counts[NEXT]
    return c.f.pending_s[k] if k < c.f.counts[N_PENDING] else np.inf


@kernel
def _admit(c):
    """The pending flows due by now start sending; one event per batch that had flows due."""
    f = c.f
    first, stop, now = f.counts[NEXT], f.counts[NEXT], c.clock[NOW]
    while stop < f.counts[N_PENDING] and f.pending_s[stop] <= now:
        tag = f.pending_tag[stop]
        if tag >= 0 and (stop == first or tag != f.pending_tag[stop - 1]):
            c.loop[EVENTS] += 1
        stop += 1
    f.counts[NEXT] = stop
    tally(c)
    top = c.loop[N_CLASSES]
    c.loop[N_ACTIVE] += stop - first
    for r in f.pending_recs[first:stop]:
        f.state[r], f.seq[r] = ACTIVE, f.counts[SEQ]
        f.counts[SEQ] += 1
        _join(c, r, f.size[r] - f.sent[r])
        top = min(top, f.klass[r])
        if f.given_bps[r] > 0:
            _mark_path(c, r)
    refill_from(c, top)


@kernel(inline="always")
def _join(c, r, remaining):
    """Active record ``r`` joins the group of its route and class (one of its own with an
    explicit rate); the clocks must be tallied to now."""
    f = c.f
    given = f.given_bps[r]
    grp = group_for(c.g, f.route_path, f.route[r], f.klass[r], given > 0, given)
    join(c.g, grp, r, remaining, f.level, f.member_next, f.member_prev, f.group)
    if c.g.alone[grp] and c.g.blocked[grp]:  # sends at its explicit rate, with no fill to time it
        parked_times(c.g, grp, c.clock[NOW], f.level, f.size, f.member_next, FINISH_RTOL)
    flow_moved(c.m, f, r)


@kernel(inline="always")
def _leave(c, r):
    """Active record ``r`` leaves its group; return its remaining bytes (clocks tallied to now)."""
    f = c.f
    flow_moved(c.m, f, r)
    return leave(c.g, f.group[r], r, f.level, f.member_next, f.member_prev, f.group)


@kernel
def _mark_path(c, r):
    """Record ``r``'s explicit rate changed on its ports: they are summed again, and the
    classes crossing them refilled, at the next allocation."""
    for p in c.f.route_path[c.f.route[r]]:
        if p < 0:
            break
        c.given_marked[p] = True
    c.loop[GIVEN_DIRTY] = 1
    c.loop[DIRTY] = 1


@kernel
def refill_from(c, klass):
    """Rates of class ``klass`` and below must be recomputed (nothing if ``klass`` is N_CLASSES)."""
    if klass < c.loop[N_CLASSES]:
        c.loop[CHANGED_CLASS] = min(c.loop[CHANGED_CLASS], klass)
        c.loop[DIRTY] = 1


@kernel
def _prepare(c):
    """Before time advances: reallocate if anything changed, update crossing times.

    Returns whether rates were reallocated.
    """
    allocated = False
    if c.loop[DIRTY]:
        tally(c)
        if not _allocate(c):
            return False
        rates_moved(c.m, c.f, c.g)
        c.loop[DIRTY] = 0
        c.loop[WATCH_DIRTY] = 1
        allocated = True
    if c.loop[WATCH_DIRTY] and c.m.count[0] > 0:
        tally(c)
        bound_crossings(c.m)
    c.loop[WATCH_DIRTY] = 0
    return allocated


@kernel
def _allocate(c):
    """New rates for the groups, and their finish times; ``False`` if explicit rates overload a port.

    Strict priority means a class's rates depend only on its own and higher classes:
    classes above the highest one that changed keep their rates. Explicit rates come
    first on every class, so when they change on a port (set, cleared, or their flow
    arriving or finishing) every class crossing it is refilled.
    """
    top = c.loop[CHANGED_CLASS]
    if c.loop[GIVEN_DIRTY]:
        _sum_given(c)
        for p in range(len(c.capacity)):
            if c.capacity[p] - c.given_port[p] < -GIVEN_RTOL * c.capacity[p]:
                c.loop[OVER] = p
                return False
            if c.given_marked[p]:
                c.given_marked[p] = False
                for k in range(top):
                    if c.g.port_weight[p, k] > 0:
                        top = k
                        break
        c.loop[GIVEN_DIRTY] = 0
    refill(c.g, c.s, c.f, c.capacity, c.given_port, top, c.clock[NOW], c.loop[N_GIVEN_PORTS] > 0)
    c.loop[CHANGED_CLASS] = c.loop[N_CLASSES]
    c.loop[ALLOCATIONS] += 1
    c.loop[ACTIVE_SUM] += c.loop[N_ACTIVE]
    refresh_parked(c.g)
    c.clock[NEXT_FINISH], c.clock[NEXT_DONE] = c.g.parked_soonest[0], c.g.parked_soonest[1]
    for k in range(c.loop[N_CLASSES]):  # classes above top kept their groups' times
        c.clock[NEXT_FINISH] = min(c.clock[NEXT_FINISH], c.g.class_soonest[k, 0])
        c.clock[NEXT_DONE] = min(c.clock[NEXT_DONE], c.g.class_soonest[k, 1])
    return True


@kernel
def _sum_given(c):
    """Explicit rates per port, summed afresh over the groups holding one, in the order of
    ``live`` (their rates read in order from ``live_given``: most live groups hold none); the
    classes on a port whose sum changed see their room there as stale."""
    g, before = c.g, c.s.before
    for p in range(len(c.given_port)):
        before[p], c.given_port[p] = c.given_port[p], 0.0
    for i in range(g.counts[N_LIVE]):
        given = g.live_given[i]
        if given > 0:
            for p in g.path[g.live[i]]:
                if p < 0:
                    break
                c.given_port[p] += given
    c.loop[N_GIVEN_PORTS] = 0
    for p in range(len(c.given_port)):
        if c.given_port[p] != before[p]:
            stale_below(g, p, -1)
        c.loop[N_GIVEN_PORTS] += c.given_port[p] > 0


@kernel
def _advance(c, t):
    """Move the clock to ``t``; finish the flows and pop the watches due by then. Returns
    whether a flow finished that was the last unfinished one of its coflow, or of none.

    Finished flows get their finish time: ``t`` plus, with latency, the transport's
    delivery delay (:func:`~ns3_hpsched.transports.base.flow_delivery_s`, charged with
    the port rates of the allocation they finished in), and their records go after the
    ``c.loop[N_DONE]`` already in ``f.done``.
    """
    due = c.clock[NEXT_DONE] <= t
    c.loop[N_CROSSED] = pop_crossed(c.m, t)
    c.clock[NOW] = t
    if not due:
        return False
    tally(c)
    f = c.f
    kept = c.loop[N_DONE]
    n = _collect_done(c, t, kept)
    done = f.done[kept:kept + n]
    sort_by(done, f.seq)
    for r in done:  # delivery first, while the rates they finished in stand
        delay = 0.0
        if c.loop[LATENCY]:
            delay = _delivery_s(c, r, t)
        f.finish_s[r] = t + delay
    top = c.loop[N_CLASSES]
    ended = False
    for r in done:
        _leave(c, r)
        f.sent[r], f.state[r] = f.size[r], DONE
        flow_finished(c.m, f, r)
        ended = ended or f.coflow[r] < 0 or c.m.head[f.coflow[r]] < 0
        top = min(top, f.klass[r])
        if f.given_bps[r] > 0:
            _mark_path(c, r)
    refill_from(c, top)
    c.loop[N_DONE] = kept + n
    c.loop[N_ACTIVE] -= n
    return ended


@kernel
def _collect_done(c, t, kept):
    """Write to ``f.done``, after its first ``kept``, the members of the groups due by ``t``
    that are done; return how many.

    A due group's first member is done (it is within :data:`FINISH_RTOL` of its size of
    done), and so is every member whose level is no further than that member's, or
    within :data:`FINISH_RTOL` of its size (round-off of the clock would otherwise leave
    crumbs). Only groups whose clocks move (``opened``) are due, unless a group was parked
    done (its first member within :data:`FINISH_RTOL` of its size; ``counts[PARKED_DUE]``):
    then every live group is looked at, and such a group's members left send nothing from
    now on, so it is due no more (the fills skip it).
    """
    f, g = c.f, c.g
    n = 0
    everyone = g.counts[PARKED_DUE]
    g.counts[PARKED_DUE] = 0
    for i in range(g.counts[N_LIVE] if everyone else g.counts[N_OPEN]):
        grp = g.live[i] if everyone else g.opened[i]
        if (g.done_at[grp] if everyone else g.open_done[i]) > t:
            continue
        clock = g.clock[grp]
        reach = f.level[g.first_done[grp]] - clock
        r = g.first[grp]
        while r >= 0:
            remaining = f.level[r] - clock
            if remaining <= reach or remaining <= FINISH_RTOL * f.size[r]:
                f.done[kept + n] = r
                n += 1
            r = f.member_next[r]
        if g.blocked[grp]:
            set_due(g, grp, np.inf, np.inf)
    return n


@kernel
def _delivery_s(c, r, t):
    """Record ``r``'s delivery delay, with the total rates of its ports now."""
    f, g = c.f, c.g
    path = f.route_path[f.route[r]]
    for p in path:
        if p < 0:
            break
        total = c.given_port[p]
        for k in range(g.usage.shape[1]):
            total += g.usage[p, k]
        c.port_rate[p] = total
    sending_s = (t - f.start_s[r]) - f.startup_s[r]
    return flow_delivery_s(path, f.size[r], sending_s, c.delay, c.capacity, float(c.loop[MTU]), c.port_rate,
                           c.standing_queue)


# -- what Python asks between steps ----------------------------------------------------------

@kernel
def reclass(c, recs, classes):
    """Move records to new classes, in order (one named twice ends in the last); finished
    ones keep theirs.

    Returns the index of the first class out of range (``-1`` if none; then nothing is
    changed). The classes left and joined are refilled at the next allocation. Where the
    records are all of a class's active flows, bound for one class, the class moves whole
    (:func:`~.groups.move_class`) once that class is empty: under ``aalo``, which gives
    each coflow a class, 95% of the flows moved on the first 300 FB coflows move so (the
    coflows behind one that finished move up), and on the whole trace ``aalo`` takes 0.78
    and ``sincronia`` 0.62 of the CPU time they took moving every flow by itself. The
    other active records change group one by one.
    """
    n_classes = c.loop[N_CLASSES]
    for i in range(len(classes)):
        if not 0 <= classes[i] < n_classes:
            return i
    tally(c)
    f = c.f
    for i in range(len(recs)):
        if f.state[recs[i]] == WAITING:
            f.klass[recs[i]] = classes[i]
    _whole_moves(c, recs, classes)
    to, leaves = c.g.class_plan[TO], c.g.class_plan[LEAVES]
    top = _move_classes(c, recs, classes, to, leaves)
    to[:] = -1
    refill_from(c, min(top, _move_flows(c, recs, classes, to)))
    return -1


#: Rows of :attr:`~.groups.Groups.class_plan`: per class, the class all its flows move to
#: (-1: none, or several), whether they all leave (1) or some stay (0), and their hops.
TO, LEAVES, HOPS = range(3)


@kernel
def _whole_moves(c, recs, classes):
    """Plan which classes ``recs`` empties (``g.class_plan``): per class, whether every one
    of its active flows is named to leave it (``LEAVES``), and the one class they all go to
    (``TO``; -1: none, or several). No class leaves whole if an active record is named
    twice: moving one by one, in order, is what gives the last naming its say. While
    counting, a record's class is written as ``-1 - class`` (so it counts once) and
    restored after."""
    f, g = c.f, c.g
    to, leaves, hops = g.class_plan[TO], g.class_plan[LEAVES], g.class_plan[HOPS]
    to[:], leaves[:], hops[:] = -1, 1, 0
    named_twice = False
    for i in range(len(recs)):
        r = recs[i]
        if f.state[r] != ACTIVE:
            continue
        k = f.klass[r]
        if k < 0:
            named_twice = True
            break
        f.klass[r] = -1 - k
        if classes[i] == k:
            leaves[k] = 0
            continue
        to[k] = classes[i] if to[k] == -1 or to[k] == classes[i] else -2
        for p in f.route_path[f.route[r]]:
            if p < 0:
                break
            hops[k] += 1
    for r in recs:
        if f.klass[r] < 0:
            f.klass[r] = -1 - f.klass[r]
    for k in range(len(to)):
        if named_twice or hops[k] != g.class_crossings[k]:
            leaves[k] = 0
        if not leaves[k] or to[k] < 0:
            to[k] = -1


@kernel
def _move_classes(c, recs, classes, to, leaves):
    """Move each class bound whole for another (``to``) once that one is empty, moving
    the records that go one by one in between (they may empty it); returns the highest
    class touched (``n_classes``: none). A class waits for one whose flows all leave
    (``leaves``); one bound for a class that keeps flows goes flow by flow, and a cycle
    of waiting classes goes round through an empty class (or flow by flow if there is
    none: ``to`` is left with the classes still waiting)."""
    g, f = c.g, c.f
    n = len(to)
    top = n
    for _ in range(2 * n + 2):  # each round moves a class or some flows, or opens a cycle
        moved = True
        while moved:
            moved = False
            for k in range(n):
                d = to[k]
                if d >= 0 and g.class_n_ports[d] == 0:
                    move_class(g, k, d, f.klass, f.member_next)
                    top, to[k], moved = min(top, k, d), -1, True
                elif d >= 0 and not leaves[d]:
                    to[k], moved = -1, True
        waiting = -1
        for k in range(n):
            if to[k] >= 0:
                waiting = k
                break
        if waiting < 0:
            break
        moved_top = _move_flows(c, recs, classes, to)
        if moved_top < n:
            top = min(top, moved_top)
            continue
        empty = -1  # every waiting class waits for another: a cycle
        for k in range(n):
            if g.class_n_ports[k] == 0:
                empty = k
                break
        if empty < 0:
            break
        move_class(g, waiting, empty, f.klass, f.member_next)
        top, to[empty], to[waiting], leaves[empty] = min(top, waiting, empty), to[waiting], -1, 1
    return top


@kernel
def _move_flows(c, recs, classes, to):
    """Move active records to their classes one by one, in order, except those of a class,
    or bound for one, still to move whole (``to``); returns the highest class touched
    (``n_classes``: none)."""
    f = c.f
    top = len(to)
    for i in range(len(recs)):
        r = recs[i]
        if f.state[r] != ACTIVE or f.klass[r] == classes[i] or to[f.klass[r]] >= 0 or to[classes[i]] >= 0:
            continue
        top = min(top, classes[i], f.klass[r])
        remaining = _leave(c, r)
        f.klass[r] = classes[i]
        _join(c, r, remaining)
    return top


@kernel
def regive(c, recs):
    """Active records ``recs`` have new explicit rates (``f.given_bps``): regroup them (a flow
    with an explicit rate is a group of its own) and mark their ports."""
    tally(c)
    for r in recs:
        _join(c, r, _leave(c, r))
        _mark_path(c, r)


@numba.njit(cache=True)
def sent_of(c, recs):
    """Bytes each record of ``recs`` has sent by now (floats, at most their sizes)."""
    dt = c.clock[NOW] - c.clock[TALLIED]
    out = np.empty(len(recs))
    for i in range(len(recs)):
        out[i] = bytes_sent(c.g, c.f, recs[i], dt)
    return out


@kernel
def coflow_bytes(c, idx):
    """Bytes coflow ``idx`` has sent by now."""
    return coflow_sent(c.m, c.f, c.g, idx, c.clock[NOW] - c.clock[TALLIED])


@numba.njit(cache=True)
def port_bytes(c, n_records):
    """Bytes sent through every port by now: every record's bytes on every port of its route."""
    dt = c.clock[NOW] - c.clock[TALLIED]
    f = c.f
    tx = np.zeros(len(c.capacity))
    for r in range(n_records):
        sent = bytes_sent(c.g, f, r, dt)
        for p in f.route_path[f.route[r]]:
            if p < 0:
                break
            tx[p] += sent
    return tx


@numba.njit(cache=True)
def active_records(c):
    """The active records, group by group."""
    g, f = c.g, c.f
    out = np.empty(c.loop[N_ACTIVE], dtype=np.int64)
    n = 0
    for i in range(g.counts[0]):
        r = g.first[g.live[i]]
        while r >= 0:
            out[n] = r
            n += 1
            r = f.member_next[r]
    return out[:n]
