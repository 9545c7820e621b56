"""The fluid backend's flow store: every flow ever started, and the active ones as arrays.

Flows are *records* numbered in start order (a record never moves). The *active* flows
(past their handshake, not yet finished) are a dense array of record numbers with their
rates; the allocator reads their paths as an incidence built from a padded port matrix,
so the work per event is a handful of array operations and compiled loops over the
active flows. A batch of flows is recorded in one step, its paths copied from the batch.

Bytes are brought up to date lazily: between two *syncs* every active flow sends at its
constant rate, so its sent bytes at any time are ``sent + rate * (t - synced_s) / 8``.
A sync happens only when rates are about to change.
"""

from __future__ import annotations

import numba
import numpy as np

from ...sched.allocator import Incidence
from ...sched.fill import gather_hops

__all__ = ["FlowStore", "WAITING", "ACTIVE", "DONE"]

#: Record states: started but in its handshake, sending, finished.
WAITING, ACTIVE, DONE = 0, 1, 2

#: Per-record columns: dtype and the value of a row not yet written.
_COLUMNS = {
    "flow_id": (np.int64, -1), "src": (np.int64, -1), "dst": (np.int64, -1),
    "size": (np.float64, 0.0),                 # bytes
    "klass": (np.int64, 0), "coflow": (np.int64, -1),
    "given_bps": (np.float64, 0.0),            # explicit rate (0 = none)
    "sent": (np.float64, 0.0),                 # bytes, as of the last sync for active flows
    "start_s": (np.float64, np.nan), "finish_s": (np.float64, np.nan),
    "state": (np.int8, WAITING),
    "pos": (np.int64, -1),                     # position in the active set, -1 if not active
}

#: A flow whose remaining bytes are within this fraction of its size is done
#: (absorbs float round-off so no zero-length steps are spent on crumbs).
FINISH_RTOL = 1e-9


class FlowStore:
    """Records of all flows and the active set (see the module docstring)."""

    def __init__(self, capacity: int = 1024, width: int = 6) -> None:
        self.n = 0
        for name, (dtype, fill) in _COLUMNS.items():
            setattr(self, name, np.full(capacity, fill, dtype=dtype))
        self.path = np.full((capacity, width), -1, dtype=np.int64)
        self._index: dict[int, int] = {}
        # the active set, aligned arrays
        self.active = np.empty(0, dtype=np.int64)
        self.rate_bps = np.empty(0)
        self.finish_at = np.empty(0)
        self.synced_s = 0.0

    # -- records ------------------------------------------------------------------------

    def add_batch(self, flow_id: np.ndarray, src: np.ndarray, dst: np.ndarray, size: np.ndarray,
                  klass: np.ndarray, coflow: np.ndarray, path_offsets: np.ndarray, path_ports: np.ndarray,
                  start_s: float) -> np.ndarray:
        """Record new (waiting) flows in one step and return their record numbers.

        ``path_offsets``/``path_ports`` give the ports of flow ``i`` as
        ``path_ports[path_offsets[i]:path_offsets[i + 1]]`` (as in a ``FlowBatch``).
        """
        ids = flow_id.tolist()
        self._check_new(ids)
        n, r = len(ids), self.n
        while r + n > len(self.flow_id):
            self._grow_rows()
        width = _widest(path_offsets)
        if width > self.path.shape[1]:
            self.path = np.pad(self.path, ((0, 0), (0, width - self.path.shape[1])), constant_values=-1)
        for name, values in (("flow_id", flow_id), ("src", src), ("dst", dst), ("size", size),
                             ("klass", klass), ("coflow", coflow)):
            getattr(self, name)[r:r + n] = values
        self.start_s[r:r + n] = start_s
        _write_paths(self.path, r, path_offsets, path_ports)
        self._index.update(zip(ids, range(r, r + n)))
        self.n += n
        return np.arange(r, r + n)

    def _check_new(self, ids: list[int]) -> None:
        """Raise ``ValueError`` naming a flow id already started (or twice in ``ids``)."""
        again = next((i for i in ids if i in self._index), None) if not self._index.keys().isdisjoint(ids) else None
        if again is None and len(set(ids)) < len(ids):
            seen: set[int] = set()
            again = next(i for i in ids if i in seen or seen.add(i))
        if again is not None:
            raise ValueError(f"flow {again} was already started: give every flow a unique id")

    def records(self, flow_ids) -> np.ndarray:
        """Record numbers of started flows (``KeyError`` naming the first unknown one)."""
        ids = np.asarray(flow_ids, dtype=np.int64).tolist()
        try:
            return np.fromiter(map(self._index.__getitem__, ids), dtype=np.int64, count=len(ids))
        except KeyError as err:
            raise KeyError(f"flow {err.args[0]} was never started") from None

    def sent_at(self, recs: np.ndarray, now: float) -> np.ndarray:
        """Bytes of records ``recs`` sent by time ``now`` (floats, at most their sizes)."""
        return _sent_at(recs, self.sent, self.pos, self.rate_bps, self.size, now - self.synced_s)

    # -- the active set -----------------------------------------------------------------

    def sync(self, now: float, coflow_sent: np.ndarray) -> None:
        """Bring active flows' sent bytes up to ``now``, adding them to their coflows' ``coflow_sent``."""
        _integrate(self.active, self.rate_bps, now - self.synced_s, self.sent, self.coflow, coflow_sent)
        self.synced_s = now

    def activate(self, recs: list[int]) -> None:
        """Append waiting records to the active set (rate 0 until the next allocation)."""
        recs = np.asarray(recs, dtype=np.int64)
        self.state[recs] = ACTIVE
        self.active = np.concatenate([self.active, recs])
        self.rate_bps = np.concatenate([self.rate_bps, np.zeros(len(recs))])
        self.finish_at = np.concatenate([self.finish_at, np.full(len(recs), np.inf)])
        self.pos[recs] = np.arange(len(self.active) - len(recs), len(self.active))

    def finish(self, due: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Mark active positions ``due`` (a mask) done; sent becomes size exactly.

        Returns the finished records and the bytes that rounding to their size added.
        Must follow :meth:`sync` at the finish time.
        """
        recs = self.active[due]
        crumbs = self.size[recs] - self.sent[recs]
        self.sent[recs] = self.size[recs]
        self.state[recs] = DONE
        self.pos[recs] = -1
        keep = ~due
        self.active, self.rate_bps, self.finish_at = self.active[keep], self.rate_bps[keep], self.finish_at[keep]
        self.pos[self.active] = np.arange(len(self.active))
        return recs, crumbs

    def incidence(self) -> Incidence:
        """Which active flow (by position) crosses which port, flow by flow in path order."""
        return Incidence(*gather_hops(self.path, self.active), len(self.active))

    def set_rates(self, rate_bps: np.ndarray, now: float) -> None:
        """Give the active flows new rates (after :meth:`sync` at ``now``) and their finish times."""
        self.rate_bps = rate_bps
        self.finish_at = _finish_times(self.active, self.size, self.sent, rate_bps, now, FINISH_RTOL)

    def _grow_rows(self) -> None:
        """Double the record arrays."""
        n = len(self.flow_id)
        for name, (dtype, fill) in _COLUMNS.items():
            setattr(self, name, np.concatenate([getattr(self, name), np.full(n, fill, dtype=dtype)]))
        self.path = np.concatenate([self.path, np.full_like(self.path, -1)])


@numba.njit(cache=True)
def _integrate(active, rate_bps, dt, sent, coflow, coflow_sent):
    """Add ``rate * dt / 8`` bytes to every active record and to its coflow (``-1``: none)."""
    for i in range(len(active)):
        added = rate_bps[i] * dt / 8
        r = active[i]
        sent[r] += added
        if coflow[r] >= 0:
            coflow_sent[coflow[r]] += added


@numba.njit(cache=True)
def _widest(path_offsets):
    """Most ports on one path of a batch."""
    width = 0
    for i in range(len(path_offsets) - 1):
        width = max(width, path_offsets[i + 1] - path_offsets[i])
    return width


@numba.njit(cache=True)
def _write_paths(path, first_row, path_offsets, path_ports):
    """Copy a batch's ragged paths into rows ``first_row ..`` of the padded matrix."""
    for i in range(len(path_offsets) - 1):
        lo, hi = path_offsets[i], path_offsets[i + 1]
        for j in range(hi - lo):
            path[first_row + i, j] = path_ports[lo + j]


@numba.njit(cache=True, error_model="numpy")
def _finish_times(active, size, sent, rate_bps, now, rtol):
    """When each active flow sends its last byte at its rate (``now`` if within ``rtol`` of done)."""
    finish_at = np.empty(len(active))
    for i in range(len(active)):
        r = active[i]
        remaining = size[r] - sent[r]
        finish_at[i] = now if remaining <= rtol * size[r] else now + remaining * 8 / rate_bps[i]
    return finish_at


@numba.njit(cache=True)
def _sent_at(recs, sent, pos, rate_bps, size, dt):
    """``sent + rate * dt / 8`` for the active ones among ``recs``, capped at their sizes."""
    out = np.empty(len(recs))
    for i in range(len(recs)):
        r = recs[i]
        x = sent[r] + rate_bps[pos[r]] * dt / 8 if pos[r] >= 0 else sent[r]
        out[i] = min(x, size[r])
    return out
