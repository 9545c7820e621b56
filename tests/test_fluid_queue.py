"""The fluid model's standing queue: a packet waits behind it only at ports other flows saturate."""

import numpy as np
import pytest

from ns3_hpsched.backends.base import FlowStart
from ns3_hpsched.backends.fluid import FluidBackend
from ns3_hpsched.topology import fat_tree
from ns3_hpsched.transports import RdmaTransport, TcpTransport, delivery_s, make_transport
from ns3_hpsched.transports.base import queue_wait_s

from .listen import finish_times

C = 100e9
TOPO = fat_tree(8, rate_bps=C)  # hosts 0..3 under one edge switch


def _fcts(transport, flows):
    """FCT of each ``(start_s, FlowStart)`` on the fluid backend, by flow id."""
    backend = FluidBackend(TOPO, transport=transport)
    done = finish_times(backend)
    for start_s, flow in flows:
        backend.at(start_s, lambda flow=flow: backend.start_flow(flow))
    backend.run()
    return {flow.flow_id: done[flow.flow_id] - start_s for start_s, flow in flows}


@pytest.mark.parametrize("kind", ["dctcp", "newreno", "rdma"])
@pytest.mark.parametrize("size", [1_000, 300_000, 3_000_000])
def test_a_lone_flow_waits_for_no_queue(kind, size):
    """Alone, a flow fills its path's ports itself: its FCT is start-up + size / C + the
    path's propagation and store-and-forward, exactly as without the queue model."""
    transport = make_transport(kind)
    backend = FluidBackend(TOPO, transport=transport)
    paths = []
    start = backend.start_flows
    backend.start_flows = lambda batch: (paths.append(batch), start(batch))[1]
    done = finish_times(backend)
    backend.start_flow(FlowStart(7, 0, 127, size))
    backend.run()
    batch = paths[0]
    ports = batch.path_ports[batch.path_offsets[0]:batch.path_offsets[1]]
    startup = transport.startup_s(batch.path_offsets, batch.path_ports, batch.size_bytes, TOPO.port_delay_s,
                                  TOPO.port_capacity_bps, TOPO.mtu_bytes)[0]
    tail = delivery_s(ports[None, :], np.array([size]), TOPO.port_delay_s, TOPO.port_capacity_bps, TOPO.mtu_bytes)[0]
    assert done[7] == pytest.approx(startup + size * 8 / C + tail, rel=1e-9)


@pytest.mark.parametrize("transport, queue_bytes", [
    (TcpTransport(name="dctcp"), 10 * (9000 - 52) / 2),                     # half an initial window
    (TcpTransport(name="dctcp", initial_cwnd_segments=4), 4 * (9000 - 52) / 2),
    (TcpTransport(name="dctcp", ecn_threshold_bytes=20_000), 3 * 9000),    # capped at K (3 packets)
    (RdmaTransport(), 9000),                                               # one frame
])
def test_a_small_flow_behind_a_saturated_port_waits_the_standing_queue(transport, queue_bytes):
    """A 10 MB flow from host 2 fills host 1's downlink alone; 100 us later a 1 kB flow from
    host 0 to host 1 shares that port at C / 2 (max-min), so the other flow holds half of it:
    the small flow's last packet waits half the standing queue there, ``0.5 * Q * 8 / C``, on
    top of what it would take with no queue model (its own uplink has room to spare)."""
    small = FlowStart(2, 0, 1, 1_000)
    fct = _fcts(transport, [(0.0, FlowStart(1, 2, 1, 10_000_000)), (100e-6, small)])[2]
    # the same small flow without the queue model: start-up, 1 kB at C / 2, path delay
    lone = _fcts(transport, [(0.0, small)])[2]
    no_queue = lone - 1_000 * 8 / C + 1_000 * 8 / (C / 2)
    assert fct - no_queue == pytest.approx(0.5 * queue_bytes * 8 / C, rel=1e-6)


def test_queue_wait_charges_only_busy_ports_and_only_the_others_share():
    """Two-hop paths, a 9000 B queue per port: a flow at half of a full port waits half the
    queue there; a port with room, or one the flow fills alone, adds nothing."""
    paths = np.array([[0, 1], [0, -1], [1, 0]])
    capacity = np.array([C, C])
    port_rate = np.array([C, 0.5 * C])     # port 0 full, port 1 not
    own = np.array([0.5 * C, C, 0.25 * C])
    wait = queue_wait_s(paths, own, port_rate, capacity, np.array([9000.0, 9000.0]))
    unit = 9000 * 8 / C
    np.testing.assert_allclose(wait, [0.5 * unit, 0.0, 0.75 * unit], rtol=1e-12)
