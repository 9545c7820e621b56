"""The fluid backend's flow store: every flow ever started, the active ones, those about to start.

Flows are *records* numbered in start order (a record never moves). Three sets of records
matter to the event loop (:mod:`.core`), each held as arrays so that it runs compiled:

* **pending**: started, not sending yet (in their transport's start-up, or started ahead
  by :meth:`~ns3_hpsched.backends.base.Backend.start_flows_at`): record numbers sorted by
  the time they send their first byte, ties in the order they were started;
* **active**: sending. A dense prefix ``active[:n_active]`` of record numbers in
  activation order, with their rates and the times they will send their last byte
  (arrays of the records' capacity, so activating never reallocates);
* **done**: finished, their finish times written.

Paths are stored once per distinct path, a *route* (a row of a padded port matrix); a
record names its route. The allocator fills *groups*, the active flows of one route and
one class (:func:`_groups`): max-min gives them one fill, so filling costs the number of
distinct (route, class) pairs, not of flows.

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

__all__ = ["FlowStore", "WAITING", "ACTIVE", "DONE", "N_ACTIVE", "NEXT", "N_PENDING", "FINISH_RTOL"]

#: Record states: started but not sending yet, sending, finished.
WAITING, ACTIVE, DONE = 0, 1, 2

#: Entries of :attr:`FlowStore.counts`: the number of active flows; the first pending entry
#: not admitted yet, and the number of pending entries (``pending_*[NEXT:N_PENDING]`` wait).
N_ACTIVE, NEXT, N_PENDING = 0, 1, 2

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
    # the active set, by position (not by record): aligned with `active`
    "active": (np.int64, -1), "rate_bps": (np.float64, 0.0), "finish_at": (np.float64, np.inf),
    "done": (np.int64, -1),                    # the event loop's output: records finished at a step
}

#: A flow whose remaining bytes are within this fraction of its size is done
#: (absorbs float round-off so no zero-length steps are spent on crumbs).
FINISH_RTOL = 1e-9


class FlowStore:
    """Records of all flows, the active set and the pending arrivals (see the module docstring)."""

    def __init__(self, capacity: int = 1024, width: int = 6) -> None:
        self.n = 0
        for name, (dtype, fill) in _COLUMNS.items():
            setattr(self, name, np.full(capacity, fill, dtype=dtype))
        self.route_path = np.full((capacity, width), -1, dtype=np.int64)
        self._route_of: dict[tuple[int, ...], int] = {}
        self.group_slot = np.full(1, -1, dtype=np.int64)  # scratch of _groups, all -1 between calls
        self._index: dict[int, int] = {}
        self.counts = np.zeros(3, dtype=np.int64)
        self.pending_s = np.empty(0)
        self.pending_recs = np.empty(0, dtype=np.int64)
        self.pending_tag = np.empty(0, dtype=np.int64)
        self._batches = 0

    # -- records ------------------------------------------------------------------------

    def add_batch(self, flow_id: np.ndarray, src: np.ndarray, dst: np.ndarray, size: np.ndarray,
                  klass: np.ndarray, coflow: np.ndarray, path_offsets: np.ndarray, path_ports: np.ndarray,
                  start_s: float | np.ndarray, n_classes: int) -> np.ndarray:
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
                             ("klass", klass), ("coflow", coflow), ("start_s", start_s)):
            getattr(self, name)[r:r + n] = values
        self.route[r:r + n] = self._routes(path_offsets, path_ports)
        need = len(self._route_of) * n_classes
        if need > len(self.group_slot):
            self.group_slot = np.full(2 * need, -1, dtype=np.int64)
        self._index.update(zip(ids, range(r, r + n)))
        self.n += n
        return np.arange(r, r + n)

    def schedule(self, recs: np.ndarray, send_s: np.ndarray, counted: bool) -> None:
        """Records ``recs`` send their first bytes at ``send_s`` (each ``>=`` now): queue them.

        The queue stays sorted by time, ties in the order of scheduling. ``counted``:
        their admissions count as events of the run, one per batch and instant (as one
        handshake-end event per distinct time would).
        """
        c = self.counts
        tag = self._batches if counted else -1
        self._batches += counted
        times = np.concatenate([self.pending_s[c[NEXT]:c[N_PENDING]], send_s])
        order = np.argsort(times, kind="stable")  # ties: earlier scheduling first
        self.pending_s = times[order]
        self.pending_recs = np.concatenate([self.pending_recs[c[NEXT]:c[N_PENDING]], recs])[order]
        self.pending_tag = np.concatenate([self.pending_tag[c[NEXT]:c[N_PENDING]],
                                           np.full(len(recs), tag, dtype=np.int64)])[order]
        c[NEXT], c[N_PENDING] = 0, len(times)

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

    def sent_at(self, recs: np.ndarray, dt: float) -> np.ndarray:
        """Bytes of records ``recs`` sent ``dt`` seconds after the last tally (floats, at most their sizes)."""
        return _sent_at(recs, self.sent, self.pos, self.rate_bps, self.size, dt)

    # -- the active set -----------------------------------------------------------------

    @property
    def n_active(self) -> int:
        """Number of active flows."""
        return int(self.counts[N_ACTIVE])

    def active_recs(self) -> np.ndarray:
        """The active records, in activation order (a view)."""
        return self.active[:self.counts[N_ACTIVE]]

    def incidence(self) -> Incidence:
        """Which active flow (by position) crosses which port, flow by flow in path order."""
        recs = self.active_recs()
        return Incidence(*gather_hops(self.route_path, self.route[recs]), len(recs))

    def _grow_rows(self) -> None:
        """Double the record arrays (the active set's too: it can hold every record)."""
        n = len(self.flow_id)
        for name, (dtype, fill) in _COLUMNS.items():
            setattr(self, name, np.concatenate([getattr(self, name), np.full(n, fill, dtype=dtype)]))


# -- kernels of the event loop (:mod:`.core`) ---------------------------------------------

@numba.njit(cache=True)
def _integrate(active, n, rate_bps, dt, sent, coflow, coflow_sent):
    """Add ``rate * dt / 8`` bytes to every active record and to its coflow (``-1``: none)."""
    for i in range(n):
        added = rate_bps[i] * dt / 8
        r = active[i]
        sent[r] += added
        if coflow[r] >= 0:
            coflow_sent[coflow[r]] += added


@numba.njit(cache=True)
def _activate(recs, state, active, rate_bps, finish_at, pos, counts):
    """Append waiting records to the active set (rate 0 until the next allocation)."""
    n = counts[N_ACTIVE]
    for r in recs:
        state[r] = ACTIVE
        active[n], rate_bps[n], finish_at[n], pos[r] = r, 0.0, np.inf, n
        n += 1
    counts[N_ACTIVE] = n


@numba.njit(cache=True)
def _finish_due(t, active, rate_bps, finish_at, pos, counts, size, sent, state, coflow, coflow_sent, done):
    """Finish the active flows due by ``t`` (``finish_at <= t``): sent becomes size, state done.

    The bytes that rounding to their sizes adds go to their coflows' ``coflow_sent``.
    Writes their records to ``done`` in activation order and returns how many; the active
    set keeps its order (one streaming pass: the per-flow columns stay read close to record
    order by every pass over it). Must follow a tally at ``t``.
    """
    k = 0
    n_done = 0
    for i in range(counts[N_ACTIVE]):
        r = active[i]
        if finish_at[i] <= t:
            done[n_done] = r
            n_done += 1
            continue
        if k != i:
            active[k], rate_bps[k], finish_at[k] = r, rate_bps[i], finish_at[i]
            pos[r] = k
        k += 1
    counts[N_ACTIVE] = k
    for j in range(n_done):
        r = done[j]
        crumbs = size[r] - sent[r]
        sent[r] = size[r]
        state[r] = DONE
        pos[r] = -1
        if coflow[r] >= 0:
            coflow_sent[coflow[r]] += crumbs
    return n_done


@numba.njit(cache=True)
def _groups(active, n, route, klass, n_classes, slot):
    """Group of each active flow by (route, class), via ``slot`` (indexed ``route * n_classes + class``,
    all -1 on entry and on return)."""
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
    return flow_group, group_route[:g], group_class[:g]


@numba.njit(cache=True, error_model="numpy")
def _finish_times(active, n, size, sent, rate_bps, now, finish_at):
    """When each active flow sends its last byte at its rate (``now`` if within :data:`FINISH_RTOL` of done)."""
    for i in range(n):
        r = active[i]
        remaining = size[r] - sent[r]
        finish_at[i] = now if remaining <= FINISH_RTOL * size[r] else now + remaining * 8 / rate_bps[i]


@numba.njit(cache=True)
def _sent_at(recs, sent, pos, rate_bps, size, dt):
    """``sent + rate * dt / 8`` for the active ones among ``recs``, capped at their sizes."""
    out = np.empty(len(recs))
    for i in range(len(recs)):
        r = recs[i]
        x = sent[r] + rate_bps[pos[r]] * dt / 8 if pos[r] >= 0 else sent[r]
        out[i] = min(x, size[r])
    return out
