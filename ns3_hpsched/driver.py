"""The training driver: plays a hyperparameter-search workload over any backend.

Training dynamics (DESIGN.md, SCHEDULERS.md):

* a cojob arrives and starts stage 0 with the jobs of ``stages[0]``;
* an iteration of a job is ``compute_s`` of computation, then its synchronisation, whose
  phases (coflows) run one after another; the next iteration starts when the last phase
  completes;
* a stage ends when all its jobs have run their iterations; the jobs of the next stage
  (survivors, plus configurations joining) start it at once; the others stop.

The driver asks the policy for an order on every trigger of SCHEDULERS.md -- coflow
release and completion, stage start and end, and watched byte thresholds -- and applies
the classes through the backend. Triggers at one simulated instant are coalesced into one
decision, taken after every event of that instant has run. The driver never imports ns-3:
it talks to :class:`~ns3_hpsched.backends.base.Backend` only.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field

import pandas as pd

from .backends.base import Backend, FlowStart, RunStats
from .sched.base import Policy
from .sched.classes import order_to_classes
from .sched.view import CoflowState, FlowState, JobState, StageState, View
from .topology.ecmp import flow_five_tuple
from .topology.ideal import standalone_fct_s
from .workload.spec import Cojob, Job, Workload

__all__ = ["Driver", "ProgressFn", "Records", "play"]

#: ``progress(now_s, flows_done)``: called after every flow completion.
ProgressFn = Callable[[float, int], None]


@dataclass
class Records:
    """What a played workload produced: the ``coflows``, ``stages``, ``jobs`` and ``flows`` tables,
    the number of policy decisions and the backend's run statistics.

    Column meanings are documented in :mod:`ns3_hpsched.results`.
    """

    coflows: pd.DataFrame
    stages: pd.DataFrame
    jobs: pd.DataFrame
    flows: pd.DataFrame
    decisions: int
    stats: RunStats


@dataclass
class _FlowRun:
    flow_id: int
    coflow_id: int
    src: int
    dst: int
    size_bytes: int
    ports: tuple[int, ...]
    started: bool = False


@dataclass
class _CoflowRun:
    coflow_id: int
    job: "_JobRun"
    iteration: int
    phase: int
    release_s: float
    size_bytes: int
    width: int
    open_flows: dict[int, _FlowRun]  # in flow-id order (flows are added in id order)
    finished_bytes: int = 0
    finish_s: float = float("nan")


@dataclass
class _JobRun:
    spec: Job
    cojob: int
    stage: int
    iterations: int
    sync_port_bytes: dict[int, int]
    done_iterations: int = 0
    released_iterations: int = 0
    coflows: list[int] = field(default_factory=list)


@dataclass(frozen=True)
class _SyncDemand:
    """One synchronisation of a job: T_j^p (bytes per port) and its time alone (s)."""

    port_bytes: dict[int, int]
    isolated_s: float


@dataclass
class _StageRun:
    cojob: Cojob
    stage: int
    start_s: float
    open_jobs: set[int]
    isolated_s: float
    demand_bound_s: float


class Driver:
    """Plays ``workload`` over ``backend`` under ``policy``.

    Parameters
    ----------
    workload:
        The explicit workload (validated beforehand).
    backend:
        A fresh backend over the topology the workload's hosts refer to.
    policy:
        The scheduling policy.
    control_delay_s:
        Delay between a trigger and the new classes taking effect at the senders (a real
        coordinator pushing priorities to host agents is not instant). With a delay, a
        flow released before its class arrives is sent in the lowest class.
    progress:
        ``None`` or ``progress(now_s, flows_done)``, called after every flow completion
        (the caller throttles; :meth:`Workload.n_flows` gives the total).
    """

    def __init__(self, workload: Workload, backend: Backend, policy: Policy, *,
                 control_delay_s: float = 0.0, progress: ProgressFn | None = None) -> None:
        if control_delay_s < 0:
            raise ValueError(f"control_delay_s must be >= 0, got {control_delay_s}")
        self.workload = workload
        self.backend = backend
        self.policy = policy
        self.control_delay_s = float(control_delay_s)
        self.progress = progress
        self._flows_done = 0
        self.topology = backend.topology
        self._capacity = self.topology.port_capacity_bps
        self._jobs_by_id = {job.job: job for cojob in workload.cojobs for job in cojob.jobs}
        self._sync = {j: self._sync_demand(job) for j, job in self._jobs_by_id.items()}
        self._flows: dict[int, _FlowRun] = {}
        self._coflows: dict[int, _CoflowRun] = {}
        self._jobs: dict[int, _JobRun] = {}
        self._stages: dict[tuple[int, int], _StageRun] = {}
        self._classes: dict[int, int] = {}
        self._next_flow_id = 0
        self._next_coflow_id = 0
        self._decision_pending = False
        self._decisions = 0
        self._coflow_rows: list[dict] = []
        self._stage_rows: list[dict] = []
        self._job_rows: dict[int, dict] = {}
        self._flow_info: dict[int, tuple[int, int, int, int]] = {}
        self._given_dport: dict[int, int] = {}  # flow id -> the dport its flow list gave

    # -- entry point ----------------------------------------------------------------------

    def run(self) -> Records:
        """Play the whole workload; return the records."""
        self.policy.setup(self.workload)
        self.backend.on_flow_done = self._flow_done
        self.backend.on_threshold = lambda coflow_id: self._trigger()
        for cojob in self.workload.cojobs:
            self.backend.at(cojob.arrival_s, lambda c=cojob: self._start_stage(c, 0))
        stats = self.backend.run()
        unfinished = list(self._stages)
        if unfinished:
            raise RuntimeError(f"the run ended with stages unfinished: {unfinished[:5]}")
        return Records(
            coflows=_frame(self._coflow_rows, _COFLOW_COLUMNS),
            stages=_frame(self._stage_rows, _STAGE_COLUMNS),
            jobs=_frame(sorted(self._job_rows.values(), key=lambda r: r["job"]), _JOB_COLUMNS),
            flows=self._flows_table(),
            decisions=self._decisions,
            stats=stats,
        )

    # -- training dynamics ----------------------------------------------------------------

    def _start_stage(self, cojob: Cojob, s: int) -> None:
        stage = cojob.stages[s]
        now = self.backend.now()
        runs = []
        for j in stage.jobs:
            run = _JobRun(self._jobs_by_id[j], cojob.cojob, s, stage.iterations, self._sync[j].port_bytes)
            self._jobs[j] = run
            runs.append(run)
            self._job_rows.setdefault(j, {"job": j, "cojob": cojob.cojob, "start_s": now,
                                          "end_s": float("nan"), "stopped_after_stage": -1,
                                          "stages_run": 0})
        self._stages[(cojob.cojob, s)] = _StageRun(
            cojob, s, now, set(stage.jobs),
            isolated_s=max(self._isolated_job_s(r) for r in runs),
            demand_bound_s=self._demand_bound_s(runs))
        for run in runs:
            self._start_iteration(run)
        self._trigger()

    def _start_iteration(self, run: _JobRun) -> None:
        compute = run.spec.compute_s
        if compute > 0:
            self.backend.at(self.backend.now() + compute, lambda: self._release_phase(run, 0))
        else:
            self._release_phase(run, 0)

    def _release_phase(self, run: _JobRun, phase: int) -> None:
        if phase == 0:
            run.released_iterations += 1
        flows = run.spec.sync.phases[phase] if run.spec.sync.phases else ()
        coflow_id = self._next_coflow_id
        self._next_coflow_id += 1
        now = self.backend.now()
        coflow = _CoflowRun(coflow_id, run, run.done_iterations, phase, now,
                            size_bytes=sum(f.bytes for f in flows), width=len(flows), open_flows={})
        for f in flows:
            fid = self._next_flow_id
            self._next_flow_id += 1
            flow = _FlowRun(fid, coflow_id, f.src, f.dst, f.bytes, self.topology.flow_path(fid, f.src, f.dst))
            self._flows[fid] = coflow.open_flows[fid] = flow
            self._flow_info[fid] = (coflow_id, run.spec.job, run.cojob, run.stage)
            if f.dport is not None:
                self._given_dport[fid] = f.dport
        if not coflow.open_flows:
            coflow.finish_s = now
            self._record_coflow(coflow)
            self._phase_done(run, phase)
            return
        self._coflows[coflow_id] = coflow
        run.coflows.append(coflow_id)
        self._trigger()

    def _flow_done(self, flow_id: int, finish_s: float) -> None:
        flow = self._flows.pop(flow_id)
        self._classes.pop(flow_id, None)
        coflow = self._coflows[flow.coflow_id]
        del coflow.open_flows[flow_id]
        coflow.finished_bytes += flow.size_bytes
        self._flows_done += 1
        if self.progress is not None:
            self.progress(finish_s, self._flows_done)
        if coflow.open_flows:
            return
        del self._coflows[coflow.coflow_id]
        coflow.finish_s = finish_s
        coflow.job.coflows.remove(coflow.coflow_id)
        self._record_coflow(coflow)
        self._trigger()
        self._phase_done(coflow.job, coflow.phase)

    def _phase_done(self, run: _JobRun, phase: int) -> None:
        if phase + 1 < len(run.spec.sync.phases):
            self._release_phase(run, phase + 1)
            return
        run.done_iterations += 1
        if run.done_iterations < run.iterations:
            self._start_iteration(run)
            return
        key = (run.cojob, run.stage)
        stage = self._stages[key]
        stage.open_jobs.discard(run.spec.job)
        del self._jobs[run.spec.job]
        row = self._job_rows[run.spec.job]
        row["end_s"] = self.backend.now()
        row["stages_run"] += 1
        if not stage.open_jobs:
            self._end_stage(stage)

    def _end_stage(self, stage: _StageRun) -> None:
        cojob, s = stage.cojob, stage.stage
        now = self.backend.now()
        del self._stages[(cojob.cojob, s)]
        self._stage_rows.append({
            "cojob": cojob.cojob, "stage": s, "start_s": stage.start_s, "finish_s": now,
            "sct_s": now - stage.start_s, "jobs": len(cojob.stages[s].jobs),
            "iterations": cojob.stages[s].iterations, "isolated_s": stage.isolated_s,
            "demand_bound_s": stage.demand_bound_s,
            "lower_bound_s": max(stage.isolated_s, stage.demand_bound_s),
        })
        continuing = set(cojob.stages[s + 1].jobs) if s + 1 < len(cojob.stages) else set()
        for j in cojob.stages[s].jobs:
            if j not in continuing:
                self._job_rows[j]["stopped_after_stage"] = s
        if continuing:
            self._start_stage(cojob, s + 1)
        else:
            self._trigger()

    # -- scheduling -------------------------------------------------------------------------

    def _trigger(self) -> None:
        """Ask for a decision once every event of this instant has run."""
        if not self._decision_pending:
            self._decision_pending = True
            self.backend.at(self.backend.now(), self._decide)

    def _decide(self) -> None:
        self._decision_pending = False
        if not self._flows:
            return
        self._decisions += 1
        decision = self.policy.decide(self._view())
        n_classes = self.backend.n_classes
        classes = order_to_classes(decision.order, n_classes)
        lowest = n_classes - 1
        changes = {}
        for fid, flow in self._flows.items():
            cls = classes.get(fid, lowest)
            if not flow.started:
                flow.started = True
                initial = cls if self.control_delay_s == 0 else lowest
                self._classes[fid] = initial
                self.backend.start_flow(FlowStart(fid, flow.src, flow.dst, flow.size_bytes,
                                                  initial, flow.coflow_id))
            if self._classes[fid] != cls:
                changes[fid] = cls
        for coflow_id, threshold in decision.watch.items():
            self.backend.watch_coflow(coflow_id, int(threshold))
        if self.control_delay_s == 0:
            self._apply(changes, decision.rates_bps)
        else:
            self.backend.at(self.backend.now() + self.control_delay_s,
                            lambda: self._apply(changes, decision.rates_bps))

    def _apply(self, changes: dict[int, int], rates_bps: dict[int, float] | None) -> None:
        for fid, cls in changes.items():
            if fid in self._flows:
                self._classes[fid] = cls
                self.backend.set_priority(fid, cls)
        if rates_bps is not None:
            self.backend.set_rates({f: r for f, r in rates_bps.items() if f in self._flows})

    def _view(self) -> View:
        ids = [fid for fid, f in self._flows.items() if f.started]
        sent = dict.fromkeys(self._flows, 0)
        if ids:
            sent.update(zip(ids, self.backend.bytes_sent(ids).tolist()))
        coflows = {}
        for cid, c in self._coflows.items():
            flows = tuple(FlowState(f.flow_id, cid, f.src, f.dst, f.size_bytes, sent[f.flow_id], f.ports)
                          for f in c.open_flows.values())
            coflows[cid] = CoflowState(
                cid, c.job.spec.job, c.job.cojob, c.job.stage, c.iteration, c.phase, c.release_s,
                c.size_bytes, c.finished_bytes + sum(f.sent_bytes for f in flows), flows)
        jobs = {
            j: JobState(j, r.cojob, r.stage, r.iterations, r.done_iterations, r.released_iterations,
                        r.spec.compute_s, r.sync_port_bytes, tuple(r.coflows))
            for j, r in self._jobs.items()}
        stages = {key: StageState(key[0], key[1], st.start_s, tuple(sorted(st.open_jobs)))
                  for key, st in self._stages.items()}
        return View(self.backend.now(), self._capacity, self.backend.n_classes, coflows, jobs, stages)

    # -- bounds -----------------------------------------------------------------------------

    def _sync_demand(self, job: Job) -> _SyncDemand:
        """What one synchronisation of ``job`` asks of the network (computed once per job).

        Host links are exact. Inside the fabric each flow's path depends on its five-tuple,
        which differs per iteration; the paths of a canonical five-tuple (the flow's index
        in the synchronisation) stand in for them.
        """
        total: dict[int, int] = defaultdict(int)
        isolated_s = 0.0
        index = 0
        for phase in job.sync.phases:
            load: dict[int, int] = defaultdict(int)
            for f in phase:
                for p in self.topology.flow_path(index, f.src, f.dst):
                    load[p] += f.bytes
                index += 1
            isolated_s += max((b * 8 / self._capacity[p] for p, b in load.items()), default=0.0)
            for p, b in load.items():
                total[p] += b
        return _SyncDemand(dict(sorted(total.items())), isolated_s)

    def _isolated_job_s(self, run: _JobRun) -> float:
        """A job's stage time alone on the network (fluid ideal: bottleneck per phase)."""
        return run.iterations * (run.spec.compute_s + self._sync[run.spec.job].isolated_s)

    def _demand_bound_s(self, runs: list[_JobRun]) -> float:
        """max_p D_s^p at stage start: the stage's whole demand on its busiest port."""
        load: dict[int, float] = defaultdict(float)
        for run in runs:
            for p, b in run.sync_port_bytes.items():
                load[p] += run.iterations * b * 8 / self._capacity[p]
        return max(load.values(), default=0.0)

    # -- records ----------------------------------------------------------------------------

    def _record_coflow(self, c: _CoflowRun) -> None:
        self._coflow_rows.append({
            "coflow_id": c.coflow_id, "cojob": c.job.cojob, "job": c.job.spec.job,
            "stage": c.job.stage, "iteration": c.iteration, "phase": c.phase,
            "release_s": c.release_s, "finish_s": c.finish_s, "cct_s": c.finish_s - c.release_s,
            "bytes": c.size_bytes, "width": c.width,
        })

    def _flows_table(self) -> pd.DataFrame:
        """The backend's flows with their coflow, job, five-tuple ports and ideal FCT."""
        flows = self.backend.flows_table()
        info = pd.DataFrame(
            [(fid, *v) for fid, v in self._flow_info.items()],
            columns=["flow_id", "coflow_id", "job", "cojob", "stage"])
        merged = info.merge(flows, on="flow_id", how="left", validate="one_to_one")
        merged = merged.sort_values("flow_id", ignore_index=True)
        rows = merged[["flow_id", "src", "dst", "bytes"]].itertuples(index=False)
        ideal, sports, dports = [], [], []
        for fid, src, dst, size in rows:
            ft = flow_five_tuple(fid, src, dst)
            sports.append(ft.sport)
            dports.append(self._given_dport.get(fid, ft.dport))
            ideal.append(standalone_fct_s(self.topology, src, dst, size, fid))
        return merged.assign(sport=sports, dport=dports, standalone_fct_s=ideal)


def play(workload: Workload, backend: Backend, policy: Policy, *,
         control_delay_s: float = 0.0, progress: ProgressFn | None = None) -> Records:
    """Play ``workload`` over ``backend`` under ``policy`` and return the records."""
    return Driver(workload, backend, policy, control_delay_s=control_delay_s, progress=progress).run()


_COFLOW_COLUMNS = ["coflow_id", "cojob", "job", "stage", "iteration", "phase", "release_s",
                   "finish_s", "cct_s", "bytes", "width"]
_STAGE_COLUMNS = ["cojob", "stage", "start_s", "finish_s", "sct_s", "jobs", "iterations",
                  "isolated_s", "demand_bound_s", "lower_bound_s"]
_JOB_COLUMNS = ["job", "cojob", "start_s", "end_s", "stopped_after_stage", "stages_run"]


def _frame(rows: list[dict], columns: list[str]) -> pd.DataFrame:
    frame = pd.DataFrame(rows, columns=columns)
    return frame.sort_values(columns[:2], ignore_index=True) if len(frame) else frame
