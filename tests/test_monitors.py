"""Monitors ([monitor]): queues, PFC events and link use over time, against analytic cases.

Fluid tests run in milliseconds; packet ones (marked) run one ns-3 simulation each.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from ns3_hpsched.backends.base import FlowStart
from ns3_hpsched.backends.fluid import FluidBackend
from ns3_hpsched.errors import ConfigError
from ns3_hpsched.monitor import MonitorPlan, MonitorSpec, busiest_ports, plan_monitors
from ns3_hpsched.results import SCHEMA, read_run
from ns3_hpsched.run_figures import draw_run, is_run_folder, pause_intervals
from ns3_hpsched.runner import run_id, run_scenario, simulate
from ns3_hpsched.scenario import load_scenario, scenario_from_dict
from ns3_hpsched.topology import big_switch

RATE_BPS = 10e9
INTERVAL_S = 100e-6
ONE_FLOW = [{"src": 0, "dst": 2, "bytes": 1_000_000, "start_s": 0.0, "priority": 0}]


def flows_scenario(flows, backend="fluid", monitor=None, **extra) -> dict:
    raw = {"name": "t", "backend": backend, "topology": {"kind": "big_switch", "n": 3, "rate_bps": RATE_BPS},
           "scheduler": {"name": "pinned", "n_classes": 2}, "fluid": {"latency": False},
           "workload": {"kind": "flows", "flows": flows}, **extra}
    if monitor is not None:
        raw["monitor"] = monitor
    return raw


def full_intervals(links: pd.DataFrame, port: int, start_s: float, finish_s: float) -> pd.DataFrame:
    """The port's rows (all classes summed) of intervals wholly inside [start_s, finish_s]."""
    mine = links[links["port"] == port].groupby(["interval_start_s", "interval_end_s"], as_index=False).sum()
    inside = (mine["interval_start_s"] >= start_s) & (mine["interval_end_s"] <= finish_s)
    inside &= np.isclose(mine["interval_end_s"] - mine["interval_start_s"], INTERVAL_S)
    return mine[inside]


# -- the [monitor] table ------------------------------------------------------------------


@pytest.mark.parametrize("monitor, field", [
    ({"interval_s": 0}, "monitor.interval_s"),
    ({"busiest": 0}, "monitor.busiest"),
    ({"start_s": -1}, "monitor.start_s"),
    ({"every": 3}, "monitor.every"),
    ({"ports": [0], "busiest": 2}, "monitor.busiest"),
    ({"ports": []}, "monitor.ports"),
    ({"ports": [1, 1]}, "monitor.ports"),
    ({"ports": [0, 99]}, "monitor.ports[1]"),
    ({"start_s": 0.2, "stop_s": 0.1}, "monitor.stop_s"),
])
def test_bad_monitor_tables_fail_before_the_run(monitor, field):
    """Each bad [monitor] key raises a ConfigError naming it, before anything runs."""
    with pytest.raises(ConfigError) as err:
        plan_monitors(scenario_from_dict(flows_scenario(ONE_FLOW, monitor=monitor)))
    assert err.value.field == field


def test_monitoring_off_leaves_the_run_as_it_was():
    """No [monitor] (or enabled = false): same resolved config, same run id, no extra tables."""
    flows = [{"src": 0, "dst": 2, "bytes": 1_000_000, "start_s": 0.0, "priority": 0}]
    plain = scenario_from_dict(flows_scenario(flows))
    off = scenario_from_dict(flows_scenario(flows, monitor={"enabled": False, "interval_s": 1e-3}))
    on = scenario_from_dict(flows_scenario(flows, monitor={}))
    assert "monitor" not in plain.resolved() and plain.resolved() == off.resolved()
    assert run_id(plain) == run_id(off) != run_id(on)
    assert plan_monitors(plain) is None and plan_monitors(off) is None
    assert set(simulate(plain)[2]) == {"ports"}


def test_busiest_ports_rank_by_bytes_then_port():
    ports = pd.DataFrame({"port": [0, 1, 2, 3], "tx_bytes": [5, 9, 9, 1]})
    assert busiest_ports(ports, 2) == [1, 2]
    assert busiest_ports(ports, 3) == [0, 1, 2]


def test_packet_busiest_ports_come_from_a_fluid_pass():
    """Three flows into h2 and one h0 -> h1: the busiest two ports are s->h2 and then h0->s."""
    topo = big_switch(3)
    flows = [{"src": s, "dst": 2, "bytes": 3_000_000, "start_s": 0.0, "priority": 0} for s in (0, 1)]
    flows += [{"src": 0, "dst": 1, "bytes": 1_000_000, "start_s": 0.0, "priority": 0}]
    plan = plan_monitors(scenario_from_dict(flows_scenario(flows, backend="packet", monitor={"busiest": 2})))
    assert plan.ports == sorted([topo.port_of[(3, 2)], topo.port_of[(0, 3)]])


# -- fluid links ----------------------------------------------------------------------------


def test_fluid_lone_flow_uses_the_whole_link_in_every_full_interval():
    """One 10 MB flow alone: 100% in every full interval; the intervals add up to the flow."""
    size = 10_000_000
    flows = [{"src": 0, "dst": 2, "bytes": size, "start_s": 0.0, "priority": 0}]
    records, _, tables = simulate(scenario_from_dict(flows_scenario(flows, monitor={"interval_s": INTERVAL_S})))
    finish = records.flows["finish_s"].item()
    links = tables["links"]
    sender = big_switch(3).port_of[(0, 3)]
    full = full_intervals(links, sender, 0.0, finish)
    assert len(full) == int(finish / INTERVAL_S)
    np.testing.assert_allclose(full["utilisation"], 1.0, rtol=1e-9)
    np.testing.assert_allclose(links.groupby("port")["bytes"].sum(), size, rtol=1e-9)


def test_fluid_strict_priority_shows_in_the_link_use_per_class():
    """Class 0 takes the shared port whole and class 1 gets none until class 0 is done; then the
    other flow takes it whole (the pinned policy moves it up to the freed class 0 then)."""
    size = 5_000_000
    flows = [{"src": 0, "dst": 2, "bytes": size, "start_s": 0.0, "priority": 0},
             {"src": 1, "dst": 2, "bytes": size, "start_s": 0.0, "priority": 1}]
    _, _, tables = simulate(scenario_from_dict(flows_scenario(flows, monitor={"interval_s": INTERVAL_S})))
    links = tables["links"]
    shared = links[links["port"] == big_switch(3).port_of[(3, 2)]]
    half = size * 8 / RATE_BPS  # class 0's finish
    shared = shared[shared["utilisation"] > 1e-9]  # not the round-off crumbs at class 0's finish
    first = shared[shared["interval_end_s"] <= half + 1e-12]
    second = shared[shared["interval_start_s"] >= half - 1e-12]
    assert set(first["class"]) == {0} and len(first) == int(half / INTERVAL_S)
    np.testing.assert_allclose(first["utilisation"], 1.0, rtol=1e-9)
    np.testing.assert_allclose(second.groupby("interval_start_s")["utilisation"].sum(), 1.0, rtol=1e-9)


def test_fluid_window_and_explicit_ports():
    """Only the asked ports, only inside [start_s, stop_s)."""
    flows = [{"src": 0, "dst": 2, "bytes": 10_000_000, "start_s": 0.0, "priority": 0}]
    port = big_switch(3).port_of[(3, 2)]
    monitor = {"ports": [port], "interval_s": INTERVAL_S, "start_s": 1e-3, "stop_s": 3.05e-3}
    links = simulate(scenario_from_dict(flows_scenario(flows, monitor=monitor)))[2]["links"]
    assert set(links["port"]) == {port}
    assert links["interval_start_s"].min() == pytest.approx(1e-3)
    assert links["interval_end_s"].max() == pytest.approx(3.05e-3)
    assert links["bytes"].sum() == pytest.approx(2.05e-3 * RATE_BPS / 8, rel=1e-9)


def test_the_fluid_meter_does_not_take_a_taken_hook():
    backend = FluidBackend(big_switch(3))
    backend.on_allocate = print
    with pytest.raises(ValueError, match="on_allocate"):
        MonitorPlan(MonitorSpec(), None).attach(backend)


# -- figures --------------------------------------------------------------------------------


def test_pause_intervals_pair_pause_with_resume():
    pfc = pd.DataFrame({"time_s": [1.0, 2.0, 3.0, 1.5, 4.0], "port": [4, 4, 4, 6, 4], "class": [1, 1, 1, 0, 1],
                        "paused": [True, False, True, True, False]})
    spans = pause_intervals(pfc, end_s=10.0)
    assert spans.values.tolist() == [[4, 1, 1.0, 2.0], [4, 1, 3.0, 4.0], [6, 0, 1.5, 10.0]]


def test_a_fluid_run_folder_gets_its_link_figure(tmp_path):
    """A monitored fluid run writes a documented links table; analyze draws its heatmap."""
    flows = [{"src": 0, "dst": 2, "bytes": 2_000_000, "start_s": 0.0, "priority": 0}]
    out = run_scenario(scenario_from_dict(flows_scenario(flows, monitor={})), tmp_path / "run")
    tables, _ = read_run(out)
    assert set(tables["links"].columns) == set(SCHEMA["links"])
    assert is_run_folder(out) and not is_run_folder(tmp_path)
    assert [p.name for p in draw_run(out, tmp_path / "figures")] == ["link_utilisation.png"]


def test_a_run_without_monitors_has_nothing_to_draw(tmp_path):
    out = run_scenario(scenario_from_dict(flows_scenario(ONE_FLOW)), tmp_path / "run")
    with pytest.raises(ConfigError, match="monitor"):
        draw_run(out, tmp_path / "figures")


# -- packet ---------------------------------------------------------------------------------


def packet_run(PacketBackend, topo, flows, ports, interval_s=10e-6, **knobs):
    backend = PacketBackend(topo, n_classes=2, **knobs)
    monitors = MonitorPlan(MonitorSpec(interval_s=interval_s), ports).attach(backend)
    for flow in flows:
        backend.start_flow(flow)
    stats = backend.run()
    return backend, monitors.tables(stats.end_s)


@pytest.mark.packet
def test_packet_lower_class_queue_holds_then_drains(PacketBackend):
    """DCTCP, class 0 and class 1 into one port: class 1 waits in its band while class 0 runs
    (the link carries class 0 only), then drains to empty and takes the link."""
    topo = big_switch(3, rate_bps=RATE_BPS)
    shared = topo.port_of[(3, 2)]
    size = 5_000_000
    backend, tables = packet_run(PacketBackend, topo, [FlowStart(0, 0, 2, size, priority=0),
                                                       FlowStart(1, 1, 2, size, priority=1)], [shared])
    flows = backend.flows_table().set_index("flow_id")
    first_done = flows.loc[0, "finish_s"]
    q1 = tables["queues"].query("`class` == 1")
    held = q1[(q1["time_s"] > 0.5e-3) & (q1["time_s"] < first_done - 50e-6)]
    samples_while_held = int((first_done - 50e-6 - 0.5e-3) / 10e-6)
    assert len(held) >= samples_while_held - 1 and (held["bytes"] > 0).all()  # no empty sample
    assert q1["bytes"].iloc[-1] == 0  # drained
    links = tables["links"]
    while_0 = links[(links["interval_start_s"] > 0.5e-3) & (links["interval_end_s"] < first_done)]
    by_class = while_0.groupby("class")["bytes"].sum()
    assert by_class.get(1, 0.0) < 0.01 * by_class[0]


@pytest.mark.packet
def test_packet_rdma_incast_pfc_events(PacketBackend):
    """8-to-1 RDMA incast, DCQCN off: every sender's port is paused (and resumed), nothing is
    dropped, and the receiver's queue never exceeds 8 x (XOFF + headroom): each of the 8
    ingress ports holds at most XOFF plus what was in flight when it paused."""
    n = 8
    topo = big_switch(n + 1, rate_bps=RATE_BPS)
    bottleneck = topo.port_of[(n + 1, n)]
    senders = [topo.port_of[(i, n + 1)] for i in range(n)]
    backend, tables = packet_run(PacketBackend, topo, [FlowStart(i, i, n, 2_000_000) for i in range(n)],
                                 [bottleneck], transport="rdma", dcqcn=False)
    xoff, _ = backend.transport.pfc_thresholds(topo)
    headroom = backend.transport.pfc_headroom_bytes(topo)
    pfc = tables["pfc"]
    assert set(pfc.loc[pfc["paused"], "port"]) >= set(senders)
    for _, events in pfc.groupby(["port", "class"]):
        assert events["paused"].tolist() == [True, False] * (len(events) // 2)  # PAUSE, RESUME, ...
    ports = backend.ports_table()
    assert ports["drops"].sum() == 0
    paused = pfc[pfc["paused"]].groupby("port").size().reindex(ports["port"], fill_value=0)
    assert paused.tolist() == ports["pfc_pauses"].tolist()  # the event log agrees with the totals
    queued = tables["queues"].query("port == @bottleneck")["bytes"]
    assert xoff < queued.max() <= n * (xoff + headroom)


@pytest.mark.packet
def test_packet_lone_flow_uses_the_whole_link(PacketBackend):
    """A lone RDMA flow (line rate from its first packet): every full interval of its sender's
    port reads 100% (ns-3 rounds each frame's serialisation to whole ns: 99.99%)."""
    topo = big_switch(3, rate_bps=RATE_BPS)
    sender = topo.port_of[(0, 3)]
    backend, tables = packet_run(PacketBackend, topo, [FlowStart(0, 0, 2, 10_000_000)], [sender],
                                 interval_s=INTERVAL_S, transport="rdma")
    flows = backend.flows_table()
    full = full_intervals(tables["links"], sender, 0.0, flows["finish_s"].item() - 20e-6)
    assert len(full) >= int(flows["finish_s"].item() / INTERVAL_S) - 1
    np.testing.assert_allclose(full["utilisation"], 1.0, rtol=2e-4)


@pytest.mark.packet
def test_monitor_demo_scenario_writes_tables_and_figures(PacketBackend, tmp_path):
    """The shipped demo: queues, pfc and links land in the run folder, and all three figures draw.
    (The fixture loads ns-3 once for the session, outside the test's own time.)"""
    out = run_scenario(load_scenario("monitor-demo"), tmp_path / "run")
    tables, _ = read_run(out)
    for name in ("queues", "pfc", "links"):
        assert not tables[name].empty and set(tables[name].columns) == set(SCHEMA[name])
    assert len(set(tables["links"]["port"])) == 8
    names = [p.name for p in draw_run(out, tmp_path / "figures")]
    assert names == ["queues.png", "pfc.png", "link_utilisation.png"]
