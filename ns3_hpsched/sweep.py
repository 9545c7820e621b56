"""Sweeps: a grid of runs, each in its own process, on a local pool or a Dask cluster.

A sweep is one scenario x a parameter grid (dotted keys -> lists of values) x schedulers
x seeds. Every grid point becomes a :class:`RunSpec` keyed by the hash of its fully
resolved config (:func:`ns3_hpsched.store.run_hash`), and lands in the result store
(:mod:`ns3_hpsched.store`) under ``runs/<hash>/``.

Why runs never execute in the sweep's process: ns-3's ``Simulator`` is a process-wide
singleton, and a fatal ns-3 error or a segfault takes the interpreter down with it.
:func:`execute_run` therefore executes each run in a process of its own and only waits
for it (:mod:`ns3_hpsched.workers`): a packet run in a fresh ``python -m
ns3_hpsched.sweep`` process; a fluid run on a long-lived worker process that executes one
run after another, so that start-up is paid once per worker and not once per run. A run
that crashes (even with ``abort()``, taking its worker down) is recorded as failed with
its last words, and the sweep goes on. The same :func:`execute_run` is what the local pool
(threads that each wait on one run process) and a Dask cluster (``dask_address``; its
worker processes keep their own long-lived workers) execute, so both fill the store
identically. (A
``ProcessPoolExecutor`` is not used because one dying worker breaks the whole pool and
fails every run in flight, and Dask worker processes are daemonic and may not start
``multiprocessing`` children; a plain subprocess works under both.)

Resuming: a run writes into ``tmp/<hash>-<pid>-<id>/`` and its folder is renamed into
``runs/<hash>`` only when the run has finished, so a finished run is never lost or
half-written, and a sweep started again skips every run whose folder exists. Runs that
failed are retried (their earlier failure stays in ``failed/`` until one succeeds).

Sharing a store: a run is executed only by the holder of its lock
(:func:`ns3_hpsched.store.claim_run`), held by the sweep and the run's process until the
run is filed. A second sweep reaching a run that another executes waits for it and then
takes the other's outcome (``skipped`` if it finished), so no run is executed twice, and
only a run's lock holder removes its attempt folders, so no live attempt is deleted.
"""

from __future__ import annotations

import importlib
import itertools
import json
import os
import shutil
import signal
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
    claim_run,
    failed_dir,
    is_complete,
    rebuild_index,
    release,
    run_hash,
    runs_dir,
    tmp_dir,
)
from .workers import LOG_FILE, WorkerPool, run_fresh

__all__ = ["RunSpec", "Outcome", "SweepReport", "expand_grid", "execute_run", "execute_on_cluster",
           "execute_sweep", "run_sweep"]

#: The run function used when none is given: ``run_scenario(scenario, out_dir) -> Path``.
DEFAULT_RUN_FN = "ns3_hpsched.runner:run_scenario"
SPEC_FILE = "spec.json"


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
    """What became of one run given to :func:`execute_run`.

    ``status`` is ``"ok"`` (run and filed), ``"failed"``, ``"skipped"`` (the store held it
    when its lock was taken: another sweep ran it), ``"busy"`` (another process holds its
    lock, and the caller chose not to wait) or ``"cancelled"``.
    """

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
        set, a grid point the scenario rejects (see :func:`_load_point`), or two grid
        points that resolve to the same config (a key with no effect).
    """
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
        resolved = _load_point(ref, overrides)
        key = run_hash(resolved)
        if key in specs:
            raise ConfigError(
                "grid",
                f"{overrides} and {specs[key].overrides} resolve to the same run",
                "remove the grid key that has no effect, or duplicate values",
            )
        specs[key] = RunSpec(key, ref, params, scheduler, seed, resolved["backend"])
    return list(specs.values())


def _sweep_field(field: str, overrides: Mapping[str, object]) -> str | None:
    """The override of a grid point that a scenario error on ``field`` is about, if any."""
    for key in overrides:
        if field == key or key.startswith(field + ".") or field.startswith(key + "."):
            return key
    return None


def _load_point(ref: str, overrides: Mapping[str, object]) -> dict:
    """The resolved config of one grid point, loaded and validated like any scenario.

    Raises
    ------
    ConfigError
        The scenario's error, renamed after the sweep axis it comes from: ``grid.<key>``,
        ``schedulers`` or ``seeds``, with the value, and the scenario field if it differs;
        an error no axis explains keeps its field and names the grid point.
    """
    from .scenario import load_scenario

    try:
        return load_scenario(ref, overrides).resolved()
    except ConfigError as exc:
        key = _sweep_field(exc.field, overrides)
        if key is None:
            raise ConfigError(exc.field, f"{exc.problem} (at grid point {dict(overrides)})", exc.fix) from exc
        axis = {"scheduler.name": "schedulers", "seed": "seeds"}.get(key, f"grid.{key}")
        where = "" if exc.field == key else f" ({exc.field})"
        raise ConfigError(axis, f"value {overrides[key]!r}{where}: {exc.problem}", exc.fix) from exc


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


def _failure_message(returncode: int, log: Path) -> str:
    """Short description of a failed run: its last line of output, and how the process ended."""
    text = log.read_text(errors="replace") if log.is_file() else ""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    last = lines[-1] if lines else ""
    if returncode < 0:
        how = f"process killed by {signal.Signals(-returncode).name}"
        return f"{how}: {last}" if last else how
    return last or f"process exited with code {returncode}"


def _record(spec: RunSpec, status: str, error: str | None, wall_s: float) -> str:
    """The ``sweep.json`` of a run folder: which grid point it is and how it went."""
    return json.dumps({**asdict(spec), "status": status, "error": error, "wall_s": wall_s}, indent=1)


def _filed(spec: RunSpec, store: str, waited: bool) -> Outcome | None:
    """The outcome of ``spec`` if the store already holds it, else None.

    A finished run is ``skipped``. A failure is taken as this run's outcome only if
    another sweep filed it while this one ``waited`` for the run's lock; an older failure
    is retried.
    """
    done = runs_dir(store) / spec.hash
    if is_complete(done):
        return Outcome(spec.hash, "skipped", None, json.loads((done / SWEEP_FILE).read_text())["wall_s"])
    failed = failed_dir(store) / spec.hash / SWEEP_FILE
    if waited and failed.is_file():
        record = json.loads(failed.read_text())
        return Outcome(spec.hash, "failed", record["error"], record["wall_s"])
    return None


def _at_once() -> threading.Event:
    """An event already set: given as ``cancel`` to :func:`~ns3_hpsched.store.claim`, try once."""
    at_once = threading.Event()
    at_once.set()
    return at_once


def _remove_attempts(store: str, key: str) -> None:
    """Delete the attempt folders of run ``key`` (call with its lock held: all are stale)."""
    for attempt in tmp_dir(store).glob(f"{key}-*"):
        shutil.rmtree(attempt, ignore_errors=True)


def _attempt(spec: RunSpec, store: str, run_fn: str, lock_fd: int, cancel: threading.Event,
             pool: WorkerPool | None) -> Outcome:
    """Execute ``spec`` once (its lock held) in a fresh process or on ``pool``; file the result."""
    attempt = tmp_dir(store) / f"{spec.hash}-{os.getpid()}-{uuid.uuid4().hex[:8]}"
    attempt.mkdir(parents=True)
    (attempt / SPEC_FILE).write_text(json.dumps({"spec": asdict(spec), "store": store, "run_fn": run_fn}))
    (attempt / LOG_FILE).touch()
    start = time.perf_counter()
    if pool is not None and spec.backend == "fluid":
        returncode = pool.run(attempt, lock_fd, cancel)
    else:
        returncode = run_fresh(attempt, lock_fd, cancel)
    wall_s = time.perf_counter() - start
    if returncode is None:
        shutil.rmtree(attempt, ignore_errors=True)
        return Outcome(spec.hash, "cancelled", None, wall_s)
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


def execute_run(
    spec: RunSpec,
    store: str,
    run_fn: str = DEFAULT_RUN_FN,
    cancel: threading.Event | None = None,
    pool: WorkerPool | None = None,
    wait: bool = True,
) -> Outcome:
    """Execute one run in a process of its own and file its folder in ``store``.

    This is the unit of work sent to an executor (it needs only picklable arguments).
    The run's lock is taken first (waiting while another sweep executes the same run);
    a run the store then holds is ``skipped``. On success the run's folder is
    ``runs/<hash>``; on failure (an exception, a non-zero exit or a signal such as
    SIGABRT) the attempt's folder with ``sweep.json`` (status ``failed`` and the error)
    and ``stderr.log`` becomes ``failed/<hash>``.

    Parameters
    ----------
    spec:
        The run.
    store:
        Path of the result store (shared by all workers, and by other sweeps).
    run_fn:
        ``"module:qualname"`` of the function ``(scenario, out_dir) -> Path`` that runs it.
    cancel:
        If set while the run waits or goes on, its process is killed and nothing is recorded.
    pool:
        Long-lived workers to execute fluid runs on (packet runs always get a fresh process);
        without one, every run gets a fresh process.
    wait:
        Whether to wait while another process holds the run's lock; if not, such a run
        is left alone with status ``"busy"``.
    """
    cancel = cancel or threading.Event()
    held = claim_run(store, spec.hash, cancel if wait else _at_once())
    if held is None:
        return Outcome(spec.hash, "cancelled" if cancel.is_set() else "busy", None, 0.0)
    try:
        filed = _filed(spec, store, held.waited)
        if filed is not None:
            return filed
        _remove_attempts(store, spec.hash)
        return _attempt(spec, store, run_fn, held.fd, cancel, pool)
    finally:
        release(held)


def run_attempt(attempt: Path) -> None:
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
    run = _import_ref(job["run_fn"])
    out_dir = attempt / "run"
    start = time.perf_counter()
    run(scenario, out_dir)
    (out_dir / SWEEP_FILE).write_text(_record(spec, "ok", None, time.perf_counter() - start))
    target = runs_dir(job["store"]) / spec.hash
    target.parent.mkdir(parents=True, exist_ok=True)
    out_dir.rename(target)  # the run's lock is held: no other attempt can have filed it


def _run_local(specs: list[RunSpec], store: str, run_fn: str, workers: int, reuse: bool,
               done: Callable) -> None:
    """Execute ``specs`` with ``workers`` runs at a time; call ``done`` per outcome.

    Each of the ``workers`` threads waits on one run process at a time; with ``reuse``
    its fluid runs go to its own long-lived worker process. Runs that another sweep is
    executing are passed over at first and waited for at the end, so two sweeps of one
    grid into one store share the work instead of one waiting behind the other.
    """
    cancel = threading.Event()
    workers_pool = WorkerPool() if reuse else None
    try:
        with ThreadPoolExecutor(max_workers=workers) as threads:
            try:
                busy = _run_round(threads, specs, (store, run_fn, cancel, workers_pool, False), done)
                _run_round(threads, busy, (store, run_fn, cancel, workers_pool, True), done)
            except BaseException:
                cancel.set()
                threads.shutdown(wait=True, cancel_futures=True)
                raise
    finally:
        if workers_pool is not None:
            workers_pool.close()


def _run_round(threads: ThreadPoolExecutor, specs: list[RunSpec], args: tuple,
               done: Callable) -> list[RunSpec]:
    """``execute_run(spec, *args)`` for each spec on ``threads``; the specs found busy."""
    futures = {threads.submit(execute_run, spec, *args): spec for spec in specs}
    busy = []
    for future in as_completed(futures):
        outcome = future.result()
        if outcome.status == "busy":
            busy.append(futures[future])
        else:
            done(outcome)
    order = {spec.hash: i for i, spec in enumerate(specs)}
    return sorted(busy, key=lambda spec: order[spec.hash])


_cluster_pool: WorkerPool | None = None
_cluster_pool_lock = threading.Lock()


def execute_on_cluster(spec: RunSpec, store: str, run_fn: str) -> Outcome:
    """:func:`execute_run` on a Dask worker, fluid runs on that worker process's own pool.

    The pool lives as long as the Dask worker process (its workers exit when it does), so
    every sweep sent to the cluster reuses the same long-lived workers.
    """
    global _cluster_pool
    with _cluster_pool_lock:
        if _cluster_pool is None:
            _cluster_pool = WorkerPool()
    return execute_run(spec, store, run_fn, pool=_cluster_pool)


def _run_dask(specs: list[RunSpec], store: str, run_fn: str, address: str, reuse: bool,
              done: Callable) -> None:
    """Execute ``specs`` on the Dask cluster at ``address``; call ``done`` per outcome."""
    try:
        from distributed import Client, as_completed as dask_completed
    except ImportError as exc:  # pragma: no cover - depends on the installation
        raise ConfigError("dask_address", "dask.distributed is not installed",
                          "pip install 'ns3-hpsched[dask]'") from exc
    task = execute_on_cluster if reuse else execute_run
    with Client(address) as client:
        futures = [client.submit(task, spec, store, run_fn, pure=False) for spec in specs]
        try:
            for future in dask_completed(futures):
                done(future.result())
        except BaseException:
            client.cancel(futures)
            raise


def _remove_stale_attempts(store: Path) -> None:
    """Delete the attempt folders in ``tmp/`` that no live process owns.

    An attempt is owned by the holder of its run's lock (a sweep, or a run process that a
    sweep killed with SIGKILL left going), so the attempts of every run whose lock is free
    are stale: left by a killed sweep.
    """
    keys = {attempt.name.split("-")[0] for attempt in tmp_dir(store).glob("*-*") if attempt.is_dir()}
    for key in keys:
        held = claim_run(store, key, cancel=_at_once())
        if held is not None:
            _remove_attempts(str(store), key)
            release(held)


@dataclass(frozen=True)
class SweepReport:
    """What a sweep did.

    Attributes
    ----------
    store:
        The result store.
    index:
        The sweep's runs' rows of ``STORE/index.parquet``, in grid order (see :func:`run_sweep`).
    workers:
        Runs at a time on this machine (``None`` on a Dask cluster).
    ran, skipped, failed:
        Runs executed and finished by this sweep; runs the store held already (before the
        sweep, or filed by another sweep while this one waited for them); runs that failed.
    first_error:
        The error of the first run that failed, if any.
    default_workers:
        Whether ``workers`` is the default (one run per CPU) rather than asked for.
    """

    store: Path
    index: pd.DataFrame
    workers: int | None
    ran: int
    skipped: int
    failed: int
    first_error: str | None
    default_workers: bool = False

    def lines(self) -> list[str]:
        """The report as lines for the user: store, counts, workers, first error."""
        if self.workers is None:
            workers = "workers: the Dask cluster's"
        else:
            default = " (the default: one per CPU)" if self.default_workers else ""
            workers = f"workers: {self.workers} simulation{'s' * (self.workers > 1)} at a time{default}"
        lines = [f"store: {self.store}",
                 f"runs: {len(self.index)}: {self.ran} done, {self.skipped} skipped (already in the store), "
                 f"{self.failed} failed", workers]
        if self.first_error is not None:
            lines.append(f"first error: {self.first_error} (each failed run's output: "
                         f"{failed_dir(self.store)}/<hash>/{LOG_FILE})")
        return lines


def _check_workers(workers: int | None) -> int:
    """``workers`` checked, or the default: one run per CPU."""
    if workers is None:
        return os.cpu_count() or 1
    if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
        raise ConfigError("workers", f"must be a positive integer, got {workers!r}", "e.g. workers=2")
    return workers


def execute_sweep(
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
    reuse_workers: bool = True,
) -> SweepReport:
    """Run every run of a sweep that the store does not hold yet; report what was done.

    Parameters are those of :func:`run_sweep`, plus ``reuse_workers``: execute fluid runs
    on long-lived worker processes (default; :mod:`ns3_hpsched.workers`) rather than in a
    fresh process each. Results are the same either way; only start-up time differs.
    """
    n_workers = _check_workers(workers)
    specs = expand_grid(scenario, grid, schedulers, seeds)
    run_ref = DEFAULT_RUN_FN if run_fn is None else _function_ref(run_fn)
    store = Path(store).resolve()
    todo = [spec for spec in specs if not is_complete(runs_dir(store) / spec.hash)]
    counts = {"ok": 0, "skipped": len(specs) - len(todo), "failed": 0}
    errors: list[str] = []
    with tqdm(total=len(specs), initial=counts["skipped"], desc="sweep", unit="run",
              file=sys.stderr, disable=None if progress else True, dynamic_ncols=True) as bar:

        def done(outcome: Outcome) -> None:
            counts[outcome.status] = counts.get(outcome.status, 0) + 1
            errors.extend([outcome.error] if outcome.status == "failed" else [])
            bar.set_postfix(failed=counts["failed"], refresh=False)
            bar.update()

        try:
            if dask_address is not None:
                _run_dask(todo, str(store), run_ref, dask_address, reuse_workers, done)
            else:
                _run_local(todo, str(store), run_ref, n_workers, reuse_workers, done)
        finally:
            _remove_stale_attempts(store)
            index = rebuild_index(store)
    order = {spec.hash: i for i, spec in enumerate(specs)}
    ours = index[index["hash"].isin(order)].sort_values("hash", key=lambda h: h.map(order), ignore_index=True)
    return SweepReport(store, ours, None if dask_address else n_workers, counts["ok"], counts["skipped"],
                       counts["failed"], errors[0] if errors else None, default_workers=workers is None)


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
    reuse_workers: bool = True,
) -> pd.DataFrame:
    """Run every run of a sweep that the store does not hold yet; return the sweep's index.

    :func:`execute_sweep` does the same and also reports what it did.

    Parameters
    ----------
    scenario, grid, schedulers, seeds:
        The sweep (see :func:`expand_grid`).
    store:
        Result store folder (created if missing). On a cluster it must be a path every
        worker sees (a shared file system). Several sweeps may fill one store at once.
    workers:
        Runs at a time on this machine (default: the number of CPUs). Ignored with
        ``dask_address``, where the cluster's workers decide.
    dask_address:
        Address of a ``dask.distributed`` scheduler (e.g. ``"tcp://host:8786"``, or a
        ``dask_jobqueue`` cluster's ``scheduler_address``); runs are submitted there.
    progress:
        Show a progress bar with ETA on stderr when it is a terminal (``False``: never).
    run_fn:
        Module-level function ``(scenario, out_dir) -> Path`` that runs one scenario
        (default :func:`ns3_hpsched.runner.run_scenario`); mainly for tests.
    reuse_workers:
        See :func:`execute_sweep`.

    Returns
    -------
    pandas.DataFrame
        The rows of ``STORE/index.parquet`` (rebuilt at the end) for this sweep's runs, in
        grid order: ``hash, scenario, <grid keys>, scheduler, seed, backend, status, error,
        wall_s``.
    """
    return execute_sweep(scenario, grid, schedulers, seeds, store, workers=workers,
                         dask_address=dask_address, progress=progress, run_fn=run_fn,
                         reuse_workers=reuse_workers).index


if __name__ == "__main__":
    run_attempt(Path(sys.argv[1]))
