"""A class's recorded fill, and relevelling it instead of filling again.

A recorded fill (:mod:`.waterfill`) is a list of *steps*: the bottleneck each pop of the
heap found, the level its groups froze at, the last group frozen by then (the class's
*freeze list* links them in order) and the earliest finish times of its groups. On
networks of at most :data:`~.groups.TIER_PORTS` ports it also keeps how many flows each
step froze that cross each port (``tier_weight``, brought up to date as flows leave), and
which ports those are (``tier_row``).

**Relevelling.** Max-min rates are unique, and a set of bottlenecks gives them if each is
saturated, no port is overloaded, and no group crossing a bottleneck froze higher at an
earlier step. Most refills keep the bottlenecks and move only their levels: on the first
250 FB coflows under ``fair``, the steps of one allocation still gave the max-min rates of
the next in 86% of the allocations (measured offline on every allocation's rates; the
rest broke the order (11%) or a capacity (2%), or a flow had joined). So a fill that
would resume its record -- or fill whole because the classes above changed its rooms,
without filling or emptying a port -- first works the levels out again, step by step (a
step's level: its bottleneck's room, less the loads of the steps before, over its own
flows), checks the three conditions, and, if they hold, gives the groups of the steps it
redid their new levels. Only the steps and ports that a departure, a new room or a changed
level reaches are worked out again; the others keep their values bit for bit, as a
resumed heap fill's would (a rate changed in its last bit sends the coflow meter walking
the group's coflow).

**Where a fill may resume.** Relevelled steps need not have non-decreasing levels (the
conditions are a partial order), and a resumed heap fill relies on its groups freezing no
lower than the ones it keeps. So a fill resumes a record only at a *split*, a step before
which no step froze higher than any step from it on (:func:`resume_point`): the latest
one at or before the step the departures reached, step 0 (a whole fill) if there is
none. A heap's record splits at every step. A relevel costs a pass over the ports each
step's flows cross, so it is tried only where the groups to freeze again would cost more
(:data:`RELEVEL_GAIN`).

Measured on the whole FB trace (fluid, this machine; runs alternated with the code before
in one script, median of the after/before CPU-time ratios), with the same allocations and
average CCT to 9 digits (results move by round-off only: at most 7e-16 relative on the
first 100 coflows; the shipped fluid scenarios are identical):

* relevelling, against refilling: ``fair`` 0.92 (3 pairs, 0.83-0.96), ``aalo`` 0.93,
  ``fifo-lm`` 0.96, ``sincronia`` 0.97 (2 pairs each);
* then resuming records out of order at a split, leaving the groups of steps that stand,
  and passing over each step's own ports (45k to 18k (step, port) cells per relevel under
  ``fair``): ``fair`` 0.82 (4 pairs, 0.80-0.90; 9.4-11.0 s), ``fifo-lm`` 0.86 (2 pairs;
  14.5-15.0 s), ``sincronia`` 0.96 (2 pairs; 31.5-31.8 s), ``aalo`` 1.01 (4 pairs,
  0.91-1.06; 42-47 s). Under ``fair`` the fills done whole fell from 4,793 to about 700
  of 57,951.

What ``aalo`` and ``sincronia`` still fill whole is mostly their lowest class after a
port filled or freed for it (43,512 and 47,673 fills) and the classes too sparse to
record (36,443 under ``aalo``). Handling a port filling up as its groups leaving the
record converted under 2,000 of those fills and saved nothing measurable, so it was left
out; a port freeing opens groups the record does not hold.

Where the groups frozen go now (whole trace, counted with the fill's outcome): under
``fair``, 64.8 M of the 72.1 M freezes are made by the 8,801 fills (of 57,951) whose
relevel failed and which resume the heap at the departures' step; under ``fifo-lm``, 54.2 M
of 80.5 M, by 7,194 such fills of its lowest class (which holds the coflows the seven
classes above it do not, and 70 M of the freezes). Nearly all failures are of order
(``fair``: 8,598, against 203 of capacity): a group that lost flows rises above the level
of a later step at a port it crosses, which then bottlenecks it instead, 35% of the way
through the steps redone on average. Resuming the heap there instead would not help: the
kept steps would then hold a group frozen higher than that port's new level. Counting the
groups of the failed fills' records frozen at or above the lowest level redone (65.1 M)
against those from the departures' step on (64.4 M) shows that resuming by level instead of
by step would not help either. Those fills keep nearly every group at its bottleneck
(99.84%), so a failed relevel now redoes the fill over the record's steps instead
(:mod:`.steps`), freezing one by one only the groups of the steps it splits. Under ``aalo``
and ``sincronia`` the fills after a port filled or freed make 49.6 M of 139.5 M and 57.9 M
of 164.9 M freezes, and the fills whose rooms changed and whose relevel failed or would not
pay 78.6 M and 97.8 M (counted before the fills over steps).
"""

from __future__ import annotations

import numpy as np

from .flows import FINISH_RTOL
from .groups import finish_time
from .kernel import kernel

__all__ = ["RELEVEL_GAIN", "settle", "worth_relevelling", "relevel", "resume_point", "soonest_before", "after",
           "link_frozen", "end_step"]

#: A group the heap freezes costs about as much as this many (step, port) entries of a
#: relevelling pass; a fill relevels only where that makes it cheaper than resuming.
RELEVEL_GAIN = 32


@kernel
def settle(g, c, m, ports):
    """A recorded fill of class ``c`` over ``ports`` ended: no load of its steps has moved
    since."""
    if g.tier_weight.shape[1]:
        for i in range(m):
            g.tier_moved[c, ports[i]] = False


@kernel(inline="always")
def worth_relevelling(g, c, resume, m):
    """Whether relevelling class ``c``'s recorded fill from step ``resume`` over ``m`` ports
    costs less than resuming it: a pass over every step's ports, and over the ``m``, against
    the groups frozen from ``resume`` on (:data:`RELEVEL_GAIN`)."""
    n_steps = g.class_steps[c]
    if not g.tier_weight.shape[1] or n_steps == 0:
        return False
    late = g.step_frozen[c, n_steps - 1] - (g.step_frozen[c, resume - 1] if resume > 0 else 0)
    cells = m
    for k in range(n_steps):
        cells += g.tier_n_row[c, k]
    return late * RELEVEL_GAIN > cells


@kernel
def relevel(g, s, f, ports, c, now, resume, rtol):
    """Redo class ``c``'s recorded fill from step ``resume`` on with its steps as they were:
    each step's groups freeze at its bottleneck again, at the level the flows and room left
    there make (module docstring); returns whether that is the max-min fill (a port may
    carry ``rtol`` of its room more, for round-off). If so, the groups of those steps get
    their new rates and finish times, and ``ports`` (the ports the fill gives a rate, with
    their usage before in ``s.before``) their usage; if not, or if the freeze list is
    broken (a freed group's number went to another class), the caller fills as before.

    The steps' loads are added to the ports row by row (``tier_weight[c, step]`` at the
    ports in ``tier_row``), so a step's bottleneck carries the loads of the steps before it
    when its level is worked out, and ``s.highest`` the highest level among them. Only what
    changed is worked out again: a step's level if its port's load moved (``moved``: a flow
    of the steps left it, or a step crossing it got another level), a port's usage if it
    moved; the rest keep their values bit for bit, as a resumed fill's would. A step whose
    level was not worked out again (``s.kept``) lost no flow either, so its groups, most of
    a relevel's, are left as they are: their rates and finish times stand."""
    w = g.tier_weight[c]
    n_steps = g.class_steps[c]
    level = s.level
    for p in ports:
        s.total[p], s.highest[p] = 0.0, 0.0
    for k in range(n_steps):
        level[k] = g.step_level[c, k]
        if k >= resume:
            p = g.step_port[c, k]
            s.kept[k] = w[k, p] > 0 and not g.tier_moved[c, p]  # a flow of the step leaving would move its port
            if w[k, p] == 0:
                level[k] = 0.0  # an emptied step: its port is one like any other
            elif g.tier_moved[c, p]:
                level[k] = (g.room[p, c] - s.total[p]) / w[k, p]
                if level[k] < s.highest[p]:  # a group of an earlier step would get more than this bottleneck's
                    return False
        moves = level[k] != g.step_level[c, k]
        for p in g.tier_row[c, k, :g.tier_n_row[c, k]]:
            if w[k, p]:
                s.total[p] += level[k] * w[k, p]
                s.highest[p] = max(s.highest[p], level[k])
                g.tier_moved[c, p] |= moves
    for p in ports:
        if g.tier_moved[c, p] and s.total[p] > g.room[p, c] * (1 + rtol):
            return False
    if not _refreeze(g, f, c, now, resume, n_steps, level, s.kept):
        g.class_soonest[c, 0] = g.class_soonest[c, 1] = np.inf
        return False
    for p in ports:
        g.usage[p, c] = s.total[p] if g.tier_moved[c, p] else s.before[p]
    for k in range(resume, n_steps):
        g.step_level[c, k] = level[k]
    g.class_resume[c] = n_steps
    return True


@kernel(inline="always")
def _holds_flows(g, c, k):
    """Whether step ``k`` of class ``c``'s recorded fill still froze flows (without
    ``tier_weight``, the record of a heap fill, whose emptied steps keep their levels in
    order: taken as if it did)."""
    return not g.tier_weight.shape[1] or g.tier_weight[c, k, g.step_port[c, k]] > 0


@kernel
def resume_point(g, s, c, resume):
    """The latest step at or before ``resume`` where class ``c``'s recorded fill splits: no
    step before it froze higher than a step from it on (steps emptied since do not count);
    0 if none. Resumed there, the heap freezes every group it redoes at least as high as
    the groups kept (their ports' shares are at least the lowest level redone), so the
    kept groups stay bottlenecked (module docstring). Uses ``s.level``."""
    highest = 0.0  # of the steps before resume
    for k in range(resume):
        s.level[k] = highest  # of the steps before k
        if _holds_flows(g, c, k):
            highest = max(highest, g.step_level[c, k])
    lowest = np.inf  # of the steps from resume on
    for k in range(resume, g.class_steps[c]):
        if _holds_flows(g, c, k):
            lowest = min(lowest, g.step_level[c, k])
    while resume > 0 and highest > lowest:
        resume -= 1
        if _holds_flows(g, c, resume):
            lowest = min(lowest, g.step_level[c, resume])
        highest = s.level[resume]
    return resume


@kernel
def _refreeze(g, f, c, now, resume, n_steps, level, kept):
    """Give the groups of class ``c``'s steps from ``resume`` on their step's new ``level``,
    with their finish times, and drop the emptied ones from the freeze list; a step that
    ``kept`` its level and groups keeps them as they are, read past in one link. Each step
    keeps its last group and its groups' earliest finish times, as a recorded fill does.
    Returns ``False`` if the list is broken (the steps' records are then stale: the caller
    fills whole)."""
    last, n_frozen, was_frozen = -1, 0, 0  # the list so far, and how many the step before froze when recorded
    if resume > 0:
        last = g.step_last[c, resume - 1]
        n_frozen = was_frozen = g.step_frozen[c, resume - 1]
    soonest_before(g, c, resume)
    grp = after(g, c, last)
    for k in range(resume, n_steps):
        earliest, earliest_done = np.inf, np.inf
        if kept[k]:  # its groups, from grp to its last, stand
            earliest, earliest_done = g.step_earliest[c, k, 0], g.step_earliest[c, k, 1]
            g.class_soonest[c, 0] = min(g.class_soonest[c, 0], earliest)
            g.class_soonest[c, 1] = min(g.class_soonest[c, 1], earliest_done)
            if g.step_frozen[c, k] > was_frozen:
                link_frozen(g, c, last, grp)
                last = g.step_last[c, k]
                n_frozen += g.step_frozen[c, k] - was_frozen
                grp = g.freeze_next[last]
        while grp >= 0 and not kept[k]:
            if g.klass[grp] != c:
                return False
            if g.step[grp] != k:
                break
            nxt = g.freeze_next[grp]
            if g.live_pos[grp] >= 0:  # not emptied
                n_frozen += 1
                g.fill[grp] = level[k]
                g.load[grp] = level[k] * g.weight[grp]
                finish_time(g, grp, now, f.level, f.size, f.member_next, FINISH_RTOL)
                earliest, earliest_done = min(earliest, g.finish_at[grp]), min(earliest_done, g.done_at[grp])
                link_frozen(g, c, last, grp)
                last = grp
            grp = nxt
        was_frozen = g.step_frozen[c, k]
        end_step(g, c, k, last, n_frozen, earliest, earliest_done)
    if grp >= 0:  # a group the steps did not reach
        return False
    link_frozen(g, c, last, -1)
    return True


@kernel
def soonest_before(g, c, k):
    """Class ``c``'s earliest finish times: those of the groups its recorded steps before
    ``k`` froze (a fill keeping them, and redoing the rest, starts from here)."""
    g.class_soonest[c, 0] = g.class_soonest[c, 1] = np.inf
    for j in range(k):
        g.class_soonest[c, 0] = min(g.class_soonest[c, 0], g.step_earliest[c, j, 0])
        g.class_soonest[c, 1] = min(g.class_soonest[c, 1], g.step_earliest[c, j, 1])


@kernel(inline="always")
def after(g, c, last):
    """The group after ``last`` in class ``c``'s freeze list (``last`` -1: its first)."""
    return g.freeze_next[last] if last >= 0 else g.freeze_head[c]


@kernel(inline="always")
def link_frozen(g, c, last, grp):
    """Group ``grp`` (-1: none) follows ``last`` (-1: none, it heads the list) in class ``c``'s freeze list."""
    if last >= 0:
        g.freeze_next[last] = grp
    else:
        g.freeze_head[c] = grp


@kernel(inline="always")
def end_step(g, c, k, last, n_frozen, earliest, earliest_done):
    """Step ``k`` of class ``c``'s recorded fill ends with group ``last`` frozen, the
    ``n_frozen``-th; its groups' earliest ``finish_at`` and ``done_at`` are ``earliest``
    and ``earliest_done``."""
    g.step_last[c, k], g.step_frozen[c, k] = last, n_frozen
    g.step_earliest[c, k, 0], g.step_earliest[c, k, 1] = earliest, earliest_done
