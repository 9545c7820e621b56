"""The fluid backend's start-up per transport: RDMA sends at once, TCP after a handshake."""

import subprocess
import sys

import numpy as np
import pytest

from ns3_hpsched.backends.base import FlowStart
from ns3_hpsched.backends.fluid import FluidBackend
from ns3_hpsched.errors import ConfigError
from ns3_hpsched.topology import fat_tree
from ns3_hpsched.topology.ideal import standalone_fct_s
from ns3_hpsched.transports import RdmaTransport, TcpTransport, Transport

from .listen import finish_times


def _lone_fct(transport: str | Transport, topo, size: int) -> float:
    """FCT of one flow from host 0 to host 127 (another pod) alone on ``topo``."""
    backend = FluidBackend(topo, transport=transport)
    done = finish_times(backend)
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


@pytest.mark.parametrize("initial_cwnd", [4, 10, 40])
def test_compiled_tcp_startup_is_the_handshake_plus_slow_start_s(initial_cwnd):
    """The compiled start-up equals, to the bit, one base RTT plus the slow-start rounds
    written with whole-array operations (:func:`_slow_start_s`) over the slow-start RTT
    (base RTT + a full packet's store-and-forward per hop) and the bottleneck, on random
    fat-tree paths of random sizes (and an empty path: zero)."""
    topo = fat_tree(8, rate_bps=100e9)
    rng = np.random.default_rng(7)
    sizes = np.exp(rng.uniform(np.log(100), np.log(3e7), 200))
    paths = [[] if i == 0 else list(topo.flow_path(i, int(s), int((s + rng.integers(1, 128)) % 128)))
             for i, s in enumerate(rng.integers(0, 128, 200))]
    offsets = np.concatenate([[0], np.cumsum([len(p) for p in paths])]).astype(np.int64)
    ports = np.array([p for path in paths for p in path], dtype=np.int64)
    delay, cap, mtu = topo.port_delay_s, topo.port_capacity_bps, topo.mtu_bytes
    base = _base_rtt_s(offsets, ports, delay)
    lengths = np.diff(offsets)
    serial = np.concatenate([mtu * 8.0 / cap[ports], [0.0]])
    rtt = base + np.where(lengths > 0, np.add.reduceat(serial, offsets[:-1]), 0.0)
    bottleneck = np.where(lengths > 0, np.minimum.reduceat(np.concatenate([cap[ports], [np.inf]]), offsets[:-1]),
                          np.inf)
    expected = base + _slow_start_s(sizes, rtt, bottleneck, mtu - 52, initial_cwnd)
    got = TcpTransport(initial_cwnd_segments=initial_cwnd).startup_s(offsets, ports, sizes, delay, cap, mtu)
    assert got[0] == 0.0
    np.testing.assert_array_equal(got, expected)


def _base_rtt_s(path_offsets: np.ndarray, path_ports: np.ndarray, port_delay_s: np.ndarray) -> np.ndarray:
    """Base RTT (twice the propagation) of each path, for several flows.

    Paths as in ``Transport.startup_s``; an empty path has no delay.
    """
    delay = np.concatenate([port_delay_s[path_ports], [0.0]])  # the 0 closes reduceat's last slice
    one_way = np.add.reduceat(delay, path_offsets[:-1]) if len(path_offsets) > 1 else np.empty(0)
    return 2.0 * np.where(np.diff(path_offsets) > 0, one_way, 0.0)


def _slow_start_s(size_bytes: np.ndarray, rtt_s: np.ndarray, bottleneck_bps: np.ndarray, segment_bytes: int,
                 initial_cwnd: int) -> np.ndarray:
    """Idle time slow start adds to lone TCP flows, compared with sending at line rate.

    Round ``i`` sends a window of ``initial_cwnd * 2**i`` segments, then waits for its
    first ACK, one RTT after the round began; a round whose window takes at least an RTT
    to send fills the pipe, and so does the round that sends the last byte. The rounds
    are iterated over all flows at once (a window doubles each round, so a few dozen at most).
    """
    size = np.asarray(size_bytes, dtype=np.float64)
    window = np.full(len(size), float(initial_cwnd * segment_bytes))
    sent, idle = np.zeros(len(size)), np.zeros(len(size))
    growing = np.ones(len(size), dtype=bool)
    while True:
        send_s = window * 8.0 / bottleneck_bps
        growing &= (sent + window < size) & (send_s < rtt_s)
        if not growing.any():
            return idle
        idle += np.where(growing, rtt_s - send_s, 0.0)
        sent = np.where(growing, sent + window, sent)
        window = np.where(growing, 2.0 * window, window)
