"""The fluid backend's coflow meter: bytes sent per coflow and the watched thresholds.

Between allocations a coflow's sent bytes grow linearly (the sum of its active flows'
rates), so the time a watch is crossed is computed exactly rather than polled. The
watches are arrays the compiled event loop (:mod:`.core`) reads and updates: coflow
indices ``watched[:n]`` in increasing order, with their thresholds and crossing times
(``n`` is ``count[0]``).
"""

from __future__ import annotations

import numba
import numpy as np

__all__ = ["CoflowMeter"]


class CoflowMeter:
    """Sent bytes of every coflow seen so far, and the watches on some of them.

    Coflows are numbered densely (*index*) in the order first seen; ``-1`` is "no coflow".
    Sent bytes are as of the fluid backend's last tally (see
    :class:`~ns3_hpsched.backends.fluid.flows.FlowStore`).
    """

    def __init__(self) -> None:
        self._index: dict[int, int] = {}
        self._ids: list[int] = []
        self.sent = np.zeros(64)
        self.watched = np.empty(16, dtype=np.int64)
        self.threshold = np.empty(16)
        self.cross_at = np.empty(16)
        self.count = np.zeros(1, dtype=np.int64)
        self.crossed = np.empty(16, dtype=np.int64)  # the event loop's output: indices crossed at a step

    def index(self, coflow_id: int) -> int:
        """Dense index of ``coflow_id`` (new coflows get the next one); -1 stays -1."""
        if coflow_id == -1:
            return -1
        idx = self._index.get(coflow_id)
        if idx is None:
            idx = self._index[coflow_id] = len(self._ids)
            self._ids.append(coflow_id)
            if idx == len(self.sent):
                self.sent = np.concatenate([self.sent, np.zeros(len(self.sent))])
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

    @property
    def watching(self) -> bool:
        """Whether any coflow is watched."""
        return bool(self.count[0])


# -- kernels of the event loop (:mod:`.core`) ---------------------------------------------

@numba.njit(cache=True, error_model="numpy")
def _update_crossings(now, active, n_active, coflow, rate_bps, sent, watched, threshold, cross_at, count):
    """Exact crossing times of the watches, given the active flows' coflows and rates.

    Call right after a tally at ``now`` (so ``sent`` is current). A coflow's rate is the
    sum of its active flows' rates, added in activation order.
    """
    n = count[0]
    coflow_rate = np.zeros(n)
    for i in range(n_active):
        c = coflow[active[i]]
        k = np.searchsorted(watched[:n], c)
        if k < n and watched[k] == c:
            coflow_rate[k] += rate_bps[i]
    for k in range(n):
        remaining = threshold[k] - sent[watched[k]]
        cross_at[k] = now if remaining <= 0 else now + remaining * 8 / coflow_rate[k]


@numba.njit(cache=True)
def _next_crossing(cross_at, count):
    """Earliest crossing time of a watch (``inf`` if none will cross at current rates)."""
    t = np.inf
    for k in range(count[0]):
        t = min(t, cross_at[k])
    return t


@numba.njit(cache=True)
def _pop_crossed(t, watched, threshold, cross_at, count, crossed):
    """Move the watches crossed by ``t`` to ``crossed`` (in index order; their watches end);
    return how many."""
    n, k, m = count[0], 0, 0
    for i in range(n):
        if cross_at[i] <= t:
            crossed[m] = watched[i]
            m += 1
        else:
            watched[k], threshold[k], cross_at[k] = watched[i], threshold[i], cross_at[i]
            k += 1
    count[0] = k
    return m
