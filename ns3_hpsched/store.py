"""The results store: one folder per run, keyed by the hash of its resolved config.

Layout of a store ``STORE``::

    STORE/runs/<hash>/      a finished run: the runner's results folder (tables + run.json)
                            plus sweep.json (which grid point it is, and its wall time)
    STORE/failed/<hash>/    a run that failed: sweep.json (with the error), stderr.log and
                            whatever the run wrote before it failed
    STORE/tmp/              runs in progress; a run is renamed into runs/ only when complete
                            (attempt folders <hash>-<pid>-<id>/ and lock files <hash>.lock)
    STORE/index.parquet     one row per run, rebuilt from the folders above

A folder under ``runs/`` appears by an atomic rename once its run has finished, so every
folder there is complete; the index is derived data and can always be rebuilt from the
folders with :func:`rebuild_index`. The hash is that of the run's fully resolved config
(:func:`run_hash`), so the same config lands in the same folder whichever sweep, machine
or executor ran it -- which is what makes resuming a sweep safe.

Several sweeps may share a store at once (on one machine or over a shared file system):
whoever executes a run first holds an exclusive ``flock`` on ``tmp/<hash>.lock``
(:func:`claim_run`) for as long as the run's process lives, and only the holder creates
or removes that run's attempt folders, so no run is executed twice and no live attempt is
deleted. The index is rewritten under ``.index.lock``, so the last sweep to finish leaves
an index of every folder.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import threading
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from .errors import ConfigError

__all__ = [
    "TABLES",
    "INDEX_COLUMNS",
    "run_hash",
    "runs_dir",
    "failed_dir",
    "tmp_dir",
    "is_complete",
    "Claim",
    "claim",
    "claim_run",
    "release",
    "read_index",
    "rebuild_index",
    "load_store",
]

#: The result tables a run writes, each as ``<name>.parquet`` (see the README for columns).
TABLES = ("flows", "coflows", "stages", "jobs", "ports")
#: Index columns besides the grid parameters (which sit between ``scenario`` and ``scheduler``).
INDEX_COLUMNS = ("hash", "scenario", "scheduler", "seed", "backend", "status", "error", "wall_s")

SWEEP_FILE = "sweep.json"
RUN_FILE = "run.json"
INDEX_FILE = "index.parquet"
INDEX_LOCK = ".index.lock"
#: Seconds between two tries of a lock another process holds.
LOCK_POLL_S = 0.2


def run_hash(resolved: dict) -> str:
    """Stable key of a run: sha256 of its resolved config as sorted-key JSON, 16 hex digits.

    Parameters
    ----------
    resolved:
        The JSON-ready resolved config (``Scenario.resolved()``). Two runs share a hash
        exactly when their resolved configs are equal, whatever order the keys came in.
    """
    text = json.dumps(resolved, sort_keys=True, separators=(",", ":"), allow_nan=False)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def runs_dir(store: Path) -> Path:
    """Folder of the finished runs of ``store``."""
    return Path(store) / "runs"


def failed_dir(store: Path) -> Path:
    """Folder of the failed runs of ``store``."""
    return Path(store) / "failed"


def tmp_dir(store: Path) -> Path:
    """Folder where runs of ``store`` are written before they are renamed into place."""
    return Path(store) / "tmp"


def is_complete(run_folder: Path) -> bool:
    """Whether ``run_folder`` holds a finished run (its ``run.json`` and ``sweep.json``)."""
    return (run_folder / RUN_FILE).is_file() and (run_folder / SWEEP_FILE).is_file()


@dataclass(frozen=True)
class Claim:
    """An exclusive ``flock`` held on ``path`` through the open descriptor ``fd``.

    ``waited`` says whether another process held the lock when it was first tried (for a
    run: another sweep was executing it, so it may have been filed meanwhile).
    """

    path: Path
    fd: int
    waited: bool


def claim(path: Path, cancel: threading.Event | None = None) -> Claim | None:
    """Take the exclusive lock on the file ``path`` (created if missing), waiting for it.

    Waits while another process holds it, polling every :data:`LOCK_POLL_S` seconds;
    returns ``None`` if ``cancel`` is set meanwhile. A holder removes the file when it lets
    go (:func:`release`), so a lock taken on a file no longer at ``path`` is let go and
    tried again: the lock held is always that of the file at ``path``. The descriptor is
    not inherited by child processes unless passed on explicitly (``pass_fds``), and a lock
    passed on is held until every process holding it has closed it or ended.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    cancel = cancel or threading.Event()
    waited = False
    while True:
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o666)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            waited = True
            if cancel.wait(LOCK_POLL_S):
                return None
            continue
        try:
            if os.stat(path).st_ino == os.fstat(fd).st_ino:
                return Claim(path, fd, waited)
        except FileNotFoundError:
            pass
        os.close(fd)


def release(held: Claim) -> None:
    """Let go of a lock taken with :func:`claim`, removing its file first (see there)."""
    held.path.unlink(missing_ok=True)
    os.close(held.fd)


def claim_run(store: Path, key: str, cancel: threading.Event | None = None) -> Claim | None:
    """Take the lock of run ``key`` of ``store`` (see :func:`claim`): the right to execute it."""
    return claim(tmp_dir(store) / f"{key}.lock", cancel)


@contextmanager
def _held(path: Path):
    """Hold the lock on ``path`` for the body of a ``with`` statement."""
    held = claim(path)
    try:
        yield held
    finally:
        release(held)


def _record(run_folder: Path) -> dict:
    """One index row from a run folder's ``sweep.json``."""
    sweep = json.loads((run_folder / SWEEP_FILE).read_text())
    return {
        "hash": sweep["hash"],
        "scenario": sweep["scenario"],
        **sweep["params"],
        "scheduler": sweep["scheduler"],
        "seed": sweep["seed"],
        "backend": sweep["backend"],
        "status": sweep["status"],
        "error": sweep.get("error"),
        "wall_s": sweep.get("wall_s"),
    }


def read_index(store: Path) -> pd.DataFrame:
    """The index of ``store`` computed from its run folders (one row per run, sorted by hash).

    A run both finished and failed (it failed once, then succeeded) counts as finished.
    Columns: ``hash, scenario, <grid parameters...>, scheduler, seed, backend, status``
    (``"ok"`` or ``"failed"``), ``error`` (last line of the failure, else missing) and
    ``wall_s`` (wall time of the run in its process, seconds).
    """
    ok = [_record(f) for f in sorted(runs_dir(store).glob("*")) if is_complete(f)]
    done = {row["hash"] for row in ok}
    failed = [
        _record(f)
        for f in sorted(failed_dir(store).glob("*"))
        if (f / SWEEP_FILE).is_file() and f.name not in done
    ]
    rows = ok + failed
    if not rows:
        return pd.DataFrame(columns=list(INDEX_COLUMNS))
    index = pd.DataFrame(rows)
    params = [c for c in index.columns if c not in INDEX_COLUMNS]
    order = ["hash", "scenario", *params, *INDEX_COLUMNS[2:]]
    return index[order].sort_values("hash", ignore_index=True)


def rebuild_index(store: Path) -> pd.DataFrame:
    """Recompute the index from the run folders and write ``STORE/index.parquet`` atomically.

    Reading the folders and writing the index happen under the store's index lock, so of
    two sweeps finishing together the later one writes last, and sees every run.
    """
    Path(store).mkdir(parents=True, exist_ok=True)
    with _held(Path(store) / INDEX_LOCK):
        index = read_index(store)
        partial = Path(store) / f".{INDEX_FILE}.{os.getpid()}"
        index.to_parquet(partial, index=False)
        partial.replace(Path(store) / INDEX_FILE)
    return index


def load_store(store: Path) -> dict[str, pd.DataFrame]:
    """All finished runs of ``store``, each result table concatenated over runs.

    Every row is tagged with its run: ``hash``, the grid parameters (dotted names such as
    ``workload.arrival_rate``), ``scheduler``, ``seed`` and ``backend``, placed before the
    table's own columns, so a table can be grouped by any of them directly.

    Returns
    -------
    dict
        ``"index"`` (see :func:`read_index`, failed runs included) and one DataFrame per
        name in :data:`TABLES` (empty if no run wrote that table).
    """
    store = Path(store)
    if not store.is_dir():
        raise ConfigError("store", f"{store} is not a folder", "give the folder a sweep wrote")
    index = read_index(store)
    ok = index[index["status"] == "ok"]
    tags = [c for c in ok.columns if c not in ("scenario", "status", "error", "wall_s")]
    tables: dict[str, pd.DataFrame] = {"index": index}
    for name in TABLES:
        parts = []
        for run in ok[tags].to_dict("records"):
            path = runs_dir(store) / run["hash"] / f"{name}.parquet"
            if path.is_file():
                table = pd.read_parquet(path)
                tagged = pd.DataFrame({tag: [value] * len(table) for tag, value in run.items()})
                parts.append(pd.concat([tagged, table.drop(columns=tags, errors="ignore")], axis=1))
        tables[name] = pd.concat(parts, ignore_index=True) if parts else pd.DataFrame(columns=tags)
    return tables
