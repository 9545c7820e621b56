"""Ready-made datacenter topologies, each a tiny :class:`Topology` subclass.

Every ``build`` reads like the drawing of the network. :data:`TOPOLOGIES` maps the names
used in scenario files and on the command line to the classes.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable

from .. import validate
from .base import Topology

__all__ = ["FatTree", "LeafSpine", "BigSwitch", "Dumbbell", "TOPOLOGIES", "topology_keys", "hpcc",
           "fat_tree", "leaf_spine", "big_switch", "dumbbell"]


_K_RULE = validate.Number(integer=True, low=2, what="an even integer",
                          fix="use k = 4 (16 hosts), 8 (128) or 16 (1024)")


class FatTree(Topology):
    """A k-ary fat-tree (Al-Fares et al., SIGCOMM 2008): k pods, full bisection bandwidth.

    Each pod has k/2 edge and k/2 aggregation switches; each edge switch serves k/2 hosts;
    (k/2)^2 core switches join the pods. Aggregation switch ``j`` of every pod connects to
    cores ``j*k/2 .. j*k/2 + k/2 - 1``. k=4: 16 hosts, k=8: 128, k=16: 1024.
    """

    def __init__(self, k: int = 4, **link) -> None:
        if _K_RULE.check("topology.k", k) % 2:
            _K_RULE.fail("topology.k", k)
        validate.size("topology.k", k**3 + 5 * k * k // 4, "nodes and links", validate.NODE_BYTES)
        self.k = k
        super().__init__(**link)

    def build(self) -> None:
        k, half = self.k, self.k // 2
        hosts = [[[self.add_host(f"h{p}_{e}_{i}") for i in range(half)]
                  for e in range(half)] for p in range(k)]
        edges = [[self.add_switch(f"edge{p}_{e}") for e in range(half)] for p in range(k)]
        aggs = [[self.add_switch(f"agg{p}_{a}") for a in range(half)] for p in range(k)]
        cores = [self.add_switch(f"core{c}") for c in range(half * half)]
        for p in range(k):
            for e in range(half):
                for h in hosts[p][e]:
                    self.add_link(h, edges[p][e])
                for a in range(half):
                    self.add_link(edges[p][e], aggs[p][a])
            for a in range(half):
                for c in range(half):
                    self.add_link(aggs[p][a], cores[a * half + c])

    def describe(self) -> dict:
        return {**super().describe(), "k": self.k}


class LeafSpine(Topology):
    """A two-tier leaf-spine (Clos) fabric: every leaf connects to every spine.

    The spine links are sized so that ``oversubscription`` = host bandwidth of a leaf /
    uplink bandwidth of a leaf (1.0 is non-blocking; 3.0 is a common 3:1 design).
    """

    def __init__(self, leaves: int = 4, spines: int = 2, hosts_per_leaf: int = 4,
                 oversubscription: float = 1.0, **link) -> None:
        for field, value in (("leaves", leaves), ("spines", spines), ("hosts_per_leaf", hosts_per_leaf)):
            validate.integer(f"topology.{field}", value, low=1, fix="e.g. 4")
        validate.size("topology.leaves", leaves * (2 * hosts_per_leaf + spines + 1) + spines, "nodes and links",
                      validate.NODE_BYTES)
        validate.number("topology.oversubscription", oversubscription, low=0.0, low_open=True,
                        fix="1.0 for non-blocking, 3.0 for 3:1")
        self.leaves, self.spines, self.hosts_per_leaf = leaves, spines, hosts_per_leaf
        self.oversubscription = float(oversubscription)
        super().__init__(**link)

    def build(self) -> None:
        uplink = self.hosts_per_leaf * self.rate_bps / (self.spines * self.oversubscription)
        leaves = [self.add_switch(f"leaf{l}") for l in range(self.leaves)]
        spines = [self.add_switch(f"spine{s}") for s in range(self.spines)]
        for l, leaf in enumerate(leaves):
            for i in range(self.hosts_per_leaf):
                self.add_link(self.add_host(f"h{l}_{i}"), leaf)
            for spine in spines:
                self.add_link(leaf, spine, rate_bps=uplink)

    def describe(self) -> dict:
        return {**super().describe(), "leaves": self.leaves, "spines": self.spines,
                "hosts_per_leaf": self.hosts_per_leaf, "oversubscription": self.oversubscription}


class BigSwitch(Topology):
    """One non-blocking switch with ``n`` hosts: only host up- and downlinks constrain.

    The classic coflow abstraction (Varys, Aalo, Sincronia): the fabric is one big switch
    and every host (or rack) is one ingress and one egress port.
    """

    def __init__(self, n: int = 16, **link) -> None:
        validate.integer("topology.n", n, low=2, fix="hosts on the switch, e.g. 16")
        validate.size("topology.n", 2 * n + 1, "nodes and links", validate.NODE_BYTES)
        self.n = n
        super().__init__(**link)

    def build(self) -> None:
        switch = self.add_switch("s0")
        for i in range(self.n):
            self.add_link(self.add_host(f"h{i}"), switch)

    def describe(self) -> dict:
        return {**super().describe(), "n": self.n}


class Dumbbell(Topology):
    """Two switches joined by one bottleneck link, ``left`` and ``right`` hosts on each side."""

    def __init__(self, left: int = 2, right: int = 2, bottleneck_rate_bps: float | None = None,
                 **link) -> None:
        for field, value in (("left", left), ("right", right)):
            validate.integer(f"topology.{field}", value, low=1, fix="hosts on that side, e.g. 2")
        validate.size("topology.left", 2 * (left + right) + 3, "nodes and links", validate.NODE_BYTES)
        validate.number("topology.bottleneck_rate_bps", bottleneck_rate_bps, low=0.0, low_open=True,
                        high=validate.MAX_RATE_BPS, optional=True, fix="bits per second, or unset for rate_bps")
        self.left, self.right = left, right
        self.bottleneck_rate_bps = bottleneck_rate_bps
        super().__init__(**link)

    def build(self) -> None:
        lefts = [self.add_host(f"l{i}") for i in range(self.left)]
        rights = [self.add_host(f"r{i}") for i in range(self.right)]
        s_left, s_right = self.add_switch("sL"), self.add_switch("sR")
        for h in lefts:
            self.add_link(h, s_left)
        for h in rights:
            self.add_link(h, s_right)
        self.add_link(s_left, s_right, rate_bps=self.bottleneck_rate_bps)

    def describe(self) -> dict:
        return {**super().describe(), "left": self.left, "right": self.right,
                "bottleneck_rate_bps": self.bottleneck_rate_bps or self.rate_bps}


def hpcc(path: str, **link) -> Topology:
    """The topology of an HPCC ``topology.txt`` (see :mod:`ns3_hpsched.interchange.hpcc`)."""
    from ..interchange.hpcc import read_topology  # interchange builds on this package

    return read_topology(path, **link)


#: Topology builders (classes, or the HPCC file reader) by the name used in scenario files.
TOPOLOGIES: dict[str, Callable[..., Topology]] = {
    "fat_tree": FatTree,
    "leaf_spine": LeafSpine,
    "big_switch": BigSwitch,
    "dumbbell": Dumbbell,
    "hpcc": hpcc,
}


def topology_keys(kind: str) -> tuple[str, ...]:
    """The keys a ``[topology]`` table of ``kind`` takes: the builder's, then every link option."""
    own = [name for name, p in inspect.signature(TOPOLOGIES[kind]).parameters.items()
           if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)]
    link = [name for name in inspect.signature(Topology.__init__).parameters if name != "self"]
    return (*own, *link)

fat_tree = FatTree
leaf_spine = LeafSpine
big_switch = BigSwitch
dumbbell = Dumbbell
