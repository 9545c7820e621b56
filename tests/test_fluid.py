"""The fluid backend: analytic finish times, the worked oracle, conservation, events, determinism."""

import numpy as np
import pandas as pd
import pytest

from ns3_hpsched.backends.base import FlowBatch, FlowStart
from ns3_hpsched.backends.fluid import FluidBackend
from ns3_hpsched.backends.fluid.groups import N_RELEVELED, N_RESUMED, N_STEPPED
from ns3_hpsched.errors import ConfigError
from ns3_hpsched.sched.allocator import max_min_allocate
from ns3_hpsched.topology import big_switch, dumbbell, fat_tree

from .listen import each_flow, finish_times

C = 8e9  # bits/s: one byte per nanosecond, so bytes / (C/8) is easy to read


def _run(backend, flows, at=()):
    """Start ``flows`` at time 0 (and ``at``: (time, fn) pairs), run, return {flow_id: finish_s}."""
    done = finish_times(backend)
    for time_s, fn in at:
        backend.at(time_s, fn)
    for flow in flows:
        backend.start_flow(flow)
    backend.run()
    return done


def test_lone_flow_finishes_at_size_over_rate():
    """Without latency a lone flow takes exactly size*8/C."""
    done = _run(FluidBackend(dumbbell(rate_bps=C), latency=False), [FlowStart(1, 0, 2, 5_000_000)])
    assert done == {1: pytest.approx(5e6 * 8 / C, rel=1e-12)}


@pytest.mark.parametrize("size", [100, 1_000_000])
def test_lone_flow_latency_is_rtt_plus_propagation_plus_store_and_forward(size):
    """With latency: one base RTT, the transfer, one-way delay and the last packet at 5 more hops."""
    topo = fat_tree(4, rate_bps=C, delay_s=2e-6)
    src, dst = 0, 15  # different pods: 6 hops
    assert len(topo.flow_path(1, src, dst)) == 6
    expected = topo.base_rtt_s(src, dst) + size * 8 / C + 6 * 2e-6 + 5 * min(size, 9000) * 8 / C
    backend = FluidBackend(topo)
    sent_in_handshake = []
    done = _run(backend, [FlowStart(1, src, dst, size)],
                at=[(6e-6, lambda: sent_in_handshake.append(int(backend.bytes_sent([1])[0])))])
    assert done[1] == pytest.approx(expected, rel=1e-12)
    assert sent_in_handshake == [0]
    assert backend.flows_table()["fct_s"].tolist() == [pytest.approx(expected, rel=1e-12)]


def test_two_flows_on_one_bottleneck_each_get_half():
    """Two equal flows across a dumbbell's bottleneck finish together at 2*size*8/C."""
    done = _run(FluidBackend(dumbbell(rate_bps=C), latency=False),
                [FlowStart(1, 0, 2, 1_000_000), FlowStart(2, 1, 3, 1_000_000)])
    assert done == {1: pytest.approx(2e6 * 8 / C), 2: pytest.approx(2e6 * 8 / C)}


def test_class_zero_flow_finishes_as_if_alone():
    """Strict priority: the class-0 flow takes the bottleneck, the class-1 flow goes after it."""
    done = _run(FluidBackend(dumbbell(rate_bps=C), latency=False),
                [FlowStart(1, 0, 2, 3_000_000, priority=1), FlowStart(2, 1, 3, 1_000_000, priority=0)])
    assert done[2] == pytest.approx(1e6 * 8 / C)
    assert done[1] == pytest.approx(4e6 * 8 / C)


def test_set_priority_mid_flow_swaps_who_is_served():
    """Swapping two flows' classes half-way lets the waiting flow take the bottleneck at once."""
    backend = FluidBackend(dumbbell(rate_bps=C), latency=False)
    swap = [(5e-4, lambda: backend.set_priority(1, 1)), (5e-4, lambda: backend.set_priority(2, 0))]
    done = _run(backend, [FlowStart(1, 0, 2, 1_000_000, priority=0), FlowStart(2, 1, 3, 1_000_000, priority=1)],
                at=swap)
    # flow 1 sends 0.5 MB by 0.5 ms; flow 2 then runs alone for 1 ms; flow 1 ends 0.5 ms later.
    assert done == {2: pytest.approx(1.5e-3), 1: pytest.approx(2e-3)}


def test_two_classes_swapped_past_one_that_stays_give_it_its_new_room():
    """Flows A (host 0 -> 1, class 0), B (0 -> 3, class 1) and C (2 -> 1, class 2) on a big
    switch: A takes host 0's uplink and host 1's downlink, so B and C wait. Swapping A's and
    C's classes at 0.5 ms (each class moves whole) puts C on top, and B, whose uplink A no
    longer holds, gets line rate beside it: both end 1 ms later; A's last 0.5 MB follow."""
    backend = FluidBackend(big_switch(4, rate_bps=C), n_classes=4, latency=False)
    swap = [(5e-4, lambda: backend.set_priorities(np.array([1, 3]), np.array([2, 0])))]
    done = _run(backend, [FlowStart(1, 0, 1, 1_000_000, priority=0), FlowStart(2, 0, 3, 1_000_000, priority=1),
                          FlowStart(3, 2, 1, 1_000_000, priority=2)], at=swap)
    assert done == {3: pytest.approx(1.5e-3), 2: pytest.approx(1.5e-3), 1: pytest.approx(2e-3)}


def test_a_flow_named_twice_moves_alone_not_its_class():
    """Two class-1 flows share the bottleneck; naming one of them twice moves only it (the
    count of names equals the class's flows, yet one was never named): it takes the link."""
    backend = FluidBackend(dumbbell(rate_bps=C), latency=False)
    move = [(5e-4, lambda: backend.set_priorities(np.array([1, 1]), np.array([0, 0])))]
    done = _run(backend, [FlowStart(1, 0, 2, 1_000_000, priority=1), FlowStart(2, 1, 3, 1_000_000, priority=1)],
                at=move)
    # each sent 0.25 MB by 0.5 ms; flow 1's 0.75 MB then take 0.75 ms, and flow 2's follow.
    assert done == {1: pytest.approx(1.25e-3), 2: pytest.approx(2e-3)}


# The worked oracle of SCHEDULERS.md on a 2x2 big switch (capacity 1 unit/s per port):
# C1: in1->out1 size 3; C2: in2->out2 size 5; C3: in1->out1 size 4 and in2->out2 size 1.
# Hosts 0, 1 send (in1, in2) and hosts 2, 3 receive (out1, out2); one unit = 1 MB.
ORACLE_FLOWS = [(1, 1, 0, 2, 3), (2, 2, 1, 3, 5), (3, 3, 0, 2, 4), (4, 3, 1, 3, 1)]  # flow, coflow, src, dst, size


@pytest.mark.parametrize("coflow_class, ccts", [
    ({1: 0, 2: 0, 3: 0}, {1: 6, 2: 6, 3: 7}),  # per-flow fair
    ({1: 0, 3: 1, 2: 2}, {1: 3, 2: 6, 3: 7}),  # SEBF order C1, C3, C2, strict priority
    ({1: 0, 2: 1, 3: 2}, {1: 3, 2: 5, 3: 7}),  # Sincronia order C1, C2, C3
])
def test_worked_oracle_ccts(coflow_class, ccts):
    """The fixed-order rows of the SCHEDULERS.md oracle give exactly their CCTs."""
    unit = 1_000_000
    backend = FluidBackend(big_switch(4, rate_bps=8.0 * unit), latency=False)
    done = _run(backend, [FlowStart(f, s, d, size * unit, coflow_class[c], c) for f, c, s, d, size in ORACLE_FLOWS])
    cct = {c: max(done[f] for f, cf, *_ in ORACLE_FLOWS if cf == c) for c in ccts}
    assert cct == pytest.approx(ccts, rel=1e-12)


def test_explicit_rates_then_backfill_and_clearing_them():
    """A given rate holds a class-1 flow at C/2 beside a class-0 flow; clearing it starves it."""
    backend = FluidBackend(dumbbell(rate_bps=C), latency=False)
    size = 1_000_000  # at C/2 (0.5 byte/ns) both send 0.5 MB in the first 1 ms
    backend.at(0.0, lambda: backend.set_rates({1: C / 2}))
    backend.at(1e-3, lambda: backend.set_rates({}))
    done = _run(backend, [FlowStart(1, 0, 2, size, priority=1), FlowStart(2, 1, 3, size, priority=0)])
    # flow 2 alone from 1 ms: 0.5 MB at 1 byte/ns -> 1.5 ms; then flow 1's 0.5 MB -> 2 ms.
    assert done == {2: pytest.approx(1.5e-3), 1: pytest.approx(2e-3)}


def test_flow_with_explicit_rate_finishing_frees_its_capacity():
    """When a flow holding a given rate ends, a higher-class flow that shared with it speeds up."""
    backend = FluidBackend(dumbbell(rate_bps=C), latency=False)
    backend.at(0.0, lambda: backend.set_rates({1: C / 2}))
    done = _run(backend, [FlowStart(1, 0, 2, 500_000, priority=1), FlowStart(2, 1, 3, 1_000_000, priority=0)])
    # both at 0.5 byte/ns until flow 1 ends at 1 ms; flow 2's last 0.5 MB then takes 0.5 ms.
    assert done == {1: pytest.approx(1e-3), 2: pytest.approx(1.5e-3)}


def test_flows_whose_explicit_rates_fill_a_port_send_at_them_until_room_opens():
    """Explicit rates that fill the bottleneck (as MADD's do) leave their class no room there,
    yet their flows send at them; a starved class-2 flow waits for both."""
    backend = FluidBackend(dumbbell(rate_bps=C), latency=False)
    backend.at(0.0, lambda: backend.set_rates({1: C / 2, 2: C / 2}))
    backend.at(0.25e-3, lambda: backend.set_rates({1: C / 4, 2: 3 * C / 4}))
    done = _run(backend, [FlowStart(1, 0, 2, 500_000, priority=1), FlowStart(2, 1, 3, 1_000_000, priority=1),
                          FlowStart(3, 0, 3, 1_000_000, priority=2)])
    # By 0.25 ms each sent 125 kB at 0.5 byte/ns. Then flow 2 (0.75 byte/ns) ends at 1.41667 ms,
    # flow 1 having sent 125 kB + 0.25 * 1.16667e6 ns; its last 83.3 kB take the whole link
    # (its rate plus the room flow 2 left): 1.5 ms. Flow 3 then sends its 1 MB alone: 2.5 ms.
    assert done == {2: pytest.approx(0.25e-3 + 875_000 / 0.75 * 1e-9), 1: pytest.approx(1.5e-3),
                    3: pytest.approx(2.5e-3)}


def test_watch_coflow_fires_at_the_exact_crossing_time():
    """A coflow paused by a class-0 flow crosses its threshold when the piecewise-linear bytes say."""
    backend = FluidBackend(dumbbell(rate_bps=C), latency=False)
    fired = []
    backend.on_threshold = lambda cid: fired.append((cid, backend.now(), backend.bytes_sent([1, 2]).tolist()))
    backend.watch_coflow(7, 2_000_000)
    backend.watch_coflow(7, 3_000_000)  # replaces the first watch
    backend.at(1e-3, lambda: backend.start_flow(FlowStart(3, 0, 3, 1_000_000, priority=0, coflow_id=8)))
    backend.at(5e-3, lambda: backend.watch_coflow(7, 1000))  # already reached: fires at once
    _run(backend, [FlowStart(1, 0, 2, 4_000_000, priority=1, coflow_id=7),
                   FlowStart(2, 1, 3, 4_000_000, priority=1, coflow_id=7)])
    # coflow 7 sends 1 byte/ns for 1 ms (1 MB), pauses 1 ms while flow 3 runs, then needs 2 MB more.
    assert [(c, pytest.approx(t, rel=1e-12), s) for c, t, s in fired] == [
        (7, 4e-3, [1_500_000, 1_500_000]), (7, 5e-3, [2_000_000, 2_000_000])]


def test_watch_coflow_slows_down_when_one_of_its_flows_finishes():
    """A coflow's crossing time moves when a flow of its finishes, even though no other rate
    changes: two flows on disjoint paths at line rate send 2 bytes/ns until the 1 MB one
    is done at 1 ms, then 1 byte/ns, so 3 MB are reached at 2 ms (not 1.5 ms)."""
    backend = FluidBackend(big_switch(4, rate_bps=C), latency=False)
    fired = []
    backend.on_threshold = lambda cid: fired.append((cid, backend.now()))
    backend.watch_coflow(7, 3_000_000)
    done = _run(backend, [FlowStart(1, 0, 1, 1_000_000, coflow_id=7), FlowStart(2, 2, 3, 4_000_000, coflow_id=7)])
    assert done == {1: pytest.approx(1e-3, rel=1e-12), 2: pytest.approx(4e-3, rel=1e-12)}
    assert fired == [(7, pytest.approx(2e-3, rel=1e-12))]


def test_a_watch_set_before_its_coflow_has_flows_fires_when_they_reach_it():
    """A coflow watched before any flow of it starts (its ports' capacity, the bound on its
    rate, still 0) crosses when its flow, started later, sends the threshold: 1 MB at 1
    byte/ns from 1 ms; and a second flow of it, started later still, is counted too."""
    backend = FluidBackend(big_switch(4, rate_bps=C), latency=False)
    fired = []
    backend.on_threshold = lambda cid: fired.append((cid, backend.now()))
    backend.watch_coflow(7, 1_000_000)
    backend.at(1e-3, lambda: backend.start_flow(FlowStart(1, 0, 1, 4_000_000, coflow_id=7)))
    backend.at(2.5e-3, lambda: backend.watch_coflow(7, 3_000_000))
    backend.at(2.6e-3, lambda: backend.start_flow(FlowStart(2, 2, 3, 4_000_000, coflow_id=7)))
    backend.run()
    # 1.6 MB by 2.6 ms, then 2 bytes/ns: the last 1.4 MB take 0.7 ms.
    assert fired == [(7, pytest.approx(2e-3, rel=1e-12)), (7, pytest.approx(3.3e-3, rel=1e-12))]


def test_watches_fire_when_the_allocations_bring_their_coflows_to_them():
    """Random coflows of four flows with class changes on a k=4 fat-tree, each watched at a
    random share of its bytes (some never reached): every watch fires exactly when the rates
    of the allocations, integrated, bring its coflow's bytes to the threshold, and no other
    fires -- whether its crossing was known exactly or only by its lower bound (its rate
    changed since its flows were last walked) when the time came, and whether or not it was
    armed again with the same threshold in between."""
    rng = np.random.default_rng(4)
    topo = fat_tree(4, rate_bps=C)
    backend = FluidBackend(topo, n_classes=3, latency=False)
    allocations, fired = [], {}
    backend.on_allocate = allocations.append
    backend.on_threshold = lambda cid: fired.setdefault(cid, backend.now())
    threshold, coflow_of, start_of = {}, {}, {}
    for k in range(20):
        sizes = rng.integers(10_000, 2_000_000, size=4)
        threshold[k] = int(sizes.sum() * rng.uniform(0.05, 1.2))
        start_of[k] = start = float(rng.uniform(0, 2e-3))
        backend.at(start, lambda k=k: backend.watch_coflow(k, threshold[k]))
        for j, size in enumerate(sizes.tolist()):
            src, dst = rng.choice(topo.n_hosts, size=2, replace=False)
            flow = FlowStart(4 * k + j, int(src), int(dst), size, int(rng.integers(0, 3)), k)
            coflow_of[flow.flow_id] = k
            backend.at(start, lambda f=flow: backend.start_flow(f))
    for fid in rng.choice(80, size=30).tolist():
        backend.at(start_of[fid // 4] + float(rng.uniform(0, 2e-3)),
                   lambda f=fid, c=int(rng.integers(0, 3)): backend.set_priority(f, c))
    for k in rng.choice(20, size=40).tolist():  # armed again, as Aalo's decisions do: changes nothing
        backend.at(start_of[k] + float(rng.uniform(0, 3e-3)), lambda k=k: backend.watch_coflow(k, threshold[k]))
    backend.run()
    sent, expected = dict.fromkeys(threshold, 0.0), {}
    for alloc, nxt in zip(allocations, allocations[1:]):
        rate = dict.fromkeys(threshold, 0.0)
        for fid, r in zip(alloc.flow_ids.tolist(), alloc.rates_bps.tolist()):
            rate[coflow_of[fid]] += r
        for k in threshold:
            more = rate[k] * (nxt.time_s - alloc.time_s) / 8
            if k not in expected and rate[k] > 0 and sent[k] + more >= threshold[k] * (1 - 1e-12):
                expected[k] = alloc.time_s + (threshold[k] - sent[k]) * 8 / rate[k]
            sent[k] += more
    assert 5 < len(expected) < len(threshold)
    assert fired.keys() == expected.keys()
    for k, t in expected.items():
        assert fired[k] == pytest.approx(t, rel=1e-9), k


def test_at_runs_equal_times_in_scheduling_order():
    """Events at equal times run in the order they were scheduled, also when added at that time."""
    backend = FluidBackend(dumbbell(), latency=False)
    seen = []

    def spawn():
        seen.append("spawn")
        backend.at(1.0, lambda: seen.append("spawned"))

    backend.at(1.0, lambda: seen.append("a"))
    backend.at(1.0, spawn)
    backend.at(1.0, lambda: seen.append("b"))
    backend.at(0.5, lambda: seen.append("early"))
    stats = backend.run()
    assert seen == ["early", "a", "spawn", "b", "spawned"]
    assert (stats.end_s, stats.events) == (1.0, 5)


def test_flows_finishing_at_one_instant_are_heard_in_one_call():
    """Four equal flows on disjoint host pairs of a big switch finish together, at
    size*8/C (each alone on its ports), and a fifth, twice as large, at twice that: the
    listener is called once per instant, with every flow of it, in flow order."""
    backend = FluidBackend(big_switch(10, rate_bps=C), latency=False)
    calls = []
    backend.on_flows_done = lambda ids, t: calls.append((ids.tolist(), t.tolist(), backend.now()))
    for fid in range(4):
        backend.start_flow(FlowStart(fid, 2 * fid, 2 * fid + 1, 1_000_000))
    backend.start_flow(FlowStart(4, 8, 9, 2_000_000))
    backend.run()
    first, second = 1e6 * 8 / C, 2e6 * 8 / C
    assert [(ids, now) for ids, _, now in calls] == [([0, 1, 2, 3], pytest.approx(first, rel=1e-12)),
                                                     ([4], pytest.approx(second, rel=1e-12))]
    assert calls[0][1] == [calls[0][2]] * 4 and calls[1][1] == [calls[1][2]]


def _callbacks(may_lag, latency):
    """Every callback of a random run (:func:`_schedule_random_flows`), in the order they
    ran: (what, id, the time it concerns, ``now()`` when it ran); and the flows table."""
    backend = FluidBackend(fat_tree(4, rate_bps=C), n_classes=3, latency=latency)
    backend.flow_done_may_lag = may_lag
    log = []
    backend.on_flows_done = each_flow(lambda fid, t: log.append(("done", fid, t, backend.now())))
    _schedule_random_flows(backend, np.random.default_rng(5), 80, log)
    backend.run()
    return log, backend.flows_table()


@pytest.mark.parametrize("latency", [False, True])
def test_flows_done_heard_late_come_in_the_same_order_and_a_coflows_last_on_time(latency):
    """``flow_done_may_lag`` changes when the driver hears of a flow, never what it hears
    nor in what order: the callbacks of a run are those of the run that hears each flow at
    its time (the oracle), flow by flow, in the same order among themselves and the other
    callbacks, and the flow that ends a coflow is heard at its time. The others may come
    later (some do, or the loop still returned at each instant a flow finished)."""
    eager, eager_flows = _callbacks(may_lag=False, latency=latency)
    lagging, lagging_flows = _callbacks(may_lag=True, latency=latency)
    assert [entry[:3] for entry in lagging] == [entry[:3] for entry in eager]
    assert all(now == t for what, _, t, now in eager)
    heard = [(fid, t, now) for what, fid, t, now in lagging if what == "done"]
    assert all(now >= t for _, t, now in heard)
    last_of_coflow = {fid // 4: (t, now) for fid, t, now in heard}  # flows of coflow c: 4c..4c+3
    assert all(now == t for t, now in last_of_coflow.values())
    assert any(now > t for _, t, now in heard)
    pd.testing.assert_frame_equal(lagging_flows, eager_flows)


def test_fill_counts_count_each_fill_and_the_groups_it_freezes():
    """The rate core's work counters (for benchmarks) count what it did: four flows of one
    class on distinct host pairs, started together, take one fill freezing four groups;
    each allocation after a flow finishes fills the class once more, but the last one,
    which finds the class empty."""
    backend = FluidBackend(big_switch(8, rate_bps=C), latency=False)
    seen = []
    backend.on_allocate = lambda allocation: seen.append(backend.fill_counts())
    for i in range(4):
        backend.start_flow(FlowStart(i, i, i + 4, 1_000 * (i + 1), 0, 0))
    backend.run()
    assert (seen[0]["fills"], seen[0]["frozen"]) == (1, 4)
    assert [counts["fills"] for counts in seen] == [1, 2, 3, 4, 4]


def _schedule_random_flows(backend, rng, n_flows, log=None):
    """Schedule random flows on ``backend`` (3 classes): coflows of four flows between random
    hosts arriving over 2 ms, and 20 class changes each after its flow's start; with
    ``log``, each of those callbacks appends (what, id, the time it concerns, ``now()``).
    Returns the flows."""
    note = (lambda *entry: log.append((*entry, backend.now()))) if log is not None else (lambda *entry: None)
    flows, start_s = [], []
    for fid in range(n_flows):
        src, dst = rng.choice(backend.topology.n_hosts, size=2, replace=False)
        flow = FlowStart(fid, int(src), int(dst), int(rng.integers(1_000, 2_000_000)),
                         int(rng.integers(0, 3)), int(fid // 4))
        flows.append(flow)
        start_s.append(float(rng.uniform(0, 2e-3)))
        backend.at(start_s[-1], lambda f=flow, t=start_s[-1]: (note("start", f.flow_id, t), backend.start_flow(f)))
    for k, fid in enumerate(rng.choice(n_flows, size=20).tolist()):  # class changes after the start
        t = start_s[fid] + float(rng.uniform(0, 1e-3))
        backend.at(t, lambda f=fid, c=int(rng.integers(0, 3)), t=t, k=k: (note("at", k, t), backend.set_priority(f, c)))
    return flows


def _random_run(seed=3, n_flows=60, latency=False):
    """A k=4 fat-tree with random flows arriving over 2 ms and class changes
    (:func:`_schedule_random_flows`); returns the backend, the flows and every allocation."""
    backend = FluidBackend(fat_tree(4, rate_bps=C), n_classes=3, latency=latency)
    allocations = []
    backend.on_allocate = allocations.append
    flows = _schedule_random_flows(backend, np.random.default_rng(seed), n_flows)
    backend.run()
    return backend, flows, allocations


@pytest.mark.parametrize("latency", [False, True])
def test_conservation_capacity_and_saturation_after_every_allocation(latency):
    """Each flow's rate integrates to its size; no port exceeds capacity; every active flow crosses
    a saturated port (work conservation), checked on every allocation of a random run."""
    backend, flows, allocations = _random_run(latency=latency)
    topo = backend.topology
    cap = topo.port_capacity_bps
    paths = {f.flow_id: topo.flow_path(f.flow_id, f.src, f.dst) for f in flows}
    assert len(allocations[-1].flow_ids) == 0  # a finish always reallocates, so rates end at 0
    integral = dict.fromkeys(paths, 0.0)
    last_seen = {}
    for alloc, nxt in zip(allocations, allocations[1:]):
        port_rate = np.zeros(topo.n_ports)
        for fid, rate in zip(alloc.flow_ids.tolist(), alloc.rates_bps.tolist()):
            port_rate[list(paths[fid])] += rate
            integral[fid] += rate * (nxt.time_s - alloc.time_s)
            last_seen[fid] = nxt.time_s
        np.testing.assert_allclose(alloc.port_rate_bps, port_rate, rtol=1e-9, atol=1e-3)
        assert np.all(port_rate <= cap * (1 + 1e-9))
        saturated = port_rate >= cap * (1 - 1e-9)
        assert all(saturated[list(paths[fid])].any() for fid in alloc.flow_ids.tolist())
    for f in flows:
        assert integral[f.flow_id] / 8 == pytest.approx(f.size_bytes, rel=1e-9)
    finish = backend.flows_table().set_index("flow_id")["finish_s"]
    assert sorted(finish.index) == sorted(paths)
    if not latency:  # finish = when the last byte left, i.e. the reallocation that dropped the flow
        assert all(finish[fid] == pytest.approx(t, rel=1e-12) for fid, t in last_seen.items())
    tx = backend.ports_table()["tx_bytes"].to_numpy()
    expected_tx = np.zeros(topo.n_ports)
    for f in flows:
        expected_tx[list(paths[f.flow_id])] += f.size_bytes
    np.testing.assert_allclose(tx, expected_tx, atol=len(flows))


@pytest.mark.parametrize("n_flows", [12, 80, 400])
def test_incremental_allocation_equals_allocating_from_scratch(n_flows):
    """Keeping the rates of classes above a change gives the allocator's from-scratch rates,
    for classes sparse enough to be filled in parallel rounds (few flows spread over the
    fat-tree) and dense ones filled by the heap, whose refills (400 flows) also relevel
    the fill before when flows finish or a higher class changes their rooms."""
    backend, flows, allocations = _random_run(seed=5, n_flows=n_flows)
    if n_flows == 400:
        assert backend._groups.counts[N_RELEVELED] > 0
    topo = backend.topology
    paths = {f.flow_id: topo.flow_path(f.flow_id, f.src, f.dst) for f in flows}
    for alloc in allocations:
        scratch = max_min_allocate([paths[fid] for fid in alloc.flow_ids.tolist()], alloc.classes,
                                   topo.port_capacity_bps)
        np.testing.assert_allclose(alloc.rates_bps, scratch, rtol=1e-9, atol=1e-3)


@pytest.mark.parametrize("n_ports, n_flows, largest, seed", [(8, 150, 2e6, 0), (16, 400, 1e8, 1), (16, 300, 1e9, 2)])
def test_a_fill_resumed_relevelled_or_stepped_after_flows_finish_equals_allocating_from_scratch(
        n_ports, n_flows, largest, seed):
    """One dense class on a big switch, every flow started at once with its own size, so each
    later allocation follows flows finishing only: the fill relevels the steps of the one
    before, or where those no longer give max-min rates redoes them as steps (:mod:`.steps`),
    or, where relevelling would not pay, resumes the heap at the first step a finished flow's
    group froze at (or, where relevelling left the steps' levels out of order, at the last
    step before it that no earlier step froze higher than a later one); all three happen, and
    the rates are the allocator's from scratch, at every allocation. Sizes are spread over
    decades (log-uniform from 1 kB to ``largest``), as in traces; the last two cases fail if
    a fill resumes relevelled steps where an earlier one froze higher."""
    rng = np.random.default_rng(seed)
    topo = big_switch(n_ports, rate_bps=C)
    backend = FluidBackend(topo, n_classes=1, latency=False)
    allocations = []
    backend.on_allocate = allocations.append
    flows = [FlowStart(fid, *map(int, rng.choice(n_ports, size=2, replace=False)),
                       int(np.exp(rng.uniform(np.log(1e3), np.log(largest))))) for fid in range(n_flows)]
    backend.start_flows(FlowBatch.of(flows, topo))
    backend.run()
    counts = backend._groups.counts
    assert counts[N_RESUMED] > 0 and counts[N_RELEVELED] > 0 and counts[N_STEPPED] > 0
    assert counts[N_RESUMED] + counts[N_RELEVELED] + counts[N_STEPPED] > len(allocations) // 2
    paths = {f.flow_id: topo.flow_path(f.flow_id, f.src, f.dst) for f in flows}
    for alloc in allocations:
        scratch = max_min_allocate([paths[fid] for fid in alloc.flow_ids.tolist()], alloc.classes,
                                   topo.port_capacity_bps)
        np.testing.assert_allclose(alloc.rates_bps, scratch, rtol=1e-9, atol=1e-3)


def test_a_dense_class_under_explicit_rates_reuses_its_fill_and_equals_allocating_from_scratch():
    """As Varys leaves it: a dense class on a big switch, some of whose flows hold explicit
    rates, set and cleared at random times while flows finish. Explicit rates only take
    room from the class's fill, so while they are there its recorded fill is still
    relevelled, redone over its steps or resumed (all three happen), and every allocation
    is the allocator's from scratch."""
    rng = np.random.default_rng(5)
    n_ports = 12
    topo = big_switch(n_ports, rate_bps=C)
    backend = FluidBackend(topo, n_classes=1, latency=False)
    seen = []  # (allocation, explicit rates of its flows, fills resumed, relevelled and stepped so far)
    backend.on_allocate = lambda a: seen.append(
        (a, backend._flows.given_bps[backend._flows.records(a.flow_ids)].copy(),
         backend._groups.counts[[N_RESUMED, N_RELEVELED, N_STEPPED]].copy()))
    flows = [FlowStart(fid, *map(int, rng.choice(n_ports, size=2, replace=False)),
                       int(np.exp(rng.uniform(np.log(1e3), np.log(1e8))))) for fid in range(250)]
    backend.start_flows(FlowBatch.of(flows, topo))
    for t in np.sort(rng.uniform(0, 0.3, 12)).tolist():  # at most 8 flows at C/20: always feasible
        backend.at(t, lambda k=int(rng.integers(0, 9)): backend.set_rates(  # on flows sending now
            {f: C / 20 for f in rng.permutation(seen[-1][0].flow_ids)[:k].tolist()}))
    backend.run()
    reused = np.array([n - m for (_, _, m), (_, given, n) in zip(seen, seen[1:]) if given.any()])
    assert len(reused) > 50 and (reused > 0).any(axis=0).all()
    paths = {f.flow_id: topo.flow_path(f.flow_id, f.src, f.dst) for f in flows}
    for alloc, given, _ in seen:
        scratch = max_min_allocate([paths[fid] for fid in alloc.flow_ids.tolist()], alloc.classes,
                                   topo.port_capacity_bps, given_rate=given)
        np.testing.assert_allclose(alloc.rates_bps, scratch, rtol=1e-9, atol=1e-3)


def test_incremental_allocation_with_explicit_rates_equals_from_scratch():
    """Explicit rates set, changed and cleared at random (as Varys does), with flows arriving,
    finishing and changing class: every allocation, refilled only from the highest class that
    crosses a port whose explicit rates changed, equals the allocator's from-scratch rates."""
    rng = np.random.default_rng(11)
    topo = fat_tree(4, rate_bps=C)
    backend = FluidBackend(topo, n_classes=3, latency=False)
    seen = []  # (allocation, explicit rates of its flows)
    backend.on_allocate = lambda a: seen.append(
        (a, backend._flows.given_bps[backend._flows.records(a.flow_ids)].copy()))
    started, path = [], {}
    for fid in range(60):
        src, dst = rng.choice(topo.n_hosts, size=2, replace=False)
        flow = FlowStart(fid, int(src), int(dst), int(rng.integers(1_000, 2_000_000)), int(rng.integers(0, 3)))
        path[fid] = topo.flow_path(fid, flow.src, flow.dst)
        backend.at(float(rng.uniform(0, 2e-3)), lambda f=flow: (backend.start_flow(f), started.append(f.flow_id)))
    for t in np.sort(rng.uniform(0, 3e-3, 30)).tolist():  # at most 8 flows at C/20: always feasible
        backend.at(t, lambda k=int(rng.integers(0, 9)): backend.set_rates(
            {f: C / 20 for f in rng.permutation(started)[:k].tolist()}))
    for fid in rng.choice(60, size=20).tolist():
        backend.at(float(rng.uniform(0, 3e-3)), lambda f=fid, c=int(rng.integers(0, 3)):
                   f in started and backend.set_priority(f, c))
    backend.run()
    assert sum(given.any() for _, given in seen) > 10
    for alloc, given in seen:
        scratch = max_min_allocate([path[fid] for fid in alloc.flow_ids.tolist()], alloc.classes, topo.port_capacity_bps, given_rate=given)
        np.testing.assert_allclose(alloc.rates_bps, scratch, rtol=1e-9, atol=1e-3)


def test_two_runs_are_identical():
    """No randomness and no hash-order dependence: the same input gives the same tables."""
    first, _, _ = _random_run(latency=True)
    second, _, _ = _random_run(latency=True)
    pd.testing.assert_frame_equal(first.flows_table(), second.flows_table())
    pd.testing.assert_frame_equal(first.ports_table(), second.ports_table())


def test_bad_input_is_rejected():
    """Invalid flows, classes, times and settings raise, naming the field as the packet backend does."""
    backend = FluidBackend(dumbbell(), n_classes=2, latency=False)
    with pytest.raises(ConfigError) as info:
        backend.start_flow(FlowStart(1, 0, 0, 10))
    assert info.value.field == "flow 1.dst"
    with pytest.raises(ConfigError) as info:
        backend.start_flow(FlowStart(1, 0, 2, 10, priority=2))
    assert info.value.field == "flow 1.priority"
    backend.start_flow(FlowStart(1, 0, 2, 10))
    with pytest.raises(ValueError, match="already started"):
        backend.start_flow(FlowStart(1, 0, 2, 10))
    with pytest.raises(KeyError, match="never started"):
        backend.set_priority(9, 0)
    backend.run()
    with pytest.raises(ValueError, match="cannot schedule"):
        backend.at(backend.now() - 1.0, lambda: None)
    with pytest.raises(ConfigError, match="fluid.latency"):
        FluidBackend(dumbbell(), latency="yes")


def test_a_bad_flow_in_a_batch_names_itself_and_starts_nothing():
    """Batch checks name the first bad flow's field, as the one-flow check does, before any
    flow of the batch is started; a bad class in a bulk class change changes nothing."""
    topo = dumbbell(rate_bps=C)
    backend = FluidBackend(topo, n_classes=2, latency=False)
    good = [FlowStart(1, 0, 2, 10), FlowStart(2, 1, 3, 10)]
    for bad, field in [(FlowStart(3, 0, 2, 0), "flow 3.size_bytes"), (FlowStart(3, 2, 2, 10), "flow 3.dst"),
                       (FlowStart(3, 1, 2, 10, priority=-1), "flow 3.priority")]:
        with pytest.raises(ConfigError) as info:
            backend.start_flows(FlowBatch.of([*good, bad, FlowStart(4, 0, 0, 10)], topo))
        assert info.value.field == field
    with pytest.raises(ValueError, match="flow 2 was already started"):
        backend.start_flows(FlowBatch.of([*good, FlowStart(2, 0, 3, 10)], topo))
    backend.start_flows(FlowBatch.of(good, topo))
    with pytest.raises(ValueError, match="got 2"):
        backend.set_priorities(np.array([1, 2]), np.array([1, 2]))
    backend.set_priorities(np.array([2, 1, 2]), np.array([1, 1, 0]))  # in order: the last one wins
    # flow 2 ended in class 0 and takes the bottleneck first; flow 1 (class 1) follows
    assert _run(backend, []) == {2: pytest.approx(10 * 8 / C), 1: pytest.approx(20 * 8 / C)}
