"""Ready-made datacenter topologies, each a tiny :class:`Topology` subclass.

Every ``build`` reads like the drawing of the network. :data:`TOPOLOGIES` maps the names
used in scenario files and on the command line to the classes.
"""

from __future__ import annotations

from ..errors import ConfigError
from .base import Topology

__all__ = ["FatTree", "LeafSpine", "BigSwitch", "Dumbbell", "TOPOLOGIES",
           "fat_tree", "leaf_spine", "big_switch", "dumbbell"]


class FatTree(Topology):
    """A k-ary fat-tree (Al-Fares et al., SIGCOMM 2008): k pods, full bisection bandwidth.

    Each pod has k/2 edge and k/2 aggregation switches; each edge switch serves k/2 hosts;
    (k/2)^2 core switches join the pods. Aggregation switch ``j`` of every pod connects to
    cores ``j*k/2 .. j*k/2 + k/2 - 1``. k=4: 16 hosts, k=8: 128, k=16: 1024.
    """

    def __init__(self, k: int = 4, **link) -> None:
        if not isinstance(k, int) or isinstance(k, bool) or k < 2 or k % 2:
            raise ConfigError("topology.k", f"must be an even integer >= 2, got {k!r}",
                              "use k = 4 (16 hosts), 8 (128) or 16 (1024)")
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
            if not isinstance(value, int) or value < 1:
                raise ConfigError(f"topology.{field}", f"must be a positive integer, got {value!r}")
        if not oversubscription > 0:
            raise ConfigError("topology.oversubscription", f"must be > 0, got {oversubscription!r}",
                              "1.0 for non-blocking, 3.0 for 3:1")
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
        if not isinstance(n, int) or n < 2:
            raise ConfigError("topology.n", f"must be an integer >= 2, got {n!r}")
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
            if not isinstance(value, int) or value < 1:
                raise ConfigError(f"topology.{field}", f"must be a positive integer, got {value!r}")
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


#: Topology classes by the name used in scenario files.
TOPOLOGIES: dict[str, type[Topology]] = {
    "fat_tree": FatTree,
    "leaf_spine": LeafSpine,
    "big_switch": BigSwitch,
    "dumbbell": Dumbbell,
}

fat_tree = FatTree
leaf_spine = LeafSpine
big_switch = BigSwitch
dumbbell = Dumbbell
