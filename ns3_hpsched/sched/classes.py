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
from itertools import chain

import numba
import numpy as np

from .view import CoflowState

__all__ = ["order_to_classes", "order_arrays", "flow_ids", "class_per_coflow"]


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
    ids, classes = order_arrays(order, n_classes)
    return dict(zip(ids.tolist(), classes.tolist()))


def order_arrays(order: Sequence[Iterable[int]], n_classes: int) -> tuple[np.ndarray, np.ndarray]:
    """:func:`order_to_classes` as two aligned int64 arrays: flow ids (in order) and classes.

    What the driver uses: its cost in Python grows with the number of classes in the
    order, not with the number of flows (the flows are handled by numpy).
    """
    if isinstance(n_classes, bool) or not isinstance(n_classes, int) or n_classes < 1:
        raise ValueError(f"n_classes must be an integer >= 1, got {n_classes!r}")
    groups = [g if isinstance(g, (list, tuple, np.ndarray)) else list(g) for g in order]
    sizes = np.array([len(g) for g in groups], dtype=np.int64)
    if groups and all(isinstance(g, np.ndarray) for g in groups):  # the helpers' arrays: joined, not iterated
        ids = np.concatenate(groups).astype(np.int64, copy=False)
    else:
        ids = np.fromiter(chain.from_iterable(groups), dtype=np.int64, count=int(sizes.sum()))
    classes = np.repeat(np.minimum(np.cumsum(sizes > 0) - 1, n_classes - 1), sizes)
    repeated = _first_repeat(ids)
    if repeated >= 0:
        raise ValueError(f"flow {ids[repeated]} appears more than once in the order")
    return ids, classes


@numba.njit(cache=True)
def _first_repeat(ids):
    """Position of the first id that occurred earlier in ``ids`` (-1 if none).

    None when the ids rise in runs over ranges that do not overlap (the usual order: a
    class per coflow, each its flows' rows in order), one pass; otherwise a table over the
    ids' range when it is compact (ids are rows of the driver's flow table), else a sort.
    """
    n = len(ids)
    if n < 2 or _disjoint_runs(ids):
        return -1
    low, high = ids.min(), ids.max()
    if high - low < 4 * n + 4096:
        seen = np.zeros(high - low + 1, dtype=np.bool_)
        for i in range(n):
            if seen[ids[i] - low]:
                return i
            seen[ids[i] - low] = True
        return -1
    order = np.argsort(ids, kind="mergesort")  # stable: the later copy comes second
    first = -1
    for k in range(1, n):
        if ids[order[k]] == ids[order[k - 1]] and (first < 0 or order[k] < first):
            first = order[k]
    return first


@numba.njit(cache=True)
def _disjoint_runs(ids):
    """Whether ``ids`` (two or more) split into strictly rising runs whose ranges
    ``[first, last]`` do not overlap: then no id occurs twice."""
    n_runs = 1
    for i in range(1, len(ids)):
        n_runs += ids[i] <= ids[i - 1]
    first, last = np.empty(n_runs, dtype=ids.dtype), np.empty(n_runs, dtype=ids.dtype)
    k = 0
    first[0] = ids[0]
    for i in range(1, len(ids)):
        if ids[i] <= ids[i - 1]:
            last[k] = ids[i - 1]
            k += 1
            first[k] = ids[i]
    last[k] = ids[len(ids) - 1]
    order = np.argsort(first)
    for j in range(1, n_runs):
        if first[order[j]] <= last[order[j - 1]]:
            return False
    return True


def flow_ids(coflows: Iterable[CoflowState]) -> np.ndarray:
    """The flow ids of ``coflows``, coflow by coflow, each coflow's flows by id: one class
    (an int64 array, joined from the coflows' :meth:`~.view.CoflowState.flow_id_array`)."""
    ids = [c.flow_id_array() for c in coflows]
    return np.concatenate(ids) if ids else np.empty(0, dtype=np.int64)


def class_per_coflow(coflows: Iterable[CoflowState]) -> list[np.ndarray]:
    """An order giving every coflow its own class, in the given coflow order (one int64
    array of flow ids per coflow)."""
    return [c.flow_id_array() for c in coflows]
