"""Hyperparameter searches on the packet backend, through the README's commands."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from ns3_hpsched.driver import play
from ns3_hpsched.results import read_run
from ns3_hpsched.runner import simulate
from ns3_hpsched.scenario import load_scenario
from ns3_hpsched.sched import make_policy
from ns3_hpsched.topology import fat_tree
from ns3_hpsched.workload import ring_allreduce
from ns3_hpsched.workload.spec import Cojob, Job, Stage, Workload

pytestmark = pytest.mark.packet

ROOT = Path(__file__).resolve().parents[1]
RATE_BPS = 10e9


def invoke(*args, cwd=ROOT):
    """Run ``invoke ARGS`` as a user would; return (exit code, stdout + stderr)."""
    done = subprocess.run([sys.executable, "-m", "invoke", *args], cwd=cwd, capture_output=True, text=True)
    return done.returncode, done.stdout + done.stderr


def test_lone_job_sct_is_iterations_times_compute_plus_sync(PacketBackend):
    """One job alone on ns-3 (NewReno): each SCT is iterations x (compute + bytes/rate) within 5%."""
    hosts = (0, 5, 10, 15)  # one worker in every pod
    sync = ring_allreduce(hosts, 40_000_000)
    job = Job(0, hosts, 0.002, sync)
    workload = Workload((Cojob(0, 0.0, (job,), (Stage(2, (0,)), Stage(3, (0,)))),), n_hosts=16)
    per_flow = sync.phases[0][0].bytes
    backend = PacketBackend(fat_tree(4, rate_bps=RATE_BPS), transport="newreno")
    records = play(workload, backend, make_policy("fair"))
    expected = np.array([2, 3]) * (0.002 + per_flow * 8 / RATE_BPS)
    assert records.stages["sct_s"].to_numpy() == pytest.approx(expected, rel=0.05)


def test_invoke_simulate_default_runs_the_packet_core(tmp_path):
    """`invoke simulate` runs the default scenario: class 0 finishes first, class 1 waits."""
    code, out = invoke("simulate", "--out", str(tmp_path / "run"))
    assert code == 0, out
    assert "flows:" in out and "materialize" not in out
    tables, manifest = read_run(tmp_path / "run")
    fct = tables["flows"].set_index("flow_id")["fct_s"]
    assert fct[0] == pytest.approx(50e6 * 8 / RATE_BPS, rel=0.05)
    assert fct[1] == pytest.approx(2 * 50e6 * 8 / RATE_BPS, rel=0.05)
    assert manifest["events"] > 0 and manifest["backend"]["name"] == "packet"


def test_invoke_simulate_small_search_agrees_with_fluid(tmp_path):
    """The small search runs end to end on ns-3, prints per-stage SCT, and agrees with fluid."""
    overrides = {"workload.iterations": "[1, 2, 4]", "scheduler.name": "beamer"}
    code, out = invoke("simulate", "--scenario", "small-search", "--out", str(tmp_path / "run"),
                       *[f"--set={k}={v}" for k, v in overrides.items()])
    assert code == 0, out
    assert "stages:" in out and "average SCT" in out
    packet = read_run(tmp_path / "run")[0]["stages"]
    fluid = simulate(load_scenario("small-search", {**overrides, "backend": "fluid"}))[0].stages
    error = (fluid["sct_s"].to_numpy() - packet["sct_s"].to_numpy()) / packet["sct_s"].to_numpy()
    assert np.median(np.abs(error)) < 0.08


def test_hpcc_files_run_and_write_fct(tmp_path):
    """An HPCC topology + flow list runs on ns-3 with pg as the class and writes fct.txt."""
    from ns3_hpsched.cli import simulate as run

    topology = tmp_path / "topology.txt"
    topology.write_text("4 1 3\n3\n0 3 10Gbps 0.001ms 0\n1 3 10Gbps 0.001ms 0\n2 3 10Gbps 0.001ms 0\n")
    flows = tmp_path / "flow.txt"
    flows.write_text("2\n0 2 1 100 10000000 0.0\n1 2 0 100 10000000 0.0\n")
    out = run(topology=str(topology), flows=str(flows), out=str(tmp_path / "run"))
    lines = [line.split() for line in (out / "fct.txt").read_text().splitlines()]
    assert len(lines) == 2 and all(len(line) == 8 for line in lines)
    fct_ns = {int(line[0], 16): int(line[6]) for line in lines}  # by source IP
    alone_ns = 10_000_000 * 8 / RATE_BPS * 1e9
    assert fct_ns[0x0A000002] == pytest.approx(alone_ns, rel=0.05)  # pg 0: as if alone
    assert fct_ns[0x0A000001] == pytest.approx(2 * alone_ns, rel=0.05)  # pg 1: after it
