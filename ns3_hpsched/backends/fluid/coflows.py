"""The fluid backend's coflow meter: bytes sent per coflow and the watched thresholds.

Between allocations a coflow's sent bytes grow linearly (the sum of its active flows'
rates), so the time a watch is crossed is computed exactly rather than polled.
"""

from __future__ import annotations

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
        self._watched = np.empty(0, dtype=np.int64)  # coflow indices, sorted
        self._threshold = np.empty(0)
        self._cross_at = np.empty(0)

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

    def add(self, coflow_idx: np.ndarray, sent_bytes: np.ndarray) -> None:
        """Add bytes sent by flows of coflows ``coflow_idx`` (entries -1 are ignored)."""
        mine = coflow_idx >= 0
        np.add.at(self.sent, coflow_idx[mine], sent_bytes[mine])

    def watch(self, idx: int, threshold_bytes: float) -> None:
        """Watch coflow ``idx`` for ``threshold_bytes`` (replacing any earlier watch on it)."""
        self.unwatch(idx)
        k = int(np.searchsorted(self._watched, idx))
        self._watched = np.insert(self._watched, k, idx)
        self._threshold = np.insert(self._threshold, k, threshold_bytes)
        self._cross_at = np.insert(self._cross_at, k, np.inf)

    def unwatch(self, idx: int) -> None:
        """Forget the watch on coflow ``idx``, if any."""
        keep = self._watched != idx
        self._watched, self._threshold, self._cross_at = (
            self._watched[keep], self._threshold[keep], self._cross_at[keep])

    @property
    def watching(self) -> bool:
        """Whether any coflow is watched (else there are no crossings to update)."""
        return bool(len(self._watched))

    def update_crossings(self, now: float, flow_coflow: np.ndarray, rate_bps: np.ndarray) -> None:
        """Exact crossing times of the watches, given the active flows' coflows and rates.

        Call right after a tally at ``now`` (so :attr:`sent` is current), when :attr:`watching`.
        """
        k = np.minimum(np.searchsorted(self._watched, flow_coflow), len(self._watched) - 1)
        hit = self._watched[k] == flow_coflow
        coflow_rate = np.bincount(k[hit], weights=rate_bps[hit], minlength=len(self._watched))
        remaining = self._threshold - self.sent[self._watched]
        with np.errstate(divide="ignore", invalid="ignore"):  # the where() picks finite values
            self._cross_at = np.where(remaining <= 0, now, now + remaining * 8 / coflow_rate)

    def next_time(self) -> float:
        """Earliest crossing time of a watch (``inf`` if none will cross at current rates)."""
        return float(self._cross_at.min()) if len(self._cross_at) else np.inf

    def pop_due(self, time_s: float) -> list[int]:
        """Coflow ids whose watch is crossed by ``time_s``, in index order; their watches end."""
        if not len(self._watched):  # the usual case outside Aalo and FIFO-LM
            return []
        due = self._cross_at <= time_s
        fired = [self._ids[i] for i in self._watched[due].tolist()]
        self._watched, self._threshold, self._cross_at = (
            self._watched[~due], self._threshold[~due], self._cross_at[~due])
        return fired
