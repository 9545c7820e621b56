"""Time-unit demands: bytes * 8 / port capacity, so mixed link speeds are right."""

from __future__ import annotations

import numpy as np

from ns3_hpsched.sched import coflow_demand, demand_matrix
from ns3_hpsched.sched.view import CoflowState, FlowState


def test_demand_is_remaining_bits_over_each_port_capacity():
    """Two flows sharing port 1 (16 bps) and one alone on port 0 (8 bps): hand-computed seconds."""
    flows = (FlowState(0, 7, 0, 1, size_bytes=10, sent_bytes=4, ports=(0, 1)),
             FlowState(1, 7, 2, 1, size_bytes=3, sent_bytes=0, ports=(2, 1)))
    c = CoflowState(7, 0, 0, 0, 0, 0, 0.0, 13, 4, flows)
    capacity = np.array([8.0, 16.0, 24.0])
    # port 0: 6 B left = 48 bit / 8 bps; port 1: 9 B = 72 bit / 16 bps; port 2: 3 B = 24 bit / 24 bps
    assert coflow_demand(c, capacity) == {0: 6.0, 1: 4.5, 2: 1.0}


def test_demand_matrix_keeps_used_ports_in_increasing_order():
    """Columns are the used ports sorted by number, so 'first port' keeps its meaning."""
    matrix = demand_matrix([{5: 1.0, 2: 2.0}, {9: 3.0}])
    np.testing.assert_array_equal(matrix, [[2.0, 1.0, 0.0], [0.0, 0.0, 3.0]])
