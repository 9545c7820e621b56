"""Control: when to decide, asking the policy, and applying its classes and rates.

Triggers (SCHEDULERS.md: coflow release and completion, stage start and end, watched
byte thresholds) at one simulated instant are coalesced into one decision, taken after
every event of that instant has run. A decision starts the coflows released since the
last one (one :meth:`~ns3_hpsched.backends.base.Backend.start_flows` call per coflow)
and moves the flows whose class changed (one
:meth:`~ns3_hpsched.backends.base.Backend.set_priorities` call), optionally after a
control delay.
"""

from __future__ import annotations

import numpy as np

from ..backends.base import Backend
from ..sched.base import Policy
from ..sched.classes import order_arrays
from ..sched.view import View
from .flows import FlowTable, LiveCoflow

__all__ = ["Control"]


class Control:
    """Decides on triggers and applies the decisions to the backend.

    Parameters
    ----------
    backend, policy:
        Where classes go, and who decides them.
    view:
        The policy's view, kept up to date by the training dynamics.
    flows:
        The flow state shared with the training dynamics.
    control_delay_s:
        Delay between a trigger and the new classes taking effect at the senders (a real
        coordinator pushing priorities to host agents is not instant). With a delay, a
        flow released before its class arrives is sent in the lowest class.
    """

    def __init__(self, backend: Backend, policy: Policy, view: View, flows: FlowTable,
                 control_delay_s: float = 0.0) -> None:
        if control_delay_s < 0:
            raise ValueError(f"control_delay_s must be >= 0, got {control_delay_s}")
        self.backend = backend
        self.policy = policy
        self.view = view
        self.flows = flows
        self.control_delay_s = float(control_delay_s)
        self.decisions = 0
        self._pending = False
        self._unstarted: list[LiveCoflow] = []

    def released(self, coflow: LiveCoflow) -> None:
        """A coflow was released: its flows start at the next decision."""
        self._unstarted.append(coflow)
        self._ask()

    def trigger(self) -> None:
        """Something other than a release happened: ask for a decision, unless the policy's
        order changes on releases only (:attr:`~ns3_hpsched.sched.base.Policy.release_only`)."""
        if not self.policy.release_only:
            self._ask()

    def _ask(self) -> None:
        """Ask for a decision once every event of this instant has run."""
        if not self._pending:
            self._pending = True
            self.backend.at(self.backend.now(), self._decide)

    def _decide(self) -> None:
        self._pending = False
        if not self.view.coflows:
            return
        self.decisions += 1
        self.view.now_s = self.backend.now()
        self.flows.new_decision()
        decision = self.policy.decide(self.view)
        flows, lowest = self.flows, self.backend.n_classes - 1
        ids, classes = order_arrays(decision.order, self.backend.n_classes)
        rows = flows.open_rows()
        flows.target[rows] = lowest
        known = (ids >= 0) & (ids < flows.n)
        flows.target[ids[known]] = classes[known]
        self._start_released()
        wanted = flows.target[rows]
        changed = flows.klass[rows] != wanted
        for coflow_id, threshold in decision.watch.items():
            self.backend.watch_coflow(coflow_id, int(threshold))
        moves = (rows[changed], wanted[changed])
        if self.control_delay_s == 0:
            self._apply(*moves, decision.rates_bps)
        else:
            self.backend.at(self.backend.now() + self.control_delay_s,
                            lambda: self._apply(*moves, decision.rates_bps))

    def _start_released(self) -> None:
        """Start the coflows released since the last decision, one batch each."""
        flows, lowest = self.flows, self.backend.n_classes - 1
        for coflow in self._unstarted:
            s = slice(coflow.rows.start, coflow.rows.stop)
            initial = flows.target[s].copy() if self.control_delay_s == 0 else np.full(len(coflow.rows), lowest)
            flows.klass[s] = initial
            self.backend.start_flows(flows.batch(coflow.rows, initial))
        self._unstarted.clear()

    def _apply(self, flow_ids: np.ndarray, classes: np.ndarray, rates_bps: dict[int, float] | None) -> None:
        """Move the still unfinished flows of ``flow_ids`` to ``classes``; pass on the rates."""
        live = self.flows.open[flow_ids]
        flow_ids, classes = flow_ids[live], classes[live]
        if len(flow_ids):
            self.flows.klass[flow_ids] = classes
            self.backend.set_priorities(flow_ids, classes)
        if rates_bps is not None:
            self.backend.set_rates({f: r for f, r in rates_bps.items() if self.flows.is_open(f)})
