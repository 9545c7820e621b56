"""The fluid backend's event queue: a heap keyed by (time, sequence number).

The sequence number makes events at equal times run in the order they were scheduled
(the :class:`~ns3_hpsched.backends.base.Backend` contract) and keeps the heap from ever
comparing two callables.
"""

from __future__ import annotations

import heapq
import itertools
import math
from collections.abc import Callable

__all__ = ["EventQueue"]


class EventQueue:
    """Callbacks waiting for their simulated time."""

    def __init__(self) -> None:
        self._heap: list[tuple[float, int, Callable, tuple]] = []
        self._seq = itertools.count()

    def __len__(self) -> int:
        return len(self._heap)

    def push(self, time_s: float, fn: Callable, *args) -> None:
        """Schedule ``fn(*args)`` at ``time_s``, after everything already scheduled then."""
        heapq.heappush(self._heap, (time_s, next(self._seq), fn, args))

    def next_time(self) -> float:
        """Time of the earliest event (``inf`` when empty)."""
        return self._heap[0][0] if self._heap else math.inf

    def pop(self) -> tuple[Callable, tuple]:
        """Remove the earliest event and return its callable and arguments."""
        _, _, fn, args = heapq.heappop(self._heap)
        return fn, args
