"""Pure topologies: sizes, validation, shortest paths and per-flow ECMP."""

from __future__ import annotations

import pytest

from ns3_hpsched.errors import ConfigError
from ns3_hpsched.topology import big_switch, dumbbell, fat_tree, flow_five_tuple, leaf_spine, make_topology


@pytest.mark.parametrize("k", [2, 4, 8])
def test_fat_tree_sizes(k):
    """A k-ary fat-tree has k^3/4 hosts, 5k^2/4 switches and 3k^3/4 links."""
    t = fat_tree(k)
    assert (t.n_hosts, t.n_nodes - t.n_hosts, len(t.links)) == (k**3 // 4, 5 * k * k // 4, 3 * k**3 // 4)


@pytest.mark.parametrize("k", [3, 0, -2, 4.0])
def test_fat_tree_rejects_bad_k(k):
    """k must be an even integer; the error names the field and the fix."""
    with pytest.raises(ConfigError, match=r"topology\.k.*even"):
        fat_tree(k)


@pytest.mark.parametrize("rate", [0, -1e9, "fast"])
def test_rate_must_be_positive(rate):
    """A zero, negative or non-numeric link rate is refused, naming the field."""
    with pytest.raises(ConfigError, match="rate_bps"):
        big_switch(4, rate_bps=rate)


def test_unknown_kind_lists_the_known_ones():
    """An unknown topology kind names the valid kinds."""
    with pytest.raises(ConfigError, match="fat_tree"):
        make_topology("torus")


def test_leaf_spine_oversubscription_sizes_uplinks():
    """Host bandwidth of a leaf over its uplink bandwidth equals the oversubscription."""
    t = leaf_spine(leaves=4, spines=2, hosts_per_leaf=6, oversubscription=3.0, rate_bps=10e9)
    leaf = t.index["leaf0"]
    up = sum(l.rate_bps for l in t.links if l.a == leaf and t.node_names[l.b].startswith("spine"))
    down = sum(l.rate_bps for l in t.links if l.b == leaf and l.a < t.n_hosts)
    assert down / up == pytest.approx(3.0)


def test_dumbbell_bottleneck_rate():
    """The dumbbell's middle link has its own rate."""
    t = dumbbell(2, 2, bottleneck_rate_bps=1e9, rate_bps=10e9)
    middle = [l for l in t.links if l.a >= t.n_hosts and l.b >= t.n_hosts]
    assert [l.rate_bps for l in middle] == [1e9]


def _check_path(t, fid, src, dst):
    ports = t.flow_path(fid, src, dst)
    assert t.port_src[ports[0]] == src and t.port_dst[ports[-1]] == dst
    for a, b in zip(ports, ports[1:]):
        assert t.port_dst[a] == t.port_src[b]
    return ports


@pytest.mark.parametrize("src,dst,hops", [(0, 1, 2), (0, 2, 4), (0, 4, 6), (3, 15, 6)])
def test_fat_tree_paths_are_shortest(src, dst, hops):
    """Same edge: 2 hops; same pod: 4; across pods: 6 -- for every flow hash."""
    t = fat_tree(4)
    for fid in range(20):
        assert len(_check_path(t, fid, src, dst)) == hops


def test_ecmp_spreads_flows_over_every_core():
    """64 flows across pods of a k=4 fat-tree use all four core switches."""
    t = fat_tree(4)
    cores = set()
    for fid in range(64):
        src, dst = fid % 4, 4 + fid % 12
        ft = flow_five_tuple(fid, src, dst)
        cores |= {t.node_names[n] for n in t.path_nodes(ft, src, dst) if t.node_names[n].startswith("core")}
    assert cores == {f"core{c}" for c in range(4)}


def test_ecmp_is_per_flow_and_deterministic():
    """A flow's path is a function of its five-tuple alone; other seeds pick other paths."""
    a, b = fat_tree(4), fat_tree(4)
    paths = [a.flow_path(f, 0, 15) for f in range(32)]
    assert paths == [b.flow_path(f, 0, 15) for f in range(32)]
    assert len(set(paths)) == 4
    c = fat_tree(4, ecmp_seed=7)
    assert paths != [c.flow_path(f, 0, 15) for f in range(32)]


def test_node_seeds_differ():
    """Every node hashes with its own seed, so tiers do not choose alike."""
    t = fat_tree(4)
    assert len(set(t.node_seeds.tolist())) == t.n_nodes


def test_ports_pair_up():
    """Ports 2i and 2i+1 are the two directions of link i, with its rate."""
    t = leaf_spine(leaves=2, spines=2, hosts_per_leaf=2)
    for i, link in enumerate(t.links):
        assert (t.port_src[2 * i], t.port_dst[2 * i]) == (link.a, link.b)
        assert (t.port_src[2 * i + 1], t.port_dst[2 * i + 1]) == (link.b, link.a)
        assert t.port_capacity_bps[2 * i] == t.port_capacity_bps[2 * i + 1] == link.rate_bps


def test_missing_host_is_refused():
    """A flow to a host that does not exist fails, naming the valid range."""
    with pytest.raises(ConfigError, match=r"0\.\.15"):
        fat_tree(4).flow_path(0, 0, 16)
