"""Per-flow fair sharing: the baseline every coflow scheduler is compared against."""

from __future__ import annotations

from ..workload.spec import Workload
from .base import Policy
from .view import Decision, View

__all__ = ["Fair"]


class Fair(Policy):
    """Every flow in one class, shared max-min fair (what TCP/DCTCP approximate).

    The "per-flow fair sharing" baseline of Varys (Chowdhury et al., SIGCOMM 2014),
    Sincronia (Agarwal et al., SIGCOMM 2018), Grouper and Beamer. On the packet backend
    all flows share one queue and their transport shares the bottleneck.
    """

    name = "fair"
    release_only = True

    def decide(self, view: View) -> Decision:
        """One class holding every active flow."""
        return Decision(order=[view.flow_ids()])

    def one_class(self, workload: Workload) -> bool:
        """Always: every flow shares class 0."""
        return True

    def describe(self) -> dict:
        """Name and (no) parameters."""
        return {"name": self.name, "params": {}}
