"""Packet backend, RDMA transport: line rate, DCQCN fairness, PFC losslessness, go-back-N, priorities."""

from __future__ import annotations

import numpy as np
import pytest

from ns3_hpsched.backends.base import FlowStart
from ns3_hpsched.errors import ConfigError
from ns3_hpsched.topology import big_switch, fat_tree
from ns3_hpsched.topology.ecmp import PROTO_UDP, flow_five_tuple

pytestmark = pytest.mark.packet

RATE_BPS = 10e9
MTU = 9000
#: DCQCN Kmax of a 10 Gb/s port (16 KB per Gb/s, HPCC simulator).
KMAX_10G = 160_000


def rdma(PacketBackend, topo, **knobs):
    return PacketBackend(topo, transport="rdma", **knobs)


def drop_received(backend, port: int, indices: list[int]) -> None:
    """Lose the ``indices``-th packets (0-based) that cross ``port``, at its receiving device."""
    import cppyy
    from ns import ns

    model = ns.CreateObject[ns.ReceiveListErrorModel]()
    lost = cppyy.gbl.std.list["unsigned int"]()
    for i in indices:
        lost.push_back(i)
    model.SetList(lost)
    receiver = backend._fabric.GetDevice(port ^ 1)  # the peer end of the port's link
    receiver.SetAttribute("ReceiveErrorModel", ns.PointerValue(model))


def test_lone_flow_reaches_line_rate(PacketBackend):
    """A lone RDMA flow's goodput is at least 95% of the 10 Gb/s line rate, with no retransmission."""
    topo = big_switch(3, rate_bps=RATE_BPS)
    backend = rdma(PacketBackend, topo)
    size = 20_000_000
    backend.start_flow(FlowStart(0, 0, 2, size))
    backend.run()
    fct = backend.flows_table()["fct_s"].item()
    assert size * 8 / fct >= 0.95 * RATE_BPS
    assert backend._flows.RetransmittedBytes() == 0
    assert backend.ports_table()["ecn_marks"].sum() == 0


def test_dcqcn_two_flows_converge_to_fair_share(PacketBackend):
    """Two flows into one port share it within 10% of half, the queue stays near Kmax, PFC stays idle."""
    topo = big_switch(3, rate_bps=RATE_BPS)
    backend = rdma(PacketBackend, topo)
    bottleneck = topo.port_of[(3, 2)]  # switch -> h2
    backend.monitor_queue(bottleneck, 10e-6)
    size = 40_000_000
    backend.start_flow(FlowStart(0, 0, 2, size))
    backend.start_flow(FlowStart(1, 1, 2, size))
    samples = []
    for t in (5e-3, 55e-3):  # after the first cuts; before either flow can finish (64 ms at fair share)
        backend.at(t, lambda: samples.append(backend.bytes_sent([0, 1])))
    backend.run()
    share = (samples[1] - samples[0]) / (samples[1] - samples[0]).sum()
    assert share == pytest.approx([0.5, 0.5], abs=0.05)
    assert (samples[1] - samples[0]).sum() * 8 / 50e-3 > 0.9 * RATE_BPS  # and the port stays busy
    queue_bytes = backend.queue_samples(bottleneck)["packets"] * MTU
    assert queue_bytes.max() <= 2 * KMAX_10G
    ports = backend.ports_table()
    assert ports["ecn_marks"].sum() > 0
    assert ports["pfc_pauses"].sum() == 0
    assert ports["drops"].sum() == 0


def test_pfc_holds_incast_losslessly_without_dcqcn(PacketBackend):
    """With DCQCN off, PFC pauses both senders, nothing is dropped and the port is shared evenly."""
    topo = big_switch(3, rate_bps=RATE_BPS)
    backend = rdma(PacketBackend, topo, dcqcn=False)
    size = 10_000_000
    backend.start_flow(FlowStart(0, 0, 2, size))
    backend.start_flow(FlowStart(1, 1, 2, size))
    backend.run()
    ports = backend.ports_table().set_index("name")
    assert ports["drops"].sum() == 0
    assert ports.loc["h0->s0", "pfc_pauses"] > 0 and ports.loc["h1->s0", "pfc_pauses"] > 0
    assert ports["ecn_marks"].sum() == 0
    flows = backend.flows_table()
    assert flows["bytes"].sum() == 2 * size
    assert flows["finish_s"].max() == pytest.approx(2 * size * 8 / RATE_BPS, rel=0.03)
    assert backend._flows.RetransmittedBytes() == 0


def test_without_pfc_the_incast_drops_and_go_back_n_recovers(PacketBackend):
    """The same incast with PFC and DCQCN off overflows the buffer; go-back-N still delivers every byte."""
    topo = big_switch(3, rate_bps=RATE_BPS)
    backend = rdma(PacketBackend, topo, dcqcn=False, pfc=False)
    size = 10_000_000
    backend.start_flow(FlowStart(0, 0, 2, size))
    backend.start_flow(FlowStart(1, 1, 2, size))
    backend.run()
    assert backend.ports_table()["drops"].sum() > 0
    assert backend._flows.RetransmittedBytes() > 0
    assert list(backend.bytes_sent([0, 1])) == [size, size]
    assert len(backend.flows_table()) == 2


def test_eight_to_one_incast_is_lossless(PacketBackend):
    """8-to-1 incast with PFC (and DCQCN): zero drops, pauses at every sender, all bytes delivered."""
    n = 8
    topo = big_switch(n + 1, rate_bps=RATE_BPS)
    backend = rdma(PacketBackend, topo)
    size = 4_000_000
    for i in range(n):
        backend.start_flow(FlowStart(i, i, n, size))
    backend.run()
    ports = backend.ports_table().set_index("name")
    assert ports["drops"].sum() == 0
    assert (ports.loc[[f"h{i}->s0" for i in range(n)], "pfc_pauses"] > 0).all()
    assert list(backend.bytes_sent(list(range(n)))) == [size] * n
    flows = backend.flows_table()
    assert len(flows) == n
    assert flows["finish_s"].max() <= 1.1 * n * size * 8 / RATE_BPS  # the receiver link stayed busy


def test_lost_packets_are_recovered_by_go_back_n(PacketBackend):
    """Two packets lost mid-flow are NACKed and resent; every byte arrives, soon after the ideal time."""
    topo = big_switch(2, rate_bps=RATE_BPS)
    backend = rdma(PacketBackend, topo)
    size = 2_000_000
    backend.start_flow(FlowStart(0, 0, 1, size))
    drop_received(backend, topo.port_of[(2, 1)], [50, 51])
    backend.run()
    assert backend.bytes_sent([0])[0] == size
    resent = backend._flows.RetransmittedBytes()
    assert resent >= 2 * 8956  # at least the two lost packets
    fct = backend.flows_table()["fct_s"].item()
    assert fct < 1.1 * (size + resent) * 8 / RATE_BPS + 20e-6  # NACK-driven, not a timeout


def test_lost_tail_is_recovered_by_timeout(PacketBackend):
    """The last packet of a flow lost (nothing follows to reveal the gap): the timeout resends it."""
    topo = big_switch(2, rate_bps=RATE_BPS)
    backend = rdma(PacketBackend, topo, rto_s=200e-6)
    size = 5 * 8956  # exactly five full packets: the fifth is the tail
    backend.start_flow(FlowStart(0, 0, 1, size))
    drop_received(backend, topo.port_of[(2, 1)], [4])
    backend.run()
    assert backend.bytes_sent([0])[0] == size
    fct = backend.flows_table()["fct_s"].item()
    assert 200e-6 <= fct < 300e-6


def test_strict_priority_holds_with_rdma(PacketBackend):
    """A class-0 RDMA flow finishes as if alone (within 5%) while a class-1 flow shares its port."""
    topo = big_switch(3, rate_bps=RATE_BPS)
    size = 10_000_000
    alone = rdma(PacketBackend, topo)
    alone.start_flow(FlowStart(0, 0, 2, size, priority=0))
    alone.run()
    alone_fct = alone.flows_table()["fct_s"].item()
    backend = rdma(PacketBackend, topo)
    backend.start_flow(FlowStart(0, 0, 2, size, priority=0))
    backend.start_flow(FlowStart(1, 1, 2, size, priority=1))
    backend.run()
    flows = backend.flows_table().set_index("flow_id")
    assert flows.loc[0, "fct_s"] == pytest.approx(alone_fct, rel=0.05)
    assert flows.loc[1, "finish_s"] > flows.loc[0, "finish_s"]
    assert backend.ports_table()["drops"].sum() == 0
    # PFC pauses per class: the held-back class-1 sender is paused, the class-0 one never
    h0, h1 = topo.port_of[(0, 3)], topo.port_of[(1, 3)]
    assert backend._flows.Pauses(h1, 1) > 0
    assert backend._flows.Pauses(h0, 0) == backend._flows.Pauses(h1, 0) == 0


def test_rdma_flows_take_the_udp_ecmp_path(PacketBackend):
    """On a k=4 fat-tree each RDMA flow crosses exactly the ports of its UDP five-tuple's ECMP path."""
    topo = fat_tree(4, rate_bps=RATE_BPS)
    size = 200_000
    for flow_id, (src, dst) in enumerate([(0, 15), (3, 8), (5, 12)]):
        backend = rdma(PacketBackend, topo)
        backend.start_flow(FlowStart(flow_id, src, dst, size))
        backend.run()
        nodes = topo.path_nodes(flow_five_tuple(flow_id, src, dst, PROTO_UDP), src, dst)
        expected = {topo.port_of[(u, v)] for u, v in zip(nodes, nodes[1:])}
        carried = set(np.flatnonzero(backend.ports_table()["tx_bytes"].to_numpy() >= size))
        assert carried == expected


@pytest.mark.parametrize("knobs, field", [
    ({"pmax": 1.5}, "transport.pmax"),
    ({"rto_s": 0}, "transport.rto_s"),
    ({"ack_interval_packets": 0}, "transport.ack_interval_packets"),
    ({"kmin_bytes": 5000, "kmax_bytes": 4000}, "transport.kmin_bytes"),
    ({"pfc_xoff_bytes": 20000, "pfc_xon_bytes": 20000}, "transport.pfc_xon_bytes"),
    ({"dcqcn": "yes"}, "transport.dcqcn"),
    ({"window": 3}, "transport.window"),
])
def test_bad_rdma_knobs_fail_before_the_run(knobs, field):
    """Bad [transport] knobs raise a ConfigError naming transport.<knob>."""
    from ns3_hpsched.transports import make_transport

    with pytest.raises(ConfigError) as err:
        make_transport("rdma", **knobs)
    assert err.value.field == field
