"""Beamer-R: coflows ordered by stage rank, then by how far their job lags in its stage.

This project's reconstruction of Beamer (IEEE TNSM 2022), whose algorithm is not public.
What the paper states: it "orders coflows by considering stage information, then
schedules coflows according to the order", proving average stage completion time within
20/3 of optimal. Here stages are ranked as in Grouper-R and coflows inside a stage put the
job on the stage's critical path first.
"""

from __future__ import annotations

from .base import Policy
from .classes import class_per_coflow
from .demand import bottleneck_s, bytes_to_time, coflow_demand
from .grouper import stage_ranks
from .ties import tie_key
from .view import CoflowState, Decision, View

__all__ = ["BeamerR", "lag_s"]


def lag_s(coflow: CoflowState, view: View) -> float:
    """``L_j``: how long job j, owner of ``coflow``, still needs in its stage if alone.

    ``L_j = max_p d_c^p + (N_j - k_j - 1) * (c_j + Γ_j)`` with c the job's current coflow,
    N_j its iterations in the stage, k_j those completed, c_j its compute time and
    ``Γ_j = max_p T_j^p / B_p`` the isolated time of one synchronisation. A coflow whose
    job is not in the view (e.g. a trace coflow) has ``L = max_p d_c^p``.
    """
    lag = bottleneck_s(coflow_demand(coflow, view.port_capacity_bps))
    job = view.jobs.get(coflow.job)
    if job is not None:
        gamma = bottleneck_s(bytes_to_time(job.sync_port_bytes, view.port_capacity_bps))
        lag += max(job.iterations - job.done_iterations - 1, 0) * (job.compute_s + gamma)
    return lag


class BeamerR(Policy):
    """Coflows by (stage rank, -L_j, tie_break), each coflow its own class.

    Reconstruction (see the module docstring): stages are ranked by BSSI over their
    remaining demand (:func:`~ns3_hpsched.sched.grouper.stage_ranks`); inside a stage the
    lagging job goes first (:func:`lag_s`), because a stage ends with its slowest job.

    Parameters
    ----------
    tie_break:
        Order of coflows with equal rank and lag (see :mod:`~ns3_hpsched.sched.ties`).
    """

    name = "beamer"

    def __init__(self, tie_break: str = "release") -> None:
        self.tie_break = tie_break
        self._key = tie_key(tie_break)

    def decide(self, view: View) -> Decision:
        """Stage rank first, longest remaining job path next, one class per coflow."""
        ranks = stage_ranks(view)
        coflows = sorted(view.coflows.values(),
                         key=lambda c: (ranks[(c.cojob, c.stage)], -lag_s(c, view), *self._key(c)))
        return Decision(order=class_per_coflow(coflows))

    def describe(self) -> dict:
        """Name and parameters."""
        return {"name": self.name, "params": {"tie_break": self.tie_break}}
