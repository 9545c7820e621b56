"""Training dynamics: the life of every job of every cojob (DESIGN.md, SCHEDULERS.md).

* a cojob arrives and starts stage 0 with the jobs of ``stages[0]``;
* an iteration of a job is ``compute_s`` of computation, then its synchronisation, whose
  phases (coflows) run one after another; the next iteration starts when the last phase
  completes;
* a stage ends when all its jobs have run their iterations (the stage barrier); the jobs
  of the next stage (survivors of the halving, plus configurations joining) start it at
  once; the others stop.

The policy's view is kept up to date here, as things happen: coflows enter it when
released and leave it when their last flow finishes; jobs and stages likewise.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ..backends.base import Backend
from ..sched.view import JobState, StageState, View
from ..workload.spec import Cojob, Job, Workload
from .bounds import SyncDemand, demand_bound_s, isolated_stage_s, sync_demands
from .control import Control
from .flows import FlowTable, LiveCoflow
from .records import RecordBook

__all__ = ["Training", "ProgressFn"]

#: ``progress(now_s, flows_done)``: called after every batch of flow completions.
ProgressFn = Callable[[float, int], None]


@dataclass
class _JobRun:
    """A job in a stage: its spec and the state the policy sees."""

    spec: Job
    state: JobState


@dataclass
class _StageRun:
    """A running stage: its cojob, its bounds, the jobs still running it."""

    cojob: Cojob
    index: int
    state: StageState
    open_jobs: set[int]
    isolated_s: float
    demand_bound_s: float


class Training:
    """Plays the training dynamics of ``workload`` on ``backend`` (see the module docstring)."""

    def __init__(self, workload: Workload, backend: Backend, view: View, flows: FlowTable,
                 control: Control, book: RecordBook, progress: ProgressFn | None = None) -> None:
        self.workload, self.backend, self.view, self.flows = workload, backend, view, flows
        self.control, self.book, self.progress = control, book, progress
        self._jobs = {job.job_id: job for cojob in workload.cojobs for job in cojob.jobs}
        self._sync: dict[int, SyncDemand] = dict(zip(self._jobs, sync_demands(list(self._jobs.values()),
                                                                              backend.topology)))
        self._stages: dict[tuple[int, int], _StageRun] = {}
        self._coflows: dict[int, tuple[_JobRun, LiveCoflow]] = {}
        self._next_coflow_id = 0
        self._flows_done = 0

    def schedule_arrivals(self) -> None:
        """Schedule every cojob's arrival (it starts its stage 0)."""
        for cojob in self.workload.cojobs:
            self.backend.at(cojob.arrival_s, lambda c=cojob: self._start_stage(c, 0))

    def unfinished_stages(self) -> list[tuple[int, int]]:
        """``(cojob, stage)`` of the stages still running."""
        return list(self._stages)

    # -- stages and iterations ------------------------------------------------------------

    def _start_stage(self, cojob: Cojob, index: int) -> None:
        stage, now = cojob.stages[index], self.backend.now()
        runs = []
        for j in stage.jobs:
            spec = self._jobs[j]
            state = JobState(j, cojob.cojob_id, index, stage.iterations, 0, 0, spec.compute_s,
                             self._sync[j].port_bytes, ())
            runs.append(_JobRun(spec, state))
            self.view.jobs[j] = state
            self.book.job_started(j, cojob.cojob_id, now)
        key = (cojob.cojob_id, index)
        state = StageState(cojob.cojob_id, index, now, tuple(sorted(stage.jobs)))
        self.view.stages[key] = state
        self._stages[key] = _StageRun(
            cojob, index, state, set(stage.jobs),
            isolated_s=max(isolated_stage_s(r.spec, stage.iterations, self._sync[r.spec.job_id]) for r in runs),
            demand_bound_s=demand_bound_s(((stage.iterations, self._sync[r.spec.job_id]) for r in runs),
                                          self.backend.topology))
        for run in runs:
            self._start_iteration(run)
        self.control.trigger()

    def _start_iteration(self, run: _JobRun) -> None:
        compute = run.spec.compute_s
        if compute > 0:
            self.backend.at(self.backend.now() + compute, lambda: self._release_phase(run, 0))
        else:
            self._release_phase(run, 0)

    def _release_phase(self, run: _JobRun, phase: int) -> None:
        state = run.state
        if phase == 0:
            state.released_iterations += 1
        flows = run.spec.sync.phases[phase] if run.spec.sync.phases else ()
        coflow_id = self._next_coflow_id
        self._next_coflow_id += 1
        rows = self.flows.release(flows, coflow_id, state.job_id, state.cojob, state.stage)
        coflow = LiveCoflow(self.flows, rows, coflow_id, state.job_id, state.cojob, state.stage,
                            state.done_iterations, phase, self.backend.now())
        if not flows:
            self._record_coflow(coflow, coflow.release_s)
            self._phase_done(run, phase)
            return
        self._coflows[coflow_id] = (run, coflow)
        self.view.coflows[coflow_id] = coflow
        state.coflows = (*state.coflows, coflow_id)
        self.control.released(coflow)

    def flows_done(self, flow_ids: np.ndarray, finish_s: np.ndarray) -> None:
        """The backend's ``on_flows_done``: flows delivered their last bytes at ``finish_s``.

        The flow table takes them all in one step; Python runs once per coflow they finish
        (in the order of their last flows), never once per flow.
        """
        last = self.flows.finish(flow_ids)
        self._flows_done += len(flow_ids)
        if self.progress is not None:
            self.progress(float(finish_s[-1]), self._flows_done)
        for i in last.tolist():
            self._coflow_done(int(self.flows.coflow[flow_ids[i]]), float(finish_s[i]))

    def _coflow_done(self, coflow_id: int, finish_s: float) -> None:
        run, coflow = self._coflows.pop(coflow_id)
        del self.view.coflows[coflow_id]
        run.state.coflows = tuple(c for c in run.state.coflows if c != coflow_id)
        self._record_coflow(coflow, finish_s)
        self.control.trigger()
        self._phase_done(run, coflow.phase)

    def _phase_done(self, run: _JobRun, phase: int) -> None:
        if phase + 1 < len(run.spec.sync.phases):
            self._release_phase(run, phase + 1)
            return
        state = run.state
        state.done_iterations += 1
        if state.done_iterations < state.iterations:
            self._start_iteration(run)
            return
        stage = self._stages[(state.cojob, state.stage)]
        stage.open_jobs.discard(state.job_id)
        stage.state.jobs = tuple(sorted(stage.open_jobs))
        del self.view.jobs[state.job_id]
        self.book.job_ran_stage(state.job_id, self.backend.now())
        if not stage.open_jobs:
            self._end_stage(stage)

    def _end_stage(self, stage: _StageRun) -> None:
        cojob, index, now = stage.cojob, stage.index, self.backend.now()
        del self._stages[(cojob.cojob_id, index)], self.view.stages[(cojob.cojob_id, index)]
        spec = cojob.stages[index]
        self.book.stage({
            "cojob": cojob.cojob_id, "stage": index, "start_s": stage.state.start_s, "finish_s": now,
            "sct_s": now - stage.state.start_s, "jobs": len(spec.jobs), "iterations": spec.iterations,
            "isolated_s": stage.isolated_s, "demand_bound_s": stage.demand_bound_s,
            "lower_bound_s": max(stage.isolated_s, stage.demand_bound_s),
        })
        continuing = set(cojob.stages[index + 1].jobs) if index + 1 < len(cojob.stages) else set()
        for j in spec.jobs:
            if j not in continuing:
                self.book.job_stopped(j, index)
        if continuing:
            self._start_stage(cojob, index + 1)
        else:
            self.control.trigger()

    def _record_coflow(self, c: LiveCoflow, finish_s: float) -> None:
        self.book.coflow({
            "coflow_id": c.coflow_id, "cojob": c.cojob, "job": c.job, "stage": c.stage,
            "iteration": c.iteration, "phase": c.phase, "release_s": c.release_s, "finish_s": finish_s,
            "cct_s": finish_s - c.release_s, "bytes": c.size_bytes, "width": len(c.rows),
        })
