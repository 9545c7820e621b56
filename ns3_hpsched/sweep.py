"""Sweeps: a grid of runs, each in its own process, on a local pool or a Dask cluster.

A sweep is one scenario x a parameter grid (dotted keys -> lists of values) x schedulers
x seeds. Every grid point becomes a :class:`RunSpec` keyed by the hash of its fully
resolved config (:func:`ns3_hpsched.store.run_hash`), and lands in the result store
(:mod:`ns3_hpsched.store`) under ``runs/<hash>/``.

Why a fresh process per run: ns-3's ``Simulator`` is a process-wide singleton, and a fatal
ns-3 error or a segfault takes the interpreter down with it. :func:`execute_run` therefore
starts ``python -m ns3_hpsched.sweep`` for each run and only waits for it: a run that
crashes (even with ``abort()``) is recorded as failed with its last words, and the sweep
goes on. The same :func:`execute_run` is what the local pool (threads that each wait on one
child process) and a Dask cluster (``dask_address``) execute, so both fill the store
identically. (A ``ProcessPoolExecutor`` is not used because one dying worker breaks the
whole pool and fails every run in flight, and Dask worker processes are daemonic and may
not start ``multiprocessing`` children; a plain subprocess works under both.)

Resuming: a child writes into ``tmp/<hash>-<attempt>/`` and renames its folder into
``runs/<hash>`` only when the run has finished, so a finished run is never lost or
half-written, and a sweep started again skips every run whose folder exists. Runs that
failed are retried (their earlier failure stays in ``failed/`` until one succeeds).
"""

from __future__ import annotations

import importlib
import itertools
import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import asdict, dataclass
from pathlib import Path

import pandas as pd
from tqdm import tqdm

from .errors import ConfigError
from .store import (
    SWEEP_FILE,
    failed_dir,
    is_complete,
    rebuild_index,
    run_hash,
    runs_dir,
    tmp_dir,
)

__all__ = ["RunSpec", "Outcome", "expand_grid", "execute_run", "run_sweep"]

#: The run function used when none is given: ``run_scenario(scenario, out_dir) -> Path``.
DEFAULT_RUN_FN = "ns3_hpsched.runner:run_scenario"
SPEC_FILE = "spec.json"
LOG_FILE = "stderr.log"


@dataclass(frozen=True)
class RunSpec:
    """One run of a sweep: a grid point, a scheduler and a seed, keyed by ``hash``.

    Attributes
    ----------
    hash:
        :func:`~ns3_hpsched.store.run_hash` of the resolved config; the run's folder name.
    scenario:
        Scenario name, or absolute path of a scenario file.
    params:
        The grid parameters of this run (dotted key -> value).
    scheduler, seed:
        The scheduler name and the seed of this run.
    backend:
        The backend of the resolved config (``"packet"`` or ``"fluid"``).
    """

    hash: str
    scenario: str
    params: dict
    scheduler: str
    seed: int
    backend: str

    @property
    def overrides(self) -> dict[str, object]:
        """The overrides given to ``load_scenario`` to build this run's scenario."""
        return {**self.params, "scheduler.name": self.scheduler, "seed": self.seed}


@dataclass(frozen=True)
class Outcome:
    """What became of one executed run: ``status`` is ``"ok"``, ``"failed"`` or ``"cancelled"``."""

    hash: str
    status: str
    error: str | None
    wall_s: float


def _scenario_ref(scenario: str | Path) -> str:
    """A scenario name as given, or a scenario file as an absolute path (for other processes)."""
    path = Path(scenario)
    return str(path.resolve()) if path.is_file() else str(scenario)


def _check_values(field: str, values: object, kind: type | None = None) -> list:
    """``values`` as a non-empty list (of ``kind`` if given), else a ConfigError on ``field``."""
    if isinstance(values, (str, bytes)) or not isinstance(values, Iterable):
        raise ConfigError(field, f"must be a list of values, got {values!r}", "wrap it in [ ]")
    values = list(values)
    if not values:
        raise ConfigError(field, "is empty", "give at least one value")
    wrong = [v for v in values if kind is not None and (not isinstance(v, kind) or isinstance(v, bool))]
    if wrong:
        raise ConfigError(field, f"values must be {kind.__name__}, got {wrong!r}", "fix those values")
    return values


def expand_grid(
    scenario: str | Path,
    grid: Mapping[str, Sequence],
    schedulers: Sequence[str],
    seeds: Sequence[int],
) -> list[RunSpec]:
    """Every run of a sweep, in grid order (grid keys as given, then scheduler, then seed).

    Each run's scenario is loaded with its overrides and resolved, so a bad key or value
    fails here, before anything runs.

    Parameters
    ----------
    scenario:
        Scenario name (``scenarios/<name>.toml``) or path of a scenario file.
    grid:
        Dotted scenario keys -> lists of values, e.g. ``{"workload.arrival_rate": [1, 2]}``.
    schedulers:
        Scheduler names (set as ``scheduler.name``).
    seeds:
        Seeds (set as ``seed``).

    Raises
    ------
    ConfigError
        On an empty or non-list grid entry, a grid key that ``schedulers``/``seeds`` already
        set, or two grid points that resolve to the same config (a key with no effect).
    """
    from .scenario import load_scenario

    for key in ("scheduler.name", "seed"):
        if key in grid:
            raise ConfigError(f"grid.{key}", "is set by the sweep itself", "use schedulers/seeds")
    values = {key: _check_values(f"grid.{key}", vals) for key, vals in grid.items()}
    schedulers = _check_values("schedulers", schedulers, str)
    seeds = _check_values("seeds", seeds, int)
    ref = _scenario_ref(scenario)
    specs: dict[str, RunSpec] = {}
    for point in itertools.product(*values.values(), schedulers, seeds):
        params = dict(zip(values, point[:-2]))
        scheduler, seed = point[-2:]
        overrides = {**params, "scheduler.name": scheduler, "seed": seed}
        resolved = load_scenario(ref, overrides).resolved()
        key = run_hash(resolved)
        if key in specs:
            raise ConfigError(
                "grid",
                f"{overrides} and {specs[key].overrides} resolve to the same run",
                "remove the grid key that has no effect, or duplicate values",
            )
        specs[key] = RunSpec(key, ref, params, scheduler, seed, resolved["backend"])
    return list(specs.values())


def _function_ref(fn: Callable) -> str:
    """``"module:qualname"`` of a module-level function, so another process can import it."""
    module, name = getattr(fn, "__module__", None), getattr(fn, "__qualname__", "")
    if module in (None, "__main__") or "<" in name:
        raise ConfigError(
            "run_fn",
            f"{fn!r} cannot be imported by another process",
            "pass a function defined at module level in an importable module",
        )
    return f"{module}:{name}"


def _import_ref(ref: str) -> Callable:
    """The object named by a ``"module:qualname"`` reference."""
    module, _, name = ref.partition(":")
    obj = importlib.import_module(module)
    for part in name.split("."):
        obj = getattr(obj, part)
    return obj


def _child_env() -> dict[str, str]:
    """Environment of a run process: ours, with our ``sys.path`` so the same code imports."""
    env = dict(os.environ)
    paths = [p or os.getcwd() for p in sys.path]
    if env.get("PYTHONPATH"):
        paths.append(env["PYTHONPATH"])
    env["PYTHONPATH"] = os.pathsep.join(paths)
    return env


def _failure_message(returncode: int, log: Path) -> str:
    """Short description of a failed run: its last line of stderr, and how the process ended."""
    lines = [line.strip() for line in log.read_text(errors="replace").splitlines() if line.strip()]
    last = lines[-1] if lines else ""
    if returncode < 0:
        how = f"process killed by {signal.Signals(-returncode).name}"
        return f"{how}: {last}" if last else how
    return last or f"process exited with code {returncode}"


def _record(spec: RunSpec, status: str, error: str | None, wall_s: float) -> str:
    """The ``sweep.json`` of a run folder: which grid point it is and how it went."""
    return json.dumps({**asdict(spec), "status": status, "error": error, "wall_s": wall_s}, indent=1)


def execute_run(
    spec: RunSpec,
    store: str,
    run_fn: str = DEFAULT_RUN_FN,
    cancel: threading.Event | None = None,
) -> Outcome:
    """Run one spec in a fresh Python process and file its folder in ``store``.

    This is the unit of work sent to an executor (it needs only picklable arguments).
    On success the run's folder is ``runs/<hash>``; on failure (an exception, a non-zero
    exit or a signal such as SIGABRT) the attempt's folder with ``sweep.json`` (status
    ``failed`` and the error) and ``stderr.log`` becomes ``failed/<hash>``.

    Parameters
    ----------
    spec:
        The run.
    store:
        Path of the result store (shared by all workers).
    run_fn:
        ``"module:qualname"`` of the function ``(scenario, out_dir) -> Path`` that runs it.
    cancel:
        If set while the run is going, the process is killed and nothing is recorded.
    """
    attempt = tmp_dir(store) / f"{spec.hash}-{uuid.uuid4().hex[:8]}"
    attempt.mkdir(parents=True)
    (attempt / SPEC_FILE).write_text(json.dumps({"spec": asdict(spec), "store": store, "run_fn": run_fn}))
    start = time.perf_counter()
    with open(attempt / LOG_FILE, "wb") as log:
        process = subprocess.Popen(
            [sys.executable, "-m", "ns3_hpsched.sweep", str(attempt)],
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=log,
            env=_child_env(),
            start_new_session=True,  # a Ctrl-C reaches the sweep, which then stops its runs
        )
        while True:
            try:
                returncode = process.wait(timeout=0.2)
                break
            except subprocess.TimeoutExpired:
                if cancel is not None and cancel.is_set():
                    process.kill()
                    process.wait()
                    shutil.rmtree(attempt, ignore_errors=True)
                    return Outcome(spec.hash, "cancelled", None, time.perf_counter() - start)
    wall_s = time.perf_counter() - start
    done = runs_dir(store) / spec.hash
    if returncode == 0 and is_complete(done):
        shutil.rmtree(attempt, ignore_errors=True)
        shutil.rmtree(failed_dir(store) / spec.hash, ignore_errors=True)
        return Outcome(spec.hash, "ok", None, json.loads((done / SWEEP_FILE).read_text())["wall_s"])
    error = _failure_message(returncode, attempt / LOG_FILE)
    (attempt / SWEEP_FILE).write_text(_record(spec, "failed", error, wall_s))
    target = failed_dir(store) / spec.hash
    shutil.rmtree(target, ignore_errors=True)
    target.parent.mkdir(parents=True, exist_ok=True)
    attempt.rename(target)
    return Outcome(spec.hash, "failed", error, wall_s)


def _child(attempt: Path) -> None:
    """Body of a run process: load the scenario, run it, rename the result into place."""
    from .scenario import load_scenario

    job = json.loads((attempt / SPEC_FILE).read_text())
    spec = RunSpec(**job["spec"])
    scenario = load_scenario(spec.scenario, spec.overrides)
    if run_hash(scenario.resolved()) != spec.hash:
        raise RuntimeError(
            f"run {spec.hash} resolves to a different config in this process "
            "(is the same version of ns3_hpsched installed everywhere?)"
        )
    out_dir = attempt / "run"
    start = time.perf_counter()
    _import_ref(job["run_fn"])(scenario, out_dir)
    (out_dir / SWEEP_FILE).write_text(_record(spec, "ok", None, time.perf_counter() - start))
    target = runs_dir(job["store"]) / spec.hash
    target.parent.mkdir(parents=True, exist_ok=True)
    try:
        out_dir.rename(target)
    except OSError:
        if not is_complete(target):  # else another attempt finished first: keep its folder
            raise


def _run_local(specs: list[RunSpec], store: str, run_fn: str, workers: int, done: Callable) -> None:
    """Execute ``specs`` with ``workers`` run processes at a time; call ``done`` per outcome."""
    cancel = threading.Event()
    with ThreadPoolExecutor(max_workers=workers) as pool:
        futures = [pool.submit(execute_run, spec, store, run_fn, cancel) for spec in specs]
        try:
            for future in as_completed(futures):
                done(future.result())
        except BaseException:
            cancel.set()
            pool.shutdown(wait=True, cancel_futures=True)
            raise


def _run_dask(specs: list[RunSpec], store: str, run_fn: str, address: str, done: Callable) -> None:
    """Execute ``specs`` on the Dask cluster at ``address``; call ``done`` per outcome."""
    try:
        from distributed import Client, as_completed as dask_completed
    except ImportError as exc:  # pragma: no cover - depends on the installation
        raise ConfigError("dask_address", "dask.distributed is not installed",
                          "pip install 'ns3-hpsched[dask]'") from exc
    with Client(address) as client:
        futures = [client.submit(execute_run, spec, store, run_fn, pure=False) for spec in specs]
        try:
            for future in dask_completed(futures):
                done(future.result())
        except BaseException:
            client.cancel(futures)
            raise


def _remove_stale_attempts(store: Path, specs: list[RunSpec]) -> None:
    """Delete attempt folders left in ``tmp/`` (by killed sweeps) for runs now filed.

    Attempts of runs still unfiled are left alone: their process may still be running
    (a sweep killed with SIGKILL leaves its run processes to finish and file their runs).
    """
    filed = {spec.hash for spec in specs
             if is_complete(runs_dir(store) / spec.hash) or (failed_dir(store) / spec.hash).is_dir()}
    for attempt in tmp_dir(store).glob("*"):
        if attempt.name.split("-")[0] in filed:
            shutil.rmtree(attempt, ignore_errors=True)


def run_sweep(
    scenario: str | Path,
    grid: Mapping[str, Sequence],
    schedulers: Sequence[str],
    seeds: Sequence[int],
    store: Path,
    *,
    workers: int | None = None,
    dask_address: str | None = None,
    progress: bool = True,
    run_fn: Callable | None = None,
) -> pd.DataFrame:
    """Run every run of a sweep that the store does not hold yet; return the sweep's index.

    Parameters
    ----------
    scenario, grid, schedulers, seeds:
        The sweep (see :func:`expand_grid`).
    store:
        Result store folder (created if missing). On a cluster it must be a path every
        worker sees (a shared file system).
    workers:
        Runs at a time on this machine (default: the number of CPUs). Ignored with
        ``dask_address``, where the cluster's workers decide.
    dask_address:
        Address of a ``dask.distributed`` scheduler (e.g. ``"tcp://host:8786"``, or a
        ``dask_jobqueue`` cluster's ``scheduler_address``); runs are submitted there.
    progress:
        Show a progress bar with ETA on stderr.
    run_fn:
        Module-level function ``(scenario, out_dir) -> Path`` that runs one scenario
        (default :func:`ns3_hpsched.runner.run_scenario`); mainly for tests.

    Returns
    -------
    pandas.DataFrame
        The rows of ``STORE/index.parquet`` (rebuilt at the end) for this sweep's runs, in
        grid order: ``hash, scenario, <grid keys>, scheduler, seed, backend, status, error,
        wall_s``.
    """
    if workers is not None and (isinstance(workers, bool) or not isinstance(workers, int) or workers < 1):
        raise ConfigError("workers", f"must be a positive integer, got {workers!r}", "e.g. workers=2")
    specs = expand_grid(scenario, grid, schedulers, seeds)
    run_ref = DEFAULT_RUN_FN if run_fn is None else _function_ref(run_fn)
    store = Path(store).resolve()
    todo = [spec for spec in specs if not is_complete(runs_dir(store) / spec.hash)]
    failures = 0
    with tqdm(total=len(specs), initial=len(specs) - len(todo), desc="sweep", unit="run",
              file=sys.stderr, disable=not progress, dynamic_ncols=True) as bar:

        def done(outcome: Outcome) -> None:
            nonlocal failures
            failures += outcome.status == "failed"
            bar.set_postfix(failed=failures, refresh=False)
            bar.update()

        try:
            if dask_address is not None:
                _run_dask(todo, str(store), run_ref, dask_address, done)
            else:
                _run_local(todo, str(store), run_ref, workers or os.cpu_count() or 1, done)
        finally:
            _remove_stale_attempts(store, specs)
            index = rebuild_index(store)
    order = {spec.hash: i for i, spec in enumerate(specs)}
    ours = index[index["hash"].isin(order)]
    return ours.sort_values("hash", key=lambda h: h.map(order), ignore_index=True)


if __name__ == "__main__":
    _child(Path(sys.argv[1]))
