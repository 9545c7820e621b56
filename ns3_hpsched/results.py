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

from .errors import ConfigError

__all__ = ["SCHEMA", "RUN_ID_KEY", "check_target", "write_run", "read_run", "schema_markdown"]

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
    "queues": {
        "time_s": "sampling time ([monitor]: every interval_s in the window; packet backend only)",
        "port": "monitored port (ports.port)",
        "class": "priority class (band of the port's strict-priority queue disc, 0 highest)",
        "bytes": "bytes queued in the band (a row is left out while the band is and was empty)",
        "packets": "packets queued in the band",
    },
    "pfc": {
        "time_s": "time a PFC PAUSE or RESUME frame reached the port (every one in the window; RDMA only)",
        "port": "egress port stopped or restarted (ports.port; the sender of the paused traffic)",
        "class": "priority class paused or resumed",
        "paused": "true for PAUSE (the class stops), false for RESUME",
    },
    "links": {
        "interval_start_s": "start of the interval (start_s + i * interval_s of [monitor])",
        "interval_end_s": "end of the interval (cut at the window's stop and the run's end)",
        "port": "monitored port (ports.port)",
        "class": "priority class of the bytes",
        "bytes": "bytes the class sent on the port in the interval (packet: frames on the wire, pro rata "
                 "to their serialisation; fluid: payload); rows with no bytes are left out",
        "utilisation": "bytes * 8 / (interval length * port capacity): the class's share of the link",
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


#: Key of ``run.json`` holding the run's identity (:func:`ns3_hpsched.runner.run_id`).
RUN_ID_KEY = "run_id"
#: Files a run folder may hold besides the tables: the manifest and the HPCC ``fct.txt``.
RUN_FILES = frozenset({"run.json", "fct.txt"})


def check_target(out_dir: Path | str, run_id: str, field: str = "--out") -> None:
    """Refuse, before anything runs, a results folder that writing ``run_id`` would harm.

    A target is fine if it does not exist yet (and can be created), if it is an empty
    folder, or if it holds an earlier copy of the *same* run (its ``run.json`` names
    ``run_id`` and it holds nothing but run files). Anything else -- a file, a folder with
    other contents, a folder that cannot be written, a name the file system cannot hold --
    raises :class:`ConfigError` naming ``field`` and the fix; nothing is touched.
    """
    out = Path(os.path.abspath(out_dir))
    existing = _nearest_existing_parent(out, field)
    name_max = os.pathconf(existing, "PC_NAME_MAX")
    for part in out.relative_to(existing).parts:
        if len(os.fsencode(part)) + _TMP_EXTRA > name_max:
            raise ConfigError(field, f"folder name {part[:40]!r}... is too long for the file system "
                              f"(at most {name_max - _TMP_EXTRA} bytes here)", "give a shorter folder name")
    if os.path.lexists(out) and not os.path.isdir(out):
        raise ConfigError(field, f"{str(out_dir)!r} is a file, not a folder",
                          "give a folder path for the results (it need not exist)")
    if os.path.isdir(out):
        foreign = _foreign_entries(out, run_id)
        if foreign:
            raise ConfigError(field, f"folder {str(out_dir)!r} holds files of something other than this run "
                              f"({', '.join(foreign[:3])}{', ...' if len(foreign) > 3 else ''})",
                              "give a new or empty folder, or leave --out out for a unique folder under results/")
    for folder in (existing, out) if os.path.isdir(out) else (existing,):
        try:  # the temporary sibling goes in ``existing``; an existing ``out`` is replaced
            os.rmdir(tempfile.mkdtemp(prefix=".hpsched-write-check-", dir=folder))
        except OSError as exc:
            raise ConfigError(field, f"cannot write in {str(folder)!r}: {exc.strerror}",
                              "give a folder you can write to") from None


def _nearest_existing_parent(out: Path, field: str) -> Path:
    """The closest existing ancestor of ``out``: the folder its temporary sibling goes in."""
    existing = out.parent
    while not os.path.exists(existing):
        existing = existing.parent
    if not os.path.isdir(existing):
        raise ConfigError(field, f"{str(existing)!r} is a file, so {str(out)!r} cannot be created",
                          "give a path whose parent folders are folders")
    return existing


def _foreign_entries(folder: Path, run_id: str) -> list[str]:
    """Entries of ``folder`` that are not an earlier copy of run ``run_id`` (sorted names)."""
    names = sorted(entry.name for entry in folder.iterdir())
    if not names:
        return []
    ours = RUN_FILES | {f"{table}.parquet" for table in SCHEMA}
    try:
        same_run = json.loads((folder / "run.json").read_text()).get(RUN_ID_KEY) == run_id
    except (OSError, ValueError, AttributeError):
        same_run = False
    if not same_run:
        return names
    return [n for n in names if n not in ours]


#: Characters the temporary sibling adds to a folder name (``.NAME.`` + mkdtemp's 8).
_TMP_EXTRA = 10


def write_run(out_dir: Path | str, tables: dict[str, pd.DataFrame], manifest: dict) -> Path:
    """Write ``tables`` (Parquet) and ``manifest`` (``run.json``) to ``out_dir``, atomically.

    The folder is written next to its destination under a temporary name and renamed into
    place, so a reader sees the old complete results or the new complete results, never a
    mix. The destination may be missing, an empty folder, or an earlier copy of the same
    run (same ``manifest["run_id"]``, see :func:`check_target`), which is replaced only
    once the new folder is complete; anything else raises :class:`ConfigError` and is left
    as it was. The folder gets the user's umask.
    """
    out = Path(out_dir)
    for table, frame in tables.items():
        undocumented = set(frame.columns) - set(SCHEMA.get(table, {}))
        if undocumented:
            raise ValueError(f"table {table!r} has undocumented columns {sorted(undocumented)}")
    run_id = manifest.get(RUN_ID_KEY, "")
    check_target(out, run_id)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.", dir=out.parent))
    try:
        os.chmod(tmp, 0o777 & ~_umask())
        for table, frame in tables.items():
            frame.to_parquet(tmp / f"{table}.parquet", index=False)
        (tmp / "run.json").write_text(json.dumps(manifest, indent=2, sort_keys=True, default=str) + "\n")
        _move_into_place(tmp, out, run_id)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return out


def _move_into_place(tmp: Path, out: Path, run_id: str) -> None:
    """Rename the finished folder ``tmp`` to ``out``, replacing only an empty folder or an
    earlier copy of the same run (checked again: the target may have changed meanwhile)."""
    if os.path.isdir(out) and any(out.iterdir()):
        if _foreign_entries(out, run_id):
            raise ConfigError("--out", f"folder {str(out)!r} gained other files during the run",
                              "nothing was changed there; run again with a new folder")
        old = Path(tempfile.mkdtemp(prefix=f".{out.name}.old.", dir=out.parent))
        os.replace(out, old / out.name)
        os.replace(tmp, out)
        shutil.rmtree(old)
    else:
        os.replace(tmp, out)  # rename(2) replaces an empty folder


def _umask() -> int:
    """The process's umask (read by setting and restoring it)."""
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def read_run(run_dir: Path | str) -> tuple[dict[str, pd.DataFrame], dict]:
    """Read a run folder back: (tables by name, manifest)."""
    run = Path(run_dir)
    tables = {p.stem: pd.read_parquet(p) for p in sorted(run.glob("*.parquet"))}
    return tables, json.loads((run / "run.json").read_text())
