"""The compiled path walk (RouteTable.paths) against a hop-by-hop walk of the routing rule."""

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from ns3_hpsched.errors import ConfigError
from ns3_hpsched.topology import big_switch, fat_tree, flow_five_tuple, flow_hash, flow_ports, leaf_spine

TOPOLOGIES = [fat_tree(4, ecmp_seed=7), fat_tree(8), leaf_spine(4, 3, 5), big_switch(12)]


def _walk_by_hand(topo, flow_id, src, dst):
    """The ECMP rule as DESIGN.md states it: at each node, hops[hash % len(hops)], one hop at a time."""
    ft = flow_five_tuple(flow_id, src, dst)
    nodes = [src]
    while nodes[-1] != dst:
        hops = topo.next_hops(nodes[-1], dst)
        nodes.append(hops[flow_hash(ft, int(topo.node_seeds[nodes[-1]])) % len(hops)] if len(hops) > 1 else hops[0])
    return [topo.port_of[(u, v)] for u, v in zip(nodes, nodes[1:])]


@settings(max_examples=40, deadline=None)
@given(st.sampled_from(TOPOLOGIES), st.lists(st.tuples(st.integers(0, 10**6), st.integers(0, 127),
                                                       st.integers(0, 127)), min_size=1, max_size=30))
def test_batch_paths_equal_the_hop_by_hop_walk(topo, flows):
    ids = np.array([f for f, _, _ in flows], dtype=np.int64)
    src = np.array([s % topo.n_hosts for _, s, _ in flows], dtype=np.int64)
    dst = np.array([d % topo.n_hosts for _, _, d in flows], dtype=np.int64)
    offsets, ports = topo.routes.paths(src, dst, *flow_ports(ids))
    for i in range(len(ids)):
        expected = _walk_by_hand(topo, int(ids[i]), int(src[i]), int(dst[i])) if src[i] != dst[i] else []
        assert ports[offsets[i]:offsets[i + 1]].tolist() == expected


def test_fat_tree_paths_have_the_tier_lengths():
    """k=8: same edge switch 2 ports, same pod 4, other pod 6."""
    topo = fat_tree(8)
    offsets, _ = topo.routes.paths([0, 0, 0], [1, 4, 127], *flow_ports(np.arange(3)))
    assert np.diff(offsets).tolist() == [2, 4, 6]


def test_unknown_host_is_named():
    with pytest.raises(ConfigError, match="host 16 does not exist"):
        fat_tree(4).routes.paths([0], [16], [1], [1])
