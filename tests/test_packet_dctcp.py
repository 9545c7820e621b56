"""Packet backend: DCTCP with RED/ECN marking keeps switch queues short at full goodput."""

from __future__ import annotations

import numpy as np
import pytest

from ns3_hpsched.backends.base import FlowStart
from ns3_hpsched.topology import dumbbell

pytestmark = pytest.mark.packet

RATE_BPS = 10e9
SIZE = 20_000_000


def incast(backend_cls, transport):
    """Four senders into one receiver across the dumbbell bottleneck; queue samples and stats."""
    topo = dumbbell(left=4, right=1, rate_bps=RATE_BPS)
    bottleneck = topo.port_of[(topo.index["sL"], topo.index["sR"])]
    backend = backend_cls(topo, transport=transport)
    backend.monitor_queue(bottleneck, interval_s=20e-6)
    for i in range(4):
        backend.start_flow(FlowStart(i, i, 4, SIZE))
    backend.run()
    flows = backend.flows_table()
    goodput_bps = 4 * SIZE * 8 / (flows["finish_s"].max() - flows["start_s"].min())
    samples = backend.queue_samples(bottleneck)
    busy = samples[samples["time_s"] < flows["finish_s"].min()]["packets"].to_numpy()
    port = backend.ports_table().loc[bottleneck]
    return goodput_bps, busy, port, topo


def test_dctcp_keeps_queue_short_at_line_rate(PacketBackend):
    """DCTCP: median bottleneck queue under 30 packets with 4 senders at > 9 Gbps goodput."""
    goodput_bps, queue, port, _ = incast(PacketBackend, "dctcp")
    assert goodput_bps > 9e9
    assert np.median(queue) < 30
    assert port["ecn_marks"] > 0  # only slow start's first burst may overflow


def test_newreno_fills_the_buffer(PacketBackend):
    """NewReno (drop-tail) fills the bottleneck buffer and loses packets instead."""
    _, queue, port, topo = incast(PacketBackend, "newreno")
    assert queue.max() >= topo.buffer_bytes // topo.mtu_bytes - 1
    assert port["drops"] > 0 and port["ecn_marks"] == 0
