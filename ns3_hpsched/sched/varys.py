"""Varys: smallest-effective-bottleneck-first ordering with MADD rate allocation.

Chowdhury, Zhong, Stoica, "Efficient coflow scheduling with Varys", SIGCOMM 2014.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from .base import Policy
from .classes import class_per_coflow
from .demand import bottleneck_s, coflow_demand
from .params import check_bool
from .ties import tie_key
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
    residual, so every flow ends up crossing a saturated port.

    Returns
    -------
    dict
        ``flow_id -> rate_bps`` for every flow of ``coflows`` (0 for starved flows).
    """
    capacity = capacity_bps.tolist()
    residual = list(capacity)

    def take(flow_ports: Sequence[int], rate: float) -> None:
        for p in flow_ports:
            left = residual[p] - rate
            residual[p] = 0.0 if left < capacity[p] * RESIDUAL_EPS else left

    rates = {f.flow_id: 0.0 for c in coflows for f in c.flows}
    for c in coflows:
        load = c.port_bytes()
        if not load or any(residual[p] <= 0 for p in load):
            continue
        tau = max(b * 8 / residual[p] for p, b in load.items())
        for f in c.flows:
            if f.remaining_bytes > 0:
                rates[f.flow_id] = f.remaining_bytes * 8 / tau
                take(f.ports, rates[f.flow_id])
    for c in coflows:
        for f in sorted(c.flows, key=lambda f: f.flow_id):
            extra = min((residual[p] for p in f.ports), default=0.0)
            if f.remaining_bytes > 0 and extra > 0:
                rates[f.flow_id] += extra
                take(f.ports, extra)
    return rates
