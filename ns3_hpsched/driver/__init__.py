"""The driver: plays a hyperparameter-search workload over any backend under a policy.

One module per job (DESIGN.md's vocabulary):

* :mod:`.training` -- training dynamics: a job's life (compute, phases, iterations,
  stage barriers, halving), and the policy's view kept up to date as it goes;
* :mod:`.control` -- control: triggers, decisions, classes and rates applied in bulk,
  the control delay;
* :mod:`.flows` -- the columnar flow state, owned once (paths and five-tuples computed
  once per flow, shared with the backend, the view and the flows table);
* :mod:`.bounds` -- lower bounds of stage times (pure functions of workload and topology);
* :mod:`.records` -- the result tables;
* :mod:`.openloop` -- open-loop play: workloads of lone coflows under a one-class policy
  (fair), every flow handed to the backend before the run.

The driver never imports ns-3: it talks to :class:`~ns3_hpsched.backends.base.Backend` only.
"""

from __future__ import annotations

from ..backends.base import Backend
from ..sched.base import Policy
from ..workload.spec import Workload
from .control import Control
from .flows import FlowTable, LiveView
from .openloop import lone_coflows, play_open_loop
from .records import RecordBook, Records
from .training import ProgressFn, Training

__all__ = ["play", "Records", "ProgressFn", "Control", "FlowTable", "LiveView", "RecordBook", "Training"]


def play(workload: Workload, backend: Backend, policy: Policy, *,
         control_delay_s: float = 0.0, progress: ProgressFn | None = None) -> Records:
    """Play ``workload`` over ``backend`` under ``policy`` and return the records.

    Parameters
    ----------
    workload:
        The explicit workload (validated beforehand).
    backend:
        A fresh backend over the topology the workload's hosts refer to.
    policy:
        The scheduling policy; :meth:`Policy.setup` is called with the workload first.
    control_delay_s:
        Delay between a trigger and the new classes taking effect at the senders
        (see :class:`~.control.Control`).
    progress:
        ``None`` or ``progress(now_s, flows_done)``, called after every batch of flow
        completions (the caller throttles; :meth:`Workload.n_flows` gives the total).

    Workloads of lone coflows under a policy that keeps them all in one class (fair;
    pinned without distinct classes) and no control delay are played open loop
    (:mod:`.openloop`): the same tables, no decisions.
    """
    policy.setup(workload)
    if control_delay_s == 0 and lone_coflows(workload) and policy.one_class(workload):
        return play_open_loop(workload, backend, progress=progress)
    topology = backend.topology
    flows = FlowTable(topology, backend.bytes_sent)
    view = LiveView(flows, 0.0, topology.port_capacity_bps, backend.n_classes)
    control = Control(backend, policy, view, flows, control_delay_s)
    book = RecordBook()
    training = Training(workload, backend, view, flows, control, book, progress)
    backend.on_flows_done = training.flows_done
    backend.flow_done_may_lag = True  # a flow acts (stage, phase, decision) only when its coflow ends
    backend.on_threshold = lambda coflow_id: control.trigger()
    training.schedule_arrivals()
    stats = backend.run()
    unfinished = training.unfinished_stages()
    if unfinished:
        raise RuntimeError(f"the run ended with stages unfinished: {unfinished[:5]}")
    return book.records(backend, flows, control.decisions, stats)
