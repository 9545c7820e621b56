"""Aalo: non-clairvoyant coflow scheduling with discretized coflow-aware least-attained service.

Chowdhury, Stoica, "Efficient coflow scheduling without prior knowledge", SIGCOMM 2015.
"""

from __future__ import annotations

import math

from ..workload.spec import Workload
from .base import Policy
from .classes import class_per_coflow
from .. import validate
from ..validate import INT64_MAX, MAX_BYTES
from .params import check_number, field
from .ties import tie_key
from .view import CoflowState, Decision, View

__all__ = ["Aalo"]

#: Aalo's defaults: K = 10 queues, Q1 = 10 MiB, E = 10.
DEFAULT_QUEUES = 10
DEFAULT_FIRST_THRESHOLD = 10 * 2**20
DEFAULT_MULTIPLIER = 10.0


def max_queues(first_threshold_bytes: float, multiplier: float) -> int:
    """The most queues whose thresholds ``Q1 * E**i`` all stay within :data:`MAX_BYTES`."""
    steps = (math.log(MAX_BYTES) - math.log(first_threshold_bytes)) / math.log(multiplier)
    return 2 + min(math.floor(steps + 1e-9), INT64_MAX - 2)


class Aalo(Policy):
    """D-CLAS: queue by bytes sent, strict priority across queues, FIFO inside a queue.

    A coflow's queue is the number of thresholds ``Q1 * E**i`` (i >= 0) its bytes sent
    have reached, capped at ``K - 1``. In DL training every iteration's synchronisation
    is a new coflow, so it starts in queue 0. Inside a queue coflows are served one after
    another (each its own class) by the time they entered the queue, then ``tie_break``.

    Queue entry times are the policy's memory, keyed by coflow id: a coflow seen for the
    first time in queue 0 entered it at its release; a coflow whose queue differs from the
    one remembered (or that is first seen past queue 0) entered it at ``view.now_s``. The
    decision watches every coflow's next threshold, so the driver calls :meth:`decide` at
    the moment of each crossing and the remembered times are exact. :meth:`setup` clears
    the memory; finished coflows are forgotten.

    Parameters
    ----------
    n_queues:
        K, the number of logical queues (default 10; K = 1 is FIFO), at most
        :func:`max_queues` (10 with the default Q1 and E), so every threshold can be reached.
    first_threshold_bytes:
        Q1, the bytes sent that move a coflow out of queue 0 (> 0; default 10 MiB).
    multiplier:
        E, the growth factor of the thresholds (> 1; default 10).
    tie_break:
        Order of coflows entering a queue at the same time (see :mod:`~ns3_hpsched.sched.ties`).
    """

    name = "aalo"

    def __init__(self, n_queues: int = DEFAULT_QUEUES, first_threshold_bytes: float = DEFAULT_FIRST_THRESHOLD,
                 multiplier: float = DEFAULT_MULTIPLIER, tie_break: str = "release") -> None:
        self.first_threshold_bytes = validate.number(field("first_threshold_bytes"), first_threshold_bytes,
                                                     low=0.0, low_open=True, high=MAX_BYTES)
        self.multiplier = check_number("multiplier", multiplier, minimum=1.0, strict=True)
        self.n_queues = validate.integer(
            field("n_queues"), n_queues, low=1, high=max_queues(self.first_threshold_bytes, self.multiplier),
            fix=f"thresholds past {MAX_BYTES:.3g} bytes (2^53, the largest coflow) are never reached: "
                "use fewer queues, or a smaller first_threshold_bytes or multiplier")
        validate.size(field("n_queues"), self.n_queues, "queue thresholds")
        self.tie_break = tie_break
        self._key = tie_key(tie_break)
        #: Bytes sent that reach queue i + 1, for i < K - 1 (sent bytes are integers).
        self.thresholds = tuple(math.ceil(self.first_threshold_bytes * self.multiplier**i)
                                for i in range(self.n_queues - 1))
        self._entered: dict[int, tuple[int, float]] = {}

    def setup(self, workload: Workload) -> None:
        """Forget the queue entry times of a previous run."""
        self._entered = {}

    def queue(self, sent_bytes: int) -> int:
        """Queue of a coflow that has sent ``sent_bytes``: thresholds reached, capped at K - 1."""
        return sum(sent_bytes >= t for t in self.thresholds)

    def decide(self, view: View) -> Decision:
        """Queues in order, FIFO by entry time inside each; watch each coflow's next threshold."""
        entered = {c.coflow_id: self._entry(c, view.now_s) for c in view.coflows.values()}
        self._entered = entered
        coflows = sorted(view.coflows.values(),
                         key=lambda c: (*entered[c.coflow_id], *self._key(c)))
        watch = {cid: self.thresholds[q] for cid, (q, _) in entered.items() if q < len(self.thresholds)}
        return Decision(order=class_per_coflow(coflows), watch=watch)

    def _entry(self, coflow: CoflowState, now_s: float) -> tuple[int, float]:
        """(queue, entry time) of ``coflow`` now, from its bytes sent and the memory."""
        q = self.queue(coflow.sent_bytes)
        known = self._entered.get(coflow.coflow_id)
        if known is not None and known[0] == q:
            return known
        return q, coflow.release_s if known is None and q == 0 else now_s

    def describe(self) -> dict:
        """Name and parameters."""
        return {"name": self.name, "params": {
            "n_queues": self.n_queues, "first_threshold_bytes": self.first_threshold_bytes,
            "multiplier": self.multiplier, "tie_break": self.tie_break}}
