"""Groups of active flows that move in step: one virtual clock each, and who crosses which port.

Max-min fairness gives every flow of one path (*route*) and one class the same rate, so
the fluid backend keeps its active flows in *groups*, one per (route, class), and does
per event only what costs the number of groups, never of flows:

* **A virtual clock per group.** ``clock[g]`` is the bytes each flow of group ``g`` has
  sent since the group was made. A flow joining with ``remaining`` bytes to go gets the
  *level* ``clock + remaining`` and is done when the clock reaches it, so bringing every
  flow's bytes up to date (a *tally*) is one addition per group, the group's next finish
  is its smallest level (its member ``first_done``), and a flow's bytes sent are
  ``size - (level - clock)``, computed when asked.
* **Who crosses which port.** Each group's hops are linked into one list per (port,
  class), with the number of flows of that class on the port (``port_weight``) and, per
  class, the set of ports it uses (``class_ports``) and the list of its open groups
  (``class_head``, ``class_next``): what water-filling (:mod:`.waterfill`) walks, kept up
  to date as groups come and go instead of rebuilt. Each class also keeps the ports its
  last fill gave a rate (``fill_ports``, the only ones where it has ``usage``) and the
  ports where its room may have changed since (``stale_ports``): a port new to the
  class, or one where a higher class's usage or the explicit rates changed.
* **Parked groups.** A port the classes above (and explicit rates) leave no room for a
  class is *full* for it (``full``, as of the class's last fill), and every group of the
  class crossing it gets rate 0 whatever the rest of the network does. Such a group is
  *parked*: its hops sit in the (port, class) lists ``park_head`` instead of
  ``port_head``, it leaves its class's list, and it counts in ``port_weight`` but not in
  ``open_weight``, so water-filling never visits it. ``blocked`` counts the full ports
  of a group's route; a group is parked while it is non-zero. Under strict priority most
  groups of the low classes are parked (70% of them at load 0.5 on a k=16 fat-tree), so
  a fill costs the groups that can send, not the ones starved.
* **Explicit rates.** A flow holding an explicit rate (Varys' MADD) gets a group of its
  own (``alone``): its rate is its explicit rate plus its group's fill. Such a group is
  parked like any other where its class has no room (its fill is 0 then), but it goes
  on sending at its explicit rate: it stays among the groups whose clocks move
  (``opened``), and the earliest finish times of all such groups are kept apart
  (``parked_soonest``), since no fill visits them. Right after a decision MADD leaves
  every flow crossing a saturated port; the room flows free as they finish unparks
  groups again until the next one.

A decision moving all of a class's flows to a class that has none (the coflows behind one
that finished moving up, under policies that give each coflow a class) moves the class
whole (:func:`move_class`): its lists and weights swap places with the empty class's and
its groups are relabelled, where moving its flows one by one costs a leave and a join each.

Group numbers are reused once a group empties; the live ones are ``live[:counts[N_LIVE]]``
(each with its explicit rate beside it in ``live_given``, which the per-port sums of
explicit rates read in order), the ones whose clocks move (open, or parked with an
explicit rate) ``opened[:counts[N_OPEN]]``, each with its ``done_at`` and its rate beside
it in ``open_done`` and ``open_rate``: the loop looks for the groups due at each instant a
flow finishes, and moves their clocks at each instant time moves, and reading those values
in order costs less than reading each group's. Hop ``j`` of group ``g`` is port ``path[g, j]`` and entry
``g * width + j`` of the port lists (``width``: hops of the longest route). Each group
keeps its own copy of its route's ports: live groups reuse low numbers, so water-filling
reads their ports from a table the size of the active groups rather than from the route
table, which grows with every flow ever started.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ...sched.fill import pop_min, sift_down
from .columns import Columns
from .flows import ACTIVE
from .kernel import kernel

__all__ = ["Groups", "GroupTable", "N_LIVE", "N_FREE", "STAMP", "N_OPEN", "PARKED_DUE", "N_RERATED", "N_RESUMED",
           "N_RELEVELED", "PARKED_STALE", "N_CLASS_MOVES", "N_FROZEN", "N_STEPPED", "TIER_PORTS", "push_front", "unlink",
           "set_full", "set_due", "carry", "move_class", "parked_times", "refresh_parked", "stale_room", "stale_below"]

#: Entries of :attr:`Groups.counts`: live groups, free group numbers, water-fill stamps so far (one a class
#: fill), open groups, whether a group was parked done (within the finish tolerance of its size)
#: since the last collection of finished flows, and groups whose rate changed since the coflow
#: meter last looked (``rerated[:counts[N_RERATED]]``), fills that resumed a recorded one, fills
#: that only worked out its levels again (:mod:`.waterfill`), whether a parked group with an
#: explicit rate was unparked or freed since ``parked_soonest`` was last worked out, classes
#: moved whole (:func:`move_class`), groups frozen one by one by water-filling (a fill's work),
#: and fills redone over the steps of the recorded one (:mod:`.steps`).
(N_LIVE, N_FREE, STAMP, N_OPEN, PARKED_DUE, N_RERATED, N_RESUMED, N_RELEVELED, PARKED_STALE, N_CLASS_MOVES,
 N_FROZEN, N_STEPPED) = range(12)

#: Networks of at most this many ports keep, per class, the flows each step of its recorded
#: fill froze on every port (``tier_weight``: classes x ports x ports, as floats, 2 MB per class
#: at 512 ports) and which ports those are (``tier_row``, 1 MB more), which lets a fill work
#: out the levels alone (:mod:`.record`).
TIER_PORTS = 512

#: A class moved whole finds its groups by reading every live group when its flows' hops
#: number at least the live groups over this (:func:`move_class`): reading them in order
#: costs a few nanoseconds a group, walking the hop lists one dependent load a hop.
SCAN_RATIO = 8

#: Per-group arrays: dtype and the value of an unused group.
_GROUP_COLUMNS = {
    "route": (np.int64, -1), "klass": (np.int64, 0), "alone": (np.bool_, False), "weight": (np.int64, 0),
    "fill": (np.float64, 0.0), "given": (np.float64, 0.0), "clock": (np.float64, 0.0),
    "first": (np.int64, -1), "first_done": (np.int64, -1), "finish_at": (np.float64, np.inf),
    "done_at": (np.float64, np.inf), "finish_rate": (np.float64, -1.0),
    "live_pos": (np.int64, -1), "mark": (np.int64, 0), "live": (np.int64, -1), "live_given": (np.float64, 0.0),
    "unfrozen": (np.int64, -1), "class_next": (np.int64, -1), "class_prev": (np.int64, -1), "blocked": (np.int64, 0),
    "opened": (np.int64, -1), "open_pos": (np.int64, -1), "open_done": (np.float64, np.inf),
    "open_rate": (np.float64, -1.0), "rerated": (np.int64, -1), "is_rerated": (np.bool_, False),
    "step": (np.int64, -1), "load": (np.float64, 0.0), "freeze_next": (np.int64, -1),
}


class Groups(NamedTuple):
    """The group table's arrays, as the compiled event loop takes them."""

    route: np.ndarray         #: row of the route matrix
    klass: np.ndarray
    alone: np.ndarray         #: a flow with an explicit rate, not findable by (route, class)
    weight: np.ndarray        #: flows in the group
    fill: np.ndarray          #: each flow's share of its class's max-min fill, bits per second
    given: np.ndarray         #: the explicit rate of an ``alone`` group's flow (0 otherwise)
    clock: np.ndarray         #: bytes each flow sent since the group was made, as of the last tally
    first: np.ndarray         #: head of the member list (a record; -1: none)
    first_done: np.ndarray    #: the member with the smallest level (-1: to be found again)
    finish_at: np.ndarray     #: when that member sends its last byte at the current rates
    done_at: np.ndarray       #: when it is within ``FINISH_RTOL`` of its size of done (it counts as done then)
    finish_rate: np.ndarray   #: the rate ``finish_at`` and ``done_at`` were worked out for (-1: none)
    live_pos: np.ndarray      #: position in ``live``
    mark: np.ndarray          #: the stamp of the last water-fill that froze the group
    live: np.ndarray
    live_given: np.ndarray    #: ``given`` of the group at each position of ``live``
    unfrozen: np.ndarray      #: water-filling's list of the groups of a class not frozen yet
    class_next: np.ndarray    #: the per-class lists of open (not parked) groups
    class_prev: np.ndarray
    blocked: np.ndarray       #: full ports on the group's route (parked while > 0)
    opened: np.ndarray        #: the groups whose clocks move: open ones, and parked ``alone`` ones
    open_pos: np.ndarray      #: position in ``opened`` (-1: parked without an explicit rate, or free)
    open_done: np.ndarray     #: ``done_at`` of the group at each position of ``opened``
    open_rate: np.ndarray     #: and the rate its clock moves at (``given + fill``, set with its finish times)
    rerated: np.ndarray       #: the groups whose rate changed since the coflow meter last looked
    is_rerated: np.ndarray    #: whether a group is in ``rerated``
    step: np.ndarray          #: the step of its class's last recorded fill that froze it (see :mod:`.waterfill`)
    load: np.ndarray          #: the load that fill put on each of its ports (its rate times its flows then)
    freeze_next: np.ndarray   #: the next group that fill froze (the class's freeze list)
    free: np.ndarray          #: unused group numbers, the next one last
    counts: np.ndarray
    slot: np.ndarray          #: route * n_classes + class -> its group (-1: none); not for ``alone`` ones
    path: np.ndarray          #: (group, j) -> the port of its hop j (-1 past its last)
    hop_next: np.ndarray      #: the per-(port, class) lists of hop entries
    hop_prev: np.ndarray
    class_head: np.ndarray    #: class -> its first open group (-1: none)
    port_head: np.ndarray     #: (port, class) -> first hop entry of an open group (-1: none)
    park_head: np.ndarray     #: (port, class) -> first hop entry of a parked group (-1: none)
    port_weight: np.ndarray   #: (port, class) -> flows of the class crossing the port
    open_weight: np.ndarray   #: (port, class) -> those of them in open groups
    full: np.ndarray          #: (port, class) -> the class's last fill found no room on the port
    class_ports: np.ndarray   #: (class, k) -> the k-th port the class uses
    class_n_ports: np.ndarray
    class_soonest: np.ndarray  #: (class, 0): its groups' earliest ``finish_at``, (class, 1): ``done_at``
    parked_soonest: np.ndarray  #: the same over the parked ``alone`` groups (no fill visits them)
    class_dirty: np.ndarray    #: 1 if the class's groups changed since its last fill
    class_pos: np.ndarray     #: (port, class) -> position in class_ports (-1: not used)
    class_crossings: np.ndarray  #: class -> its flows' hops (``port_weight`` summed over its ports)
    usage: np.ndarray         #: (port, class) -> the class's fill on the port, bits per second
    fill_ports: np.ndarray    #: (class, k) -> the k-th port its last fill gave a rate (the only ones with ``usage``)
    class_n_fill: np.ndarray   #: class -> how many ``fill_ports`` it has
    room: np.ndarray          #: (port, class) -> what the classes above left the class, at its last fill
    stale: np.ndarray         #: (port, class) -> ``room`` may have changed since (the port's usage above, or explicit rates)
    stale_ports: np.ndarray   #: (class, k) -> the k-th of its stale ports
    class_n_stale: np.ndarray  #: class -> how many ``stale_ports`` it has
    step_last: np.ndarray     #: (class, step) -> the last group the recorded fill froze by that step
    step_earliest: np.ndarray  #: (class, step, 0 / 1) -> earliest ``finish_at`` / ``done_at`` of the step's groups
    step_frozen: np.ndarray   #: (class, step) -> the groups the recorded fill froze by that step
    class_resume: np.ndarray  #: class -> the first step its next fill must redo (-1: all; its step count: none)
    class_steps: np.ndarray   #: class -> the steps of its last recorded fill
    step_port: np.ndarray     #: (class, step) -> the bottleneck of that step
    step_level: np.ndarray    #: (class, step) -> the level its groups froze at
    tier_weight: np.ndarray   #: (class, step, port) -> flows the step froze that cross the port (empty past TIER_PORTS)
    tier_row: np.ndarray      #: (class, step, k) -> the k-th port the step's flows crossed when recorded
    tier_n_row: np.ndarray    #: (class, step) -> how many ``tier_row`` it has
    tier_moved: np.ndarray    #: (class, port) -> a flow of its recorded fill's steps left the port since
    freeze_head: np.ndarray   #: class -> the first group of its freeze list (-1: none)
    class_plan: np.ndarray    #: (row, class): a class change's plan (``core.reclass``; rows: see there)


class GroupTable(Columns):
    """The group arrays, grown in Python (the compiled loop never allocates them).

    Parameters
    ----------
    n_ports, n_classes:
        The network's ports and priority classes.
    capacity:
        Groups to hold. A live group holds at least one flow, and a flow leaves its group
        before it joins another, so the fluid backend keeps it at least the flows not done
        (sending or waiting to) whenever it adds flows; :func:`group_for` raises if a group
        is ever refused.
    width:
        Hops of the longest route.
    """

    ARRAYS = Groups

    def __init__(self, n_ports: int, n_classes: int, capacity: int = 1024, width: int = 6) -> None:
        for name, (dtype, fill) in _GROUP_COLUMNS.items():
            setattr(self, name, np.full(capacity, fill, dtype=dtype))
        self.path = np.full((capacity, width), -1, dtype=np.int32)
        self.hop_next = np.full(capacity * width, -1, dtype=np.int64)
        self.hop_prev = np.full(capacity * width, -1, dtype=np.int64)
        self.free = np.arange(capacity - 1, -1, -1, dtype=np.int64)
        self.counts = np.zeros(N_STEPPED + 1, dtype=np.int64)
        self.counts[N_FREE] = capacity
        self.slot = np.full(n_classes, -1, dtype=np.int64)
        self.class_head = np.full(n_classes, -1, dtype=np.int64)
        self.port_head = np.full((n_ports, n_classes), -1, dtype=np.int64)
        self.park_head = np.full((n_ports, n_classes), -1, dtype=np.int64)
        self.port_weight = np.zeros((n_ports, n_classes), dtype=np.int64)
        self.open_weight = np.zeros((n_ports, n_classes), dtype=np.int64)
        self.full = np.zeros((n_ports, n_classes), dtype=np.bool_)
        self.class_ports = np.zeros((n_classes, n_ports), dtype=np.int64)
        self.class_n_ports = np.zeros(n_classes, dtype=np.int64)
        self.class_soonest = np.full((n_classes, 2), np.inf)
        self.parked_soonest = np.full(2, np.inf)
        self.class_dirty = np.zeros(n_classes, dtype=np.int64)
        self.class_pos = np.full((n_ports, n_classes), -1, dtype=np.int64)
        self.class_crossings = np.zeros(n_classes, dtype=np.int64)
        self.usage = np.zeros((n_ports, n_classes))
        self.fill_ports = np.zeros((n_classes, n_ports), dtype=np.int64)
        self.class_n_fill = np.zeros(n_classes, dtype=np.int64)
        self.room = np.zeros((n_ports, n_classes))
        self.stale = np.zeros((n_ports, n_classes), dtype=np.bool_)
        self.stale_ports = np.zeros((n_classes, n_ports), dtype=np.int64)
        self.class_n_stale = np.zeros(n_classes, dtype=np.int64)
        self.step_last = np.full((n_classes, n_ports), -1, dtype=np.int64)
        self.step_earliest = np.full((n_classes, n_ports, 2), np.inf)
        self.step_frozen = np.zeros((n_classes, n_ports), dtype=np.int64)
        self.class_resume = np.full(n_classes, -1, dtype=np.int64)
        self.class_steps = np.zeros(n_classes, dtype=np.int64)
        self.step_port = np.zeros((n_classes, n_ports), dtype=np.int64)
        self.step_level = np.zeros((n_classes, n_ports))
        tiers = n_ports if n_ports <= TIER_PORTS else 0
        self.tier_weight = np.zeros((n_classes, tiers, tiers))
        self.tier_row = np.zeros((n_classes, tiers, tiers), dtype=np.int32)
        self.tier_n_row = np.zeros((n_classes, tiers), dtype=np.int64)
        self.tier_moved = np.zeros((n_classes, n_ports), dtype=np.bool_)
        self.freeze_head = np.full(n_classes, -1, dtype=np.int64)
        self.class_plan = np.zeros((3, n_classes), dtype=np.int64)

    def reserve(self, capacity: int, routes: int, width: int) -> None:
        """Hold at least ``capacity`` groups, ``routes`` routes and routes of ``width`` hops."""
        if capacity > len(self.route):
            old, new = len(self.route), max(capacity, 2 * len(self.route))
            for name, (dtype, fill) in _GROUP_COLUMNS.items():
                setattr(self, name, np.concatenate([getattr(self, name), np.full(new - old, fill, dtype=dtype)]))
            for name in ("hop_next", "hop_prev"):  # entries g * width + j of the new groups
                setattr(self, name, np.concatenate([getattr(self, name),
                                                    np.full((new - old) * self.width, -1, dtype=np.int64)]))
            self.path = np.concatenate([self.path, np.full((new - old, self.width), -1, dtype=np.int32)])
            n_free = int(self.counts[N_FREE])
            free = np.empty(new, dtype=np.int64)  # room for every group to be free at once
            free[:new - old] = np.arange(new - 1, old - 1, -1)
            free[new - old:new - old + n_free] = self.free[:n_free]
            self.free = free
            self.counts[N_FREE] = n_free + new - old
        if width > self.width:
            self._relink(width)
        n_classes = self.port_head.shape[1]
        if routes * n_classes > len(self.slot):
            self.slot = np.concatenate([self.slot, np.full(max(routes * n_classes, len(self.slot)), -1,
                                                           dtype=np.int64)])

    def _relink(self, width: int) -> None:
        """Renumber every hop entry for ``width`` hops per group (a longer route came: rare)."""
        path = np.full((len(self.route), width), -1, dtype=np.int32)
        path[:, :self.width] = self.path
        self.path = path
        self.hop_next = np.full(len(self.route) * width, -1, dtype=np.int64)
        self.hop_prev = np.full(len(self.route) * width, -1, dtype=np.int64)
        self.port_head[:] = -1
        self.park_head[:] = -1
        g = self.arrays()
        for grp in self.live_groups().tolist():
            _link_hops(g, grp)

    @property
    def width(self) -> int:
        """Hops per group: of the longest route so far."""
        return self.path.shape[1]

    def live_groups(self) -> np.ndarray:
        """Numbers of the live groups (a view)."""
        return self.live[:self.counts[N_LIVE]]


# -- kernels --------------------------------------------------------------------------------

@kernel(inline="always")
def push_front(nxt, prv, head, x):
    """Put ``x`` at the front of the doubly linked list (``nxt``, ``prv``; -1 ends it)
    whose first entry is ``head``; return the new first entry (``x``)."""
    nxt[x], prv[x] = head, -1
    if head >= 0:
        prv[head] = x
    return x


@kernel(inline="always")
def unlink(nxt, prv, head, x):
    """Take ``x`` out of the doubly linked list whose first entry is ``head``; return the
    list's first entry after."""
    after, before = nxt[x], prv[x]
    if before >= 0:
        nxt[before] = after
    else:
        head = after
    if after >= 0:
        prv[after] = before
    return head


@kernel
def group_for(g, route_path, route, klass, alone, given):
    """The group a flow of ``route`` and ``klass`` joins: its (route, class) group, made if
    there is none, or (``alone``) a new group of its own with explicit rate ``given``."""
    key = route * g.port_head.shape[1] + klass
    if not alone and g.slot[key] >= 0:
        return g.slot[key]
    if g.counts[N_FREE] == 0:
        raise RuntimeError("the fluid backend's group table is full: more groups than flows not done (a bug)")
    g.counts[N_FREE] -= 1
    grp = g.free[g.counts[N_FREE]]
    g.route[grp], g.klass[grp], g.alone[grp], g.given[grp] = route, klass, alone, given
    g.weight[grp], g.fill[grp], g.clock[grp] = 0, 0.0, 0.0
    g.first[grp], g.first_done[grp], g.finish_at[grp], g.done_at[grp] = -1, -1, np.inf, np.inf
    g.finish_rate[grp] = -1.0
    g.live_given[g.counts[N_LIVE]] = given
    _set_add(g.live, g.live_pos, g.counts, N_LIVE, grp)
    if not alone:
        g.slot[key] = grp
    row = route_path[route]
    blocked = 0
    for j in range(g.path.shape[1]):
        g.path[grp, j] = row[j] if j < len(row) else -1
        if j < len(row) and row[j] >= 0:
            blocked += g.full[row[j], klass]
    g.blocked[grp] = blocked
    if not blocked:
        g.class_head[klass] = push_front(g.class_next, g.class_prev, g.class_head[klass], grp)
    if not blocked or alone:
        _open(g, grp)
    _link_hops(g, grp)
    return grp


@kernel
def join(g, grp, r, remaining, level, member_next, member_prev, group):
    """Record ``r`` joins group ``grp`` with ``remaining`` bytes to send (the clock is tallied to now)."""
    level[r] = g.clock[grp] + remaining
    group[r] = grp
    g.first[grp] = push_front(member_next, member_prev, g.first[grp], r)
    if g.weight[grp] == 0 or (g.first_done[grp] >= 0 and level[r] < level[g.first_done[grp]]):
        g.first_done[grp] = r
        g.finish_rate[grp] = -1.0
    g.weight[grp] += 1
    g.class_resume[g.klass[grp]] = -1
    _add_weight(g, grp, 1)


@kernel
def leave(g, grp, r, level, member_next, member_prev, group):
    """Record ``r`` leaves group ``grp``; return its remaining bytes. An emptied group is freed."""
    remaining = level[r] - g.clock[grp]
    g.first[grp] = unlink(member_next, member_prev, g.first[grp], r)
    group[r] = -1
    g.weight[grp] -= 1
    c = g.klass[grp]
    if g.blocked[grp] or g.step[grp] < 0:  # not in the recorded fill: the next fill is whole
        g.class_resume[c] = -1
    elif g.class_resume[c] >= 0:  # the recorded fill stands up to the step that froze the group
        g.class_resume[c] = min(g.class_resume[c], g.step[grp])
        if g.tier_weight.shape[1]:
            for p in g.path[grp]:
                if p < 0:
                    break
                g.tier_weight[c, g.step[grp], p] -= 1
                g.tier_moved[c, p] = True
    _add_weight(g, grp, -1)
    if g.weight[grp] == 0:
        _free(g, grp)
    elif g.first_done[grp] == r:
        g.first_done[grp] = -1  # found again by finish_time, once however many members leave
    return remaining


@kernel
def move_class(g, c, d, klass, member_next):
    """Every group of class ``c`` goes to class ``d``, which has none: a decision that moves
    all of a class's flows to one class (a coflow moving up when the one ahead finishes).

    The two classes swap their per-port lists, weights and fill state; the groups that
    moved, and their flows (``klass``, ``member_next``: the flow store's), are relabelled.
    ``d``'s rooms are worked out again at its next fill, and so are those of the classes
    below the higher of the two on its ports (another class's usage is above them now);
    both records start afresh (their next fills are whole), as after a join. Costs a pass
    over the ports and the class's groups and flows, where moving the flows one by one costs
    a leave and a join each. The class's groups are found in the live groups, read in
    order, when its hops are at least 1 / :data:`SCAN_RATIO` of their number, else by
    walking its hop lists (one dependent load, often a cache miss, per hop).
    """
    for a in (g.class_head, g.class_n_ports, g.class_dirty, g.class_crossings, g.class_n_fill, g.class_n_stale):
        a[c], a[d] = a[d], a[c]
    for rows in (g.class_ports, g.fill_ports, g.stale_ports):
        for k in range(rows.shape[1]):
            rows[c, k], rows[d, k] = rows[d, k], rows[c, k]
    for k in range(2):
        g.class_soonest[c, k], g.class_soonest[d, k] = g.class_soonest[d, k], g.class_soonest[c, k]
    for p in range(g.port_head.shape[0]):
        for cols in (g.port_head, g.park_head, g.port_weight, g.open_weight, g.class_pos):
            cols[p, c], cols[p, d] = cols[p, d], cols[p, c]
        g.full[p, c], g.full[p, d] = g.full[p, d], g.full[p, c]
        g.usage[p, c], g.usage[p, d] = g.usage[p, d], g.usage[p, c]
        g.room[p, c], g.room[p, d] = g.room[p, d], g.room[p, c]
        g.stale[p, c], g.stale[p, d] = g.stale[p, d], g.stale[p, c]
    if g.class_crossings[d] * SCAN_RATIO >= g.counts[N_LIVE]:
        for grp in g.live[:g.counts[N_LIVE]]:
            if g.klass[grp] == c:
                _relabel(g, grp, c, d, klass, member_next)
    else:
        width = g.path.shape[1]
        for p in g.class_ports[d, :g.class_n_ports[d]]:
            for h in (g.port_head[p, d], g.park_head[p, d]):
                while h >= 0:
                    grp, h = h // width, g.hop_next[h]
                    if g.klass[grp] == c:  # else relabelled at another port
                        _relabel(g, grp, c, d, klass, member_next)
    for p in g.class_ports[d, :g.class_n_ports[d]]:
        stale_room(g, p, d)
        stale_below(g, p, min(c, d))
    g.class_dirty[c] = g.class_dirty[d] = 1
    g.class_resume[c] = g.class_resume[d] = -1
    g.counts[N_CLASS_MOVES] += 1


@kernel(inline="always")
def _relabel(g, grp, c, d, klass, member_next):
    """Group ``grp`` of class ``c``, and its flows, are now of class ``d``."""
    g.klass[grp] = d
    if not g.alone[grp]:
        n_classes = g.port_head.shape[1]
        g.slot[g.route[grp] * n_classes + c] = -1
        g.slot[g.route[grp] * n_classes + d] = grp
    r = g.first[grp]
    while r >= 0:
        klass[r] = d
        r = member_next[r]


@kernel
def _smallest_level(first, level, member_next):
    """The member (from ``first`` on) with the smallest level, the earliest in the list on ties."""
    best = first
    r = member_next[first]
    while r >= 0:
        if level[r] < level[best]:
            best = r
        r = member_next[r]
    return best


@kernel
def _add_weight(g, grp, delta):
    """``delta`` flows more of the group's class on each port of its route, open ones too if
    the group is (ports enter and leave the class's port set as their first flow comes and
    their last goes)."""
    c = g.klass[grp]
    g.class_dirty[c] = 1
    is_open = g.blocked[grp] == 0
    for p in g.path[grp]:
        if p < 0:
            break
        if is_open:
            g.open_weight[p, c] += delta
        g.class_crossings[c] += delta
        before = g.port_weight[p, c]
        g.port_weight[p, c] = before + delta
        if before == 0:
            k = g.class_n_ports[c]
            g.class_ports[c, k], g.class_pos[p, c] = p, k
            g.class_n_ports[c] = k + 1
            stale_room(g, p, c)
        elif before + delta == 0:
            k, last = g.class_pos[p, c], g.class_n_ports[c] - 1
            moved = g.class_ports[c, last]
            g.class_ports[c, k], g.class_pos[moved, c] = moved, k
            g.class_pos[p, c] = -1
            g.class_n_ports[c] = last
            if g.usage[p, c] != 0.0:
                g.usage[p, c] = 0.0
                stale_below(g, p, c)


@kernel(inline="always")
def stale_room(g, p, c):
    """Class ``c``'s room on port ``p`` is to be worked out again at its next fill."""
    if not g.stale[p, c]:
        g.stale[p, c] = True
        g.stale_ports[c, g.class_n_stale[c]] = p
        g.class_n_stale[c] += 1


@kernel
def stale_below(g, p, c):
    """Class ``c``'s usage of port ``p`` changed: so did the room of every class below it
    that uses the port (``c = -1``: every class, for a change of explicit rates)."""
    for below in range(c + 1, g.usage.shape[1]):
        if g.class_pos[p, below] >= 0:
            stale_room(g, p, below)


@kernel
def _free(g, grp):
    """Return an empty group's number for reuse; unlink its hops."""
    c = g.klass[grp]
    _unlink_hops(g, grp, g.park_head if g.blocked[grp] else g.port_head)
    if not g.alone[grp]:
        g.slot[g.route[grp] * g.port_head.shape[1] + c] = -1
    if not g.blocked[grp]:
        g.class_head[c] = unlink(g.class_next, g.class_prev, g.class_head[c], grp)
    elif g.alone[grp]:
        g.counts[PARKED_STALE] = 1
    if g.open_pos[grp] >= 0:
        _close(g, grp)
    g.live_given[g.live_pos[grp]] = g.live_given[g.counts[N_LIVE] - 1]
    _set_remove(g.live, g.live_pos, g.counts, N_LIVE, grp)
    g.free[g.counts[N_FREE]] = grp
    g.counts[N_FREE] += 1


@kernel
def _link_hops(g, grp):
    """Put group ``grp``'s hops at the head of their (port, class) lists: the open ones,
    or the parked ones if it is parked."""
    heads = g.park_head if g.blocked[grp] else g.port_head
    c = g.klass[grp]
    width = g.path.shape[1]
    path = g.path[grp]
    for j in range(len(path)):
        if path[j] < 0:
            break
        heads[path[j], c] = push_front(g.hop_next, g.hop_prev, heads[path[j], c], grp * width + j)


@kernel
def _unlink_hops(g, grp, heads):
    """Take group ``grp``'s hops out of their (port, class) lists, whose first entries are ``heads``."""
    c = g.klass[grp]
    width = g.path.shape[1]
    path = g.path[grp]
    for j in range(len(path)):
        if path[j] < 0:
            break
        heads[path[j], c] = unlink(g.hop_next, g.hop_prev, heads[path[j], c], grp * width + j)


@kernel
def set_full(g, p, c, full, now, level, size, member_next, rtol):
    """Port ``p`` becomes ``full`` (or no longer) for class ``c``: the class's groups crossing
    it are parked or unparked (module docstring). A group parked gets fill 0 and its finish
    times at its rate then (0, or its explicit rate; the clocks tallied to ``now``); one
    unparked is open for the class's fill."""
    g.full[p, c] = full
    width = g.path.shape[1]
    h = g.park_head[p, c]
    while h >= 0:  # parked already: one full port more or less
        grp, h = h // width, g.hop_next[h]
        g.blocked[grp] += 1 if full else -1
        if g.blocked[grp] == 0:
            _move(g, grp, False)
    if not full:
        return
    h = g.port_head[p, c]
    while h >= 0:
        grp, h = h // width, g.hop_next[h]
        g.blocked[grp] = 1
        _move(g, grp, True)
        parked_times(g, grp, now, level, size, member_next, rtol)


@kernel
def parked_times(g, grp, now, level, size, member_next, rtol):
    """Group ``grp`` was just parked: fill 0, and its finish times for what it still sends
    (nothing, or its explicit rate; the clocks tallied to ``now``). One done already is
    collected at the next step (``PARKED_DUE``); one with an explicit rate counts in
    ``parked_soonest``, since no fill visits it."""
    g.fill[grp] = 0.0
    finish_time(g, grp, now, level, size, member_next, rtol)
    if g.done_at[grp] <= now:
        g.counts[PARKED_DUE] = 1
    if g.alone[grp]:
        _fold_parked(g, grp)


@kernel(inline="always")
def _fold_parked(g, grp):
    """Parked ``alone`` group ``grp``'s finish times into ``parked_soonest``."""
    g.parked_soonest[0] = min(g.parked_soonest[0], g.finish_at[grp])
    g.parked_soonest[1] = min(g.parked_soonest[1], g.done_at[grp])


@kernel
def refresh_parked(g):
    """Work ``parked_soonest`` out again if a parked group with an explicit rate was
    unparked or freed since (its times may have been the earliest)."""
    if not g.counts[PARKED_STALE]:
        return
    g.counts[PARKED_STALE] = 0
    g.parked_soonest[0] = g.parked_soonest[1] = np.inf
    for grp in g.opened[:g.counts[N_OPEN]]:
        if g.blocked[grp]:
            _fold_parked(g, grp)


@kernel
def _move(g, grp, park):
    """Park an open group (``park``) or open a parked one: its hops, class list and open weight
    move with it (``blocked`` is already set). An ``alone`` group's clock moves either way."""
    c = g.klass[grp]
    _unlink_hops(g, grp, g.port_head if park else g.park_head)
    _link_hops(g, grp)
    if park:
        g.class_head[c] = unlink(g.class_next, g.class_prev, g.class_head[c], grp)
        if not g.alone[grp]:
            _close(g, grp)
    else:
        g.class_head[c] = push_front(g.class_next, g.class_prev, g.class_head[c], grp)
        if not g.alone[grp]:
            _open(g, grp)
        else:
            g.counts[PARKED_STALE] = 1
    delta = -g.weight[grp] if park else g.weight[grp]
    for p in g.path[grp]:
        if p < 0:
            break
        g.open_weight[p, c] += delta


@kernel(inline="always")
def _set_add(members, pos, counts, k, grp):
    """Add ``grp`` to the set ``members[:counts[k]]`` (``pos``: where each member is)."""
    pos[grp] = counts[k]
    members[counts[k]] = grp
    counts[k] += 1


@kernel(inline="always")
def _set_remove(members, pos, counts, k, grp):
    """Take ``grp`` out of the set ``members[:counts[k]]``: the last member takes its place."""
    last = members[counts[k] - 1]
    members[pos[grp]], pos[last] = last, pos[grp]
    counts[k] -= 1
    pos[grp] = -1


@kernel(inline="always")
def _open(g, grp):
    """Group ``grp``'s clock starts moving: it joins ``opened``, its ``done_at`` and rate beside it."""
    g.open_done[g.counts[N_OPEN]] = g.done_at[grp]
    g.open_rate[g.counts[N_OPEN]] = g.finish_rate[grp]
    _set_add(g.opened, g.open_pos, g.counts, N_OPEN, grp)


@kernel(inline="always")
def _close(g, grp):
    """Group ``grp``'s clock stops: it leaves ``opened``, whose last member takes its place."""
    g.open_done[g.open_pos[grp]] = g.open_done[g.counts[N_OPEN] - 1]
    g.open_rate[g.open_pos[grp]] = g.open_rate[g.counts[N_OPEN] - 1]
    _set_remove(g.opened, g.open_pos, g.counts, N_OPEN, grp)


@kernel(inline="always")
def set_due(g, grp, finish_at, done_at):
    """Group ``grp``'s first member sends its last byte at ``finish_at`` and counts as done
    from ``done_at`` (kept in ``open_done`` too while the group is in ``opened``)."""
    g.finish_at[grp], g.done_at[grp] = finish_at, done_at
    if g.open_pos[grp] >= 0:
        g.open_done[g.open_pos[grp]] = done_at


@kernel
def tally_groups(g, dt):
    """Advance the clock of every group that sends (``opened``) by ``dt`` seconds at its
    flows' rate (a parked group sends nothing, or its explicit rate): the rate its finish
    times were worked out for, which every allocation sets (:func:`finish_time`) before
    time moves."""
    for i in range(g.counts[N_OPEN]):
        g.clock[g.opened[i]] += g.open_rate[i] * dt / 8


@kernel(inline="always")
def finish_time(g, grp, now, level, size, member_next, rtol):
    """When group ``grp``'s first member sends its last byte at its new rate, and when it
    comes within ``rtol`` of its size of done (``now`` if it is; ``inf`` if the group sends
    nothing), folded into its class's earliest; called as water-filling sets the group's
    rate (the clocks tallied to ``now``). A group whose first member left has it found
    again here.

    Times worked out for the rate the group still has, and its first member, stand: its
    clock has moved at that rate since, so they would come out the same up to round-off,
    and most fills give most groups the rate they had (81% of the rates set on the first
    250 coflows of the FB trace under ``fair``). A group whose rate does change is listed in
    ``rerated``, for the coflow meter's crossing times (:func:`~.coflows.bound_crossings`).

    A flow counts as done from ``done_at`` on, so a flow whose last byte and another
    event fall on one instant up to round-off of the clocks finishes at that instant,
    in the rates it was sending at, whichever event the round-off put first."""
    rate = g.given[grp] + g.fill[grp]
    if g.first_done[grp] < 0 or rate != g.finish_rate[grp]:
        if g.first_done[grp] < 0:
            g.first_done[grp] = _smallest_level(g.first[grp], level, member_next)
        if rate != g.finish_rate[grp] and not g.is_rerated[grp]:
            g.is_rerated[grp] = True
            g.rerated[g.counts[N_RERATED]] = grp
            g.counts[N_RERATED] += 1
        g.finish_rate[grp] = rate
        if g.open_pos[grp] >= 0:
            g.open_rate[g.open_pos[grp]] = rate
        r = g.first_done[grp]
        remaining = level[r] - g.clock[grp]
        slack = rtol * size[r]
        if remaining <= slack:
            set_due(g, grp, now, now)
        elif rate > 0:
            set_due(g, grp, now + remaining * 8 / rate, now + (remaining - slack) * 8 / rate)
        else:
            set_due(g, grp, np.inf, np.inf)
    c = g.klass[grp]
    g.class_soonest[c, 0] = min(g.class_soonest[c, 0], g.finish_at[grp])
    g.class_soonest[c, 1] = min(g.class_soonest[c, 1], g.done_at[grp])


@kernel
def bytes_sent(g, f, r, dt):
    """Bytes record ``r`` (of the flow store's arrays ``f``) has sent ``dt`` seconds after the
    last tally: from its group's clock while active, as recorded otherwise."""
    if f.state[r] != ACTIVE:
        return f.sent[r]
    grp = f.group[r]
    remaining = f.level[r] - g.clock[grp] - (g.given[grp] + g.fill[grp]) * dt / 8
    return min(max(f.size[r] - remaining, 0.0), f.size[r])


@kernel(inline="always")
def carry(g, residual, count, grp, bottleneck, c, level):
    """Group ``grp`` of class ``c``, frozen at ``level`` per flow at port ``bottleneck``: its
    load goes on the class's usage of its ports, and off the ``residual`` of the others,
    with its flows off their ``count`` (a water-fill's; the bottleneck's own are cleared
    by the caller)."""
    w = g.weight[grp]
    load = level * w
    for q in g.path[grp]:
        if q < 0:
            break
        g.usage[q, c] += load
        if q != bottleneck:
            residual[q] = max(residual[q] - load, 0.0)
            count[q] -= w


@kernel(inline="always")
def next_bottleneck(g, heap, key, residual, count, c, size):
    """Pop the next bottleneck of class ``c``'s water-fill off the heap ``heap[:size]`` of
    positions in its port list, keyed by share: ports whose flows all froze elsewhere are
    dropped, and a stale key (freezing elsewhere raised the port's share) is raised and
    sifted down, until the top holds its port's share. Returns the port (-1 once the heap
    is empty), its level and the heap's new size."""
    while size:
        k = heap[0]
        p = g.class_ports[c, k]
        if count[p] == 0:
            size = pop_min(heap, key, size)
            continue
        level = residual[p] / count[p]
        if level > key[k]:
            key[k] = level
            sift_down(heap, key, size, 0)
            continue
        return p, level, pop_min(heap, key, size)
    return -1, 0.0, 0
