"""The driver's flow state, owned once: every released flow as columns, indexed by flow id.

The driver numbers flows 0, 1, 2, ... in release order, so a flow's id is its row. A
coflow's flows are created in one step (:meth:`FlowTable.release`) and occupy consecutive
rows; each flow's five-tuple and path are computed there, once, and shared by the
backend (through :class:`~ns3_hpsched.backends.base.FlowBatch`), the policies' view
(:class:`LiveCoflow`) and the flows table (ideal FCT, ports).

Byte counts are read from the backend only if the policy asks for them, at most once per
decision: for all unfinished flows in one call when it asks for per-port or per-flow
bytes (:meth:`FlowTable.sent_now`) or for a second coflow's total, for one coflow's when
it asks that coflow's total first (:meth:`FlowTable.sent_of`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from ..backends.base import FlowBatch
from ..sched.view import CoflowState, FlowColumns, FlowState, View
from ..topology import Topology, flow_ports
from ..topology.paths import take_paths
from ..workload.spec import Flow

__all__ = ["FlowTable", "LiveCoflow", "LiveView", "flow_columns"]

#: Per-flow columns and their dtypes; ``klass`` is the class the backend has (-1: not started).
_COLUMNS = {"coflow": np.int64, "job": np.int64, "cojob": np.int64, "stage": np.int64,
            "src": np.int64, "dst": np.int64, "size": np.int64, "sport": np.int64, "dport": np.int64,
            "klass": np.int64, "target": np.int64, "sent": np.int64, "open": np.bool_}


class FlowTable:
    """Every flow released so far (see the module docstring).

    Parameters
    ----------
    topology:
        Gives each flow its path (:attr:`Topology.routes`).
    bytes_sent:
        The backend's :meth:`~ns3_hpsched.backends.base.Backend.bytes_sent`.
    """

    def __init__(self, topology: Topology, bytes_sent: Callable[[np.ndarray], np.ndarray]) -> None:
        self.topology = topology
        self._bytes_sent = bytes_sent
        self.n = 0
        for name, dtype in _COLUMNS.items():
            setattr(self, name, np.zeros(1024, dtype=dtype))
        self.path_offsets = np.zeros(1025, dtype=np.int64)
        self.path_ports = np.zeros(4096, dtype=np.int64)
        self._stamp = 0            # decision number
        self._low = 0              # no flow below this row is unfinished
        self._open_rows: tuple[int, np.ndarray] = (-1, np.zeros(0, dtype=np.int64))
        self._sent_stamp = -1     # the decision that read every unfinished flow's bytes
        self._alone_stamp = -1    # the decision that read one coflow's alone
        self._alone = range(0)    # and that coflow's rows
        self._unfinished = np.zeros(64, dtype=np.int64)  # unfinished flows, by coflow id

    def release(self, flows: Sequence[Flow], coflow: int | np.ndarray, job: int | np.ndarray,
                cojob: int | np.ndarray, stage: int) -> range:
        """Add one coflow's flows (not started yet); return their rows (= flow ids).

        ``coflow``, ``job`` and ``cojob`` are the coflow's, or one per flow (the open-loop
        play releases every coflow at once).

        Five-tuple ports and paths come in one step for the whole coflow
        (:func:`~ns3_hpsched.topology.flow_ports`, :meth:`RouteTable.paths`).
        """
        first, n = self.n, len(flows)
        src, dst, size, given_dport = flow_columns(flows)
        sport, dport = flow_ports(np.arange(first, first + n, dtype=np.int64))
        dport = np.where(given_dport >= 0, given_dport, dport)
        offsets, ports = self.topology.routes.paths(src, dst, sport, dport)
        start = self.path_offsets[first]
        self._reserve(first + n, start + len(ports))
        rows = slice(first, first + n)
        for name, value in (("coflow", coflow), ("job", job), ("cojob", cojob), ("stage", stage),
                            ("klass", -1), ("sent", 0), ("open", True), ("src", src), ("dst", dst),
                            ("size", size), ("sport", sport), ("dport", dport)):
            getattr(self, name)[rows] = value
        self.path_offsets[first + 1:first + n + 1] = start + offsets[1:]
        self.path_ports[start:start + len(ports)] = ports
        self.n += n
        self._count_unfinished(self.coflow[rows])
        return range(first, first + n)

    def _count_unfinished(self, coflows: np.ndarray) -> None:
        """Count new unfinished flows of ``coflows`` (one coflow id per flow)."""
        if len(coflows):
            self._unfinished = _grown(self._unfinished, int(coflows.max()) + 1)
            np.add.at(self._unfinished, coflows, 1)

    def batch(self, rows: range, priority: np.ndarray) -> FlowBatch:
        """The flows of ``rows`` as a :class:`FlowBatch` in classes ``priority``."""
        s = slice(rows.start, rows.stop)
        offsets = self.path_offsets[rows.start:rows.stop + 1]
        return FlowBatch(np.arange(rows.start, rows.stop, dtype=np.int64), self.src[s].copy(),
                         self.dst[s].copy(), self.size[s].copy(), np.asarray(priority, dtype=np.int64),
                         self.coflow[s].copy(), self.sport[s].copy(), self.dport[s].copy(),
                         offsets - offsets[0], self.path_ports[offsets[0]:offsets[-1]].copy())

    def finish(self, flow_ids: np.ndarray) -> np.ndarray:
        """Mark flows finished (all their bytes sent), each once, in the order they finished.

        Returns the positions in ``flow_ids`` of the flows that finished their coflow (left
        none of its flows unfinished), increasing: one per coflow that ended.
        """
        self.open[flow_ids] = False
        self.sent[flow_ids] = self.size[flow_ids]
        coflows = self.coflow[flow_ids]
        np.subtract.at(self._unfinished, coflows, 1)
        _, from_end = np.unique(coflows[::-1], return_index=True)
        last = np.sort(len(coflows) - 1 - from_end)   # each coflow's last flow among these
        return last[self._unfinished[coflows[last]] == 0]

    def is_open(self, flow_id: int) -> bool:
        """Whether ``flow_id`` was released and has not finished."""
        return 0 <= flow_id < self.n and bool(self.open[flow_id])

    # -- per decision ---------------------------------------------------------------------

    def new_decision(self) -> None:
        """Start a decision: byte counts become stale."""
        self._stamp += 1

    @property
    def stamp(self) -> int:
        """Number of the current decision (caches keyed by it are valid during it)."""
        return self._stamp

    def open_rows(self) -> np.ndarray:
        """Rows of the unfinished flows, increasing (one scan from the oldest unfinished flow)."""
        stamp, rows = self._open_rows
        if stamp != self._stamp:
            if self._low < self.n and not self.open[self._low]:
                ahead = self.open[self._low:self.n]
                self._low = self._low + int(np.argmax(ahead)) if ahead.any() else self.n
            rows = np.flatnonzero(self.open[self._low:self.n]) + self._low
            self._open_rows = (self._stamp, rows)
        return rows

    def sent_now(self) -> np.ndarray:
        """The ``sent`` column, current for this decision (read from the backend once)."""
        if self._sent_stamp != self._stamp:
            rows = self.open_rows()
            if self._alone_stamp == self._stamp:  # one coflow's are current already
                rows = rows[(rows < self._alone.start) | (rows >= self._alone.stop)]
            self._read_sent(rows)
            self._sent_stamp = self._stamp
        return self.sent

    def sent_of(self, rows: range) -> np.ndarray:
        """The ``sent`` column of ``rows`` (one coflow's), current for this decision.

        The first coflow asked in a decision is read from the backend alone, the next one
        with every other unfinished flow (:meth:`sent_now`): FIFO-LM, which asks the first
        coflow not yet known heavy, reads one coflow's flows, while Aalo, which asks every
        coflow, pays one call to the backend more, not one per coflow (each costs tens of
        microseconds whatever its size)."""
        s = slice(rows.start, rows.stop)
        if self._sent_stamp == self._stamp:
            return self.sent[s]
        if self._alone_stamp == self._stamp:
            return self.sent_now()[s]
        self._alone_stamp, self._alone = self._stamp, rows
        self._read_sent(np.flatnonzero(self.open[s]) + rows.start)
        return self.sent[s]

    def _read_sent(self, rows: np.ndarray) -> None:
        """Bring ``sent`` up to date for the started ones of the unfinished ``rows``."""
        rows = rows[self.klass[rows] >= 0]
        if len(rows):
            self.sent[rows] = self._bytes_sent(rows)

    def _reserve(self, rows: int, hops: int) -> None:
        """Grow the columns to hold ``rows`` flows and ``hops`` path entries."""
        if rows > len(self.open):
            size = max(rows, 2 * len(self.open))  # every column the same length
            for name in _COLUMNS:
                setattr(self, name, _grown(getattr(self, name), size))
            self.path_offsets = _grown(self.path_offsets, size + 1)
        self.path_ports = _grown(self.path_ports, hops)


def _grown(column: np.ndarray, n: int) -> np.ndarray:
    """``column`` if it has ``n`` entries, else it zero-padded to ``max(n, twice its length)``."""
    if n <= len(column):
        return column
    return np.concatenate([column, np.zeros(max(n, 2 * len(column)) - len(column), dtype=column.dtype)])


def flow_columns(flows: Sequence[Flow]) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """``src, dst, bytes`` and the given ``dport`` (-1: none) of workload flows, as int64 columns.

    A given destination port (``flow.dport``, e.g. from an HPCC flow list) replaces the
    five-tuple rule's, so hashing, the wire and the flows table all use it.
    """
    n = len(flows)
    column = lambda get: np.fromiter(map(get, flows), dtype=np.int64, count=n)
    return (column(lambda f: f.src), column(lambda f: f.dst), column(lambda f: f.bytes),
            column(lambda f: -1 if f.dport is None else f.dport))


class LiveCoflow(CoflowState):
    """A coflow of the driver's view, answering from the :class:`FlowTable` (no per-flow objects).

    ``rows`` are its flows' rows. Its ports are found once, when a policy first asks for its
    demand; per decision, its remaining bytes per port are one ``bincount`` over its hops.
    """

    __slots__ = ("rows", "_table", "_ports", "_hop_port", "_hop_row", "_cache")

    def __init__(self, table: FlowTable, rows: range, coflow_id: int, job: int, cojob: int, stage: int,
                 iteration: int, phase: int, release_s: float) -> None:
        super().__init__(coflow_id, job, cojob, stage, iteration, phase, release_s,
                         int(table.size[rows.start:rows.stop].sum()))
        self.rows, self._table = rows, table
        self._ports = self._hop_port = self._hop_row = None  # found on the first demand asked
        self._cache: dict[str, tuple[int, object]] = {}

    def _find_hops(self) -> None:
        """The coflow's distinct ports, and for each hop of its flows its port and row."""
        t, rows = self._table, self.rows
        start, stop = t.path_offsets[rows.start], t.path_offsets[rows.stop]
        self._ports, self._hop_port = np.unique(t.path_ports[start:stop], return_inverse=True)
        self._hop_row = np.repeat(np.arange(rows.start, rows.stop), np.diff(t.path_offsets[rows.start:rows.stop + 1]))

    @property
    def sent_bytes(self) -> int:
        """Bytes of the coflow delivered so far (finished flows included; read once per decision)."""
        return self._cached("sent_bytes", lambda: int(self._table.sent_of(self.rows).sum()))

    @property
    def flows(self) -> tuple[FlowState, ...]:
        """The unfinished flows, by id (built on request, once per decision)."""
        return self._cached("flows", self._build_flows)

    def flow_ids(self) -> list[int]:
        """Ids of the unfinished flows, increasing."""
        return self._open_rows().tolist()

    def flow_id_array(self) -> np.ndarray:
        """Ids of the unfinished flows, increasing, as the table's rows (int64)."""
        return self._open_rows()

    def _open_rows(self) -> np.ndarray:
        """Rows of the unfinished flows, increasing, from the table's ``open`` column."""
        rows = self.rows
        return np.flatnonzero(self._table.open[rows.start:rows.stop]) + rows.start

    def port_bytes(self) -> dict[int, int]:
        """Remaining bytes on each port the unfinished flows cross (ports without bytes omitted)."""
        return self._cached("port_bytes", self._port_bytes)

    def flow_columns(self) -> FlowColumns:
        """The unfinished flows as arrays, by id, from the table (once per decision)."""
        return self._cached("flow_columns", self._flow_columns)

    def demand_s(self, capacity_bps: np.ndarray) -> dict[int, float]:
        """``d_c^p``: seconds each port needs for the remaining bytes (once per decision)."""
        return self._cached("demand_s", lambda: self._demand_s(capacity_bps))

    def _cached(self, key: str, build: Callable[[], object]):
        stamp = self._table.stamp
        hit = self._cache.get(key)
        if hit is None or hit[0] != stamp:
            hit = (stamp, build())
            self._cache[key] = hit
        return hit[1]

    def _load(self) -> tuple[np.ndarray, np.ndarray]:
        """Ports with remaining bytes and those bytes (exact: sums stay below 2**53)."""
        if self._ports is None:
            self._find_hops()
        t = self._table
        remaining = t.size[self._hop_row] - t.sent_now()[self._hop_row]
        load = np.bincount(self._hop_port, weights=remaining, minlength=len(self._ports))
        used = load > 0
        return self._ports[used], load[used].astype(np.int64)

    def _port_bytes(self) -> dict[int, int]:
        ports, load = self._load()
        return dict(zip(ports.tolist(), load.tolist()))

    def _demand_s(self, capacity_bps: np.ndarray) -> dict[int, float]:
        ports, load = self._load()
        return dict(zip(ports.tolist(), (load * 8 / capacity_bps[ports]).tolist()))

    def _flow_columns(self) -> FlowColumns:
        t, rows = self._table, self._open_rows()
        return FlowColumns(rows, t.size[rows] - t.sent_now()[rows], *take_paths(t.path_offsets, t.path_ports, rows))

    def _build_flows(self) -> tuple[FlowState, ...]:
        t, sent = self._table, self._table.sent_now()
        ports = t.path_ports
        return tuple(FlowState(f, self.coflow_id, int(t.src[f]), int(t.dst[f]), int(t.size[f]), int(sent[f]),
                               tuple(ports[t.path_offsets[f]:t.path_offsets[f + 1]].tolist()))
                     for f in self._open_rows().tolist())


class LiveView(View):
    """The driver's view: a :class:`View` whose :meth:`flow_ids` is one array from the table.

    Flow ids grow with coflow release order, so the unfinished rows in increasing order
    are exactly the flows coflow by coflow.
    """

    def __init__(self, table: FlowTable, now_s: float, port_capacity_bps: np.ndarray, n_classes: int) -> None:
        super().__init__(now_s, port_capacity_bps, n_classes, {})
        self._table = table

    def flow_ids(self) -> np.ndarray:
        """Ids of every unfinished flow, increasing."""
        return self._table.open_rows()
