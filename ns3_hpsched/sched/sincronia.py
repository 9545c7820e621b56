"""Sincronia: coflow ordering by Bottleneck-Select-Scale-Iterate (BSSI).

Agarwal, Rajakrishnan, Narayan, Agarwal, Shmoys, Vahdat, "Sincronia: near-optimal
network design for coflows", SIGCOMM 2018. BSSI is the primal-dual algorithm of
Mastrolilli, Queyranne, Schulz, Svensson, Uhan, "Minimizing the sum of weighted
completion times in a concurrent open shop", Operations Research Letters 2010.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import ArrayLike

from ..workload.spec import Workload
from .base import Policy
from .classes import class_per_coflow
from .demand import coflow_demand, demand_matrix
from .params import check_choice, check_int, check_number
from .view import Decision, View

__all__ = ["Sincronia", "bssi"]


def bssi(demands: ArrayLike, weights: ArrayLike | None = None) -> list[int]:
    """Order items (coflows, or stages for Grouper-R) by BSSI, highest priority first.

    For k = n down to 1: ``b`` is the port with the largest total demand of the unplaced
    items (ties: first port, i.e. lowest column); position k goes to the item with demand
    on ``b`` minimising ``w / d^b`` (ties: the lowest row is placed last); every other item
    is rescaled ``w -= w_σ(k) * d^b / d_σ(k)^b`` and σ(k) is removed. Items with no demand
    at all go first, in row order. On one port this is Smith's rule.

    Parameters
    ----------
    demands:
        ``(items, ports)`` array of time-unit demands (seconds, >= 0). Pass rows in id order
        for the tie rule "lowest id placed last".
    weights:
        Positive weight of each item (default 1).

    Returns
    -------
    list of int
        Row indices, highest priority first.

    Notes
    -----
    Mathematically the rescaled weights stay non-negative (σ(k) minimises ``w / d^b``); they
    are clipped at 0 to keep float round-off from creating negative ratios.
    """
    d = np.asarray(demands, dtype=float)
    if d.ndim != 2 or (d.size and d.min() < 0):
        raise ValueError("demands must be a 2-D array of non-negative time units")
    n = d.shape[0]
    w = np.ones(n) if weights is None else np.array(weights, dtype=float)
    if w.shape != (n,) or (n and w.min() <= 0):
        raise ValueError(f"weights must be {n} positive numbers")
    alive = d.sum(axis=1) > 0
    first = np.flatnonzero(~alive).tolist()
    last: list[int] = []
    for _ in range(int(alive.sum())):
        bottleneck = int(np.argmax(alive.astype(float) @ d))
        col = d[:, bottleneck]
        candidates = alive & (col > 0)
        ratio = np.full(n, np.inf)
        ratio[candidates] = w[candidates] / col[candidates]
        chosen = int(np.argmin(ratio))
        w[candidates] = np.maximum(w[candidates] - w[chosen] * col[candidates] / col[chosen], 0.0)
        alive[chosen] = False
        last.append(chosen)
    return first + last[::-1]


class Sincronia(Policy):
    """BSSI order of the active coflows, each coflow its own class (weights 1).

    Parameters
    ----------
    mode:
        ``"immediate"`` (default): recompute the order on every call (every arrival and
        departure). ``"epoch"``: the paper's online mode: the order is recomputed only at
        the first call of a new epoch; coflows arriving during an epoch queue after the
        epoch's order in arrival order (release time, then id) until the next one.
    epoch_s:
        Length of the first epoch in seconds (> 0; default 0.1). Epoch j lasts
        ``epoch_s * 2**(j mod epoch_reset)``, epochs starting at time 0.
    epoch_reset:
        Number of doublings after which the epoch length resets (>= 1; default 8).

    Notes
    -----
    In epoch mode the policy remembers the epoch's order (cleared by :meth:`setup`). The
    driver calls it on events, not on epoch boundaries, so a new epoch's order takes effect
    at the first trigger inside that epoch.
    """

    name = "sincronia"

    def __init__(self, mode: str = "immediate", epoch_s: float = 0.1, epoch_reset: int = 8) -> None:
        self.mode = check_choice("mode", mode, ("immediate", "epoch"))
        self.epoch_s = check_number("epoch_s", epoch_s, minimum=0.0, strict=True)
        self.epoch_reset = check_int("epoch_reset", epoch_reset, minimum=1)
        self._epoch: int | None = None
        self._epoch_order: list[int] = []

    def setup(self, workload: Workload) -> None:
        """Forget the epoch order of a previous run."""
        self._epoch, self._epoch_order = None, []

    def decide(self, view: View) -> Decision:
        """The BSSI order (frozen per epoch in epoch mode), one class per coflow."""
        if self.mode == "epoch":
            ids = self._epoch_ordered(view)
        else:
            ids = self._bssi_order(view)
        return Decision(order=class_per_coflow(view.coflows[cid] for cid in ids))

    def epoch(self, now_s: float) -> int:
        """Index of the epoch containing ``now_s``."""
        cycle_s = self.epoch_s * (2**self.epoch_reset - 1)
        cycles, into_s = divmod(now_s, cycle_s)
        within = min(int(math.log2(into_s / self.epoch_s + 1)), self.epoch_reset - 1)
        return int(cycles) * self.epoch_reset + within

    def _bssi_order(self, view: View) -> list[int]:
        ids = sorted(view.coflows)
        demands = [coflow_demand(view.coflows[cid], view.port_capacity_bps) for cid in ids]
        return [ids[i] for i in bssi(demand_matrix(demands))]

    def _epoch_ordered(self, view: View) -> list[int]:
        epoch = self.epoch(view.now_s)
        if epoch != self._epoch:
            self._epoch, self._epoch_order = epoch, self._bssi_order(view)
        kept = [cid for cid in self._epoch_order if cid in view.coflows]
        ordered = set(kept)
        arrived = sorted((c for cid, c in view.coflows.items() if cid not in ordered),
                         key=lambda c: (c.release_s, c.coflow_id))
        return kept + [c.coflow_id for c in arrived]

    def describe(self) -> dict:
        """Name and parameters."""
        return {"name": self.name, "params": {
            "mode": self.mode, "epoch_s": self.epoch_s, "epoch_reset": self.epoch_reset}}
