"""Grouper-R: stage permutation by BSSI over the remaining demand of whole stages.

This project's reconstruction of Grouper (IEEE TNSM 2020), whose algorithm is not public.
What the paper states: it "permutes stages of cojobs and schedules flows from different
stages in the order of the permutation", as priority scheduling on commodity switches.
The permutation here is Sincronia's BSSI applied to stages instead of coflows.
"""

from __future__ import annotations

from collections import defaultdict

from .base import Policy
from .classes import flow_ids
from .demand import bytes_to_time, coflow_demand, demand_matrix
from .sincronia import bssi
from .view import Decision, View

__all__ = ["GrouperR", "StageKey", "stage_demands", "stage_ranks"]

#: A stage is named by ``(cojob, stage index)``.
StageKey = tuple[int, int]


def stage_demands(view: View) -> dict[StageKey, dict[int, float]]:
    """``D_s^p``: seconds of port p the rest of stage s needs.

    ``D_s^p = Σ_{jobs j in s} [remaining bytes of j's released coflows on p
    + (iterations of j not yet released) * T_j^p] / B_p`` (SCHEDULERS.md), from the
    view's coflows (keyed by their ``cojob, stage``) and jobs. Bytes of later phases of an
    iteration whose first phase is released are not visible in the view and are not counted.
    """
    demand: dict[StageKey, dict[int, float]] = defaultdict(dict)

    def add(key: StageKey, seconds: dict[int, float]) -> None:
        stage = demand[key]
        for port, s in seconds.items():
            stage[port] = stage.get(port, 0.0) + s

    for c in view.coflows.values():
        add((c.cojob, c.stage), coflow_demand(c, view.port_capacity_bps))
    for job in view.jobs.values():
        future = job.iterations - job.released_iterations
        if future > 0:
            future_bytes = {p: future * b for p, b in job.sync_port_bytes.items()}
            add((job.cojob, job.stage), bytes_to_time(future_bytes, view.port_capacity_bps))
    return dict(demand)


def stage_ranks(view: View) -> dict[StageKey, int]:
    """Rank of every stage with demand: its position in the BSSI order of :func:`stage_demands`.

    Stages enter BSSI in ``(cojob, stage)`` order, so on ties the lowest is placed last.
    """
    demand = stage_demands(view)
    keys = sorted(demand)
    order = bssi(demand_matrix([demand[k] for k in keys]))
    return {keys[i]: rank for rank, i in enumerate(order)}


class GrouperR(Policy):
    """Order whole stages by BSSI; all flows of the k-th stage share position k.

    Reconstruction (see the module docstring): each active stage's remaining demand
    ``D_s^p`` counts the released coflows' remaining bytes and the synchronisations its
    jobs have yet to release (:func:`stage_demands`); BSSI (weights 1) permutes the
    stages; inside a stage flows share their class max-min. With one coflow per stage
    this is exactly Sincronia (when stage keys and coflow ids sort alike).
    """

    name = "grouper"

    def decide(self, view: View) -> Decision:
        """One class per stage with active flows, in BSSI stage order."""
        ranks = stage_ranks(view)
        by_stage: dict[StageKey, list] = defaultdict(list)
        for cid in sorted(view.coflows):
            c = view.coflows[cid]
            by_stage[(c.cojob, c.stage)].append(c)
        return Decision(order=[flow_ids(by_stage[s]) for s in sorted(by_stage, key=ranks.__getitem__)])

    def describe(self) -> dict:
        """Name and (no) parameters."""
        return {"name": self.name, "params": {}}
