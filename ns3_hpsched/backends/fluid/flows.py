"""The fluid backend's flow store: every flow ever started, as records in columns.

Flows are *records* numbered in start order (a record never moves). A record is
*waiting* (started, not sending yet: in its transport's start-up, or started ahead by
:meth:`~ns3_hpsched.backends.base.Backend.start_flows_at`), *active* (sending, a member
of a group of :mod:`.groups`, whose virtual clock counts its bytes) or *done* (its last
byte delivered at ``finish_s``). Waiting records queue in ``pending_*``, sorted by the
time they send their first byte, ties in the order they were started.

Paths are stored once per distinct path, a *route* (a row of the padded port matrix
``route_path``, numbered by :class:`~.routes.RouteIndex`); a record names its route.
Records link into two lists: the members of their group (``member_next``/``member_prev``)
and, until they finish, the unfinished flows of their coflow (``coflow_next``/
``coflow_prev``, see :mod:`.coflows`).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from .columns import Columns
from .ids import IdIndex
from .routes import RouteIndex

__all__ = ["FlowStore", "Flows", "WAITING", "ACTIVE", "DONE", "NEXT", "N_PENDING", "SEQ", "FINISH_RTOL"]

#: Record states: started but not sending yet, sending, finished.
WAITING, ACTIVE, DONE = 0, 1, 2

#: Entries of :attr:`FlowStore.counts`: the first pending entry not admitted yet, the
#: number of pending entries (``pending_*[NEXT:N_PENDING]`` wait), activations so far.
NEXT, N_PENDING, SEQ = 0, 1, 2

#: Per-record columns: dtype and the value of a row not yet written.
_COLUMNS = {
    "flow_id": (np.int64, -1), "src": (np.int64, -1), "dst": (np.int64, -1),
    "size": (np.float64, 0.0),                 # bytes
    "klass": (np.int64, 0), "coflow": (np.int64, -1),
    "given_bps": (np.float64, 0.0),            # explicit rate (0 = none)
    "sent": (np.float64, 0.0),                 # bytes, for records not active (active: from the group clock)
    "start_s": (np.float64, np.nan), "finish_s": (np.float64, np.nan),
    "startup_s": (np.float64, 0.0),            # the transport's start-up before the first byte
    "state": (np.int8, WAITING),
    "route": (np.int64, -1),                   # row of the route matrix: the record's path
    "group": (np.int64, -1),                   # its group while active
    "level": (np.float64, 0.0),                # the group clock at which it is done
    "seq": (np.int64, -1),                     # activation number: finishes are reported in this order
    "member_next": (np.int64, -1), "member_prev": (np.int64, -1),
    "coflow_next": (np.int64, -1), "coflow_prev": (np.int64, -1),
    "done": (np.int64, -1),                    # the event loop's output: records finished at a step
}

#: A flow whose remaining bytes are within this fraction of its size is done
#: (absorbs float round-off so no zero-length steps are spent on crumbs).
FINISH_RTOL = 1e-9


class Flows(NamedTuple):
    """The flow store's arrays, as the compiled event loop takes them."""

    size: np.ndarray
    klass: np.ndarray
    coflow: np.ndarray            #: dense coflow index (:class:`~.coflows.CoflowMeter`), -1 for none
    given_bps: np.ndarray
    sent: np.ndarray
    start_s: np.ndarray
    finish_s: np.ndarray
    startup_s: np.ndarray
    state: np.ndarray
    route: np.ndarray
    group: np.ndarray
    level: np.ndarray
    seq: np.ndarray
    member_next: np.ndarray
    member_prev: np.ndarray
    coflow_next: np.ndarray
    coflow_prev: np.ndarray
    done: np.ndarray
    route_path: np.ndarray
    pending_s: np.ndarray
    pending_recs: np.ndarray
    pending_tag: np.ndarray
    counts: np.ndarray


class FlowStore(Columns):
    """Records of all flows and the queue of pending arrivals (see the module docstring)."""

    ARRAYS = Flows

    def __init__(self, capacity: int = 1024, width: int = 6) -> None:
        self.n = 0
        for name, (dtype, fill) in _COLUMNS.items():
            setattr(self, name, np.full(capacity, fill, dtype=dtype))
        self._routes = RouteIndex(capacity, width)
        self.route_path = self._routes.path
        self._index = IdIndex()
        self.counts = np.zeros(3, dtype=np.int64)
        self.pending_s = np.empty(0)
        self.pending_recs = np.empty(0, dtype=np.int64)
        self.pending_tag = np.empty(0, dtype=np.int64)
        self._batches = 0

    @property
    def n_routes(self) -> int:
        """Distinct paths seen so far."""
        return len(self._routes)

    def add_batch(self, flow_id: np.ndarray, src: np.ndarray, dst: np.ndarray, size: np.ndarray,
                  klass: np.ndarray, coflow: np.ndarray, path_offsets: np.ndarray, path_ports: np.ndarray,
                  start_s: float | np.ndarray) -> np.ndarray:
        """Record new (waiting) flows in one step and return their record numbers.

        ``path_offsets``/``path_ports`` give the ports of flow ``i`` as
        ``path_ports[path_offsets[i]:path_offsets[i + 1]]`` (as in a ``FlowBatch``); every
        path crosses at least one port.
        """
        flow_id = np.asarray(flow_id, dtype=np.int64)
        self._check_new(flow_id)
        if len(flow_id) and np.diff(path_offsets).min() < 1:
            raise ValueError("every flow must cross at least one port")
        n, r = len(flow_id), self.n
        if r + n > len(self.flow_id):
            self._grow_rows(r + n)
        for name, values in (("flow_id", flow_id), ("src", src), ("dst", dst), ("size", size),
                             ("klass", klass), ("coflow", coflow), ("start_s", start_s)):
            getattr(self, name)[r:r + n] = values
        self.route[r:r + n] = self._routes.routes(path_offsets, path_ports)
        if self.route_path is not self._routes.path:  # grown: the compiled loop takes the new one
            self.route_path = self._routes.path
        self._index.add(flow_id, np.arange(r, r + n))
        self.n += n
        return np.arange(r, r + n)

    def n_waiting(self) -> int:
        """Flows scheduled to start that have not started sending yet."""
        return int(self.counts[N_PENDING] - self.counts[NEXT])

    def schedule(self, recs: np.ndarray, send_s: np.ndarray, counted: bool) -> None:
        """Records ``recs`` send their first bytes at ``send_s`` (each ``>=`` now): queue them.

        The queue stays sorted by time, ties in the order of scheduling. ``counted``:
        their admissions count as events of the run, one per batch and instant (as one
        handshake-end event per distinct time would).
        """
        c = self.counts
        tag = self._batches if counted else -1
        self._batches += counted
        waiting = slice(c[NEXT], c[N_PENDING])
        times = np.concatenate([self.pending_s[waiting], send_s])
        order = np.argsort(times, kind="stable")  # ties: earlier scheduling first
        self.pending_s = times[order]
        self.pending_recs = np.concatenate([self.pending_recs[waiting], recs])[order]
        self.pending_tag = np.concatenate([self.pending_tag[waiting], np.full(len(recs), tag, dtype=np.int64)])[order]
        c[NEXT], c[N_PENDING] = 0, len(times)

    def paths(self, recs: np.ndarray) -> np.ndarray:
        """Padded paths of records ``recs`` (one row each, -1 after the last port)."""
        return self.route_path[self.route[recs]]

    def _check_new(self, ids: np.ndarray) -> None:
        """Raise ``ValueError`` naming a flow id already started (or twice in ``ids``)."""
        known = self._index.find(ids) >= 0
        again = int(ids[np.argmax(known)]) if known.any() else None
        increasing = bool(np.all(ids[1:] > ids[:-1]))  # the driver's: its table rows, in order
        if again is None and not increasing and len(np.unique(ids)) < len(ids):
            seen: set[int] = set()
            again = next(i for i in ids.tolist() if i in seen or seen.add(i))
        if again is not None:
            raise ValueError(f"flow {again} was already started: give every flow a unique id")

    def records(self, flow_ids) -> np.ndarray:
        """Record numbers of started flows (``KeyError`` naming the first unknown one)."""
        flow_ids = np.asarray(flow_ids, dtype=np.int64)
        recs = self._index.find(flow_ids)
        if len(recs) and recs.min() < 0:
            raise KeyError(f"flow {int(flow_ids[np.argmax(recs < 0)])} was never started")
        return recs

    def active_recs(self) -> np.ndarray:
        """The active records, in record order."""
        return np.flatnonzero(self.state[:self.n] == ACTIVE)

    def _grow_rows(self, rows: int) -> None:
        """Grow the record arrays to hold ``rows`` records, at least doubling them (a batch
        larger than that, e.g. a whole trace played open loop, gets just its size)."""
        n = len(self.flow_id)
        new = max(rows, 2 * n)
        for name, (dtype, fill) in _COLUMNS.items():
            setattr(self, name, np.concatenate([getattr(self, name), np.full(new - n, fill, dtype=dtype)]))
