"""Scenario -> workload -> driver -> policy -> fluid backend -> tables, end to end."""

from __future__ import annotations

import signal

import pytest

from ns3_hpsched.backends.fluid import FluidBackend
from ns3_hpsched.driver import play
from ns3_hpsched.runner import simulate
from ns3_hpsched.scenario import load_scenario
from ns3_hpsched.sched import POLICIES, make_policy
from ns3_hpsched.topology import big_switch
from ns3_hpsched.workload.spec import Cojob, Flow, Job, Stage, Sync, Workload


@pytest.mark.parametrize("policy", sorted(POLICIES))
def test_every_policy_plays_the_small_search_on_fluid(policy):
    """Each policy plays the small search to the end; no stage beats its lower bound."""
    records, manifest, _ = simulate(load_scenario("small-search", {"backend": "fluid", "scheduler.name": policy}))
    stages = records.stages
    assert len(stages) == 6 and stages["sct_s"].gt(0).all()
    assert (stages["sct_s"] >= stages["lower_bound_s"] * (1 - 1e-9)).all()
    assert manifest["scheduler"]["name"] == policy


def _ring_jobs():
    """Three 3-worker ring jobs overlapping on a 7-host switch, a few MB per flow."""
    jobs = []
    for j, hosts in enumerate([(0, 1, 2), (2, 3, 4), (4, 5, 6)]):
        phase = tuple(Flow(h, hosts[(i + 1) % 3], 1_234_567 + 1000 * j) for i, h in enumerate(hosts))
        jobs.append(Job(j, hosts, 0.0, Sync(phases=(phase,), pattern="ring")))
    return Workload((Cojob(0, 0.0, tuple(jobs), (Stage(3, (0, 1, 2)),)),), n_hosts=7)


@pytest.fixture
def deadline():
    """Fail, instead of hanging the suite, if a run does not end within a minute."""
    def expire(*_):
        raise TimeoutError("the run did not end within 60 s (a threshold livelock?)")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.alarm(60)
    yield
    signal.alarm(0)
    signal.signal(signal.SIGALRM, previous)


@pytest.mark.parametrize("name,params", [("fifo-lm", {"theta_bytes": 1_000_001}),
                                         ("aalo", {"first_threshold_bytes": 1_000_003, "multiplier": 2})])
def test_byte_thresholds_fire_once_and_the_run_ends(name, params, deadline):
    """Threshold policies re-decide when a coflow crosses its threshold, and the run ends."""
    backend = FluidBackend(big_switch(7), n_classes=8)
    records = play(_ring_jobs(), backend, make_policy(name, **params))
    assert len(records.coflows) == 9
    releases = records.coflows["release_s"].nunique() + records.coflows["finish_s"].nunique()
    assert records.decisions > releases // 2


def test_same_scenario_and_seed_give_identical_tables():
    """Running one fluid scenario twice gives identical tables; another seed differs."""
    a, _, _ = simulate(load_scenario("load", {"workload.cojobs": 3}))
    b, _, _ = simulate(load_scenario("load", {"workload.cojobs": 3}))
    c, _, _ = simulate(load_scenario("load", {"workload.cojobs": 3, "seed": 2}))
    for table in ("flows", "coflows", "stages", "jobs"):
        assert getattr(a, table).equals(getattr(b, table))
    assert not a.stages.equals(c.stages)
