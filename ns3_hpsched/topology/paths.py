"""Per-flow ECMP paths for many flows at once: the routing tables as arrays, the walk compiled.

:class:`RouteTable` holds, for every destination switch ``t`` and node ``u``, the sorted
equal-cost next hops from ``u`` toward ``t`` and the ports they leave by. A flow's path is
the walk from its source host to its destination host that picks, at a node with several
next hops, ``hops[hash % len(hops)]`` with the node's seed (:func:`~.ecmp.hash_words`, the
same rule as the packet backend's C++ router). The walk is compiled (numba), so the paths of
a coflow of thousands of flows cost microseconds, and it is the one place paths are made:
:meth:`Topology.flow_path` and :meth:`Topology.tuple_path` ask it for a single flow.
"""

from __future__ import annotations

import numba
import numpy as np

from ..errors import ConfigError
from .ecmp import hash_words, host_ip

__all__ = ["RouteTable", "path_offsets", "take_paths"]


class RouteTable:
    """The equal-cost next hops of a topology, as arrays the compiled walk reads.

    Parameters
    ----------
    topology:
        The network (a :class:`~ns3_hpsched.topology.base.Topology`); its
        :attr:`~ns3_hpsched.topology.base.Topology.switch_routes` gives the next hops.
    """

    def __init__(self, topology) -> None:
        self._topology = topology
        n_nodes, n_hosts = topology.n_nodes, topology.n_hosts
        routes = topology.switch_routes
        self._target_row = np.full(n_nodes, -1, dtype=np.int64)
        self._start = np.zeros((len(routes), n_nodes), dtype=np.int64)
        self._count = np.zeros((len(routes), n_nodes), dtype=np.int64)
        node, port = [], []
        for row, (t, table) in enumerate(sorted(routes.items())):
            self._target_row[t] = row
            for u, hops in table.items():
                self._start[row, u], self._count[row, u] = len(node), len(hops)
                node.extend(hops)
                port.extend(topology.port_of[(u, v)] for v in hops)
        self._hop_node = np.array(node, dtype=np.int64)
        self._hop_port = np.array(port, dtype=np.int64)
        hosts = range(n_hosts)
        switch = topology.host_switch
        self._host_switch = switch.astype(np.int64)
        self._up = np.array([topology.port_of[(h, int(switch[h]))] for h in hosts], dtype=np.int64)
        self._down = np.array([topology.port_of[(int(switch[h]), h)] for h in hosts], dtype=np.int64)
        self._ip = np.array([host_ip(h) for h in hosts], dtype=np.uint64)
        self._seeds = topology.node_seeds
        self._max_hops = 2 + max((_depth(table, u) for table in routes.values() for u in table), default=0)

    def paths(self, src: np.ndarray, dst: np.ndarray, sport: np.ndarray,
              dport: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Ports crossed by flows ``i`` from ``src[i]`` to ``dst[i]`` with five-tuple ports ``sport[i]``, ``dport[i]``.

        Returns ``(offsets, ports)``: flow ``i`` crosses ``ports[offsets[i]:offsets[i + 1]]``
        in order (none when ``src[i] == dst[i]``). Raises :class:`ConfigError` for a host
        that does not exist or a pair with no route.
        """
        src, dst = np.asarray(src, dtype=np.int64), np.asarray(dst, dtype=np.int64)
        n_hosts = self._topology.n_hosts
        for hosts in (src, dst):
            bad = np.flatnonzero((hosts < 0) | (hosts >= n_hosts))
            if len(bad):
                raise ConfigError("flow", f"host {int(hosts[bad[0]])} does not exist", f"use hosts 0..{n_hosts - 1}")
        words = (np.asarray(sport, dtype=np.uint64) << np.uint64(16)) | np.asarray(dport, dtype=np.uint64)
        offsets, ports, unrouted = _walk(src, dst, words, self._ip, self._host_switch, self._up, self._down,
                                         self._target_row, self._start, self._count, self._hop_node,
                                         self._hop_port, self._seeds, self._max_hops)
        if unrouted >= 0:
            names = self._topology.node_names
            raise ConfigError(f"route {names[src[unrouted]]}->{names[dst[unrouted]]}", "no path",
                              "connect the topology")
        return offsets, ports


def path_offsets(hops: np.ndarray) -> np.ndarray:
    """Offsets of consecutive paths of ``hops`` ports each: path ``i`` is entries
    ``offsets[i]:offsets[i + 1]`` of their ports (int64, one more than ``hops``)."""
    return np.concatenate([[0], np.cumsum(hops)]).astype(np.int64)


def take_paths(offsets: np.ndarray, ports: np.ndarray, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The paths ``rows`` (in that order) of the paths ``(offsets, ports)``, as ``(offsets, ports)``."""
    lo, hi = offsets[rows], offsets[rows + 1]
    taken = path_offsets(hi - lo)
    return taken, ports[np.repeat(lo - taken[:-1], hi - lo) + np.arange(taken[-1])]


def _depth(table: dict[int, tuple[int, ...]], node: int) -> int:
    """Hops from ``node`` to the destination switch of next-hop table ``table`` (every next hop is one closer)."""
    hops = 0
    while node in table:
        node, hops = table[node][0], hops + 1
    return hops


@numba.njit(cache=True)
def _walk(src, dst, words, ip, host_switch, up, down, target_row, start, count, hop_node, hop_port, seeds,
          max_hops):
    """The compiled walk of :meth:`RouteTable.paths`; also returns the first unrouted flow (-1 if none)."""
    n = len(src)
    offsets = np.zeros(n + 1, dtype=np.int64)
    ports = np.empty(n * max_hops, dtype=np.int64)
    k = 0
    for i in range(n):
        s, d = src[i], dst[i]
        if s != d:
            node, target = host_switch[s], host_switch[d]
            row = target_row[target]
            ports[k] = up[s]
            k += 1
            while node != target:
                c = count[row, node]
                if c == 0:
                    return offsets, ports[:k], i
                j = start[row, node]
                if c > 1:
                    j += np.int64(hash_words(seeds[node], ip[s], ip[d], words[i]) % np.uint64(c))
                ports[k] = hop_port[j]
                node = hop_node[j]
                k += 1
            ports[k] = down[d]
            k += 1
        offsets[i + 1] = k
    return offsets, ports[:k].copy(), -1
