"""Distinct paths, numbered: the fluid backend's *routes*.

Flows that cross the same ports share a route, a row of the padded port matrix
:attr:`RouteIndex.path` (-1 after the last port); the flow store keeps a route number per
flow, and groups are keyed by route and class. Routes are numbered in the order their
paths first appear.

A start of flows names each flow's path as a slice of one port array (as a
:class:`~ns3_hpsched.backends.base.FlowBatch` does). Finding those paths' routes is one
compiled pass over the ports (:func:`_intern`): an open-addressing hash table of route
numbers, probed with a hash of the path (the ECMP hash's mixer,
:func:`~ns3_hpsched.topology.ecmp.splitmix64`) and confirmed against the stored row. A Python
dict keyed by port tuples took 0.26 s of the whole Facebook trace's 701,486 flows.
"""

from __future__ import annotations

import numpy as np

from ...topology.ecmp import splitmix64
from .kernel import kernel

__all__ = ["RouteIndex"]


class RouteIndex:
    """Route numbers of paths, adding the paths not seen before (see the module docstring).

    Parameters
    ----------
    capacity:
        Routes held before :attr:`path` grows.
    width:
        Ports per row of :attr:`path` before it widens.
    """

    def __init__(self, capacity: int = 1024, width: int = 6) -> None:
        self.path = np.full((capacity, width), -1, dtype=np.int64)
        self._slots = np.full(_table_size(capacity), -1, dtype=np.int64)
        self._count = np.zeros(1, dtype=np.int64)

    def __len__(self) -> int:
        """Routes numbered so far."""
        return int(self._count[0])

    def routes(self, path_offsets: np.ndarray, path_ports: np.ndarray) -> np.ndarray:
        """The route of each path ``path_ports[path_offsets[i]:path_offsets[i + 1]]``."""
        offsets = np.asarray(path_offsets, dtype=np.int64)
        ports = np.asarray(path_ports, dtype=np.int64)
        n = len(offsets) - 1
        out = np.empty(n, dtype=np.int64)
        longest = int(np.diff(offsets).max()) if n else 0
        if longest > self.path.shape[1]:
            self.path = np.pad(self.path, ((0, 0), (0, longest - self.path.shape[1])), constant_values=-1)
        done = 0
        while done < n:
            done = _intern(offsets, ports, done, self.path, self._slots, self._count, out)
            if done < n:
                self._grow()
        return out

    def _grow(self) -> None:
        """Double the rows of :attr:`path` (they are full), and the hash table with them."""
        self.path = np.concatenate([self.path, np.full_like(self.path, -1)])
        self._slots = np.full(_table_size(len(self.path)), -1, dtype=np.int64)
        _rehash(self.path, len(self), self._slots)


def _table_size(routes: int) -> int:
    """Slots for ``routes`` routes, at most half of them in use: a power of two."""
    return 1 << (2 * max(routes, 1) - 1).bit_length()


@kernel(inline="always")
def _hash(ports, start, stop):
    """A hash of the ports of one path (as a non-negative int64), mixed port by port."""
    h = np.uint64(stop - start)
    for i in range(start, stop):
        h = splitmix64(h ^ np.uint64(ports[i]))
    return np.int64(h >> np.uint64(1))


@kernel(inline="always")
def _same(row, ports, start, stop):
    """Whether route ``row`` (padded with -1) is exactly the ports ``ports[start:stop]``."""
    n = stop - start
    if n < len(row) and row[n] != -1:
        return False
    for i in range(n):
        if row[i] != ports[start + i]:
            return False
    return True


@kernel
def _intern(offsets, ports, first, path, slots, count, out):
    """Route each path from ``first`` on into ``out``, numbering new ones from ``count[0]``;
    returns where it stopped: the number of paths, or the first new one when the rows of
    ``path`` are full (the table has twice as many slots as ``path`` has rows)."""
    mask = len(slots) - 1
    for i in range(first, len(offsets) - 1):
        start, stop = offsets[i], offsets[i + 1]
        pos = _hash(ports, start, stop) & mask
        while slots[pos] >= 0 and not _same(path[slots[pos]], ports, start, stop):
            pos = (pos + 1) & mask
        if slots[pos] < 0:
            if count[0] == len(path):
                return i
            route = count[0]
            for j in range(stop - start):
                path[route, j] = ports[start + j]
            slots[pos] = route
            count[0] = route + 1
        out[i] = slots[pos]
    return len(offsets) - 1


@kernel
def _rehash(path, n, slots):
    """Enter routes ``0 .. n-1`` of ``path`` into the empty table ``slots``."""
    mask = len(slots) - 1
    width = path.shape[1]
    for route in range(n):
        row = path[route]
        stop = width
        for j in range(width):
            if row[j] < 0:
                stop = j
                break
        pos = _hash(row, 0, stop) & mask
        while slots[pos] >= 0:
            pos = (pos + 1) & mask
        slots[pos] = route
