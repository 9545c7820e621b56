"""Packet backend: the ns-3 router puts every flow on exactly Topology.flow_path."""

from __future__ import annotations

import numpy as np
import pytest

from ns3_hpsched.backends.base import FlowStart
from ns3_hpsched.topology import fat_tree, flow_hash
from ns3_hpsched.topology.ecmp import FiveTuple

from .listen import each_flow

pytestmark = pytest.mark.packet


@pytest.fixture(scope="module")
def lib():
    """ns-3 and the compiled C++ classes, loaded once for the module."""
    from ns3_hpsched.backends.packet import load

    return load()


def cross_pod_pairs(topo, n, seed):
    """``n`` random (src, dst) host pairs in different pods of a fat-tree."""
    rng = np.random.default_rng(seed)
    per_pod = topo.n_hosts // topo.k
    pairs = []
    while len(pairs) < n:
        src, dst = (int(h) for h in rng.integers(topo.n_hosts, size=2))
        if src // per_pod != dst // per_pod:
            pairs.append((src, dst))
    return pairs


def test_cpp_hash_equals_python_hash(lib):
    """The C++ FlowHash is bit-identical to topology.ecmp.flow_hash (which ignores the protocol)."""
    rng = np.random.default_rng(0)
    for _ in range(200):
        ft = FiveTuple(int(rng.integers(2**32)), int(rng.integers(2**32)), int(rng.integers(2**16)),
                       int(rng.integers(2**16)), int(rng.choice([6, 17])))
        seed = int(rng.integers(2**63)) * 2 + int(rng.integers(2))
        assert int(lib.cpp.FlowHash(*ft[:4], seed)) == flow_hash(ft, seed) == flow_hash(ft._replace(proto=6), seed)


def test_each_flow_takes_exactly_its_topology_path(lib):
    """Flows run one at a time load exactly the ports of Topology.flow_path, each fully."""
    from ns3_hpsched.backends.packet import PacketBackend

    topo = fat_tree(4)
    backend = PacketBackend(topo)
    size, pairs = 200_000, cross_pod_pairs(topo, 12, seed=1)
    deltas = []
    last = [backend.ports_table()["tx_bytes"].to_numpy()]

    def next_flow(flow_id=None, finish_s=None):
        now = backend.ports_table()["tx_bytes"].to_numpy()
        if flow_id is not None:
            deltas.append(now - last[0])
        last[0] = now
        i = len(deltas)
        if i < len(pairs):
            backend.start_flow(FlowStart(i, *pairs[i], size))

    backend.on_flows_done = each_flow(next_flow)
    next_flow()
    backend.run()
    assert len(deltas) == len(pairs)
    for flow_id, ((src, dst), delta) in enumerate(zip(pairs, deltas)):
        path = set(topo.flow_path(flow_id, src, dst))
        carried = set(np.flatnonzero(delta >= size))
        assert carried == path, f"flow {flow_id} {src}->{dst}"
        assert delta[[p for p in range(topo.n_ports) if p not in path]].max() < 0.05 * size


def test_64_cross_pod_flows_use_every_core(lib):
    """64 concurrent cross-pod flows load every core switch, port by port as flow_path says."""
    from ns3_hpsched.backends.packet import PacketBackend

    topo = fat_tree(4)
    backend = PacketBackend(topo)
    size, pairs = 500_000, cross_pod_pairs(topo, 64, seed=2)
    expected = np.zeros(topo.n_ports)
    for flow_id, (src, dst) in enumerate(pairs):
        backend.start_flow(FlowStart(flow_id, src, dst, size))
        expected[list(topo.flow_path(flow_id, src, dst))] += size
    backend.run()
    tx = backend.ports_table()["tx_bytes"].to_numpy()
    assert len(backend.flows_table()) == len(pairs)
    assert np.all(tx[expected > 0] >= expected[expected > 0])
    assert np.all(tx[expected == 0] < 0.1 * size)
    cores = [n for n in topo.switches if topo.node_names[n].startswith("core")]
    used = {int(topo.port_src[p]) for p in np.flatnonzero(tx >= size)} & set(cores)
    assert used == set(cores)
