"""Tie-break rules of coflow orders, as an explicit policy parameter (``tie_break``).

SCHEDULERS.md breaks ties by (key, release time, id). A policy sorts coflows by its own
key followed by :func:`tie_key`, so the rule is stated once and can be switched:

``"release"`` (default)
    earlier release first, then lower coflow id: FIFO among equals.
``"id"``
    lower coflow id first, ignoring release times.
"""

from __future__ import annotations

from collections.abc import Callable

from .params import check_choice
from .view import CoflowState

__all__ = ["TIE_BREAKS", "tie_key"]

#: Tie-break rules by name: a key function of a coflow, smaller first.
TIE_BREAKS: dict[str, Callable[[CoflowState], tuple]] = {
    "release": lambda c: (c.release_s, c.coflow_id),
    "id": lambda c: (c.coflow_id,),
}


def tie_key(name: str) -> Callable[[CoflowState], tuple]:
    """The key function of tie-break rule ``name`` (validated as ``scheduler.params.tie_break``)."""
    return TIE_BREAKS[check_choice("tie_break", name, TIE_BREAKS)]
