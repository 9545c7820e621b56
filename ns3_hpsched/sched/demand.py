"""Demands in time units: how long a set of bytes occupies each port it crosses.

SCHEDULERS.md works in time units so that mixed link speeds are right: the demand of
coflow c on port p is ``d_c^p = (remaining bytes of c's flows crossing p) * 8 / B_p``
seconds, with ``B_p`` the port capacity in bits per second. Every policy computes its
demands with these helpers.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from .view import CoflowState, bytes_to_time, port_bytes

__all__ = ["port_bytes", "bytes_to_time", "coflow_demand", "bottleneck_s", "demand_matrix"]


def coflow_demand(coflow: CoflowState, capacity_bps: np.ndarray) -> dict[int, float]:
    """``d_c^p``: seconds of port ``p`` that coflow ``c``'s remaining bytes need."""
    return coflow.demand_s(capacity_bps)


def bottleneck_s(demand: Mapping[int, float]) -> float:
    """``max_p d^p``: the time the demand needs alone on the network (0 if none)."""
    return max(demand.values(), default=0.0)


def demand_matrix(demands: Sequence[Mapping[int, float]]) -> np.ndarray:
    """Stack sparse demands into a dense ``(items, ports)`` array.

    Columns are the union of the ports that appear, in increasing port number, so "first
    in the port order" keeps its meaning; ports nobody uses are dropped.
    """
    ports = sorted({p for demand in demands for p in demand})
    column = {p: i for i, p in enumerate(ports)}
    matrix = np.zeros((len(demands), len(ports)))
    for row, demand in enumerate(demands):
        for port, seconds in demand.items():
            matrix[row, column[port]] = seconds
    return matrix
