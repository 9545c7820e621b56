"""Open-loop play gives the tables of the closed-loop play, with no decisions.

The oracle is the same policy played closed loop (its ``one_class`` answered ``False``):
every flow released by its cojob's arrival event and started by a decision. Same scenario,
same tables, on either backend: flows, coflows, stages, jobs and ports, bit for bit.
"""

from __future__ import annotations

import numpy as np
import pytest

from ns3_hpsched.backends.fluid import FluidBackend
from ns3_hpsched.backends.base import FlowBatch, FlowStart
from ns3_hpsched.driver import lone_coflows, play
from ns3_hpsched.runner import make_backend
from ns3_hpsched.scenario import load_scenario
from ns3_hpsched.sched import make_policy
from ns3_hpsched.topology import big_switch
from ns3_hpsched.workload import DEFAULT_TRACE
from ns3_hpsched.workload.flowlist import flow_list_workload
from ns3_hpsched.workload.spec import Cojob, Flow, Job, Stage, Sync, Workload

from .fakes import IdealBackend

TABLES = ("flows", "coflows", "stages", "jobs")


def _closed(name: str):
    policy = make_policy(name)
    policy.one_class = lambda workload: False  # the oracle: the same policy, deciding as it goes
    return policy


def _play_both(scenario, name):
    """The tables (and ports) and decision counts of the closed and the open loop."""
    out = {}
    for mode, policy in (("closed", _closed(name)), ("open", make_policy(name))):
        backend = make_backend(scenario)
        records = play(scenario.built_workload, backend, policy)
        out[mode] = ({k: getattr(records, k) for k in TABLES} | {"ports": backend.ports_table()}, records.decisions)
        if hasattr(backend, "close"):
            backend.close()
    return out


def _assert_same_tables(out):
    (closed, decisions), (opened, none) = out["closed"], out["open"]
    assert decisions > 0 and none == 0
    for name, table in closed.items():
        assert opened[name].equals(table), name
        assert list(opened[name].dtypes) == list(table.dtypes), name


@pytest.mark.parametrize("transport", ["dctcp", "rdma"])
@pytest.mark.parametrize("name", ["fair", "pinned"])
def test_open_loop_flow_size_workload_gives_the_closed_loop_tables_on_fluid(name, transport):
    """Web-search sizes on a k=8 fat-tree: queues charged (DCTCP) or none (RDMA), start-ups
    per transport, flows arriving while others run."""
    scenario = load_scenario("websearch-k8", {"backend": "fluid", "workload.n_flows": 300,
                                              "transport.kind": transport})
    _assert_same_tables(_play_both(scenario, name))


@pytest.mark.skipif(not DEFAULT_TRACE.exists(), reason="shared FB trace not present")
def test_open_loop_wide_coflows_give_the_closed_loop_tables():
    """Facebook coflows of many flows each: a coflow's finish is its last flow's."""
    scenario = load_scenario("fb-trace", {"workload.max_coflows": 25})
    assert max(len(c.jobs[0].sync.phases[0]) for c in scenario.built_workload.cojobs) > 1
    _assert_same_tables(_play_both(scenario, "fair"))


def test_out_of_order_arrivals_are_released_by_time_then_workload_order():
    """Cojobs listed out of arrival order, two at one instant, on a big switch."""
    topo = big_switch(4, rate_bps=1e9)
    workload = flow_list_workload([{"src": 0, "dst": 1, "bytes": 50_000, "start_s": 2e-4},
                                   {"src": 2, "dst": 1, "bytes": 80_000, "start_s": 1e-4},
                                   {"src": 3, "dst": 1, "bytes": 20_000, "start_s": 1e-4},
                                   {"src": 1, "dst": 0, "bytes": 10_000}], topo.n_hosts)
    runs = {mode: play(workload, FluidBackend(topo), policy)
            for mode, policy in (("closed", _closed("fair")), ("open", make_policy("fair")))}
    for table in TABLES:
        assert getattr(runs["open"], table).equals(getattr(runs["closed"], table)), table
    coflows = runs["open"].coflows
    assert coflows["cojob"].tolist() == [3, 1, 2, 0]  # coflow ids follow release order
    assert (runs["open"].flows["start_s"].to_numpy() == [0.0, 1e-4, 1e-4, 2e-4]).all()


@pytest.mark.parametrize("widths", [(2, 0, 1, 0), (0, 0)])
def test_coflows_without_flows_end_at_their_arrival(widths):
    """A cojob whose one job has no phases (an FB coflow of rack-local pairs) is a coflow of
    no flows, released and ended at its arrival, between coflows that send (or alone)."""
    topo = big_switch(4, rate_bps=1e9)
    cojobs = []
    for i, width in enumerate(widths):
        flows = tuple(Flow(k, 3, 40_000 * (i + 1)) for k in range(width))
        sync = Sync(phases=(flows,) if flows else ())
        cojobs.append(Cojob(i, 1e-4 * (len(widths) - i), (Job(i, (0, 1, 2, 3), 0.0, sync),), (Stage(1, (i,)),)))
    workload = Workload(tuple(cojobs), n_hosts=4)
    runs = {mode: play(workload, FluidBackend(topo), policy)
            for mode, policy in (("closed", _closed("fair")), ("open", make_policy("fair")))}
    assert runs["open"].decisions == 0
    for table in TABLES:
        assert getattr(runs["open"], table).equals(getattr(runs["closed"], table)), table
    empty = runs["open"].coflows.set_index("cojob").loc[[i for i, w in enumerate(widths) if w == 0]]
    assert (empty["width"] == 0).all() and (empty["bytes"] == 0).all() and (empty["cct_s"] == 0).all()
    assert np.allclose(empty["release_s"], [cojobs[i].arrival_s for i in empty.index])


def test_only_lone_coflows_under_one_class_are_played_open_loop():
    """A cojob of two iterations, a cojob with compute, classes that differ: closed loop."""
    flow = Flow(0, 1, 10_000)
    job = lambda job_id=0, compute_s=0.0: Job(job_id, (0, 1), compute_s, Sync(phases=((flow,),)))
    lone = Workload((Cojob(0, 0.0, (job(),), (Stage(1, (0,)),)),), n_hosts=2)
    assert lone_coflows(lone)
    for other in (Cojob(0, 0.0, (job(),), (Stage(2, (0,)),)), Cojob(0, 0.0, (job(0, 1e-3),), (Stage(1, (0,)),))):
        assert not lone_coflows(Workload((other,), n_hosts=2))
    pinned = make_policy("pinned")
    two = Workload((Cojob(0, 0.0, (job(),), (Stage(1, (0,)),), priority=0),
                    Cojob(1, 0.0, (job(1),), (Stage(1, (1,)),), priority=2)), n_hosts=2)
    assert not pinned.one_class(two) and pinned.one_class(lone) and make_policy("fair").one_class(two)
    topo = big_switch(2, rate_bps=1e9)
    assert play(two, FluidBackend(topo), pinned).decisions > 0


def test_default_start_flows_at_starts_each_flow_at_its_time():
    """The base class's default (one start_flows per distinct time), on the fake backend."""
    topo = big_switch(4, rate_bps=1e9)
    backend = IdealBackend(topo)
    batch = FlowBatch.of([FlowStart(i, i, (i + 1) % 4, 1000 * (i + 1)) for i in range(4)], topo)
    backend.start_flows_at(batch, np.array([3e-3, 1e-3, 3e-3, 0.0]))
    backend.run()
    starts = backend.flows_table().set_index("flow_id")["start_s"]
    assert starts.to_dict() == {0: 3e-3, 1: 1e-3, 2: 3e-3, 3: 0.0}
    assert [len(entry[2]) for entry in backend.log if entry[0] == "start_flows"] == [1, 1, 2]


@pytest.mark.parametrize("backend_kind", ["fluid", "ideal"])
def test_start_flows_at_refuses_times_before_now_or_of_the_wrong_shape(backend_kind):
    topo = big_switch(4, rate_bps=1e9)
    backend = FluidBackend(topo) if backend_kind == "fluid" else IdealBackend(topo)
    batch = FlowBatch.of([FlowStart(0, 0, 1, 1000), FlowStart(1, 2, 3, 1000)], topo)
    backend.at(1e-3, lambda: None)
    backend.run()
    with pytest.raises(ValueError, match=r"flow 1 cannot start at 0.0005 s: the clock is at 0.001 s"):
        backend.start_flows_at(batch, np.array([2e-3, 5e-4]))
    with pytest.raises(ValueError, match="one time per flow"):
        backend.start_flows_at(batch, np.array([2e-3]))
    with pytest.raises(ValueError, match="cannot start at nan"):
        backend.start_flows_at(batch, np.array([2e-3, np.nan]))


@pytest.mark.packet
def test_open_loop_gives_the_closed_loop_tables_on_packet():
    """ns-3 keeps time in nanoseconds: releases are read back on its clock."""
    scenario = load_scenario("websearch-k8", {"workload.n_flows": 60, "transport.kind": "dctcp"})
    _assert_same_tables(_play_both(scenario, "fair"))


@pytest.mark.packet
@pytest.mark.filterwarnings("ignore:transport.pfc_xoff_bytes")  # a 200-port switch's buffer; no incast here
def test_flows_started_ahead_open_where_a_decision_would_open_them_on_packet():
    """Flows that start in the nanosecond of another flow's packet event: RDMA queue pairs
    of one host share its NIC, so which of a queue pair opening and a packet leaving runs
    first changes who sends next. Started ahead, a flow must open after that instant's
    earlier-scheduled events, as when a decision starts it then (``Session::ScheduleOpen``;
    opening it from an event scheduled at the start of the run moves 2 of these flows)."""
    pairs = 100
    topo = big_switch(2 * pairs, rate_bps=100e9)
    flows = [{"src": 2 * k, "dst": 2 * k + 1, "bytes": 200_000} for k in range(pairs)]
    flows += [{"src": 2 * k, "dst": 2 * k + 1, "bytes": 20_000, "start_s": 5e-6 + k * 1e-9} for k in range(pairs)]
    workload = flow_list_workload(flows, topo.n_hosts)
    from ns3_hpsched.backends.packet import PacketBackend

    runs = {}
    for mode, policy in (("closed", _closed("fair")), ("open", make_policy("fair"))):
        backend = PacketBackend(topo, transport="rdma")
        runs[mode] = play(workload, backend, policy)
        backend.close()
    for table in TABLES:
        assert getattr(runs["open"], table).equals(getattr(runs["closed"], table)), table
