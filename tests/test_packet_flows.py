"""Packet backend: TCP flow completion, strict priorities, live class changes, callbacks."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from ns3_hpsched.backends.base import FlowStart
from ns3_hpsched.errors import ConfigError
from ns3_hpsched.topology import dumbbell

pytestmark = pytest.mark.packet

RATE_BPS = 10e9


def ideal_fct(topo, size, src, dst):
    """Line-rate transfer plus the handshake and last-byte round-trip terms."""
    return size * 8 / RATE_BPS + 2 * topo.base_rtt_s(src, dst)


def test_lone_100mb_flow_at_line_rate(PacketBackend):
    """A lone 100 MB TCP flow on a 10 Gbps path finishes within 5% of size/rate + RTT terms."""
    topo = dumbbell(left=1, right=1, rate_bps=RATE_BPS)
    backend = PacketBackend(topo)
    backend.start_flow(FlowStart(0, 0, 1, 100_000_000))
    backend.run()
    fct = backend.flows_table()["fct_s"].item()
    assert fct == pytest.approx(ideal_fct(topo, 100_000_000, 0, 1), rel=0.05)


def test_same_class_flows_share_bottleneck(PacketBackend):
    """Two flows in one class through one bottleneck each get about half of it."""
    topo = dumbbell(left=2, right=2, rate_bps=RATE_BPS)
    backend = PacketBackend(topo)
    size = 20_000_000
    samples = []
    backend.start_flow(FlowStart(0, 0, 2, size))
    backend.start_flow(FlowStart(1, 1, 3, size))
    backend.at(size * 8 / RATE_BPS, lambda: samples.append(backend.bytes_sent([0, 1])))
    backend.run()
    (sent,) = samples
    assert sent.sum() == pytest.approx(size, rel=0.05)  # the bottleneck was busy
    assert sent.min() / sent.sum() > 0.4
    finish = backend.flows_table()["finish_s"]
    assert finish.max() == pytest.approx(2 * size * 8 / RATE_BPS, rel=0.05)


def test_class0_flow_finishes_as_if_alone(PacketBackend):
    """In different classes the class-0 flow finishes as if alone and the other after it."""
    topo = dumbbell(left=2, right=2, rate_bps=RATE_BPS)
    backend = PacketBackend(topo)
    size = 20_000_000
    backend.start_flow(FlowStart(0, 0, 2, size, priority=1))
    backend.start_flow(FlowStart(1, 1, 3, size, priority=0))
    backend.run()
    fct = backend.flows_table().set_index("flow_id")["fct_s"]
    assert fct[1] == pytest.approx(ideal_fct(topo, size, 1, 3), rel=0.05)
    assert fct[0] == pytest.approx(2 * size * 8 / RATE_BPS, rel=0.05)


def test_swapping_live_classes_takes_effect_within_1ms(PacketBackend):
    """Swapping two live flows' classes moves the bottleneck to the other flow within 1 ms."""
    topo = dumbbell(left=2, right=2, rate_bps=RATE_BPS)
    backend = PacketBackend(topo)
    size, swap_s = 30_000_000, 5e-3
    backend.start_flow(FlowStart(0, 0, 2, size, priority=0))
    backend.start_flow(FlowStart(1, 1, 3, size, priority=1))
    marks = {}
    for t in (swap_s - 1e-3, swap_s, swap_s + 1e-3, swap_s + 2e-3):
        backend.at(t, lambda t=t: marks.__setitem__(t, backend.bytes_sent([0, 1])))

    def swap():
        backend.set_priority(0, 1)
        backend.set_priority(1, 0)

    backend.at(swap_s, swap)
    backend.run()
    ms_bytes = RATE_BPS * 1e-3 / 8
    before = marks[swap_s] - marks[swap_s - 1e-3]
    after = marks[swap_s + 2e-3] - marks[swap_s + 1e-3]
    assert before[0] > 0.9 * ms_bytes and before[1] < 0.1 * ms_bytes
    assert after[1] > 0.9 * ms_bytes and after[0] < 0.1 * ms_bytes


def test_coflow_threshold_fires_once_when_reached(PacketBackend):
    """watch_coflow calls on_threshold once, when the coflow's delivered bytes reach it."""
    topo = dumbbell(left=2, right=2, rate_bps=RATE_BPS)
    backend = PacketBackend(topo)
    fired = []
    backend.on_threshold = lambda c: fired.append((c, backend.now(), backend.bytes_sent([0, 1]).sum()))
    backend.start_flow(FlowStart(0, 0, 2, 1_000_000, coflow_id=7))
    backend.start_flow(FlowStart(1, 1, 3, 1_000_000, coflow_id=7))
    backend.watch_coflow(7, 1_500_000)
    backend.run()
    ((coflow, at_s, sent),) = fired
    assert coflow == 7 and 1_500_000 <= sent < 1_500_000 + 2 * 9000
    assert at_s < backend.flows_table()["finish_s"].max()


def test_callbacks_run_in_time_order_and_can_start_flows(PacketBackend):
    """at() callbacks run at their times in scheduling order and may start flows."""
    topo = dumbbell(left=1, right=1, rate_bps=RATE_BPS)
    backend = PacketBackend(topo)
    seen = []
    for label, t in (("b", 2e-3), ("a", 1e-3), ("c", 2e-3)):
        backend.at(t, lambda label=label: seen.append((label, backend.now())))
    backend.at(1e-3, lambda: backend.start_flow(FlowStart(5, 0, 1, 100_000)))
    backend.run()
    assert seen == [("a", 1e-3), ("b", 2e-3), ("c", 2e-3)]
    assert backend.flows_table()["start_s"].item() == pytest.approx(1e-3)


def test_callback_exception_stops_run_and_propagates(PacketBackend):
    """An exception in a callback stops the simulation there and is re-raised from run()."""
    backend = PacketBackend(dumbbell(left=1, right=1))
    backend.start_flow(FlowStart(0, 0, 1, 50_000_000))

    def boom():
        raise ZeroDivisionError("scheduler bug")

    backend.at(1e-3, boom)
    with pytest.raises(ZeroDivisionError, match="scheduler bug") as info:
        backend.run()
    assert backend.now() == pytest.approx(1e-3)
    assert any("t=0.001" in note for note in info.value.__notes__)


def test_bad_input_fails_before_simulating(PacketBackend):
    """Unknown transports and flows to missing hosts raise ConfigError naming the field."""
    topo = dumbbell(left=1, right=1)
    with pytest.raises(ConfigError) as info:
        PacketBackend(topo, transport="tcp-vegas")
    assert info.value.field == "transport.kind"
    backend = PacketBackend(topo)
    with pytest.raises(ConfigError) as info:
        backend.start_flow(FlowStart(3, 0, 9, 1000))
    assert info.value.field == "flow 3.dst"
    with pytest.raises(ConfigError) as info:
        backend.start_flow(FlowStart(4, 0, 1, 1000, priority=8))
    assert info.value.field == "flow 4.priority"
    backend.run()
    assert backend.flows_table().empty


def test_bulk_calls_check_like_single_ones(PacketBackend):
    """A batch is checked before its one C++ call: a repeated id names the flow, and moving a
    flow never started raises KeyError; the valid flows still run to the end."""
    from ns3_hpsched.backends.base import FlowBatch

    topo = dumbbell(left=2, right=2)
    backend = PacketBackend(topo)
    with pytest.raises(ConfigError) as info:
        backend.start_flows(FlowBatch.of([FlowStart(5, 0, 2, 1000), FlowStart(5, 1, 3, 1000)], topo))
    assert info.value.field == "flow 5.flow_id"
    backend.start_flows(FlowBatch.of([FlowStart(0, 0, 2, 1000), FlowStart(1, 1, 3, 1000)], topo))
    with pytest.raises(ConfigError) as info:
        backend.start_flow(FlowStart(1, 1, 2, 1000))
    assert info.value.field == "flow 1.flow_id"
    with pytest.raises(KeyError, match="flow 9"):
        backend.set_priorities([0, 9], [1, 1])
    backend.set_priorities([1], [1])
    backend.run()
    assert sorted(backend.flows_table()["flow_id"]) == [0, 1]


FLOWS = [(0, 0, 2, 3_000_000, 1), (1, 1, 3, 2_000_000, 0), (2, 0, 3, 1_000_000, 1)]


def run_small_scenario(backend_cls) -> list[dict]:
    """Three flows in two classes on a dumbbell; the flows table as records."""
    backend = backend_cls(dumbbell(left=2, right=2), seed=3)
    for flow_id, src, dst, size, prio in FLOWS:
        backend.start_flow(FlowStart(flow_id, src, dst, size, priority=prio))
    backend.run()
    return backend.flows_table().to_dict("records")


def test_same_inputs_give_identical_flows_tables(PacketBackend):
    """Two simulations in one process and one in a fresh process give identical tables."""
    first = run_small_scenario(PacketBackend)
    second = run_small_scenario(PacketBackend)
    assert first == second and len(first) == len(FLOWS)
    code = ("import json, tests.test_packet_flows as t; "
            "from ns3_hpsched.backends.packet import PacketBackend; "
            "print(json.dumps(t.run_small_scenario(PacketBackend)))")
    out = subprocess.run([sys.executable, "-c", code], cwd=Path(__file__).parents[1], check=True,
                         capture_output=True, text=True).stdout
    assert json.loads(out.strip().splitlines()[-1]) == first
