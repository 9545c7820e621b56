"""Topologies as plain descriptions: hosts, switches, full-duplex links.

A topology is a small class whose :meth:`Topology.build` calls :meth:`add_host`,
:meth:`add_switch` and :meth:`add_link` (the shape of mininet's ``Topo``). Nothing here
imports ns-3: the packet backend realises a :class:`Topology` in ns-3, the fluid backend
and the schedulers use its ports and paths directly.

Numbering, shared by every backend:

* nodes: hosts first (``0 .. n_hosts-1``, so a host's number is also its ns-3 node id),
  then switches in the order they were added;
* ports: every link ``i`` between ``a`` and ``b`` (in that order) gives two directed ports,
  ``2*i`` for ``a -> b`` and ``2*i + 1`` for ``b -> a``. A port is an egress queue of the
  node it leaves; its capacity is the link rate.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import networkx as nx
import numpy as np

from .. import validate
from ..errors import ConfigError
from .ecmp import FiveTuple, flow_five_tuple, node_seed
from .paths import RouteTable

__all__ = ["Link", "Topology"]

#: Default link rate (bits per second): 10 Gbps, the Grouper/Beamer testbed speed.
DEFAULT_RATE_BPS = 10e9
#: Default one-way propagation delay of a link (seconds).
DEFAULT_DELAY_S = 1e-6
#: Default MTU (bytes): jumbo frames, which make large transfers ~6x cheaper to simulate.
DEFAULT_MTU = 9000
#: Default egress buffer per port (bytes): ~50 jumbo frames, a few bandwidth-delay
#: products of a datacenter path (oversized buffers slow TCP recovery).
DEFAULT_BUFFER_BYTES = 450_000
#: Largest ECMP seed: :func:`~.ecmp.node_seed` keeps its low 32 bits.
ECMP_SEED_MAX = 2**32 - 1


@dataclass(frozen=True)
class Link:
    """A full-duplex link between nodes ``a`` and ``b`` (node numbers)."""

    a: int
    b: int
    rate_bps: float
    delay_s: float


class Topology:
    """A network of hosts and switches joined by full-duplex links.

    Subclasses override :meth:`build`. Keyword arguments set the defaults of every link;
    :meth:`add_link` may override rate and delay per link.

    Parameters
    ----------
    rate_bps:
        Default link rate in bits per second (> 0).
    delay_s:
        Default one-way propagation delay of a link in seconds (>= 0).
    mtu_bytes:
        IP MTU of every link: 9000 (jumbo, default) or 1500.
    buffer_bytes:
        Egress buffer of every port, bytes (per priority band on the packet backend).
    ecmp_seed:
        Seed of the per-node ECMP hash; change it to draw other equal-cost paths.
    """

    def __init__(
        self,
        *,
        rate_bps: float = DEFAULT_RATE_BPS,
        delay_s: float = DEFAULT_DELAY_S,
        mtu_bytes: int = DEFAULT_MTU,
        buffer_bytes: int = DEFAULT_BUFFER_BYTES,
        ecmp_seed: int = 0,
    ) -> None:
        _check_rate("topology.rate_bps", rate_bps)
        _check_delay("topology.delay_s", delay_s)
        fix = "use 9000 (jumbo frames, default) or 1500"
        if validate.integer("topology.mtu_bytes", mtu_bytes, fix=fix) not in (1500, 9000):
            raise ConfigError("topology.mtu_bytes", f"must be 1500 or 9000, got {mtu_bytes!r}", fix)
        validate.integer("topology.buffer_bytes", buffer_bytes, low=2 * mtu_bytes,
                         fix="the per-port egress buffer in bytes (at least two MTUs), e.g. 450000")
        validate.integer("topology.ecmp_seed", ecmp_seed, low=0, high=ECMP_SEED_MAX,
                         fix="the per-node hash uses 32 bits of the seed: give 0..2^32-1")
        self.rate_bps = float(rate_bps)
        self.delay_s = float(delay_s)
        self.mtu_bytes = mtu_bytes
        self.buffer_bytes = buffer_bytes
        self.ecmp_seed = int(ecmp_seed)
        self._host_names: list[str] = []
        self._switch_names: list[str] = []
        self._links: list[tuple[str, str, float, float]] = []
        self.build()
        self._freeze()

    # -- construction (mininet style) ---------------------------------------------------

    def build(self) -> None:
        """Add hosts, switches and links. Subclasses override this."""

    def add_host(self, name: str) -> str:
        """Add a host (a server with one NIC) and return its name."""
        self._host_names.append(name)
        return name

    def add_switch(self, name: str) -> str:
        """Add a switch and return its name."""
        self._switch_names.append(name)
        return name

    def add_link(self, a: str, b: str, *, rate_bps: float | None = None,
                 delay_s: float | None = None) -> None:
        """Join nodes ``a`` and ``b`` with a full-duplex link."""
        rate = self.rate_bps if rate_bps is None else rate_bps
        delay = self.delay_s if delay_s is None else delay_s
        _check_rate(f"link {a}-{b}.rate_bps", rate)
        _check_delay(f"link {a}-{b}.delay_s", delay)
        self._links.append((a, b, float(rate), float(delay)))

    def _freeze(self) -> None:
        names = self._host_names + self._switch_names
        if len(set(names)) != len(names):
            dup = sorted({n for n in names if names.count(n) > 1})
            raise ConfigError("topology", f"node names repeat: {dup}", "give every node a unique name")
        self.node_names: tuple[str, ...] = tuple(names)
        self.index: dict[str, int] = {n: i for i, n in enumerate(names)}
        self.n_hosts = len(self._host_names)
        links = []
        for a, b, rate, delay in self._links:
            for end in (a, b):
                if end not in self.index:
                    raise ConfigError(f"link {a}-{b}", f"unknown node {end!r}", "add the node before linking it")
            links.append(Link(self.index[a], self.index[b], rate, delay))
        self.links: tuple[Link, ...] = tuple(links)
        degree = np.zeros(len(names), dtype=int)
        for link in links:
            degree[link.a] += 1
            degree[link.b] += 1
        for h in range(self.n_hosts):
            if degree[h] != 1:
                raise ConfigError(f"host {names[h]}", f"has {degree[h]} links",
                                  "connect every host to exactly one switch")
        for link in links:
            if link.a < self.n_hosts and link.b < self.n_hosts:
                raise ConfigError(f"link {names[link.a]}-{names[link.b]}", "joins two hosts",
                                  "hosts attach to switches only")

    # -- numbering ----------------------------------------------------------------------

    @property
    def n_nodes(self) -> int:
        """Number of nodes (hosts then switches)."""
        return len(self.node_names)

    @property
    def hosts(self) -> range:
        """Host node numbers: ``0 .. n_hosts-1``."""
        return range(self.n_hosts)

    @property
    def switches(self) -> range:
        """Switch node numbers."""
        return range(self.n_hosts, self.n_nodes)

    def is_host(self, node: int) -> bool:
        """Whether ``node`` is a host."""
        return node < self.n_hosts

    @cached_property
    def port_src(self) -> np.ndarray:
        """Node each port leaves from (array indexed by port)."""
        return np.array([[l.a, l.b] for l in self.links], dtype=np.int64).reshape(-1)

    @cached_property
    def port_dst(self) -> np.ndarray:
        """Node each port leads to (array indexed by port)."""
        return np.array([[l.b, l.a] for l in self.links], dtype=np.int64).reshape(-1)

    @cached_property
    def port_capacity_bps(self) -> np.ndarray:
        """Capacity of each port in bits per second."""
        return np.repeat([l.rate_bps for l in self.links], 2).astype(float)

    @cached_property
    def port_delay_s(self) -> np.ndarray:
        """Propagation delay of each port in seconds."""
        return np.repeat([l.delay_s for l in self.links], 2).astype(float)

    @property
    def n_ports(self) -> int:
        """Number of directed ports (twice the number of links)."""
        return 2 * len(self.links)

    @cached_property
    def port_of(self) -> dict[tuple[int, int], int]:
        """Port number of the directed hop ``(u, v)``."""
        return {(int(u), int(v)): p for p, (u, v) in enumerate(zip(self.port_src, self.port_dst))}

    def port_name(self, port: int) -> str:
        """Human-readable ``"u->v"`` name of a port."""
        return f"{self.node_names[self.port_src[port]]}->{self.node_names[self.port_dst[port]]}"

    @cached_property
    def host_switch(self) -> np.ndarray:
        """The switch each host is attached to."""
        attach = np.empty(self.n_hosts, dtype=np.int64)
        for link in self.links:
            if link.a < self.n_hosts:
                attach[link.a] = link.b
            elif link.b < self.n_hosts:
                attach[link.b] = link.a
        return attach

    def graph(self) -> nx.Graph:
        """The topology as a networkx graph (node numbers, with ``name`` and link attributes)."""
        g = nx.Graph()
        for i, name in enumerate(self.node_names):
            g.add_node(i, name=name, kind="host" if i < self.n_hosts else "switch")
        for link in self.links:
            g.add_edge(link.a, link.b, rate_bps=link.rate_bps, delay_s=link.delay_s)
        return g

    # -- routing ------------------------------------------------------------------------

    @cached_property
    def switch_routes(self) -> dict[int, dict[int, tuple[int, ...]]]:
        """For each destination switch ``t`` (one a host hangs off): switch -> its sorted equal-cost next hops toward ``t``.

        Hosts never forward, so distances are computed on the switch graph; hosts
        attached to the same switch share one table (k=16 needs 128 BFS, not 1024). A
        switch with no route toward ``t`` is absent from ``t``'s table.
        """
        g = nx.Graph(self.graph().subgraph(self.switches))  # a copy: a subgraph view is slow to walk
        neighbours = {u: sorted(g.adj[u]) for u in g}
        tables = {}
        for t in sorted(set(self.host_switch.tolist())):
            dist = nx.single_source_shortest_path_length(g, t)
            tables[t] = {
                u: tuple(v for v in neighbours[u] if dist.get(v) == du - 1)
                for u, du in dist.items() if du > 0
            }
        return tables

    @cached_property
    def routes(self) -> RouteTable:
        """The routing tables as arrays, and every flow path (:class:`~.paths.RouteTable`), built once."""
        return RouteTable(self)

    def next_hops(self, node: int, dst_host: int) -> tuple[int, ...]:
        """Equal-cost next hops from ``node`` toward host ``dst_host``, sorted by number."""
        if node < self.n_hosts:
            return (int(self.host_switch[node]),)
        t = int(self.host_switch[dst_host])
        if node == t:
            return (dst_host,)
        try:
            return self.switch_routes[t][node]
        except KeyError:
            raise ConfigError(f"route {self.node_names[node]}->{self.node_names[dst_host]}",
                              "no path", "connect the topology") from None

    @cached_property
    def node_seeds(self) -> np.ndarray:
        """ECMP hash seed of every node (uint64)."""
        return np.array([node_seed(self.ecmp_seed, n) for n in range(self.n_nodes)], dtype=np.uint64)

    def path_nodes(self, ft: FiveTuple, src: int, dst: int) -> list[int]:
        """Nodes a packet of five-tuple ``ft`` visits from host ``src`` to host ``dst``."""
        return [int(src), *self.port_dst[list(self.tuple_path(ft, src, dst))].tolist()]

    def flow_path(self, flow_id: int, src: int, dst: int) -> tuple[int, ...]:
        """Ports (directed links) crossed by flow ``flow_id`` from ``src`` to ``dst``."""
        return self.tuple_path(flow_five_tuple(int(flow_id), int(src), int(dst)), src, dst)

    def tuple_path(self, ft: FiveTuple, src: int, dst: int) -> tuple[int, ...]:
        """Ports crossed from host ``src`` to host ``dst`` by packets of five-tuple ``ft``.

        The addresses hashed are the hosts' (``ft``'s are theirs by construction); many
        flows at once: :meth:`RouteTable.paths` through :attr:`routes`.
        """
        _, ports = self.routes.paths([src], [dst], [ft.sport], [ft.dport])
        return tuple(ports.tolist())

    def base_rtt_s(self, src: int, dst: int) -> float:
        """Round-trip propagation delay between two hosts on a shortest path (no queueing)."""
        return 2 * float(sum(self.port_delay_s[p] for p in self.flow_path(0, src, dst)))

    def describe(self) -> dict:
        """A JSON-ready summary (recorded in ``run.json``)."""
        return {
            "kind": type(self).__name__,
            "hosts": self.n_hosts,
            "switches": self.n_nodes - self.n_hosts,
            "links": len(self.links),
            "rate_bps": self.rate_bps,
            "delay_s": self.delay_s,
            "mtu_bytes": self.mtu_bytes,
            "buffer_bytes": self.buffer_bytes,
            "ecmp_seed": self.ecmp_seed,
        }


def _check_rate(field: str, rate: float) -> None:
    validate.number(field, rate, low=0.0, low_open=True, high=validate.MAX_RATE_BPS,
                    fix="bits per second, e.g. 10e9 for 10 Gbps")


def _check_delay(field: str, delay: float) -> None:
    validate.number(field, delay, low=0.0, high=validate.MAX_SECONDS, fix="seconds, e.g. 1e-6 for 1 microsecond")
