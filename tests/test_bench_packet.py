"""benchmarks/bench_packet.py's control comparison: Python drives the same simulation C++ does."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

pytestmark = pytest.mark.packet

BENCH = Path(__file__).resolve().parents[1] / "benchmarks" / "bench_packet.py"


def test_python_control_adds_no_simulator_events():
    """The 8 cross-pod flows, started by C++ alone and played by the driver from Python,
    schedule the same ns-3 events and end at the same instant: on these flows (lone
    coflows, played open loop) the driver adds no event of its own and hears each delivery
    inside the C++ event that made it, so the benchmark's CPU ratio of the two runs is the
    cost of Python control alone (and the script's C++ calls still fit the transports'
    signatures)."""
    spec = importlib.util.spec_from_file_location("bench_packet", BENCH)
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    cpp, python = (bench.in_subprocess(f"traffic-{mode}", 2_000_000) for mode in ("cpp", "python"))
    assert cpp["flows_done"] == python["flows_done"] == bench.N_FLOWS
    assert python["events"] == cpp["events"]
    assert python["end_s"] == cpp["end_s"]
