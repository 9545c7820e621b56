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
    counts = [len(d) for d in demands]
    total = sum(counts)
    ports = np.fromiter((p for d in demands for p in d), dtype=np.int64, count=total)
    seconds = np.fromiter((v for d in demands for v in d.values()), dtype=np.float64, count=total)
    columns, column = np.unique(ports, return_inverse=True)
    matrix = np.zeros((len(demands), len(columns)))
    matrix[np.repeat(np.arange(len(demands)), counts), column] = seconds
    return matrix
