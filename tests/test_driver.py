"""The training driver over a contention-free fake backend: dynamics, triggers, records."""

from __future__ import annotations

import pytest

from ns3_hpsched.driver import play
from ns3_hpsched.sched.view import Decision
from ns3_hpsched.topology import big_switch
from ns3_hpsched.workload.spec import Cojob, Flow, Job, Stage, Sync, Workload

from .fakes import IdealBackend, OneClass

RATE = 10e9


def ring(hosts, nbytes):
    """One ring phase: each host sends ``nbytes`` to its successor."""
    return Sync(phases=(tuple(Flow(h, hosts[(i + 1) % len(hosts)], nbytes) for i, h in enumerate(hosts)),),
                pattern="ring")


def one_job_workload(iterations=(3, 5), compute_s=0.01, nbytes=1_000_000, hosts=(0, 1, 2, 3)):
    job = Job(0, hosts, compute_s, ring(hosts, nbytes))
    stages = tuple(Stage(n, (0,)) for n in iterations)
    return Workload((Cojob(0, 0.5, (job,), stages),), n_hosts=4)


def run(workload, policy=None, **kw):
    backend = IdealBackend(big_switch(4, rate_bps=RATE))
    return play(workload, backend, policy or OneClass(), **kw), backend


def test_lone_job_sct_is_iterations_times_compute_plus_sync():
    """One job alone: every SCT equals iterations x (compute + isolated sync time), exactly."""
    records, _ = run(one_job_workload())
    sync = 1_000_000 * 8 / RATE
    assert records.stages["sct_s"].tolist() == pytest.approx([3 * (0.01 + sync), 5 * (0.01 + sync)], rel=1e-12)
    assert records.stages["start_s"].iloc[0] == 0.5
    assert records.stages["start_s"].iloc[1] == records.stages["finish_s"].iloc[0]


def test_lone_job_lower_bound_is_tight():
    """The recorded isolated-stage bound of a lone job equals its SCT on an ideal network."""
    records, _ = run(one_job_workload())
    assert records.stages["lower_bound_s"].tolist() == pytest.approx(records.stages["sct_s"].tolist(), rel=1e-12)


def test_coflows_follow_iterations_and_compute():
    """Each iteration's coflow is released compute_s after the previous one finished."""
    records, _ = run(one_job_workload(iterations=(4,)))
    c = records.coflows
    assert c["iteration"].tolist() == [0, 1, 2, 3]
    assert c["release_s"].iloc[1:].to_numpy() == pytest.approx(c["finish_s"].iloc[:-1].to_numpy() + 0.01)
    assert (c["width"] == 4).all() and (c["bytes"] == 4_000_000).all()


def test_phases_run_one_after_another():
    """A two-phase synchronisation (push, then pull) releases the pull when the push ends."""
    push = (Flow(0, 3, 500), Flow(1, 3, 500))
    pull = (Flow(3, 0, 500), Flow(3, 1, 500))
    job = Job(0, (0, 1), 0.0, Sync(phases=(push, pull), pattern="ps"))
    workload = Workload((Cojob(0, 0.0, (job,), (Stage(2, (0,)),)),), n_hosts=4)
    records, _ = run(workload)
    c = records.coflows
    assert c["phase"].tolist() == [0, 1, 0, 1]
    assert c["release_s"].iloc[1] == c["finish_s"].iloc[0]
    assert c["release_s"].iloc[2] == c["finish_s"].iloc[1]


def test_halving_stops_jobs_and_survivors_start_next_stage_at_once():
    """Jobs left out of the next stage stop there; the survivors start it when the stage ends."""
    jobs = tuple(Job(j, (j, (j + 1) % 4), 0.001 * (j + 1), ring((j, (j + 1) % 4), 10_000)) for j in range(4))
    cojob = Cojob(0, 0.0, jobs, (Stage(2, (0, 1, 2, 3)), Stage(2, (1, 3)), Stage(2, (3,))))
    records, _ = run(Workload((cojob,), n_hosts=4))
    j = records.jobs.set_index("job")
    assert j["stopped_after_stage"].to_dict() == {0: 0, 1: 1, 2: 0, 3: 2}
    s = records.stages.set_index("stage")
    assert s.loc[1, "start_s"] == s.loc[0, "finish_s"] and s.loc[2, "start_s"] == s.loc[1, "finish_s"]
    assert j.loc[3, "end_s"] == s.loc[2, "finish_s"]
    assert s["jobs"].tolist() == [4, 2, 1]


def test_intra_host_synchronisation_costs_only_compute():
    """A job whose workers share one host never touches the network: iterations are compute only."""
    job = Job(0, (2, 2), 0.25, Sync(phases=((),), pattern="ring"))
    records, backend = run(Workload((Cojob(0, 0.0, (job,), (Stage(4, (0,)),)),), n_hosts=4))
    assert records.stages["sct_s"].iloc[0] == pytest.approx(1.0)
    assert (records.coflows["width"] == 0).all() and not backend.flows


def test_one_decision_per_instant():
    """Releases at one instant are decided together: four jobs starting at once give one view."""
    jobs = tuple(Job(j, (j, (j + 1) % 4), 0.0, ring((j, (j + 1) % 4), 1000)) for j in range(4))
    policy = OneClass()
    run(Workload((Cojob(0, 0.0, jobs, (Stage(1, (0, 1, 2, 3)),)),), n_hosts=4), policy)
    assert policy.seen[0] == (0.0, 4)


class Reverse(OneClass):
    """Orders coflows newest first, one class each: forces class changes on every release."""

    def decide(self, view):
        self.seen.append((view.now_s, len(view.coflows)))
        return Decision(order=[[f.flow_id for f in c.flows] for c in reversed(view.coflows.values())])


def test_control_delay_defers_class_changes():
    """With a control delay d, new flows start in the lowest class and changes land d later."""
    jobs = tuple(Job(j, (0, 1), 0.001 * j, ring((0, 1), 1_000_000)) for j in range(2))
    workload = Workload((Cojob(0, 0.0, jobs, (Stage(1, (0, 1)),)),), n_hosts=4)
    _, backend = run(workload, Reverse(), control_delay_s=1e-4)
    starts = [e for e in backend.log if e[0] == "start"]
    assert {e[3] for e in starts} == {7}
    changes = [e for e in backend.log if e[0] == "priority"]
    assert changes and all(any(abs(c[1] - (s[1] + 1e-4)) < 1e-12 for s in starts) for c in changes)


def test_same_workload_gives_identical_tables():
    """Playing one workload twice gives identical tables."""
    a, _ = run(one_job_workload())
    b, _ = run(one_job_workload())
    for name in ("coflows", "stages", "jobs", "flows"):
        assert getattr(a, name).equals(getattr(b, name))


def test_classes_reach_the_backend_in_bulk():
    """One start_flows call per coflow (all its flows, paths included) and one set_priorities per decision."""
    jobs = tuple(Job(j, (0, 1, 2, 3), 0.001 * j, ring((0, 1, 2, 3), 10_000_000)) for j in range(3))
    workload = Workload((Cojob(0, 0.0, jobs, (Stage(2, (0, 1, 2)),)),), n_hosts=4)
    records, backend = run(workload, Reverse())
    batches = [e[2] for e in backend.log if e[0] == "start_flows"]
    assert len(batches) == len(records.coflows) and all(len(b) == 4 for b in batches)
    for b in batches:
        assert len(set(b.coflow_id.tolist())) == 1
        for i, fid in enumerate(b.flow_id.tolist()):
            path = b.path_ports[b.path_offsets[i]:b.path_offsets[i + 1]].tolist()
            assert tuple(path) == backend.topology.flow_path(fid, int(b.src[i]), int(b.dst[i]))
    moves = [e for e in backend.log if e[0] == "set_priorities"]
    assert moves and len({e[1] for e in moves}) == len(moves)  # at most one call per instant
    assert sum(e[2] for e in moves) == sum(1 for e in backend.log if e[0] == "priority")


def test_flows_table_ideal_fct_and_ports_are_the_played_ones():
    """The flows table's ports and ideal FCT are those of each flow's own five-tuple and path."""
    from ns3_hpsched.topology import flow_five_tuple
    from ns3_hpsched.topology.ideal import standalone_fct_s

    records, backend = run(one_job_workload(iterations=(2,)))
    topo = backend.topology
    for row in records.flows.itertuples():
        ft = flow_five_tuple(row.flow_id, row.src, row.dst)
        assert (row.sport, row.dport) == (ft.sport, ft.dport)
        assert row.standalone_fct_s == standalone_fct_s(topo, row.src, row.dst, row.bytes, row.flow_id)
