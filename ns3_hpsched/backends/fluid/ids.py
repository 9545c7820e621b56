"""Flow ids to record numbers, looked up a decision's worth at a time.

A decision names the flows it moves by flow id (``set_priorities``, ``bytes_sent``): tens
of thousands of them on the Facebook trace, every decision. A Python dict costs a hashed
lookup per id (about 280 ns each at 700k flows, measured); here the ids are kept sorted
with their records beside them, so a lookup is one numpy search (about 45 ns an id), and
one subtraction when the ids known are contiguous, as the driver's are (its table rows,
started in increasing order): about 2 ns an id.
"""

from __future__ import annotations

import numpy as np

__all__ = ["IdIndex"]


class IdIndex:
    """Record numbers of the flows started so far, by flow id (any int64 ids)."""

    def __init__(self) -> None:
        self._ids = np.empty(0, dtype=np.int64)   # sorted, in the first ``n`` entries
        self._recs = np.empty(0, dtype=np.int64)  # the record of each of ``_ids``
        self.n = 0

    def add(self, ids: np.ndarray, recs: np.ndarray) -> None:
        """Know flows ``ids`` (unique, none known yet) as records ``recs``."""
        n, m = self.n, len(ids)
        if n + m > len(self._ids):
            size = max(n + m, 2 * len(self._ids), 1024)
            self._ids = np.resize(self._ids, size)
            self._recs = np.resize(self._recs, size)
        self._ids[n:n + m], self._recs[n:n + m] = ids, recs
        self.n = n + m
        if m and ((n and ids[0] <= self._ids[n - 1]) or np.any(ids[1:] <= ids[:-1])):
            order = np.argsort(self._ids[:self.n], kind="stable")
            self._ids[:self.n], self._recs[:self.n] = self._ids[order], self._recs[order]

    def find(self, ids: np.ndarray) -> np.ndarray:
        """The record of each of ``ids`` (int64), ``-1`` where a flow id is not known."""
        ids = np.asarray(ids, dtype=np.int64)
        known = self._ids[:self.n]
        if not self.n:
            return np.full(len(ids), -1, dtype=np.int64)
        if int(known[-1]) - int(known[0]) == self.n - 1:  # contiguous (Python ints: no overflow)
            pos = ids - known[0]
            hit = (pos >= 0) & (pos < self.n)
        else:
            pos = np.minimum(np.searchsorted(known, ids), self.n - 1)
            hit = known[pos] == ids
        return np.where(hit, self._recs[np.where(hit, pos, 0)], -1)
