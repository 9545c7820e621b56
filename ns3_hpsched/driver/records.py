"""What a played workload produced: rows collected during the run, tables at the end.

Column meanings are documented in :mod:`ns3_hpsched.results`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..backends.base import Backend, RunStats
from ..topology.ideal import path_fct_s
from .flows import FlowTable

__all__ = ["Records", "RecordBook", "COFLOW_COLUMNS", "STAGE_COLUMNS", "JOB_COLUMNS", "flows_table", "frame"]

COFLOW_COLUMNS = ["coflow_id", "cojob", "job", "stage", "iteration", "phase", "release_s",
                  "finish_s", "cct_s", "bytes", "width"]
STAGE_COLUMNS = ["cojob", "stage", "start_s", "finish_s", "sct_s", "jobs", "iterations",
                 "isolated_s", "demand_bound_s", "lower_bound_s"]
JOB_COLUMNS = ["job", "cojob", "start_s", "end_s", "stopped_after_stage", "stages_run"]


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


class RecordBook:
    """Rows of the coflows, stages and jobs tables, added as the run goes."""

    def __init__(self) -> None:
        self.coflow_rows: list[dict] = []
        self.stage_rows: list[dict] = []
        self.job_rows: dict[int, dict] = {}

    def coflow(self, row: dict) -> None:
        """Record a finished coflow (the columns of :data:`COFLOW_COLUMNS`)."""
        self.coflow_rows.append(row)

    def stage(self, row: dict) -> None:
        """Record a finished stage (the columns of :data:`STAGE_COLUMNS`)."""
        self.stage_rows.append(row)

    def job_started(self, job_id: int, cojob_id: int, now_s: float) -> None:
        """Open the row of a job the first time it runs a stage."""
        self.job_rows.setdefault(job_id, {"job": job_id, "cojob": cojob_id, "start_s": now_s,
                                          "end_s": float("nan"), "stopped_after_stage": -1, "stages_run": 0})

    def job_ran_stage(self, job_id: int, now_s: float) -> None:
        """A job finished its iterations of a stage at ``now_s``."""
        row = self.job_rows[job_id]
        row["end_s"] = now_s
        row["stages_run"] += 1

    def job_stopped(self, job_id: int, stage: int) -> None:
        """A job did not survive ``stage``."""
        self.job_rows[job_id]["stopped_after_stage"] = stage

    def records(self, backend: Backend, flows: FlowTable, decisions: int, stats: RunStats) -> Records:
        """The four tables, the decision count and the run statistics."""
        return Records(
            coflows=frame(self.coflow_rows, COFLOW_COLUMNS),
            stages=frame(self.stage_rows, STAGE_COLUMNS),
            jobs=frame(sorted(self.job_rows.values(), key=lambda r: r["job"]), JOB_COLUMNS),
            flows=flows_table(backend, flows),
            decisions=decisions,
            stats=stats,
        )


def flows_table(backend: Backend, flows: FlowTable) -> pd.DataFrame:
    """The backend's flows with their coflow, job, five-tuple ports and ideal FCT.

    Ports and paths are the ones the flows were played with (:class:`FlowTable`).
    """
    n = flows.n
    info = pd.DataFrame({"flow_id": np.arange(n, dtype=np.int64), "coflow_id": flows.coflow[:n],
                         "job": flows.job[:n], "cojob": flows.cojob[:n], "stage": flows.stage[:n]})
    # row i is flow i; a flow the backend did not finish gets NaN (reindex refuses repeated ids)
    done = backend.flows_table().set_index("flow_id").reindex(info["flow_id"])
    merged = pd.concat([info, done.reset_index(drop=True)], axis=1)
    ideal = path_fct_s(flows.topology, flows.path_offsets[:n + 1], flows.path_ports[:flows.path_offsets[n]],
                       flows.size[:n])
    return merged.assign(sport=flows.sport[:n], dport=flows.dport[:n], standalone_fct_s=ideal)


def frame(rows: list[dict] | dict[str, np.ndarray], columns: list[str]) -> pd.DataFrame:
    """A table of ``columns`` from rows or from columns, sorted by its first two columns."""
    table = pd.DataFrame(rows, columns=columns)
    return table.sort_values(columns[:2], ignore_index=True) if len(table) else table
