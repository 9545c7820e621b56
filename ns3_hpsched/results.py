"""Result tables: their documented schema, and writing a run's folder atomically.

Every run writes one folder holding the tables below as Parquet files plus ``run.json``
(the resolved scenario, backend, scheduler, seed, versions, wall time, event count).
Times are seconds, sizes bytes, rates bits per second; each column says its unit in its name.
:data:`SCHEMA` is the single source of the column documentation (the README's tables are
generated from it, and a test checks every written column is documented).
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path

import pandas as pd

__all__ = ["SCHEMA", "write_run", "read_run", "schema_markdown"]

#: Table name -> column -> meaning.
SCHEMA: dict[str, dict[str, str]] = {
    "flows": {
        "flow_id": "flow number, unique in the run, in release order",
        "coflow_id": "the coflow the flow belongs to (coflows.coflow_id)",
        "job": "job the flow belongs to",
        "cojob": "cojob the flow belongs to",
        "stage": "stage of the cojob in which the flow was sent",
        "src": "sending host (topology host number)",
        "dst": "receiving host",
        "bytes": "flow size in bytes (application payload)",
        "start_s": "time the flow started (its coflow's release, plus the control delay if any)",
        "finish_s": "time the last byte was delivered to the receiver",
        "fct_s": "flow completion time: finish_s - start_s",
        "sport": "source port of the flow's five-tuple (per-flow ECMP hashes it)",
        "dport": "destination port of the flow's five-tuple",
        "standalone_fct_s": "ideal FCT of the flow alone on an idle network (see interchange.hpcc)",
    },
    "coflows": {
        "coflow_id": "coflow number, unique in the run, in release order",
        "cojob": "cojob (hyperparameter search) of the coflow",
        "job": "job whose synchronisation this coflow is",
        "stage": "stage of the cojob",
        "iteration": "iteration of the job within the stage (0-based)",
        "phase": "phase of the synchronisation (0 for ring; 0 push, 1 pull for PS)",
        "release_s": "time the coflow was released (end of the iteration's compute, or of the previous phase)",
        "finish_s": "time its last flow finished",
        "cct_s": "coflow completion time: finish_s - release_s",
        "bytes": "total bytes of its flows",
        "width": "number of flows (0 when every transfer stays inside a host)",
    },
    "stages": {
        "cojob": "cojob",
        "stage": "stage number (0-based)",
        "start_s": "time the stage started (cojob arrival, or end of the previous stage)",
        "finish_s": "time its slowest job finished its last iteration",
        "sct_s": "stage completion time: finish_s - start_s",
        "jobs": "number of jobs that ran the stage",
        "iterations": "iterations every job ran in the stage",
        "isolated_s": "lower bound: the slowest job's stage time alone on an idle network (fluid ideal)",
        "demand_bound_s": "lower bound: the stage's whole demand on its busiest port, max_p D_s^p at stage start",
        "lower_bound_s": "max(isolated_s, demand_bound_s); report SCT as a ratio to it",
    },
    "jobs": {
        "job": "job (one configuration of a search)",
        "cojob": "cojob the job belongs to",
        "start_s": "time the job started its first stage",
        "end_s": "time the job finished its last stage",
        "stopped_after_stage": "last stage the job ran (stopped by halving there, or the search ended)",
        "stages_run": "number of stages the job ran",
    },
    "ports": {
        "port": "port number (directed link; see topology.base)",
        "name": "'u->v' node names of the port",
        "tx_bytes": "bytes sent on the port (packet: IP bytes incl. headers; fluid: payload)",
        "drops": "packets dropped at the port's queue (packet backend)",
        "ecn_marks": "packets ECN-marked at the port's queue (packet backend)",
        "pfc_pauses": "PFC PAUSE frames the port received (its egress stopped a class), summed over classes (RDMA only)",
        "pfc_paused_s": "seconds the port's classes spent paused by PFC, summed over classes (RDMA only)",
    },
}


def schema_markdown() -> str:
    """The schema as Markdown tables (for the README)."""
    parts = []
    for table, columns in SCHEMA.items():
        parts.append(f"#### `{table}`\n\n| column | meaning |\n|---|---|")
        parts.extend(f"| `{c}` | {m} |" for c, m in columns.items())
        parts.append("")
    return "\n".join(parts)


def write_run(out_dir: Path | str, tables: dict[str, pd.DataFrame], manifest: dict) -> Path:
    """Write ``tables`` (Parquet) and ``manifest`` (``run.json``) to ``out_dir``, atomically.

    The folder is written next to its destination under a temporary name and renamed into
    place, so a reader sees the old complete results or the new complete results, never a
    mix; an existing folder is replaced only after the new one is complete.
    """
    out = Path(out_dir)
    out.parent.mkdir(parents=True, exist_ok=True)
    for table, frame in tables.items():
        undocumented = set(frame.columns) - set(SCHEMA.get(table, {}))
        if undocumented:
            raise ValueError(f"table {table!r} has undocumented columns {sorted(undocumented)}")
    tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.", dir=out.parent))
    try:
        for table, frame in tables.items():
            frame.to_parquet(tmp / f"{table}.parquet", index=False)
        (tmp / "run.json").write_text(json.dumps(manifest, indent=2, sort_keys=True, default=str) + "\n")
        old = None
        if out.exists():
            old = out.with_name(f".{out.name}.old-{os.getpid()}")
            os.replace(out, old)
        os.replace(tmp, out)
        if old is not None:
            shutil.rmtree(old)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return out


def read_run(run_dir: Path | str) -> tuple[dict[str, pd.DataFrame], dict]:
    """Read a run folder back: (tables by name, manifest)."""
    run = Path(run_dir)
    tables = {p.stem: pd.read_parquet(p) for p in sorted(run.glob("*.parquet"))}
    return tables, json.loads((run / "run.json").read_text())
