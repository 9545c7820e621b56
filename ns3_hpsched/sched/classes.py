"""Mapping a policy's order onto the K physical strict-priority queues.

A :class:`~ns3_hpsched.sched.view.Decision` order lists classes of flow ids, highest
priority first. Position ``r`` goes to queue ``min(r, K - 1)``: everything past the last
queue shares it (SCHEDULERS.md). Both backends use this one mapping, so they agree.

An *empty* class in an order takes no queue: positions are counted over the non-empty
classes only. Strict priority depends only on the relative order of the flows present,
so skipping empty classes changes no flow's precedence over another, and it spends the
scarce physical queues on flows that exist (e.g. a Grouper-R stage whose jobs are all
computing keeps its rank but holds no queue).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from .view import CoflowState

__all__ = ["order_to_classes", "flow_ids", "class_per_coflow"]


def order_to_classes(order: Sequence[Iterable[int]], n_classes: int) -> dict[int, int]:
    """Map each flow of ``order`` to its physical priority class.

    Parameters
    ----------
    order:
        Classes of flow ids, highest priority first. Empty classes are skipped.
    n_classes:
        Number K of physical queues (>= 1). K = 1 puts every flow in one shared class.

    Returns
    -------
    dict
        ``flow_id -> class`` in ``0 .. n_classes-1``, 0 highest.

    Raises
    ------
    ValueError
        If ``n_classes < 1`` or a flow appears twice in the order (a policy bug).
    """
    if isinstance(n_classes, bool) or not isinstance(n_classes, int) or n_classes < 1:
        raise ValueError(f"n_classes must be an integer >= 1, got {n_classes!r}")
    classes: dict[int, int] = {}
    position = 0
    for group in order:
        queue = min(position, n_classes - 1)
        placed = False
        for flow_id in group:
            if flow_id in classes:
                raise ValueError(f"flow {flow_id} appears more than once in the order")
            classes[flow_id] = queue
            placed = True
        position += placed
    return classes


def flow_ids(coflows: Iterable[CoflowState]) -> list[int]:
    """The flow ids of ``coflows``, coflow by coflow, each coflow's flows by id: one class."""
    return [f.flow_id for c in coflows for f in sorted(c.flows, key=lambda f: f.flow_id)]


def class_per_coflow(coflows: Iterable[CoflowState]) -> list[list[int]]:
    """An order giving every coflow its own class, in the given coflow order."""
    return [flow_ids([c]) for c in coflows]
