"""A dense class's fill redone over the steps of its recorded one, when relevelling fails.

A relevel (:mod:`.record`) keeps every group at the step that froze it and only works the
steps' levels out again; it fails when a group that lost flows rises above a later step's
bottleneck it crosses. The heap then froze every group from the departures' step on
again, one by one. Counted on the whole FB trace (an instrumented copy, every such fill's
groups before and after it), those fills kept nearly every group at its bottleneck: 99.84%
under ``fair``, 99.68% under ``fifo-lm``, 98.92% under ``sincronia``, and split only 2.9%,
5.0% and 13.9% of the steps they redid between two bottlenecks or more. What changed was
the order of the steps and their levels.

So such a fill water-fills the *steps*: each step's flows are counted per port (the
record's rows, ``tier_weight``), a heap of ports keyed by share finds the bottleneck as
the group heap does, and a step whose every flow crosses the port popped freezes whole,
its load taken off its ports row by row; a step with only some flows there is split, its
groups there frozen one by one. The groups of a step frozen whole then get its level and
finish times, as a relevel gives them. A group heap visits each group at every port it
crosses and writes its record hop by hop; here only the split steps' groups are.

Any partition of the class's flows into steps gives the max-min fill this way (a step
freezes whole only when all its flows cross the bottleneck); the record's makes splits
rare. The rates are a whole fill's up to round-off, like a resumed heap's.

Explicit rates (Varys) only take room from the class, as the classes above do, so the
same holds under them. It saves little there: under Varys every group is one flow (a
class per coflow, with one flow per machine pair, or a flow with an explicit rate of its
own), and the work left per group, its rate and finish times, is most of a fill. Whole FB
trace, ``varys``: 123.0 s against 123.1 s and 109.9 s against 124.6 s (two pairs, against
resuming the heap; groups frozen one by one 1,149 M -> 298 M); one earlier pair, 158 s
against 133 s, was not seen again.
"""

from __future__ import annotations

import numpy as np

from ...sched.fill import sift_down
from .flows import FINISH_RTOL
from .groups import N_FROZEN, STAMP, carry, finish_time, next_bottleneck
from .kernel import kernel
from .record import after, end_step, link_frozen, soonest_before

__all__ = ["step_fill"]


@kernel
def step_fill(g, s, f, ports, c, now, resume):
    """Redo class ``c``'s recorded fill from step ``resume`` (a split: see
    :func:`~.record.resume_point`) over its steps (module docstring), ``ports`` being the
    ports the fill gives a rate, with the usage of the class cleared there. The steps
    before ``resume`` keep their groups and levels. Returns ``False``, having changed
    nothing, if the freeze list is broken (a freed group's number went to a group of
    another class): the caller then fills whole."""
    n_old = g.class_steps[c]
    if not _list_intact(g, c, resume, n_old):
        return False
    n_cells = _take_cells(g, s, c, resume, n_old)
    _bundle_groups(g, s, c, resume)
    _kept_usage(g, s, ports, c, resume, n_cells)
    size = _heap_of_ports(g, s, ports, c)
    soonest_before(g, c, resume)
    last = g.step_last[c, resume - 1] if resume > 0 else -1
    n_frozen = g.step_frozen[c, resume - 1] if resume > 0 else 0
    step = resume
    while size:
        p, level, size = next_bottleneck(g, s.heap, s.key, s.residual, s.count, c, size)
        if p < 0:
            break
        s.soonest[0] = s.soonest[1] = np.inf
        for i in range(s.port_first[p], s.port_first[p + 1]):
            j = s.port_cells[i]
            b = s.cell_step[j]
            if s.bundle_done[b] or s.cell_w[j] == 0:
                continue
            if s.cell_w[j] == s.bundle_w[b]:
                last, n_frozen = _freeze_step(g, s, f, b, p, c, step, level, now, last, n_frozen)
            else:
                last, n_frozen = _split_step(g, s, f, b, p, c, step, level, now, last, n_frozen)
        s.residual[p], s.count[p] = 0.0, 0
        g.step_port[c, step], g.step_level[c, step] = p, level
        end_step(g, c, step, last, n_frozen, s.soonest[0], s.soonest[1])
        step += 1
    link_frozen(g, c, last, -1)
    g.class_resume[c] = g.class_steps[c] = step
    return True


@kernel
def _list_intact(g, c, resume, n_old):
    """Whether class ``c``'s freeze list from step ``resume`` on holds only groups of the
    class at steps ``resume`` to ``n_old`` (or freed ones)."""
    grp = after(g, c, g.step_last[c, resume - 1] if resume > 0 else -1)
    while grp >= 0:
        if g.klass[grp] != c or (g.live_pos[grp] >= 0 and not resume <= g.step[grp] < n_old):
            return False
        grp = g.freeze_next[grp]
    return True


@kernel
def _take_cells(g, s, c, resume, n_old):
    """Copy the rows of steps ``resume`` to ``n_old`` (their flows per port, now) to the
    scratch cells and clear them from the record, which the fill writes anew; each step's
    flows (those crossing its bottleneck: all of them) go to ``bundle_w``. Returns how many
    cells there are."""
    w = g.tier_weight[c]
    m = 0
    for k in range(resume, n_old):
        s.step_cell[k] = m
        for q in g.tier_row[c, k, :g.tier_n_row[c, k]]:
            if w[k, q] > 0:
                s.cell_port[m], s.cell_w[m], s.cell_step[m] = q, w[k, q], k
                m += 1
            w[k, q] = 0.0
        s.bundle_w[k] = 0.0
        for j in range(s.step_cell[k], m):
            if s.cell_port[j] == g.step_port[c, k]:
                s.bundle_w[k] = s.cell_w[j]
        s.bundle_done[k] = s.bundle_w[k] == 0
        s.bundle_head[k] = -1
        g.tier_n_row[c, k] = 0
    s.step_cell[n_old] = m
    return m


@kernel
def _bundle_groups(g, s, c, resume):
    """Link the live groups of class ``c``'s freeze list from step ``resume`` on into one
    list per step (``bundle_head``, through ``freeze_next``; the freed ones drop out)."""
    grp = after(g, c, g.step_last[c, resume - 1] if resume > 0 else -1)
    while grp >= 0:
        nxt = g.freeze_next[grp]
        if g.live_pos[grp] >= 0:
            k = g.step[grp]
            g.freeze_next[grp] = s.bundle_head[k]
            s.bundle_head[k] = grp
        grp = nxt


@kernel
def _kept_usage(g, s, ports, c, resume, n_cells):
    """The class's usage of ``ports`` by the steps before ``resume``; the flows of the
    steps redone on each port (``count``), what is left there (``residual``), and the
    cells of each port (``port_cells[port_first[p]:port_first[p + 1]]``)."""
    w = g.tier_weight[c]
    for p in ports:
        g.usage[p, c] = 0.0
        s.count[p] = 0
    for k in range(resume):
        for q in g.tier_row[c, k, :g.tier_n_row[c, k]]:
            g.usage[q, c] += g.step_level[c, k] * w[k, q]
    s.port_first[:] = 0
    for j in range(n_cells):
        q = s.cell_port[j]
        s.count[q] += int(s.cell_w[j])
        s.port_first[q + 1] += 1
    for q in range(len(s.port_first) - 1):
        s.port_first[q + 1] += s.port_first[q]
        s.cell_at[q] = s.port_first[q]
    for j in range(n_cells):
        q = s.cell_port[j]
        s.port_cells[s.cell_at[q]] = j
        s.cell_at[q] += 1
    for p in ports:
        s.residual[p] = max(g.room[p, c] - g.usage[p, c], 0.0)


@kernel
def _heap_of_ports(g, s, ports, c):
    """A min-heap (``s.heap``) of the ports of ``ports`` with flows to freeze, each keyed at
    its position in class ``c``'s port list by its share; returns its size."""
    n = 0
    for p in ports:
        if s.count[p] > 0:
            k = g.class_pos[p, c]
            s.key[k] = s.residual[p] / s.count[p]
            s.heap[n] = k
            n += 1
    for i in range(n // 2 - 1, -1, -1):
        sift_down(s.heap, s.key, n, i)
    return n


@kernel
def _freeze_step(g, s, f, b, p, c, step, level, now, last, n_frozen):
    """Freeze old step ``b``, every flow of which crosses port ``p``, at ``level`` as part of
    new step ``step``: its loads go on its ports row by row, its groups get the level.
    Returns the freeze list's last group and length."""
    for j in range(s.step_cell[b], s.step_cell[b + 1]):
        wq = s.cell_w[j]
        if wq == 0:
            continue
        q = s.cell_port[j]
        load = level * wq
        g.usage[q, c] += load
        if q != p:
            s.residual[q] = max(s.residual[q] - load, 0.0)
            s.count[q] -= int(wq)
        _add_row(g, c, step, q, wq)
    s.bundle_done[b] = True
    grp = s.bundle_head[b]
    while grp >= 0:
        nxt = g.freeze_next[grp]
        _give(g, s, f, grp, c, step, level, now)
        link_frozen(g, c, last, grp)
        last = grp
        n_frozen += 1
        grp = nxt
    return last, n_frozen


@kernel
def _split_step(g, s, f, b, p, c, step, level, now, last, n_frozen):
    """Freeze, at ``level`` as part of new step ``step``, the groups of old step ``b`` that
    cross port ``p`` (not all of its flows do), one by one; the others stay in ``b``.
    Returns the freeze list's last group and length."""
    for j in range(s.step_cell[b], s.step_cell[b + 1]):
        s.cell_at[s.cell_port[j]] = j
    prev = -1
    grp = s.bundle_head[b]
    while grp >= 0:
        nxt = g.freeze_next[grp]
        crosses = False
        for q in g.path[grp]:
            if q < 0:
                break
            crosses = crosses or q == p
        if not crosses:
            prev = grp
            grp = nxt
            continue
        if prev >= 0:
            g.freeze_next[prev] = nxt
        else:
            s.bundle_head[b] = nxt
        wgt = g.weight[grp]
        carry(g, s.residual, s.count, grp, p, c, level)
        for q in g.path[grp]:
            if q < 0:
                break
            s.cell_w[s.cell_at[q]] -= wgt
            _add_row(g, c, step, q, wgt)
        s.bundle_w[b] -= wgt
        g.counts[N_FROZEN] += 1
        _give(g, s, f, grp, c, step, level, now)
        link_frozen(g, c, last, grp)
        last = grp
        n_frozen += 1
        grp = nxt
    s.bundle_done[b] = s.bundle_w[b] == 0
    return last, n_frozen


@kernel(inline="always")
def _add_row(g, c, step, q, w):
    """``w`` flows of step ``step`` of class ``c``'s record cross port ``q``."""
    if g.tier_weight[c, step, q] == 0:
        g.tier_row[c, step, g.tier_n_row[c, step]] = q
        g.tier_n_row[c, step] += 1
    g.tier_weight[c, step, q] += w


@kernel(inline="always")
def _give(g, s, f, grp, c, step, level, now):
    """Group ``grp`` of class ``c`` freezes at ``level`` at step ``step`` of the record,
    with its finish times (folded into the step's earliest, ``s.soonest``)."""
    g.fill[grp] = level
    g.load[grp] = level * g.weight[grp]
    g.step[grp] = step
    g.mark[grp] = g.counts[STAMP]
    finish_time(g, grp, now, f.level, f.size, f.member_next, FINISH_RTOL)
    s.soonest[0] = min(s.soonest[0], g.finish_at[grp])
    s.soonest[1] = min(s.soonest[1], g.done_at[grp])
