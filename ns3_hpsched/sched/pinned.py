"""Pinned classes: every flow keeps the class its workload gives it (HPCC's ``pg``).

Not one of the compared policies: it runs explicit flow lists whose classes are part of
the input, and lets tests set classes by hand. Cojobs without a pinned class go last.
"""

from __future__ import annotations

from collections import defaultdict

from ..workload.spec import Workload
from .base import Policy
from .view import Decision, View

__all__ = ["Pinned"]


class Pinned(Policy):
    """Class of a flow = its cojob's ``priority``; cojobs without one share the last class."""

    name = "pinned"
    release_only = True

    def __init__(self) -> None:
        self._priority: dict[int, int] = {}

    def setup(self, workload: Workload) -> None:
        self._priority = {c.cojob_id: c.priority for c in workload.cojobs if c.priority is not None}

    def one_class(self, workload: Workload) -> bool:
        """When every cojob has the same pinned class (or none): then all flows share class 0."""
        return len({c.priority for c in workload.cojobs}) <= 1

    def decide(self, view: View) -> Decision:
        unpinned = max(self._priority.values(), default=0) + 1
        groups: dict[int, list[int]] = defaultdict(list)
        for coflow in view.coflows.values():
            groups[self._priority.get(coflow.cojob, unpinned)].extend(coflow.flow_ids())
        # One order position per class number; order_to_classes skips the empty ones, which
        # keeps every pinned class's precedence (all strict priority depends on).
        return Decision(order=[groups.get(c, []) for c in range(max(groups) + 1)] if groups else [])
