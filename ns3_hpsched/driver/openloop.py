"""Open-loop play: lone coflows under a one-class policy, every flow handed over before the run.

A cojob is a *lone coflow* when it is one coflow released at its arrival: one stage of
one iteration of one job, no compute, at most one phase of flows (flow lists, flow-size
workloads and the FB trace are made of them; an FB coflow of rack-local pairs only has no
flows, and ends at its arrival). Under a policy that puts every flow in the top class
whatever the view (:meth:`~ns3_hpsched.sched.base.Policy.one_class`: fair, and pinned
when the workload pins no distinct classes), nothing a
run does can change what the driver sends: no decision moves a flow, and no completion
releases anything. So the driver hands the backend every flow with its start time in
one call (:meth:`~ns3_hpsched.backends.base.Backend.start_flows_at`), lets it run, and
builds the tables from the backend's flows afterwards, as columns.

The tables are the ones the closed-loop play (:class:`~.training.Training`) gives: flows
get the same ids (release order: by arrival, ties in workload order), the same paths and
classes, start at the same instants (a coflow's release is its flows' start on the
backend's clock, which ns-3 keeps in nanoseconds; a coflow without flows is released
and ends at its arrival, read from the backend's clock by a callback then), and the bounds
come from the same functions. Only the run's counts differ: no decision is taken, and the
backend has fewer events (no stage starts or decision callbacks).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..backends.base import Backend
from ..workload.spec import Cojob, Workload
from .bounds import demand_bound_s, isolated_stage_s, sync_demands
from .flows import FlowTable
from .records import COFLOW_COLUMNS, JOB_COLUMNS, STAGE_COLUMNS, Records, flows_table, frame
from .training import ProgressFn

__all__ = ["lone_coflows", "play_open_loop"]


def lone_coflows(workload: Workload) -> bool:
    """Whether every cojob of ``workload`` is a lone coflow (see the module docstring)."""
    return all(_is_lone(c) for c in workload.cojobs)


def _is_lone(cojob: Cojob) -> bool:
    if len(cojob.jobs) != 1 or len(cojob.stages) != 1:
        return False
    job, stage = cojob.jobs[0], cojob.stages[0]
    return (stage.iterations == 1 and stage.jobs == (job.job_id,) and job.compute_s == 0
            and len(job.sync.phases) <= 1)


def play_open_loop(workload: Workload, backend: Backend, *, progress: ProgressFn | None = None) -> Records:
    """Play a workload of lone coflows, every flow in class 0, open loop (module docstring).

    ``progress`` is as for :func:`~ns3_hpsched.driver.play`; without it the backend is not
    told to report flow completions at all.
    """
    cojobs = sorted(workload.cojobs, key=lambda c: c.arrival_s)   # stable: ties keep workload order
    jobs = [c.jobs[0] for c in cojobs]
    phases = [job.sync.phases[0] if job.sync.phases else () for job in jobs]
    width = np.array([len(p) for p in phases], dtype=np.int64)
    per_flow = lambda values: np.repeat(np.asarray(values), width)
    flows = FlowTable(backend.topology, backend.bytes_sent)
    rows = flows.release([f for p in phases for f in p], per_flow(np.arange(len(cojobs))),
                         per_flow([j.job_id for j in jobs]), per_flow([c.cojob_id for c in cojobs]), 0)
    flows.klass[:flows.n] = 0
    arrival_s = np.array([c.arrival_s for c in cojobs], dtype=np.float64)
    backend.start_flows_at(flows.batch(rows, np.zeros(len(rows), dtype=np.int64)), per_flow(arrival_s))
    backend.on_flows_done = None if progress is None else _counter(progress)
    release_s = np.full(len(cojobs), np.nan)
    for i in np.flatnonzero(width == 0).tolist():  # no flows: released and ended at the arrival
        backend.at(arrival_s[i], lambda i=i: release_s.__setitem__(i, backend.now()))
    stats = backend.run()
    table = flows_table(backend, flows)
    finish_s = release_s.copy()
    sending, first = width > 0, _first_flows(width)
    release_s[sending] = np.minimum.reduceat(table["start_s"].to_numpy(), first)  # backend clock (ns-3: ns)
    finish_s[sending] = np.maximum.reduceat(table["finish_s"].to_numpy(), first)
    unfinished = np.flatnonzero(np.isnan(finish_s))
    if len(unfinished):
        raise RuntimeError("the run ended with stages unfinished: "
                           f"{[(cojobs[i].cojob_id, 0) for i in unfinished[:5]]}")
    return Records(coflows=_coflows(cojobs, release_s, finish_s, flows, width),
                   stages=_stages(cojobs, release_s, finish_s, backend),
                   jobs=_jobs(cojobs, release_s, finish_s),
                   flows=table, decisions=0, stats=stats)


def _counter(progress: ProgressFn):
    """An ``on_flows_done`` that counts completions for ``progress``."""
    done = 0

    def flows_done(flow_ids: np.ndarray, finish_s: np.ndarray) -> None:
        nonlocal done
        done += len(flow_ids)
        progress(float(finish_s[-1]), done)

    return flows_done


def _coflows(cojobs, release_s, finish_s, flows, width) -> pd.DataFrame:
    n = len(cojobs)
    zeros = np.zeros(n, dtype=np.int64)
    coflow_bytes = np.zeros(n, dtype=np.int64)
    sending = width > 0
    coflow_bytes[sending] = np.add.reduceat(flows.size[:flows.n], _first_flows(width))
    return frame({
        "coflow_id": np.arange(n, dtype=np.int64), "cojob": _ids(c.cojob_id for c in cojobs),
        "job": _ids(c.jobs[0].job_id for c in cojobs), "stage": zeros, "iteration": zeros, "phase": zeros,
        "release_s": release_s, "finish_s": finish_s, "cct_s": finish_s - release_s,
        "bytes": coflow_bytes, "width": width,
    }, COFLOW_COLUMNS)


def _stages(cojobs, release_s, finish_s, backend) -> pd.DataFrame:
    topology = backend.topology
    demands = sync_demands([c.jobs[0] for c in cojobs], topology)
    isolated = np.array([isolated_stage_s(c.jobs[0], 1, d) for c, d in zip(cojobs, demands)])
    demand = np.array([demand_bound_s(((1, d),), topology) for d in demands])
    ones = np.ones(len(cojobs), dtype=np.int64)
    return frame({
        "cojob": _ids(c.cojob_id for c in cojobs), "stage": np.zeros(len(cojobs), dtype=np.int64),
        "start_s": release_s, "finish_s": finish_s, "sct_s": finish_s - release_s, "jobs": ones,
        "iterations": ones, "isolated_s": isolated, "demand_bound_s": demand,
        "lower_bound_s": np.maximum(isolated, demand),
    }, STAGE_COLUMNS)


def _jobs(cojobs, release_s, finish_s) -> pd.DataFrame:
    n = len(cojobs)
    return frame({
        "job": _ids(c.jobs[0].job_id for c in cojobs), "cojob": _ids(c.cojob_id for c in cojobs),
        "start_s": release_s, "end_s": finish_s, "stopped_after_stage": np.zeros(n, dtype=np.int64),
        "stages_run": np.ones(n, dtype=np.int64),
    }, JOB_COLUMNS)


def _first_flows(width: np.ndarray) -> np.ndarray:
    """Position of the first flow of every coflow with flows (``width``: flows per coflow)."""
    return (np.cumsum(width) - width)[width > 0]


def _ids(values) -> np.ndarray:
    return np.fromiter(values, dtype=np.int64)
