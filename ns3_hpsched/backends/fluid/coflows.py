"""The fluid backend's coflow meter: bytes sent per coflow and the watched thresholds.

A coflow's bytes are its finished flows' sizes (``done_bytes``) plus what its unfinished
flows have sent, read from their groups' clocks (:func:`~.groups.bytes_sent`) through
the list of its unfinished flows; so nothing is spent on coflows nobody asks about.
Between allocations a coflow's bytes grow linearly (the sum of its active flows' rates),
so the time a watch is crossed is computed exactly rather than polled. The watches are
arrays the compiled event loop (:mod:`.core`) reads and updates: coflow indices
``watched[:n]`` in increasing order, with their thresholds and crossing times (``n`` is
``count[0]``).

A crossing time stands while its coflow's rate does. After an allocation the watched
coflows marked ``dirty`` -- a flow of theirs joined or left a group (it started, finished,
or changed class or explicit rate), or a group holding one of their flows changed rate
(the group table's ``rerated`` list) -- keep only a lower bound on theirs: the time the
coflow would cross at its ports' capacity (``low_at``: the bytes still to send at its
last walk, at the sum of its senders' or its receivers' port rates, whichever is less;
``send_cap``, ``recv_cap``). A coflow's flows are walked again (``exact``) only when that
bound comes no later than the next event (:func:`walk_crossing`), so every crossing
before the next event is exact, and a coflow whose rate keeps changing far from its
threshold is not walked at every change. Under Aalo every coflow is watched: walking the
dirty ones after every allocation walked 2.6 billion flows on the whole FB trace (279,851
walks); walking them only then, 121 million (21,760 walks).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from .columns import Columns
from .flows import ACTIVE
from .groups import N_RERATED, bytes_sent, push_front, unlink
from .kernel import kernel

__all__ = ["CoflowMeter", "Coflows"]


class Coflows(NamedTuple):
    """The coflow meter's arrays, as the compiled event loop takes them."""

    head: np.ndarray         #: first unfinished flow (a record; -1: none)
    done_bytes: np.ndarray   #: bytes of the finished flows
    watched: np.ndarray
    threshold: np.ndarray
    cross_at: np.ndarray     #: the watch's crossing time if ``exact``, else a lower bound (``low_at``)
    low_at: np.ndarray       #: the earliest it could be crossed, as of its coflow's last walk
    exact: np.ndarray
    send_cap: np.ndarray     #: per coflow: the capacity of the ports its flows leave their hosts by
    recv_cap: np.ndarray     #: and of those they reach their hosts by (a port counted once per batch)
    count: np.ndarray
    crossed: np.ndarray      #: the event loop's output: indices crossed at a step
    dirty: np.ndarray        #: the coflow's rate may have changed since its crossing time was worked out


class CoflowMeter(Columns):
    """Bytes of every coflow seen so far, and the watches on some of them.

    Coflows are numbered densely (*index*) in the order first seen; ``-1`` is "no coflow".
    """

    ARRAYS = Coflows

    def __init__(self) -> None:
        self._index: dict[int, int] = {}
        self._ids: list[int] = []
        self.head = np.full(64, -1, dtype=np.int64)
        self.done_bytes = np.zeros(64)
        self.watched = np.empty(16, dtype=np.int64)
        self.threshold = np.empty(16)
        self.cross_at = np.empty(16)
        self.low_at = np.empty(16)
        self.exact = np.zeros(16, dtype=np.bool_)
        self.send_cap = np.zeros(64)
        self.recv_cap = np.zeros(64)
        self.count = np.zeros(1, dtype=np.int64)
        self.crossed = np.empty(16, dtype=np.int64)
        self.dirty = np.zeros(64, dtype=np.bool_)

    def index(self, coflow_id: int) -> int:
        """Dense index of ``coflow_id`` (new coflows get the next one); -1 stays -1."""
        if coflow_id == -1:
            return -1
        idx = self._index.get(coflow_id)
        if idx is None:
            idx = self._index[coflow_id] = len(self._ids)
            self._ids.append(coflow_id)
            if idx == len(self.head):
                self.head = np.concatenate([self.head, np.full(len(self.head), -1, dtype=np.int64)])
                self.done_bytes = np.concatenate([self.done_bytes, np.zeros(len(self.done_bytes))])
                self.dirty = np.concatenate([self.dirty, np.zeros(len(self.dirty), dtype=np.bool_)])
                self.send_cap = np.concatenate([self.send_cap, np.zeros(len(self.send_cap))])
                self.recv_cap = np.concatenate([self.recv_cap, np.zeros(len(self.recv_cap))])
        return idx

    def indices(self, coflow_ids: np.ndarray) -> np.ndarray:
        """Dense indices of several coflow ids (new ones numbered in order of first appearance)."""
        if len(coflow_ids) and (coflow_ids == coflow_ids[0]).all():  # the usual batch: one coflow
            return np.full(len(coflow_ids), self.index(int(coflow_ids[0])), dtype=np.int64)
        ids, first, inverse = np.unique(coflow_ids, return_index=True, return_inverse=True)
        idx = np.empty(len(ids), dtype=np.int64)
        for k in np.argsort(first).tolist():
            idx[k] = self.index(int(ids[k]))
        return idx[inverse.reshape(-1)]

    def add_ports(self, coflow: np.ndarray, first: np.ndarray, last: np.ndarray, capacity: np.ndarray) -> None:
        """New flows of coflows ``coflow`` (indices) leave their hosts by ports ``first`` and
        reach theirs by ``last``: each distinct port adds its capacity to its coflow's bound
        (a coflow spanning several batches may count a port again: still a bound). The
        lower bounds of those coflows' watches, worked out with less capacity, are dropped."""
        mine = coflow >= 0
        n_ports = len(capacity)
        for ports, cap in ((first, self.send_cap), (last, self.recv_cap)):
            pairs = np.unique(coflow[mine] * n_ports + ports[mine])  # (coflow, port) as one key
            np.add.at(cap, pairs // n_ports, capacity[pairs % n_ports])
        n = int(self.count[0])
        self.low_at[:n][np.isin(self.watched[:n], coflow[mine])] = -np.inf

    def ids(self, indices: np.ndarray) -> list[int]:
        """Coflow ids of dense indices."""
        return [self._ids[i] for i in indices.tolist()]

    def watch(self, idx: int, threshold_bytes: float) -> None:
        """Watch coflow ``idx`` for ``threshold_bytes`` (replacing any earlier watch on it); its
        crossing time is unknown (``-inf``, not exact) until the loop walks it."""
        self.unwatch(idx)
        n = int(self.count[0])
        if n == len(self.watched):
            grow = lambda a: np.concatenate([a, np.empty_like(a)])
            self.watched, self.threshold, self.cross_at, self.low_at, self.exact, self.crossed = map(
                grow, (self.watched, self.threshold, self.cross_at, self.low_at, self.exact, self.crossed))
        k = int(np.searchsorted(self.watched[:n], idx))
        for array, value in ((self.watched, idx), (self.threshold, threshold_bytes), (self.cross_at, -np.inf),
                             (self.low_at, -np.inf), (self.exact, False)):
            array[k + 1:n + 1] = array[k:n].copy()
            array[k] = value
        self.count[0] = n + 1

    def watching(self, idx: int, threshold_bytes: float) -> bool:
        """Whether coflow ``idx`` is watched for ``threshold_bytes``."""
        k = self._position(idx)
        return k >= 0 and self.threshold[k] == threshold_bytes

    def unwatch(self, idx: int) -> None:
        """Forget the watch on coflow ``idx``, if any."""
        n, k = int(self.count[0]), self._position(idx)
        if k >= 0:
            for array in (self.watched, self.threshold, self.cross_at, self.low_at, self.exact):
                array[k:n - 1] = array[k + 1:n].copy()
            self.count[0] = n - 1

    def _position(self, idx: int) -> int:
        """Where coflow ``idx``'s watch is in ``watched`` (-1: it has none)."""
        n = int(self.count[0])
        k = int(np.searchsorted(self.watched[:n], idx))
        return k if k < n and self.watched[k] == idx else -1


# -- kernels --------------------------------------------------------------------------------

@kernel
def link_flows(m, f, recs):
    """Put new records at the head of their coflows' lists of unfinished flows."""
    for r in recs:
        c = f.coflow[r]
        if c >= 0:
            m.head[c] = push_front(f.coflow_next, f.coflow_prev, m.head[c], r)


@kernel(inline="always")
def flow_moved(m, f, r):
    """Record ``r`` joined or left a group: its coflow's crossing time is worked out again."""
    if f.coflow[r] >= 0:
        m.dirty[f.coflow[r]] = True


@kernel
def rates_moved(m, f, g):
    """The coflows with a flow in a group whose rate changed (``g.rerated``) get their crossing
    times worked out again; the list is emptied."""
    watching = m.count[0] > 0
    for grp in g.rerated[:g.counts[N_RERATED]]:
        g.is_rerated[grp] = False
        r = g.first[grp] if watching else -1
        while r >= 0:
            flow_moved(m, f, r)
            r = f.member_next[r]
    g.counts[N_RERATED] = 0


@kernel
def flow_finished(m, f, r):
    """Record ``r`` finished: out of its coflow's list, its size into the coflow's bytes."""
    c = f.coflow[r]
    if c >= 0:
        m.head[c] = unlink(f.coflow_next, f.coflow_prev, m.head[c], r)
        m.done_bytes[c] += f.size[r]


@kernel
def coflow_sent(m, f, g, c, dt):
    """Bytes coflow ``c`` has sent ``dt`` seconds after the last tally."""
    return _sent_and_rate(m, f, g, c, dt)[0]


@kernel
def _sent_and_rate(m, f, g, c, dt):
    """Bytes coflow ``c`` has sent ``dt`` seconds after the last tally, and the sum of its
    active flows' rates (bits per second): one walk of its unfinished flows."""
    sent, rate = m.done_bytes[c], 0.0
    r = m.head[c]
    while r >= 0:
        sent += bytes_sent(g, f, r, dt)
        if f.state[r] == ACTIVE:
            rate += g.given[f.group[r]] + g.fill[f.group[r]]
        r = f.coflow_next[r]
    return sent, rate


@kernel
def bound_crossings(m):
    """The watches of the ``dirty`` coflows fall back to their lower bounds (their rates changed)."""
    for k in range(m.count[0]):
        c = m.watched[k]
        if m.dirty[c]:
            m.dirty[c] = False
            m.exact[k] = False
            m.cross_at[k] = m.low_at[k]


@kernel
def next_crossing(m, f, g, t, now, dt):
    """The earliest of ``t`` and the watches' crossing times (the clocks ``dt`` seconds past
    their last tally at ``now``). A watch known only by its lower bound is walked
    (:func:`walk_crossing`) if that bound is no later than the earliest time so far, so
    every crossing no later than the result is exact."""
    for k in range(m.count[0]):
        if m.exact[k]:
            t = min(t, m.cross_at[k])
    for k in range(m.count[0]):
        if not m.exact[k] and m.cross_at[k] <= t:
            walk_crossing(m, f, g, k, now, dt)
            t = min(t, m.cross_at[k])
    return t


@kernel(error_model="numpy")
def walk_crossing(m, f, g, k, now, dt):
    """Watch ``k``'s exact crossing time at the current rates, from one walk of its coflow's
    unfinished flows (their bytes ``dt`` seconds past the last tally, at ``now``), and the
    earliest it could be crossed whatever the rates (:data:`low_at`), until the next walk."""
    c = m.watched[k]
    sent, rate = _sent_and_rate(m, f, g, c, dt)
    remaining = m.threshold[k] - sent
    m.cross_at[k] = now if remaining <= 0 else now + remaining * 8 / rate
    m.low_at[k] = now if remaining <= 0 else now + remaining * 8 / min(m.send_cap[c], m.recv_cap[c])
    m.exact[k] = True


@kernel
def pop_crossed(m, t):
    """Move the watches crossed by ``t`` to ``crossed`` (in index order; their watches end);
    return how many."""
    n, k, fired = m.count[0], 0, 0
    for i in range(n):
        if m.cross_at[i] <= t:
            m.crossed[fired] = m.watched[i]
            fired += 1
        else:
            m.watched[k], m.threshold[k], m.cross_at[k] = m.watched[i], m.threshold[i], m.cross_at[i]
            m.low_at[k], m.exact[k] = m.low_at[i], m.exact[i]
            k += 1
    m.count[0] = k
    return fired
