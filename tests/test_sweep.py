"""Sweeps: grid expansion and validation, run processes (fresh or reused), failures recorded,
resume, two sweeps sharing a store, the sweep's report and exit status, Dask."""

from __future__ import annotations

import io
import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from ns3_hpsched.errors import ConfigError
from ns3_hpsched.results import write_run
from ns3_hpsched.scenario import load_scenario
from ns3_hpsched.store import TABLES, claim_run, load_store, read_index, release, run_hash, runs_dir, tmp_dir
from ns3_hpsched.sweep import execute_sweep, expand_grid, run_sweep
from ns3_hpsched.workers import child_env

ABORT_SEED = 13
RAISE_SEED = 14

SCENARIO = """
description = "three small searches on an 8-host big switch (sweep tests)"
backend = "fluid"
seed = 1

[topology]
kind = "big_switch"
n = 8

[scheduler]
name = "fair"

[workload]
kind = "search"
cojobs = 3
configurations = 2
stages = 2
workers = 2
arrival_rate = 20.0
bytes_scale = 1.0
compute_s = 0.01
"""


@pytest.fixture
def scenario_file(tmp_path):
    """A tiny scenario file."""
    path = tmp_path / "tiny.toml"
    path.write_text(SCENARIO)
    return path


def stand_in_run(scenario, out_dir):
    """Stand-in runner: small tables derived from the config; logs each call in the store.

    Aborts the process on seed ABORT_SEED and raises on seed RAISE_SEED.
    """
    resolved = scenario.resolved()
    if resolved["seed"] == ABORT_SEED:
        os.abort()
    if resolved["seed"] == RAISE_SEED:
        raise ValueError("stand-in failure")
    with open(out_dir.parents[2] / "calls.txt", "a") as calls:
        calls.write(run_hash(resolved) + "\n")
    with open(out_dir.parents[2] / "pids.txt", "a") as pids:
        pids.write(f"{resolved['seed']} {resolved['backend']} {os.getpid()}\n")
    rng = np.random.default_rng([resolved["seed"], len(resolved["scheduler"]["name"])])
    slow = 1.0 + resolved["workload"].get("arrival_rate", 1.0) / 10
    sct = slow * rng.uniform(1.0, 2.0, size=3)
    stages = pd.DataFrame({"cojob": [0, 0, 1], "stage": [0, 1, 0], "start_s": 0.0,
                           "finish_s": sct, "sct_s": sct, "lower_bound_s": sct / 2})
    cct = sct / 4
    coflows = pd.DataFrame({"coflow_id": [0, 1, 2], "cojob": [0, 0, 1], "stage": [0, 1, 0],
                            "release_s": 0.0, "finish_s": cct, "cct_s": cct, "bytes": 10**6})
    size = np.array([2_000, 3_000_000, 40_000_000])
    flows = pd.DataFrame({"flow_id": [0, 1, 2], "coflow_id": [0, 1, 2], "bytes": size,
                          "fct_s": cct, "standalone_fct_s": cct / rng.uniform(1, 3, size=3)})
    tables = {"stages": stages, "coflows": coflows, "flows": flows}
    return write_run(out_dir, tables, {"scenario": resolved, "backend": resolved["backend"]})


def logged_run(scenario, out_dir):
    """The real runner, logging each call in the store (to count how often a run executed)."""
    from ns3_hpsched.runner import run_scenario

    with open(out_dir.parents[2] / "calls.txt", "a") as log:
        log.write(run_hash(scenario.resolved()) + "\n")
    return run_scenario(scenario, out_dir)


def calls(store):
    """Hashes the stand-in runner executed in ``store``, in order."""
    path = store / "calls.txt"
    return path.read_text().split() if path.exists() else []


def pids(store):
    """``(backend, seed) -> pid`` of the process that executed each stand-in run of ``store``."""
    rows = [line.split() for line in (store / "pids.txt").read_text().splitlines()]
    return {(backend, int(seed)): int(pid) for seed, backend, pid in rows}


def test_run_hash_depends_on_content_not_key_order():
    """Equal configs hash equal whatever their key order; a changed value changes the hash."""
    a = run_hash({"seed": 1, "scheduler": {"name": "fair", "n_classes": 8}})
    b = run_hash({"scheduler": {"n_classes": 8, "name": "fair"}, "seed": 1})
    c = run_hash({"scheduler": {"n_classes": 8, "name": "fair"}, "seed": 2})
    assert a == b != c
    assert re.fullmatch(r"[0-9a-f]{16}", a)


def test_expand_grid_is_the_product_keyed_by_resolved_config(scenario_file):
    """Grid x schedulers x seeds gives one spec per point, hashed from the resolved scenario."""
    specs = expand_grid(scenario_file, {"workload.arrival_rate": [10.0, 20.0]}, ["fair", "varys"], [1, 2])
    assert len(specs) == 8 == len({s.hash for s in specs})
    assert [(s.params["workload.arrival_rate"], s.scheduler, s.seed) for s in specs[:3]] == [
        (10.0, "fair", 1), (10.0, "fair", 2), (10.0, "varys", 1)]
    for spec in specs:
        assert spec.hash == run_hash(load_scenario(spec.scenario, spec.overrides).resolved())


@pytest.mark.parametrize(
    ("grid", "schedulers", "seeds", "field"),
    [
        ({"workload.arrival_rate": []}, ["fair"], [1], "grid.workload.arrival_rate"),
        ({"workload.arrival_rate": 10.0}, ["fair"], [1], "grid.workload.arrival_rate"),
        ({"seed": [1, 2]}, ["fair"], [1], "grid.seed"),
        ({}, "fair", [1], "schedulers"),
        ({}, ["fair"], [1.5], "seeds"),
        ({"workload.arrival_rate": [10.0, 10.0]}, ["fair"], [1], "grid"),
    ],
)
def test_expand_grid_rejects_bad_sweeps(scenario_file, grid, schedulers, seeds, field):
    """A malformed grid, scheduler list or seed list is a ConfigError naming the field."""
    with pytest.raises(ConfigError) as info:
        expand_grid(scenario_file, grid, schedulers, seeds)
    assert info.value.field == field


@pytest.mark.parametrize(
    ("grid", "schedulers", "field", "words"),
    [
        ({"workload.arrival_rate": [10.0, -1.0]}, ["fair"], "grid.workload.arrival_rate", "-1.0"),
        ({"workload.arival_rate": [10.0]}, ["fair"], "grid.workload.arival_rate", "unknown key"),
        ({"backend": ["packet"], "transport.kind": ["dctcp", "bogus"]}, ["fair"], "grid.transport.kind",
         "'bogus'"),
        ({}, ["fair", "fiar"], "schedulers", "value 'fiar': unknown policy"),
    ],
)
def test_every_grid_point_is_validated_before_any_run(scenario_file, tmp_path, grid, schedulers, field, words):
    """A bad value anywhere in the grid stops the sweep before its first run, naming the axis and value."""
    store = tmp_path / "store"
    with pytest.raises(ConfigError) as info:
        run_sweep(scenario_file, grid, schedulers, [1], store, progress=False, run_fn=stand_in_run)
    assert info.value.field == field
    assert words in str(info.value)
    assert not store.exists()


def test_sweep_files_every_run_and_indexes_it(scenario_file, tmp_path):
    """Every run gets a complete folder and an index row; load_store tags rows with their run."""
    store = tmp_path / "store"
    index = run_sweep(scenario_file, {"workload.arrival_rate": [10.0, 20.0]}, ["fair", "varys"], [1],
                      store, workers=2, progress=False, run_fn=stand_in_run)
    assert len(index) == 4 and set(index["status"]) == {"ok"}
    assert sorted(calls(store)) == sorted(index["hash"])
    assert list(tmp_dir(store).iterdir()) == []
    pd.testing.assert_frame_equal(pd.read_parquet(store / "index.parquet"),
                                  index.sort_values("hash", ignore_index=True))
    stages = load_store(store)["stages"]
    assert len(stages) == 3 * 4
    first = index.iloc[0]
    mine = stages[stages["hash"] == first["hash"]]
    assert set(mine["scheduler"]) == {first["scheduler"]} and set(mine["seed"]) == {first["seed"]}
    assert set(mine["workload.arrival_rate"]) == {first["workload.arrival_rate"]}
    assert set(mine["backend"]) == {"fluid"}


def test_crashing_runs_are_recorded_and_retried(scenario_file, tmp_path):
    """A run that aborts or raises is filed as failed with its error, the rest finish; a rerun retries only the failed."""
    store = tmp_path / "store"
    sweep = (scenario_file, {}, ["fair"], [1, ABORT_SEED, RAISE_SEED], store)
    index = run_sweep(*sweep, workers=2, progress=False, run_fn=stand_in_run)
    assert dict(zip(index["seed"], index["status"])) == {
        1: "ok", ABORT_SEED: "failed", RAISE_SEED: "failed"}
    errors = dict(zip(index["seed"], index["error"]))
    assert "SIGABRT" in errors[ABORT_SEED]
    assert errors[RAISE_SEED] == "ValueError: stand-in failure"
    raised = store / "failed" / index.loc[index["seed"] == RAISE_SEED, "hash"].item()
    assert "Traceback" in (raised / "stderr.log").read_text()
    assert len(load_store(store)["stages"]) == 3
    first_attempt = (raised / "sweep.json").stat().st_mtime_ns

    again = run_sweep(*sweep, workers=2, progress=False, run_fn=stand_in_run)
    assert len(calls(store)) == 1
    assert (raised / "sweep.json").stat().st_mtime_ns > first_attempt
    pd.testing.assert_frame_equal(index.drop(columns="wall_s"), again.drop(columns="wall_s"))


def test_fluid_runs_share_a_worker_packet_runs_get_a_process_each(scenario_file, tmp_path):
    """With one worker, the fluid runs execute in one reused process, each packet run in a fresh one."""
    store = tmp_path / "store"
    run_sweep(scenario_file, {"backend": ["fluid", "packet"]}, ["fair"], [1, 2, 3], store,
              workers=1, progress=False, run_fn=stand_in_run)
    by_run = pids(store)
    fluid = {by_run["fluid", seed] for seed in (1, 2, 3)}
    packet = {by_run["packet", seed] for seed in (1, 2, 3)}
    assert len(fluid) == 1 and len(packet) == 3 and not fluid & packet
    assert os.getpid() not in fluid | packet


def test_a_crash_ends_only_its_worker(scenario_file, tmp_path):
    """A fluid run that aborts its worker is a recorded failure; later runs go to a new worker."""
    store = tmp_path / "store"
    index = run_sweep(scenario_file, {}, ["fair"], [1, ABORT_SEED, 2, RAISE_SEED, 3], store,
                      workers=1, progress=False, run_fn=stand_in_run)
    assert dict(zip(index["seed"], index["status"])) == {
        1: "ok", ABORT_SEED: "failed", 2: "ok", RAISE_SEED: "failed", 3: "ok"}
    assert "SIGABRT" in index.loc[index["seed"] == ABORT_SEED, "error"].item()
    by_run = pids(store)
    assert by_run["fluid", 1] != by_run["fluid", 2] == by_run["fluid", 3]  # a raise keeps the worker


def test_report_counts_done_skipped_failed(scenario_file, tmp_path):
    """The report of a sweep counts its runs by what became of them, and names the first error."""
    store = tmp_path / "store"
    sweep = (scenario_file, {}, ["fair"], [1, 2, RAISE_SEED], store)
    first = execute_sweep(*sweep, workers=1, progress=False, run_fn=stand_in_run)
    assert (first.ran, first.skipped, first.failed) == (2, 0, 1)
    assert first.first_error == "ValueError: stand-in failure"
    assert first.workers == 1 and not first.default_workers
    again = execute_sweep(*sweep, progress=False, run_fn=stand_in_run)
    assert (again.ran, again.skipped, again.failed) == (0, 2, 1)
    assert again.workers == os.cpu_count() and again.default_workers
    assert again.lines()[:3] == [
        f"store: {store}", "runs: 3: 0 done, 2 skipped (already in the store), 1 failed",
        f"workers: {os.cpu_count()} simulation{'s' * (os.cpu_count() > 1)} at a time (the default: one per CPU)"]


class _Terminal(io.StringIO):
    """A text stream that says it is a terminal."""

    def isatty(self):
        return True


@pytest.mark.parametrize("terminal", [True, False])
def test_progress_bar_only_on_a_terminal(scenario_file, tmp_path, monkeypatch, terminal):
    """The progress bar is drawn on a terminal and nothing is written to stderr when it is piped."""
    stream = _Terminal() if terminal else io.StringIO()
    monkeypatch.setattr(sys, "stderr", stream)
    execute_sweep(scenario_file, {}, ["fair"], [1, 2], tmp_path / "store", workers=1, run_fn=stand_in_run)
    assert ("sweep: 100%" in stream.getvalue()) == terminal
    assert terminal or stream.getvalue() == ""


def test_invoke_sweep_reports_and_fails_when_runs_fail(scenario_file, tmp_path, monkeypatch, capsys):
    """`invoke sweep` prints the store, counts and workers; it exits with the first error if a run failed."""
    import invoke

    import tasks

    monkeypatch.setattr("ns3_hpsched.sweep.DEFAULT_RUN_FN", f"{__name__}:stand_in_run")
    store = tmp_path / "store"
    args = {"scheduler": ["fair"], "store": str(store)}
    tasks.sweep(invoke.Context(), str(scenario_file), seed=["1", "2"], **args)
    out = capsys.readouterr().out
    assert f"store: {store}" in out and "runs: 2: 2 done, 0 skipped" in out and "(the default: one per CPU)" in out
    with pytest.raises(SystemExit) as info:
        tasks.sweep(invoke.Context(), str(scenario_file), seed=["1", str(RAISE_SEED)], workers="1", **args)
    assert str(info.value) == "error: 1 of 2 runs failed, the first with: ValueError: stand-in failure"
    assert "runs: 2: 0 done, 1 skipped (already in the store), 1 failed" in capsys.readouterr().out
    with pytest.raises(SystemExit):
        tasks.sweep(invoke.Context(), str(scenario_file), seed=[str(RAISE_SEED)], **args)


def test_invoke_sweep_as_a_user(scenario_file, tmp_path):
    """`invoke sweep` with the real runner, piped: report on stdout, no progress bar, exit 0."""
    store = tmp_path / "store"
    done = subprocess.run([sys.executable, "-m", "invoke", "sweep", str(scenario_file), "--scheduler", "fair",
                           "--seed", "1", "--seed", "2", "--store", str(store), "--workers", "2"],
                          cwd=Path(__file__).parents[1], capture_output=True, text=True, env=child_env())
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        f"store: {store}", "runs: 2: 2 done, 0 skipped (already in the store), 0 failed",
        "workers: 2 simulations at a time"]
    assert done.stderr == ""
    assert len(read_index(store)) == 2


def test_only_attempts_without_a_live_owner_are_removed(scenario_file, tmp_path):
    """An attempt folder whose run's lock is held (a live sweep's) survives; one left by a dead process goes."""
    store = tmp_path / "store"
    one, two = expand_grid(scenario_file, {}, ["fair"], [1, 2])
    dead, live = tmp_dir(store) / f"{one.hash}-1-dead", tmp_dir(store) / f"{two.hash}-2-live"
    dead.mkdir(parents=True)
    live.mkdir()
    held = claim_run(store, two.hash)  # as another sweep executing run two would
    try:
        run_sweep(scenario_file, {}, ["fair"], [1], store, workers=1, progress=False, run_fn=stand_in_run)
        assert not dead.exists() and live.is_dir()
    finally:
        release(held)
    index = run_sweep(scenario_file, {}, ["fair"], [1, 2], store, workers=1, progress=False, run_fn=stand_in_run)
    assert set(index["status"]) == {"ok"} and list(tmp_dir(store).iterdir()) == []


def test_run_function_must_be_importable(scenario_file, tmp_path):
    """A lambda cannot be run in another process: ConfigError on run_fn before anything runs."""
    with pytest.raises(ConfigError) as info:
        run_sweep(scenario_file, {}, ["fair"], [1], tmp_path / "store", progress=False,
                  run_fn=lambda scenario, out_dir: out_dir)
    assert info.value.field == "run_fn"
    assert not (tmp_path / "store" / "runs").exists()


FLUID_SWEEP = ({"workload.arrival_rate": [10.0, 40.0]}, ["fair", "beamer"], [1, 2])


def _sweep_script(scenario_file, store):
    """Python source running FLUID_SWEEP with the real runner, one run at a time."""
    return (f"from ns3_hpsched.sweep import run_sweep\n"
            f"run_sweep({str(scenario_file)!r}, *{FLUID_SWEEP!r}, {str(store)!r}, workers=1, progress=False)\n")


@pytest.fixture(scope="module")
def fluid_store(tmp_path_factory):
    """A store of real fluid runs of FLUID_SWEEP, swept without interruption."""
    root = tmp_path_factory.mktemp("fluid")
    (root / "tiny.toml").write_text(SCENARIO)
    run_sweep(root / "tiny.toml", *FLUID_SWEEP, root / "store", workers=2, progress=False)
    return root / "store"


def test_fluid_sweep_stores_what_the_runner_computes(fluid_store):
    """Each stored run of a real fluid sweep holds the tables run_scenario writes for its config."""
    from ns3_hpsched.runner import run_scenario

    index = read_index(fluid_store)
    assert len(index) == 8 and set(index["status"]) == {"ok"} and set(index["backend"]) == {"fluid"}
    run = index.iloc[-1]
    scenario = load_scenario(run["scenario"], {"workload.arrival_rate": run["workload.arrival_rate"],
                                               "scheduler.name": run["scheduler"], "seed": run["seed"]})
    direct = run_scenario(scenario, fluid_store.parent / "direct")
    for table in ("stages", "coflows", "flows"):
        pd.testing.assert_frame_equal(pd.read_parquet(direct / f"{table}.parquet"),
                                      pd.read_parquet(runs_dir(fluid_store) / run["hash"] / f"{table}.parquet"))


def _results(store):
    """The stored tables of a store without run-specific timing, for comparing sweeps."""
    tables = load_store(store)
    return {name: tables[name] for name in ("stages", "coflows", "flows", "jobs")}


def _assert_same_results(a, b):
    """Two stores hold equal result tables."""
    for name, table in _results(a).items():
        pd.testing.assert_frame_equal(table, _results(b)[name], obj=name)


def _table_bytes(store):
    """``(run hash, table) -> bytes`` of every result table file of a store."""
    return {(run.name, name): (run / f"{name}.parquet").read_bytes()
            for run in runs_dir(store).iterdir() for name in TABLES}


def test_reused_workers_store_what_fresh_processes_store(fluid_store, tmp_path):
    """Fluid runs on reused workers write byte-identical tables to runs in a fresh process each."""
    store = tmp_path / "store"
    run_sweep(fluid_store.parent / "tiny.toml", *FLUID_SWEEP, store, workers=2, progress=False,
              reuse_workers=False)
    fresh, reused = _table_bytes(store), _table_bytes(fluid_store)
    assert len(fresh) == 8 * len(TABLES)
    assert fresh == reused


def _shared_sweep_script(scenario_file, store):
    """Python source running FLUID_SWEEP with the logged real runner; prints its report as JSON."""
    return (f"import json\n"
            f"from tests.test_sweep import logged_run\n"
            f"from ns3_hpsched.sweep import execute_sweep\n"
            f"r = execute_sweep({str(scenario_file)!r}, *{FLUID_SWEEP!r}, {str(store)!r}, workers=2,\n"
            f"                  progress=False, run_fn=logged_run)\n"
            f"print(json.dumps({{'ran': r.ran, 'skipped': r.skipped, 'failed': r.failed}}))\n")


def test_two_sweeps_share_a_store(fluid_store, tmp_path):
    """Two sweeps into one store at once both complete; every run executed and filed exactly once."""
    store = tmp_path / "store"
    script = _shared_sweep_script(fluid_store.parent / "tiny.toml", store)
    sweeps = [subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True,
                               env=child_env()) for _ in range(2)]
    reports = []
    for sweep in sweeps:
        out, _ = sweep.communicate(timeout=300)
        assert sweep.returncode == 0
        reports.append(json.loads(out.splitlines()[-1]))
    assert all(r["failed"] == 0 and r["ran"] + r["skipped"] == 8 for r in reports)
    assert sum(r["ran"] for r in reports) == 8
    index = read_index(store)
    assert len(index) == 8 and set(index["status"]) == {"ok"}
    assert sorted(calls(store)) == sorted(index["hash"])  # no run executed twice
    assert list(tmp_dir(store).iterdir()) == [] and not (store / "failed").exists()
    pd.testing.assert_frame_equal(pd.read_parquet(store / "index.parquet").drop(columns="wall_s"),
                                  index.drop(columns="wall_s"))
    assert _table_bytes(store) == _table_bytes(fluid_store)


def test_killed_sweep_resumes_without_redoing_finished_runs(fluid_store, tmp_path):
    """A sweep killed (SIGKILL) halfway, started again, reruns nothing finished and ends equal."""
    scenario_file = fluid_store.parent / "tiny.toml"
    store = tmp_path / "store"
    sweep = subprocess.Popen([sys.executable, "-c", _sweep_script(scenario_file, store)])
    deadline = time.monotonic() + 120
    while len(list(runs_dir(store).glob("*"))) < 3 and time.monotonic() < deadline:
        assert sweep.poll() is None, "the sweep ended before it could be killed"
        time.sleep(0.05)
    sweep.send_signal(signal.SIGKILL)
    sweep.wait()
    finished = {p.name: p.stat().st_mtime_ns for p in runs_dir(store).glob("*")}
    assert 3 <= len(finished) < 8

    run_sweep(scenario_file, *FLUID_SWEEP, store, workers=2, progress=False)
    assert {name: (runs_dir(store) / name).stat().st_mtime_ns for name in finished} == finished
    assert len(read_index(store)) == 8
    _assert_same_results(store, fluid_store)


def test_dask_cluster_fills_the_store_like_the_local_pool(fluid_store, tmp_path):
    """A sweep sent to a dask.distributed LocalCluster gives the same results as the local pool,
    and the cluster's worker keeps one long-lived process per thread for fluid runs."""
    from distributed import LocalCluster

    scenario_file = fluid_store.parent / "tiny.toml"
    with LocalCluster(n_workers=1, threads_per_worker=2, processes=True,
                      dashboard_address=None) as cluster:
        index = run_sweep(scenario_file, *FLUID_SWEEP, tmp_path / "store",
                          dask_address=cluster.scheduler_address, progress=False)
        stand_in = tmp_path / "stand-in"
        run_sweep(scenario_file, {}, ["fair"], [1, 2, 3, 4, 5, 6], stand_in,
                  dask_address=cluster.scheduler_address, progress=False, run_fn=stand_in_run)
    assert set(index["status"]) == {"ok"}
    _assert_same_results(tmp_path / "store", fluid_store)
    assert len(set(pids(stand_in).values())) <= 2
