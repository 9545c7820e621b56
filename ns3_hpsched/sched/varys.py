"""Varys: smallest-effective-bottleneck-first ordering with MADD rate allocation.

Chowdhury, Zhong, Stoica, "Efficient coflow scheduling with Varys", SIGCOMM 2014.
"""

from __future__ import annotations

from collections.abc import Sequence

import numba
import numpy as np

from .base import Policy
from .classes import class_per_coflow
from .demand import bottleneck_s, coflow_demand
from .params import check_bool
from .ties import tie_key
from ..topology.paths import path_offsets
from .view import CoflowState, Decision, View

__all__ = ["Varys", "madd_rates"]

#: A residual capacity below this fraction of the port's capacity counts as zero, so float
#: round-off of a saturated port does not hand a later coflow a vanishing, finite rate.
RESIDUAL_EPS = 1e-9


class Varys(Policy):
    """SEBF order, each coflow its own class, and MADD explicit rates.

    Coflows are ordered by their effective bottleneck ``Γ(c) = max_p d_c^p`` on remaining
    bytes (smallest first, then ``tie_break``). With ``madd`` the decision also carries
    per-flow rates from :func:`madd_rates`, which the fluid backend honours; the packet
    backend enforces only the order (SEBF with strict priority, max-min inside a class).

    Parameters
    ----------
    madd:
        Give MADD rates in :attr:`Decision.rates_bps` (default true). False leaves the
        rates to the allocator: SEBF with strict priority only.
    tie_break:
        Order of coflows with equal bottlenecks (see :mod:`~ns3_hpsched.sched.ties`).
    """

    name = "varys"

    def __init__(self, madd: bool = True, tie_break: str = "release") -> None:
        self.madd = check_bool("madd", madd)
        self.tie_break = tie_break
        self._key = tie_key(tie_break)

    def decide(self, view: View) -> Decision:
        """SEBF order and, with ``madd``, MADD rates with greedy backfill."""
        gamma = {cid: bottleneck_s(coflow_demand(c, view.port_capacity_bps))
                 for cid, c in view.coflows.items()}
        coflows = sorted(view.coflows.values(), key=lambda c: (gamma[c.coflow_id], *self._key(c)))
        rates = madd_rates(coflows, view.port_capacity_bps) if self.madd else None
        return Decision(order=class_per_coflow(coflows), rates_bps=rates)

    def describe(self) -> dict:
        """Name and parameters."""
        return {"name": self.name, "params": {"madd": self.madd, "tie_break": self.tie_break}}


def madd_rates(coflows: Sequence[CoflowState], capacity_bps: np.ndarray) -> dict[int, float]:
    """Minimum-allocation-for-desired-duration rates, then work-conserving backfill.

    Walking ``coflows`` in order with residual capacities ``R``: coflow c needs
    ``τ = max_p (bytes_c^p * 8 / R_p)`` seconds; each of its flows gets ``remaining * 8 / τ``
    bits per second, so all finish together at ``τ``. A coflow that needs a port with no
    residual capacity (τ infinite) is skipped. Leftover capacity then goes greedily, in the
    same order (flows by id inside a coflow), to each flow up to its path's smallest
    residual, so every flow ends up crossing a saturated port. Computed compiled over the
    coflows' :meth:`~.view.CoflowState.flow_columns`, flow by flow as described.

    Returns
    -------
    dict
        ``flow_id -> rate_bps`` for every flow of ``coflows`` (0 for starved flows).
    """
    columns = [c.flow_columns() for c in coflows]
    if not columns:
        return {}
    counts = np.array([len(col.flow_id) for col in columns], dtype=np.int64)
    starts = path_offsets(counts)  # coflow i: flows starts[i]:starts[i + 1] (the ragged layout of paths)
    flow_id = np.concatenate([col.flow_id for col in columns])
    offsets = path_offsets(np.concatenate([np.diff(col.offsets) for col in columns]))
    backfill = np.concatenate([start + np.argsort(col.flow_id, kind="stable")
                               for start, col in zip(starts.tolist(), columns)])
    rates = _madd(np.concatenate([col.remaining_bytes for col in columns]), offsets,
                  np.concatenate([col.ports for col in columns]), starts, backfill,
                  np.asarray(capacity_bps, dtype=np.float64), RESIDUAL_EPS)
    return dict(zip(flow_id.tolist(), rates.tolist()))


@numba.njit(cache=True)
def _madd(remaining, offsets, ports, starts, backfill, capacity, eps):
    """:func:`madd_rates` over flow columns: coflow ``i`` is flows ``starts[i]:starts[i + 1]``
    (in MADD order), ``backfill`` the flows in backfill order; the same float operations in
    the same order as the flow-by-flow description."""
    residual = capacity.copy()
    rate = np.zeros(len(remaining))
    load = np.zeros(len(capacity), dtype=np.int64)
    for i in range(len(starts) - 1):
        lo, hi = starts[i], starts[i + 1]
        for k in range(lo, hi):
            if remaining[k] > 0:
                for h in range(offsets[k], offsets[k + 1]):
                    load[ports[h]] += remaining[k]
        tau, used, blocked = 0.0, False, False
        for h in range(offsets[lo], offsets[hi]):
            p = ports[h]
            if load[p] > 0:
                used = True
                if residual[p] <= 0:
                    blocked = True
                else:
                    tau = max(tau, load[p] * 8 / residual[p])
        for h in range(offsets[lo], offsets[hi]):
            load[ports[h]] = 0
        if not used or blocked:
            continue
        for k in range(lo, hi):
            if remaining[k] > 0:
                rate[k] = remaining[k] * 8 / tau
                _take(ports[offsets[k]:offsets[k + 1]], rate[k], residual, capacity, eps)
    for k in backfill:
        path = ports[offsets[k]:offsets[k + 1]]
        extra = 0.0
        if len(path):
            extra = np.inf
            for p in path:
                extra = min(extra, residual[p])
        if remaining[k] > 0 and extra > 0:
            rate[k] += extra
            _take(path, extra, residual, capacity, eps)
    return rate


@numba.njit(cache=True)
def _take(path, rate, residual, capacity, eps):
    """``rate`` out of every port of ``path``; a residual below ``eps`` of capacity is zero."""
    for p in path:
        left = residual[p] - rate
        residual[p] = 0.0 if left < capacity[p] * eps else left
