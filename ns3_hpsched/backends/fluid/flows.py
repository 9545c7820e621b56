"""The fluid backend's flow store: every flow ever started, and the active ones as arrays.

Flows are *records* numbered in start order (a record never moves). The *active* flows
(past their handshake, not yet finished) are a dense array of record numbers with their
rates, so the work per event is a handful of array operations and compiled loops over the
active flows. A batch of flows is recorded in one step.

Paths are stored once per distinct path, a *route* (a row of a padded port matrix); a
record names its route. The allocator fills *groups*, the active flows of one route and
one class (:meth:`FlowStore.groups`): max-min gives them one fill, so filling costs the
number of distinct (route, class) pairs, not of flows (on a big switch, at most
hosts squared, however many flows are active).

Bytes are brought up to date lazily (*tallied*): between two tallies every active flow sends at its
constant rate, so its sent bytes at any time are ``sent + rate * (t - tallied_s) / 8``.
A tally happens only when rates are about to change (``sync`` is kept for gradient
synchronisation, the workload's word).
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
    "sent": (np.float64, 0.0),                 # bytes, as of the last tally for active flows
    "start_s": (np.float64, np.nan), "finish_s": (np.float64, np.nan),
    "startup_s": (np.float64, 0.0),            # the transport's start-up before the first byte
    "state": (np.int8, WAITING),
    "route": (np.int64, -1),                   # row of the route matrix: the record's path
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
        self.route_path = np.full((capacity, width), -1, dtype=np.int64)
        self._route_of: dict[tuple[int, ...], int] = {}
        self._group_slot = np.empty(0, dtype=np.int64)  # scratch of groups(), all -1, grown there
        self._index: dict[int, int] = {}
        # the active set, aligned arrays
        self.active = np.empty(0, dtype=np.int64)
        self.rate_bps = np.empty(0)
        self.finish_at = np.empty(0)
        self.tallied_s = 0.0

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
        for name, values in (("flow_id", flow_id), ("src", src), ("dst", dst), ("size", size),
                             ("klass", klass), ("coflow", coflow)):
            getattr(self, name)[r:r + n] = values
        self.start_s[r:r + n] = start_s
        self.route[r:r + n] = self._routes(path_offsets, path_ports)
        self._index.update(zip(ids, range(r, r + n)))
        self.n += n
        return np.arange(r, r + n)

    def _routes(self, path_offsets: np.ndarray, path_ports: np.ndarray) -> np.ndarray:
        """The route of each path of a batch, adding the routes not seen before."""
        bounds = path_offsets.tolist()
        ports = path_ports.tolist()
        keys = [tuple(ports[a:b]) for a, b in zip(bounds, bounds[1:])]
        new = [k for k in dict.fromkeys(keys) if k not in self._route_of]
        if new:
            first = len(self._route_of)
            width = max(map(len, new))
            while first + len(new) > len(self.route_path):
                self.route_path = np.concatenate([self.route_path, np.full_like(self.route_path, -1)])
            if width > self.route_path.shape[1]:
                self.route_path = np.pad(self.route_path, ((0, 0), (0, width - self.route_path.shape[1])),
                                         constant_values=-1)
            for i, key in enumerate(new):
                self.route_path[first + i, :len(key)] = key
                self._route_of[key] = first + i
        return np.fromiter(map(self._route_of.__getitem__, keys), dtype=np.int64, count=len(keys))

    def paths(self, recs: np.ndarray) -> np.ndarray:
        """Padded paths of records ``recs`` (one row each, -1 after the last port)."""
        return self.route_path[self.route[recs]]

    def groups(self, n_classes: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The active flows' groups: ``(flow_group, group_route, group_class)``.

        Active position ``i`` is in group ``flow_group[i]``; groups are numbered in order of
        their first active flow (deterministic), one per (route, class) pair present.
        """
        need = len(self._route_of) * n_classes
        if need > len(self._group_slot):
            self._group_slot = np.full(2 * need, -1, dtype=np.int64)
        return _groups(self.active, self.route, self.klass, n_classes, self._group_slot)

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
        return _sent_at(recs, self.sent, self.pos, self.rate_bps, self.size, now - self.tallied_s)

    # -- the active set -----------------------------------------------------------------

    def tally(self, now: float, coflow_sent: np.ndarray) -> None:
        """Bring active flows' sent bytes up to ``now``, adding them to their coflows' ``coflow_sent``."""
        _integrate(self.active, self.rate_bps, now - self.tallied_s, self.sent, self.coflow, coflow_sent)
        self.tallied_s = now

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
        Must follow :meth:`tally` at the finish time.
        """
        recs = self.active[due]
        crumbs = self.size[recs] - self.sent[recs]
        self.sent[recs] = self.size[recs]
        self.state[recs] = DONE
        n = _compact(due, self.active, self.rate_bps, self.finish_at, self.pos)
        self.active, self.rate_bps, self.finish_at = self.active[:n], self.rate_bps[:n], self.finish_at[:n]
        return recs, crumbs

    def incidence(self) -> Incidence:
        """Which active flow (by position) crosses which port, flow by flow in path order."""
        return Incidence(*gather_hops(self.route_path, self.route[self.active]), len(self.active))

    def set_rates(self, rate_bps: np.ndarray, now: float) -> None:
        """Give the active flows new rates (after :meth:`tally` at ``now``) and their finish times."""
        self.rate_bps = rate_bps
        self.finish_at = _finish_times(self.active, self.size, self.sent, rate_bps, now, FINISH_RTOL)

    def _grow_rows(self) -> None:
        """Double the record arrays."""
        n = len(self.flow_id)
        for name, (dtype, fill) in _COLUMNS.items():
            setattr(self, name, np.concatenate([getattr(self, name), np.full(n, fill, dtype=dtype)]))


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
def _compact(due, active, rate_bps, finish_at, pos):
    """Drop the active positions marked ``due``, keeping the others in order, in place; return the new size.

    One streaming pass (the active set stays in activation order, so the per-flow columns
    are read close to record order by every pass over it). Removed records get ``pos`` -1.
    """
    k = 0
    for i in range(len(active)):
        r = active[i]
        if due[i]:
            pos[r] = -1
            continue
        if k != i:
            active[k], rate_bps[k], finish_at[k] = r, rate_bps[i], finish_at[i]
            pos[r] = k
        k += 1
    return k


@numba.njit(cache=True)
def _groups(active, route, klass, n_classes, slot):
    """Group of each active flow by (route, class), via ``slot`` (indexed ``route * n_classes + class``,
    all -1 on entry and on return)."""
    n = len(active)
    flow_group = np.empty(n, dtype=np.int64)
    group_route = np.empty(n, dtype=np.int64)
    group_class = np.empty(n, dtype=np.int64)
    g = 0
    for i in range(n):
        r = active[i]
        key = route[r] * n_classes + klass[r]
        if slot[key] < 0:
            slot[key] = g
            group_route[g], group_class[g] = route[r], klass[r]
            g += 1
        flow_group[i] = slot[key]
    for j in range(g):
        slot[group_route[j] * n_classes + group_class[j]] = -1
    return flow_group, group_route[:g].copy(), group_class[:g].copy()


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
