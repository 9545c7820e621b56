"""The fluid backend's start-up per transport: RDMA sends at once, TCP after a handshake."""

import subprocess
import sys

import pytest

from ns3_hpsched.backends.base import FlowStart
from ns3_hpsched.backends.fluid import FluidBackend
from ns3_hpsched.errors import ConfigError
from ns3_hpsched.topology import fat_tree
from ns3_hpsched.topology.ideal import standalone_fct_s
from ns3_hpsched.transports import RdmaTransport, TcpTransport, Transport


def _lone_fct(transport: str | Transport, topo, size: int) -> float:
    """FCT of one flow from host 0 to host 127 (another pod) alone on ``topo``."""
    backend = FluidBackend(topo, transport=transport)
    done = {}
    backend.on_flow_done = lambda fid, t: done.setdefault(fid, t)
    backend.start_flow(FlowStart(7, 0, 127, size))
    backend.run()
    return done[7]


@pytest.mark.parametrize("size", [1_000, 8_000])
def test_lone_small_rdma_flow_finishes_at_standalone_fct_and_tcp_one_rtt_later(size):
    """A small RDMA flow has no start-up: its fluid FCT is the standalone FCT (within 1%);
    a TCP flow of the same size (within its initial window: no slow start) pays one base
    RTT for its handshake on top."""
    topo = fat_tree(8, rate_bps=100e9)
    ideal = standalone_fct_s(topo, 0, 127, size, 7)
    rdma = _lone_fct("rdma", topo, size)
    assert rdma == pytest.approx(ideal, rel=0.01)
    for tcp in ("dctcp", "newreno", "cubic"):
        assert _lone_fct(tcp, topo, size) - rdma == pytest.approx(topo.base_rtt_s(0, 127), rel=1e-9)


def test_tcp_slow_start_idles_the_path_until_the_window_fills_it():
    """A lone 300 kB DCTCP flow at 100 Gbps: the slow-start RTT is 12 us + 6 jumbo packets'
    store-and-forward (4.32 us) = 16.32 us; round 0 sends 10 x 8948 B in 7.1584 us and idles
    9.1616 us, round 1 sends twice that in 14.3168 us and idles 2.0032 us; round 2 holds the
    last byte. So TCP finishes 12 us (handshake) + 11.1648 us after RDMA. (The packet backend
    measures 61.2 us for this flow; fluid gives 56.8 us, 45.6 us without slow start.)"""
    topo = fat_tree(8, rate_bps=100e9)
    gap = _lone_fct("dctcp", topo, 300_000) - _lone_fct("rdma", topo, 300_000)
    assert gap == pytest.approx(12e-6 + 9.1616e-6 + 2.0032e-6, rel=1e-9)


def test_the_initial_window_option_reaches_the_fluid_model():
    """With ``initial_cwnd_segments = 40`` the same 300 kB flow fits its first window
    (40 x 8948 B): no slow start, only the 12 us handshake after RDMA."""
    topo = fat_tree(8, rate_bps=100e9)
    gap = _lone_fct(TcpTransport(initial_cwnd_segments=40), topo, 300_000) - _lone_fct("rdma", topo, 300_000)
    assert gap == pytest.approx(12e-6, rel=1e-9)


def test_unknown_transport_is_refused_with_the_field():
    with pytest.raises(ConfigError, match=r"transport\.kind"):
        FluidBackend(fat_tree(4), transport="quic")


def test_scenario_transport_reaches_the_fluid_backend():
    """`--backend fluid --set transport.kind=rdma` hands the fluid backend the scenario's
    RDMA transport, with its options; ``run.json`` records its kind."""
    from ns3_hpsched.runner import make_backend
    from ns3_hpsched.scenario import load_scenario

    scenario = load_scenario("default", {"backend": "fluid", "transport.kind": "rdma", "transport.pfc": False})
    backend = make_backend(scenario)
    assert isinstance(backend.transport, RdmaTransport) and backend.transport is scenario.built_transport
    assert not backend.transport.pfc and backend.describe()["transport"] == "rdma"


def test_transports_and_the_fluid_backend_never_import_ns3():
    code = ("import sys, ns3_hpsched.transports, ns3_hpsched.backends.fluid; "
            "print(sorted(m for m in sys.modules if m in ('ns', 'cppyy') or '.packet' in m))")
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert run.stdout.strip() == "[]"
