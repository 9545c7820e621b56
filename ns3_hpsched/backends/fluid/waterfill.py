"""Strict-priority max-min rates of the fluid backend's groups, by water-filling.

The project's rate model (:mod:`ns3_hpsched.sched.allocator`): explicit rates first,
then the classes in order, each max-min fair in the capacity the ones before it left.
Here it runs over the live groups of :mod:`.groups` (a group stands for ``weight`` flows
of one route and class, which max-min gives one rate) and the lists of who crosses which
port, which the group table keeps up to date, so a class's fill costs its own hops and
ports, not the network's.

One class at a time, every port the class uses offers the *share* ``residual / flows``
of what is left to its unfrozen flows, and a port whose share is the smallest of every
group crossing it is a bottleneck: its groups freeze at that share (Bertsekas &
Gallager, *Data Networks*, 2nd ed., sec. 6.5.2). Two ways to find them, each the faster
one where it is used (the measurements of :mod:`ns3_hpsched.sched.fill`):

* **Parallel rounds** (classes without explicit rates on their ports): each round finds
  every bottleneck at once and freezes their groups; sparse classes (flows spread over
  a fat-tree) settle in two or three rounds of a pass over their hops.
* **A heap of ports** keyed by their shares (classes sharing ports with explicit rates,
  whose uneven leftovers take the rounds dozens of passes): the port of smallest share
  is a bottleneck; freezing at it only raises the other shares, so a key re-read when it
  reaches the top visits every hop once.

A bottleneck's residual is set to exactly 0, so a lower class sees a saturated port as
full, not as round-off dust. Groups crossing a port with no room for their class are
*parked* (:mod:`.groups`): they would freeze at 0 at the first step of either method, so
the fill leaves them out and counts only the open groups' flows on each port; the ports
that became full or stopped being full since the class's last fill park and unpark
theirs before it starts.

Only classes from the highest one that changed down are refilled: strict priority means
a class's rates depend on its own and higher classes only. A class's load on each port
is kept (``usage``) so a lower class's *room* on a port is the port's capacity less the
explicit rates and the higher classes' loads; a class whose groups and rooms are bit for
bit those of its last fill keeps its rates (a starved class under busy higher ones).

A fill costs the ports its open groups cross, not every port its class uses (most of a
low class's ports carry parked groups only): rooms are worked out again only where they
may have changed (ports a higher class's fill left with another usage, or whose explicit
rates changed; :func:`~.groups.stale_below`), and the fill gives rates on the ports its
open groups cross, clearing its usage where its last fill put it. A sparse class finds
those ports by walking its open groups' routes; a dense one (over ``SPARSE`` flows per
port, as on a big switch) reads them off its port list, which is shorter. It visits them in the
order of the class's port list (the heap breaks ties by it), so the rates are bit for
bit the ones of a fill over all the class's ports.

**Resuming a fill.** The heap pops ports in non-decreasing level order, ties by position,
so its steps do not depend on the heap's layout; and a group that lost flows since
changes no step before the one that froze it (its ports' shares only rise, and no other
port reads it until it freezes). So a dense class whose rooms stand and which no flow
joined since its last fill resumes that fill at the earliest step a group that lost flows
froze at: the groups frozen before keep their rates and finish times, the later ones (the
class's *freeze list* from that step) take their loads off their ports, and the heap
refills from there. Every other fill of a dense class is whole and recorded anew. The
rates are a whole fill's up to round-off: the residuals come out of other subtractions.
Explicit rates on the class's ports change none of this: they only take room from it, as
the classes above do. (Under Varys, whose explicit rates cross every port, a fill reused
this way freezes 44 M groups on the first 100 FB coflows where whole fills froze 156 M.)

**Relevelling a fill.** Where the steps of the recorded fill still give max-min rates, a
fill that would resume (or, its rooms changed, fill whole) only works out their levels
again (:mod:`.record`); where they do not, it water-fills the steps themselves, splitting
the few whose groups now meet another bottleneck first (:mod:`.steps`). Relevelled levels may decrease along the steps, so a fill
resumes a record at the latest step, no later than the departures reach, before which no
step froze higher than any after (:func:`~.record.resume_point`; a heap's record splits
at every step). On the FB trace under ``fair`` (one dense class; flows arrive coflow by
coflow and leave one instant at a time), of the 14,523 fills of the first 250 coflows
10,226 relevel, 3,972 resume and 325 fill whole (1,217 whole when only records in order
resumed).

As water-filling sets a group's rate it sets its finish times too, and each class keeps
its earliest. The rates equal the allocator's within float round-off (held to the exact
rationals by the tests).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ...sched.fill import sift_down, sort_by
from .flows import FINISH_RTOL
from .groups import (N_FROZEN, N_RELEVELED, N_RESUMED, N_STEPPED, STAMP, TIER_PORTS, carry, finish_time,
                     next_bottleneck, set_full, stale_below)
from .kernel import kernel
from .record import after, end_step, link_frozen, relevel, resume_point, settle, soonest_before, worth_relevelling
from .steps import step_fill

__all__ = ["Scratch", "scratch", "refill", "RESIDUAL_RTOL"]

#: A port whose higher classes and explicit rates leave less than this fraction of its
#: capacity is full for a lower class (float round-off would otherwise leave it crumbs).
RESIDUAL_RTOL = 1e-12

#: A class is *sparse*, filled in parallel rounds first, when its ports carry at most
#: this many of its flows on average; denser classes go to the heap at once.
SPARSE = 2
#: Parallel rounds a sparse class gets before the heap takes its remaining groups. Most
#: classes settle in two or three; the heap is the costlier finish (``bench_fluid.py``,
#: k=16, 100k flows, measured with a scratch layout since reverted: 66 s with 4 rounds,
#: 48 s with 8 or 16, 49 s with no limit).
ROUNDS = 8


class Scratch(NamedTuple):
    """Per-port work arrays of a fill (only the filled class's ports are read or written)."""

    residual: np.ndarray
    count: np.ndarray
    key: np.ndarray        #: heap keys (by position in the class's port list), or a round's shares
    heap: np.ndarray
    round: np.ndarray      #: a round, per port: LOWEST, TOTAL (one array: see below)
    flipped: np.ndarray    #: ports whose fullness for the class changed, the count in the last entry
    ports: np.ndarray      #: the ports the fill gives a rate: the ones its open groups cross
    seen: np.ndarray       #: the fill's stamp on the ports it gives a rate, minus it on those its last one did
    before: np.ndarray     #: a port's value before it is worked out again (a class's usage; explicit rates)
    level: np.ndarray      #: a relevelled fill's levels, per step
    total: np.ndarray      #: the load they put on each port
    highest: np.ndarray    #: and the highest of them on each port
    kept: np.ndarray       #: whether a relevelled step kept its level and its groups (nothing to refreeze)
    cell_port: np.ndarray  #: a fill over steps (:mod:`.steps`): each cell's port, flows and old step,
    cell_w: np.ndarray
    cell_step: np.ndarray
    step_cell: np.ndarray  #: the cells of old step k: ``step_cell[k]:step_cell[k + 1]``
    port_first: np.ndarray #: and of port p: ``port_cells[port_first[p]:port_first[p + 1]]``
    port_cells: np.ndarray
    cell_at: np.ndarray    #: per port, a cell there (of the step being split)
    bundle_head: np.ndarray  #: per old step, its groups not frozen yet (linked by ``freeze_next``)
    bundle_w: np.ndarray   #: and their flows
    bundle_done: np.ndarray
    soonest: np.ndarray    #: the earliest finish times of the groups of the step being frozen


#: Columns of :attr:`Scratch.round`: the smallest share of the groups crossing the port,
#: and the load the round's frozen groups put on it (one array rather than two keeps the
#: tuple every kernel is handed small).
LOWEST, TOTAL = 0, 1


def scratch(n_ports: int) -> Scratch:
    """Work arrays for a network of ``n_ports`` ports."""
    ints, floats = np.zeros(n_ports, dtype=np.int64), np.zeros(n_ports)
    cells = n_ports * n_ports if n_ports <= TIER_PORTS else 0  # a step's rows: only where records have them
    return Scratch(residual=floats.copy(), count=ints.copy(), key=floats.copy(), heap=ints.copy(),
                   round=np.zeros((n_ports, 2)), flipped=np.zeros(n_ports + 1, dtype=np.int64), ports=ints.copy(),
                   seen=ints.copy(), before=floats.copy(), level=floats.copy(), total=floats.copy(),
                   highest=floats.copy(), kept=np.zeros(n_ports, dtype=np.bool_),
                   cell_port=np.zeros(cells, dtype=np.int64), cell_w=np.zeros(cells),
                   cell_step=np.zeros(cells, dtype=np.int64), step_cell=np.zeros(n_ports + 1, dtype=np.int64),
                   port_first=np.zeros(n_ports + 1, dtype=np.int64), port_cells=np.zeros(cells, dtype=np.int64),
                   cell_at=ints.copy(), bundle_head=ints.copy(), bundle_w=floats.copy(),
                   bundle_done=np.zeros(n_ports, dtype=np.bool_), soonest=np.zeros(2))


@kernel
def refill(g, s, f, capacity, given_port, top, now, explicit):
    """Refill classes ``top`` and below, in order: each group's ``fill`` and finish times
    (:func:`~.groups.finish_time`, for the clocks tallied to ``now``) and each (port,
    class)'s ``usage``, in what ``given_port`` (explicit rates per port; ``explicit``:
    whether any port has one) and the classes above leave of ``capacity``. ``f`` are the
    flow store's arrays."""
    for c in range(top, g.port_head.shape[1]):
        if g.class_n_ports[c] == 0:
            g.class_soonest[c, 0] = g.class_soonest[c, 1] = np.inf
            g.class_resume[c] = -1
            continue
        rooms_changed = _new_rooms(g, s, capacity, given_port, c)
        if rooms_changed or g.class_dirty[c]:
            _fill_class(g, s, f, given_port, c, now, explicit, rooms_changed)


@kernel
def _new_rooms(g, s, capacity, given_port, c):
    """What explicit rates and the classes above leave class ``c`` on its stale ports
    (:func:`~.groups.stale_room`: the others' are as they were), into ``g.room``; whether
    any changed since its last fill. A class whose groups and rooms are as they were
    keeps its rates (a starved class, say, whose ports the classes above still fill).
    Ports that became full or stopped being full go to ``s.flipped``, in the order of the
    class's port list: the fill parks and unparks their groups first."""
    changed = False
    n_flipped = 0
    for p in g.stale_ports[c, :g.class_n_stale[c]]:
        g.stale[p, c] = False
        if g.class_pos[p, c] < 0:
            continue
        room = capacity[p] - given_port[p]
        for above in range(c):
            room -= g.usage[p, above]
        if room <= RESIDUAL_RTOL * capacity[p]:
            room = 0.0
        if room != g.room[p, c]:
            g.room[p, c] = room
            changed = True
            if g.tier_weight.shape[1]:
                g.tier_moved[c, p] = True
        if (room == 0.0) != g.full[p, c]:
            s.flipped[n_flipped] = p
            n_flipped += 1
            changed = True
    g.class_n_stale[c] = 0
    s.flipped[-1] = n_flipped
    sort_by(s.flipped[:n_flipped], g.class_pos[:, c])
    return changed


@kernel
def _fill_class(g, s, f, given_port, c, now, explicit, rooms_changed):
    """Max-min fill of class ``c``'s open groups in its rooms (its parked ones send
    nothing): rounds unless explicit rates share its ports, then the heap for whatever
    the rounds left (see the module docstring). Whether the class is dense counts its
    parked groups too; a dense class's fill is recorded, for its next fill to relevel,
    redo over its steps where relevelling fails, or resume."""
    n = g.class_n_ports[c]
    g.class_dirty[c] = 0
    g.class_soonest[c, 0] = g.class_soonest[c, 1] = np.inf
    for p in s.flipped[:s.flipped[-1]]:
        set_full(g, p, c, not g.full[p, c], now, f.level, f.size, f.member_next, FINISH_RTOL)
    shared = False
    if explicit:
        for p in g.class_ports[c, :n]:
            if given_port[p] > 0:
                shared = True
                break
    g.counts[STAMP] += 1  # a group this fill froze, and a port it gives a rate, are marked with it
    dense = g.class_crossings[c] > SPARSE * n
    m = _open_ports(g, s, c, dense)
    ports = s.ports[:m]
    kept = g.class_resume[c] if dense and not s.flipped[-1] else -1  # no group joined or was (un)parked
    resume = -1 if rooms_changed else kept
    g.class_resume[c] = -1  # until a recorded fill ends (_heap_fill)
    start = 0 if rooms_changed else kept
    tried = kept >= 0 and worth_relevelling(g, c, start, m)
    if tried and relevel(g, s, f, ports, c, now, start, RESIDUAL_RTOL):
        g.counts[N_RELEVELED] += 1
    elif tried and step_fill(g, s, f, ports, c, now, resume_point(g, s, c, start) if start > 0 else 0):
        g.counts[N_STEPPED] += 1
    else:
        _fill_groups(g, s, f, ports, c, now, dense, shared, resume)
    _usage_changed(g, s, c, m)
    if dense:
        settle(g, c, m, ports)


@kernel
def _fill_groups(g, s, f, ports, c, now, recorded, shared, resume):
    """Freeze class ``c``'s groups over ``ports`` anew: the recorded fill resumed from step
    ``resume`` (``> 0``), or from the latest step before it where its levels allow, else the
    heap (recorded or sharing ports with explicit rates) or parallel rounds (module
    docstring)."""
    if resume > 0:
        resume = resume_point(g, s, c, resume)
    n_late = _rewind(g, s, ports, c, resume) if resume > 0 else -1
    if n_late >= 0:
        g.counts[N_RESUMED] += 1
        _heap_fill(g, s, f, s.heap[:n_late], c, now, True, resume)
    elif recorded or shared:
        _heap_fill(g, s, f, ports, c, now, recorded, 0)
    elif _rounds(g, s, f, ports, c, _list_groups(g, c), ROUNDS, now):
        _heap_fill(g, s, f, ports, c, now, False, 0)


@kernel
def _open_ports(g, s, c, dense):
    """Start class ``c``'s fill: its usage cleared where its last fill put it, and the
    ports its open groups cross (the only ones it gives a rate) listed in ``s.ports``
    with their room and open flows as residual and count; returns how many. Each
    port's usage before goes to ``s.before``. A ``dense`` class has fewer ports than
    hops: its ports with open flows are found from its port list, a sparse class's
    from its open groups' routes."""
    stamp = g.counts[STAMP]
    for p in g.fill_ports[c, :g.class_n_fill[c]]:
        s.before[p], g.usage[p, c], s.seen[p] = g.usage[p, c], 0.0, -stamp
    m = 0
    if dense:
        for p in g.class_ports[c, :g.class_n_ports[c]]:
            if g.open_weight[p, c] > 0:
                m = _list_port(g, s, p, c, stamp, m)
        return m
    grp = g.class_head[c]
    while grp >= 0:
        for p in g.path[grp]:
            if p < 0:
                break
            if s.seen[p] != stamp:
                m = _list_port(g, s, p, c, stamp, m)
        grp = g.class_next[grp]
    return m


@kernel(inline="always")
def _list_port(g, s, p, c, stamp, m):
    """List port ``p`` as the ``m``-th of class ``c``'s fill (its usage before is 0 unless
    its last fill listed it too); returns how many are listed."""
    if s.seen[p] != -stamp:
        s.before[p] = 0.0
    s.seen[p] = stamp
    s.ports[m] = p
    s.residual[p], s.count[p] = g.room[p, c], g.open_weight[p, c]
    return m + 1


@kernel
def _usage_changed(g, s, c, m):
    """End class ``c``'s fill: the classes below see the ports whose usage changed as
    stale, and its ports ``s.ports[:m]`` are the ones its next fill clears."""
    for p in g.fill_ports[c, :g.class_n_fill[c]]:
        if g.usage[p, c] != s.before[p]:
            stale_below(g, p, c)
    for k in range(m):
        p = s.ports[k]
        if g.usage[p, c] != s.before[p]:
            stale_below(g, p, c)
        g.fill_ports[c, k] = p
    g.class_n_fill[c] = m


@kernel
def _list_groups(g, c):
    """Put the open groups of class ``c`` in ``g.unfrozen``; return how many."""
    m = 0
    grp = g.class_head[c]
    while grp >= 0:
        g.unfrozen[m] = grp
        m += 1
        grp = g.class_next[grp]
    return m


@kernel
def _rounds(g, s, f, ports, c, m, rounds, now):
    """Up to ``rounds`` parallel rounds over the ``m`` groups of ``g.unfrozen``; returns how
    many are left unfrozen (the first of ``g.unfrozen``).

    A round visits only the ports some unfrozen group still crosses (kept in ``s.heap``,
    free until the heap takes over; at first, every one of ``ports``), and a port is a
    bottleneck when its share is the smallest of its groups' (``key <= LOWEST``), read
    where needed rather than stored."""
    frozen = g.counts[STAMP]
    busy = s.heap
    n = len(ports)
    for k in range(n):
        busy[k] = ports[k]
    while m and rounds:
        rounds -= 1
        for p in busy[:n]:
            s.key[p] = s.residual[p] / s.count[p]
            s.round[p, LOWEST], s.round[p, TOTAL] = np.inf, 0.0
        for i in range(m):  # each group's share: the smallest of its ports'
            grp = g.unfrozen[i]
            share = np.inf
            for q in g.path[grp]:
                if q < 0:
                    break
                share = min(share, s.key[q])
            g.fill[grp] = share
            for q in g.path[grp]:
                if q < 0:
                    break
                s.round[q, LOWEST] = min(s.round[q, LOWEST], share)
        kept = 0
        for i in range(m):
            grp = g.unfrozen[i]
            path = g.path[grp]
            hit = False
            for q in path:
                if q < 0:
                    break
                hit = hit or s.key[q] <= s.round[q, LOWEST]
            if not hit:
                g.unfrozen[kept] = grp
                kept += 1
                continue
            g.mark[grp] = frozen
            finish_time(g, grp, now, f.level, f.size, f.member_next, FINISH_RTOL)
            load = g.fill[grp] * g.weight[grp]
            for q in path:
                if q < 0:
                    break
                g.usage[q, c] += load
                s.round[q, TOTAL] += load
                s.count[q] -= g.weight[grp]
        g.counts[N_FROZEN] += m - kept
        still = 0
        for p in busy[:n]:
            s.residual[p] -= s.round[p, TOTAL]
            if s.key[p] <= s.round[p, LOWEST] or s.residual[p] < 0.0:
                s.residual[p] = 0.0
            if s.count[p] > 0:
                busy[still] = p
                still += 1
        n, m = still, kept
    return m


@kernel
def _heap_fill(g, s, f, ports, c, now, record, resume):
    """Water-fill class ``c``'s unfrozen groups with a heap of ``ports`` (module docstring),
    each keyed at its position in the class's port list (ties go to the earlier one).

    With ``record``, the fill is written down for a later one to resume (module
    docstring): each group frozen keeps the step that froze it and its load, and joins
    the class's freeze list; each step keeps the last group it froze and the class's
    earliest finish times so far. ``resume > 0`` continues the fill recorded last from
    that step: the groups frozen before it keep their rates, and ``ports``, at the start
    of ``s.heap``, are the ones :func:`_rewind` listed (each is read before its slot is
    written)."""
    n = len(ports)
    for i in range(n):
        p = ports[i]
        k = g.class_pos[p, c]
        s.key[k] = s.residual[p] / s.count[p] if s.count[p] > 0 else np.inf
        s.heap[i] = k
    for i in range(n // 2 - 1, -1, -1):
        sift_down(s.heap, s.key, n, i)
    frozen = g.counts[STAMP]
    width = g.path.shape[1]
    size = n
    step = max(resume, 0)
    last = g.step_last[c, step - 1] if step > 0 else -1  # the freeze list so far
    n_frozen = g.step_frozen[c, step - 1] if step > 0 else 0
    tiers = record and g.tier_weight.shape[1] > 0
    if tiers:  # the steps to redo freeze their groups anew
        for k in range(step, g.class_steps[c]):
            for q in g.tier_row[c, k, :g.tier_n_row[c, k]]:
                g.tier_weight[c, k, q] = 0
            g.tier_n_row[c, k] = 0
    if step > 0:
        soonest_before(g, c, step)
    n_new = 0  # groups this fill freezes, added to g.counts[N_FROZEN] once, at its end
    while size:
        p, level, size = next_bottleneck(g, s.heap, s.key, s.residual, s.count, c, size)
        if p < 0:
            break
        earliest, earliest_done = np.inf, np.inf  # of the groups this step freezes
        h = g.port_head[p, c]
        while h >= 0:
            grp = h // width
            if g.mark[grp] != frozen and not 0 <= g.step[grp] < resume:
                g.mark[grp] = frozen
                n_new += 1
                _freeze(g, s, f, grp, p, c, level, now)
                if record:
                    g.step[grp] = step
                    g.load[grp] = level * g.weight[grp]
                    earliest, earliest_done = min(earliest, g.finish_at[grp]), min(earliest_done, g.done_at[grp])
                    link_frozen(g, c, last, grp)
                    last = grp
                    n_frozen += 1
                if tiers:
                    for q in g.path[grp]:
                        if q < 0:
                            break
                        if g.tier_weight[c, step, q] == 0:
                            g.tier_row[c, step, g.tier_n_row[c, step]] = q
                            g.tier_n_row[c, step] += 1
                        g.tier_weight[c, step, q] += g.weight[grp]
            h = g.hop_next[h]
        s.residual[p], s.count[p] = 0.0, 0
        if record:
            g.step_port[c, step], g.step_level[c, step] = p, level
            end_step(g, c, step, last, n_frozen, earliest, earliest_done)
            step += 1
    g.counts[N_FROZEN] += n_new
    if record:
        g.class_resume[c] = g.class_steps[c] = step  # nothing to redo, until a group of the class loses flows
        link_frozen(g, c, last, -1)


@kernel
def _rewind(g, s, ports, c, resume):
    """Go back to step ``resume`` (> 0) of class ``c``'s recorded fill: the groups it froze
    from that step on (its freeze list from there, those since emptied too) take their
    loads off their ports and count there again with the flows they have now. The ports
    they cross go to the start of ``s.heap``, with what the groups kept leave them as
    residual; the others keep their usage. Returns how many were listed, or -1 if the
    list is broken (an emptied group's number went to a group of another class, which
    may have relinked it): then every port is as :func:`_open_ports` left it, for a
    whole fill."""
    for p in ports:
        g.usage[p, c] = s.before[p]
        s.count[p] = -1  # not touched yet
    stamp = g.counts[STAMP]
    n = 0
    grp = after(g, c, g.step_last[c, resume - 1])
    while grp >= 0:
        if g.klass[grp] != c:
            for p in ports:
                s.residual[p], s.count[p], g.usage[p, c] = g.room[p, c], g.open_weight[p, c], 0.0
            return -1
        load = g.load[grp]
        for q in g.path[grp]:
            if q < 0:
                break
            if s.seen[q] != stamp:  # no open flow of the class left here
                continue
            if s.count[q] < 0:
                s.count[q] = 0
                s.heap[n] = q
                n += 1
            g.usage[q, c] -= load
            s.count[q] += g.weight[grp]
        grp = g.freeze_next[grp]
    for i in range(n):
        p = s.heap[i]
        g.usage[p, c] = max(g.usage[p, c], 0.0)
        s.residual[p] = max(g.room[p, c] - g.usage[p, c], 0.0)
    return n


@kernel
def _freeze(g, s, f, grp, bottleneck, c, level, now):
    """Group ``grp`` gets fill ``level`` per flow; its ports carry it (the bottleneck's own
    residual and count are cleared by the caller)."""
    g.fill[grp] = level
    finish_time(g, grp, now, f.level, f.size, f.member_next, FINISH_RTOL)
    carry(g, s.residual, s.count, grp, bottleneck, c, level)


