"""The fluid backend's coflow meter: bytes sent per coflow and the watched thresholds.

A coflow's bytes are its finished flows' sizes (``done_bytes``) plus what its unfinished
flows have sent, read from their groups' clocks (:func:`~.groups.bytes_sent`) through
the list of its unfinished flows; so nothing is spent on coflows nobody asks about.
Between allocations a coflow's bytes grow linearly (the sum of its active flows' rates),
so the time a watch is crossed is computed exactly rather than polled. The watches are
arrays the compiled event loop (:mod:`.core`) reads and updates: coflow indices
``watched[:n]`` in increasing order, with their thresholds and crossing times (``n`` is
``count[0]``).

A crossing time stands while its coflow's rate does, so after an allocation only the
watched coflows marked ``dirty`` have their flows walked again: a flow of theirs joined or
left a group (it started, finished, or changed class or explicit rate), a group holding one
of their flows changed rate (the group table's ``rerated`` list), or the watch is new.
Under Aalo every coflow is watched: walking all their unfinished flows after every
allocation took 43% of the compiled time on the first 250 FB coflows; on the whole trace
about 1% of the watches are worked out again per allocation.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

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
    cross_at: np.ndarray
    count: np.ndarray
    crossed: np.ndarray      #: the event loop's output: indices crossed at a step
    dirty: np.ndarray        #: the coflow's rate may have changed since its crossing time was worked out


class CoflowMeter:
    """Bytes of every coflow seen so far, and the watches on some of them.

    Coflows are numbered densely (*index*) in the order first seen; ``-1`` is "no coflow".
    """

    def __init__(self) -> None:
        self._index: dict[int, int] = {}
        self._ids: list[int] = []
        self.head = np.full(64, -1, dtype=np.int64)
        self.done_bytes = np.zeros(64)
        self.watched = np.empty(16, dtype=np.int64)
        self.threshold = np.empty(16)
        self.cross_at = np.empty(16)
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

    def ids(self, indices: np.ndarray) -> list[int]:
        """Coflow ids of dense indices."""
        return [self._ids[i] for i in indices.tolist()]

    def watch(self, idx: int, threshold_bytes: float) -> None:
        """Watch coflow ``idx`` for ``threshold_bytes`` (replacing any earlier watch on it)."""
        self.unwatch(idx)
        self.dirty[idx] = True
        n = int(self.count[0])
        if n == len(self.watched):
            grow = lambda a: np.concatenate([a, np.empty_like(a)])
            self.watched, self.threshold, self.cross_at, self.crossed = map(
                grow, (self.watched, self.threshold, self.cross_at, self.crossed))
        k = int(np.searchsorted(self.watched[:n], idx))
        for array, value in ((self.watched, idx), (self.threshold, threshold_bytes), (self.cross_at, np.inf)):
            array[k + 1:n + 1] = array[k:n].copy()
            array[k] = value
        self.count[0] = n + 1

    def unwatch(self, idx: int) -> None:
        """Forget the watch on coflow ``idx``, if any."""
        n = int(self.count[0])
        k = int(np.searchsorted(self.watched[:n], idx))
        if k < n and self.watched[k] == idx:
            for array in (self.watched, self.threshold, self.cross_at):
                array[k:n - 1] = array[k + 1:n].copy()
            self.count[0] = n - 1

    def arrays(self) -> Coflows:
        """The arrays, for the compiled loop."""
        return Coflows(*(getattr(self, name) for name in Coflows._fields))


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


@kernel(error_model="numpy")
def update_crossings(m, f, g, now):
    """Exact crossing times of the watches at the current rates (call right after a tally at
    ``now``): worked out again for the ``dirty`` coflows, the others' stand."""
    for k in range(m.count[0]):
        c = m.watched[k]
        if not m.dirty[c]:
            continue
        m.dirty[c] = False
        sent, rate = _sent_and_rate(m, f, g, c, 0.0)
        remaining = m.threshold[k] - sent
        m.cross_at[k] = now if remaining <= 0 else now + remaining * 8 / rate


@kernel
def next_crossing(m):
    """Earliest crossing time of a watch (``inf`` if none will cross at current rates)."""
    t = np.inf
    for k in range(m.count[0]):
        t = min(t, m.cross_at[k])
    return t


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
            k += 1
    m.count[0] = k
    return fired
