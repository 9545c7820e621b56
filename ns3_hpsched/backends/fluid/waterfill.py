"""Strict-priority max-min rates of the fluid backend's groups, by water-filling.

The project's rate model (:mod:`ns3_hpsched.sched.allocator`): explicit rates first,
then the classes in order, each max-min fair in the capacity the ones before it left.
Here it runs over the live groups of :mod:`.groups` (a group stands for ``weight`` flows
of one route and class, which max-min gives one rate) and the lists of who crosses which
port, which the group table keeps up to date, so a class's fill costs its own hops and
ports, not the network's.

Water-filling, one class at a time: every port the class uses offers the *share*
``residual / flows``; the port of smallest share is a bottleneck, its unfrozen groups
freeze at that share, and only the ports they cross change. Freezing at the smallest
share only raises the others' shares, so a heap of ports keyed by their shares, with a
key re-read when it reaches the top, visits every hop once (Bertsekas & Gallager, *Data
Networks*, 2nd ed., sec. 6.5.2). A bottleneck's residual is set to exactly 0, so a lower
class sees a saturated port as full, not as round-off dust.

Only classes from the highest one that changed down are refilled: strict priority means
a class's rates depend on its own and higher classes only. A class's load on each port
is kept (``usage``) so a lower class's capacity is the port's capacity less the explicit
rates and the higher classes' loads. The rates equal the allocator's within float
round-off (held to the exact rationals by the tests).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ...sched.fill import sift_down
from .groups import STAMP
from .kernel import kernel

__all__ = ["Scratch", "scratch", "refill", "RESIDUAL_RTOL"]

#: A port whose higher classes and explicit rates leave less than this fraction of its
#: capacity is full for a lower class (float round-off would otherwise leave it crumbs).
RESIDUAL_RTOL = 1e-12


class Scratch(NamedTuple):
    """Per-port work arrays of a fill (only the filled class's ports are read or written)."""

    residual: np.ndarray
    count: np.ndarray
    key: np.ndarray
    heap: np.ndarray


def scratch(n_ports: int) -> Scratch:
    """Work arrays for a network of ``n_ports`` ports."""
    return Scratch(np.zeros(n_ports), np.zeros(n_ports, dtype=np.int64), np.zeros(n_ports),
                   np.zeros(n_ports, dtype=np.int64))


@kernel
def refill(g, s, route_path, capacity, given_port, top):
    """Refill classes ``top`` and below, in order: each group's ``fill`` and each (port,
    class)'s ``usage``, in what ``given_port`` (explicit rates per port) and the classes
    above leave of ``capacity``."""
    for c in range(top, g.port_head.shape[1]):
        if g.class_n_ports[c]:
            _fill_class(g, s, route_path, capacity, given_port, c)


@kernel
def _fill_class(g, s, route_path, capacity, given_port, c):
    """Max-min fill of class ``c`` by water-filling (see the module docstring)."""
    n = g.class_n_ports[c]
    ports = g.class_ports[c, :n]
    for k in range(n):
        p = ports[k]
        room = capacity[p] - given_port[p]
        for above in range(c):
            room -= g.usage[p, above]
        if room <= RESIDUAL_RTOL * capacity[p]:
            room = 0.0
        s.residual[p], s.count[p] = room, g.port_weight[p, c]
        s.key[k], s.heap[k] = room / s.count[p], k
        g.usage[p, c] = 0.0
    for k in range(n // 2 - 1, -1, -1):
        sift_down(s.heap, s.key, n, k)
    g.counts[STAMP] += 1
    stamp = g.counts[STAMP]
    width = len(g.hop_next) // len(g.route)
    size = n
    while size:
        k = s.heap[0]
        p = ports[k]
        if s.count[p] == 0:  # every group here froze at another bottleneck
            size = _pop(s.heap, s.key, size)
            continue
        level = s.residual[p] / s.count[p]
        if level > s.key[k]:  # stale: freezing elsewhere raised this port's share
            s.key[k] = level
            sift_down(s.heap, s.key, size, 0)
            continue
        size = _pop(s.heap, s.key, size)
        h = g.port_head[p, c]
        while h >= 0:
            grp = h // width
            if g.mark[grp] != stamp:
                g.mark[grp] = stamp
                _freeze(g, s, route_path, grp, p, c, level)
            h = g.hop_next[h]
        s.residual[p], s.count[p] = 0.0, 0


@kernel
def _freeze(g, s, route_path, grp, bottleneck, c, level):
    """Group ``grp`` gets fill ``level`` per flow; its ports carry it (the bottleneck's own
    residual and count are cleared by the caller)."""
    g.fill[grp] = level
    w = g.weight[grp]
    load = level * w
    for q in route_path[g.route[grp]]:
        if q < 0:
            break
        g.usage[q, c] += load
        if q != bottleneck:
            s.residual[q] = max(s.residual[q] - load, 0.0)
            s.count[q] -= w


@kernel
def _pop(heap, key, size):
    """Remove the top of the min-heap ``heap[:size]``; return the new size."""
    size -= 1
    heap[0] = heap[size]
    sift_down(heap, key, size, 0)
    return size
