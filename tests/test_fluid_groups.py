"""The fluid backend's group table: groups keep their routes' ports as the table grows, which
holds as many groups as flows not done and refuses more loudly; starved groups are parked;
the rooms a fill does not work out again are the ones it would get."""

from __future__ import annotations

import numpy as np
import pytest

from ns3_hpsched.backends.base import FlowBatch, FlowStart
from ns3_hpsched.backends.fluid import FluidBackend
from ns3_hpsched.backends.fluid.groups import (N_CLASS_MOVES, N_LIVE, N_OPEN, PARKED_STALE, SCAN_RATIO, GroupTable,
                                             group_for)
from ns3_hpsched.backends.fluid.waterfill import RESIDUAL_RTOL
from ns3_hpsched.sched.allocator import max_min_allocate
from ns3_hpsched.topology import big_switch, fat_tree

from .listen import each_flow, finish_times


def _listed(table: GroupTable, port: int, klass: int) -> set[int]:
    """The groups whose hops the (port, class) list holds."""
    groups, h = set(), int(table.port_head[port, klass])
    while h >= 0:
        groups.add(h // table.width)
        h = int(table.hop_next[h])
    return groups


def test_a_longer_route_and_more_groups_keep_every_group_on_its_ports():
    """Groups made with 2-hop routes keep their ports and their places in the (port, class)
    lists when more groups are reserved and a 4-hop route arrives (every hop renumbered)."""
    table = GroupTable(n_ports=8, n_classes=2, capacity=2, width=2)
    table.reserve(capacity=2, routes=2, width=2)
    short = np.array([[0, 1], [2, 3]])
    a = group_for(table.arrays(), short, 0, 0, False, 0.0)
    b = group_for(table.arrays(), short, 1, 1, False, 0.0)
    table.reserve(capacity=4, routes=3, width=4)
    longer = np.array([[0, 1, -1, -1], [2, 3, -1, -1], [4, 5, 6, 7]])
    c = group_for(table.arrays(), longer, 2, 0, False, 0.0)
    d = group_for(table.arrays(), longer, 0, 1, False, 0.0)
    np.testing.assert_array_equal(table.path[[a, b, c, d]],
                                  [[0, 1, -1, -1], [2, 3, -1, -1], [4, 5, 6, 7], [0, 1, -1, -1]])
    expected = {(0, 0): {a}, (1, 0): {a}, (2, 1): {b}, (3, 1): {b}, (0, 1): {d}, (1, 1): {d},
                **{(p, 0): {c} for p in (4, 5, 6, 7)}}
    for port in range(8):
        for klass in range(2):
            assert _listed(table, port, klass) == expected.get((port, klass), set()), (port, klass)


def test_a_full_group_table_refuses_a_group_loudly():
    """A table of two groups makes two and raises on a third (rather than writing past its
    free list): the backend's bound on groups is checked, not trusted."""
    table = GroupTable(n_ports=6, n_classes=1, capacity=2, width=2)
    table.reserve(capacity=2, routes=3, width=2)
    routes = np.array([[0, 1], [2, 3], [4, 5]])
    group_for(table.arrays(), routes, 0, 0, False, 0.0)
    group_for(table.arrays(), routes, 1, 0, False, 0.0)
    with pytest.raises(RuntimeError, match="group table is full"):
        group_for(table.arrays(), routes, 2, 0, False, 0.0)


def test_as_many_groups_as_flows_not_done_carry_every_flow_on_its_own_route():
    """2,100 equal flows on distinct routes of a 50-port big switch, in one batch (more than
    twice the table, so it grows to exactly the flows not done: one group each, no room to
    spare); host i sends to the 42 hosts after it and receives from the 42 before it, so
    max-min gives every flow C/42 and each finishes at 42 * S * 8 / C."""
    n, k, C, S = 50, 42, 8e9, 1_000_000
    topo = big_switch(n, rate_bps=C)
    backend = FluidBackend(topo, n_classes=1, latency=False)
    flows = [FlowStart(i * k + j, i, (i + 1 + j) % n, S, 0) for i in range(n) for j in range(k)]
    done = finish_times(backend)
    backend.start_flows(FlowBatch.of(flows, topo))
    assert len(backend._groups.route) == n * k
    backend.run()
    assert len(done) == n * k
    np.testing.assert_allclose(list(done.values()), k * S * 8 / C, rtol=1e-12)


def _open_weights(table: GroupTable) -> np.ndarray:
    """Flows of open groups per (port, class), summed from the groups themselves."""
    weight = np.zeros_like(table.open_weight)
    for grp in table.live_groups().tolist():
        if table.blocked[grp] == 0:
            ports = table.path[grp][table.path[grp] >= 0]
            weight[ports, table.klass[grp]] += table.weight[grp]
    return weight


def _check_parking(table: GroupTable) -> int:
    """Assert the parking books (module docstring of ``groups``) hold; return how many groups
    are parked. A parked group with an explicit rate still sends: its clock moves, and the
    earliest of such groups' finish times is ``parked_soonest``. Each group whose clock moves has
    its ``done_at`` and rate beside it in ``open_done`` and ``open_rate``, and each live group
    its explicit rate in ``live_given``, which the loop reads."""
    live = table.live_groups().tolist()
    parked = [grp for grp in live if table.blocked[grp] > 0]
    sending = set(live) - {grp for grp in parked if not table.alone[grp]}
    opened = table.opened[:table.counts[N_OPEN]]
    np.testing.assert_array_equal(table.live_given[:len(live)], table.given[live])
    assert sorted(opened.tolist()) == sorted(sending)
    np.testing.assert_array_equal(table.open_done[:len(opened)], table.done_at[opened])
    np.testing.assert_array_equal(table.open_rate[:len(opened)], table.given[opened] + table.fill[opened])
    np.testing.assert_array_equal(table.open_weight, _open_weights(table))
    for grp in live:
        ports = table.path[grp][table.path[grp] >= 0].tolist()
        klass = int(table.klass[grp])
        assert table.blocked[grp] == table.full[ports, klass].sum()
        assert all((grp in _listed(table, port, klass)) == (grp not in parked) for port in ports)
        if grp in parked:
            assert table.fill[grp] == 0.0
    given_parked = [grp for grp in parked if table.alone[grp]]
    if given_parked and not table.counts[PARKED_STALE]:
        assert table.parked_soonest[0] == min(table.finish_at[given_parked])
    return len(parked)


def _check_slots(backend: FluidBackend) -> None:
    """Assert each live group without an explicit rate is the one of its (route, class), and
    every active flow is in its group's class."""
    table, flows = backend._groups, backend._flows
    n_classes = table.port_head.shape[1]
    for grp in table.live_groups().tolist():
        if not table.alone[grp]:
            assert table.slot[table.route[grp] * n_classes + table.klass[grp]] == grp
    active = flows.active_recs()
    np.testing.assert_array_equal(flows.klass[active], table.klass[flows.group[active]])


def _check_rooms(backend: FluidBackend) -> None:
    """Assert every class's room on each of its ports not marked stale is what the classes
    above and the explicit rates leave it (summed in the fill's order), and that a class
    has usage only on the ports its last fill listed."""
    table, capacity, given = backend._groups, backend._capacity, backend._given_port
    for klass in range(table.port_head.shape[1]):
        listed = set(table.fill_ports[klass, :table.class_n_fill[klass]].tolist())
        assert set(np.flatnonzero(table.usage[:, klass]).tolist()) <= listed
        for port in table.class_ports[klass, :table.class_n_ports[klass]].tolist():
            if table.stale[port, klass]:
                continue
            room = capacity[port] - given[port]
            for above in range(klass):
                room -= table.usage[port, above]
            room = 0.0 if room <= RESIDUAL_RTOL * capacity[port] else room
            assert table.room[port, klass] == room, (port, klass)


def test_a_starved_group_is_parked_and_unparked_when_its_port_frees():
    """Class 0 fills host 0's uplink, so the class-1 flow from host 0 (sharing only that port)
    is parked at rate 0 with the parking books right (its full ports counted, out of the open
    lists and weights); once class 0 is done it is open again and gets line rate: finishes at
    S/C and 2S/C."""
    C, S = 8e9, 1_000_000
    backend = FluidBackend(big_switch(3, rate_bps=C), n_classes=2, latency=False)
    seen = []
    backend.on_allocate = lambda alloc: seen.append((alloc.time_s, _check_parking(backend._groups)))
    done = finish_times(backend)
    backend.start_flow(FlowStart(0, 0, 1, S, 0))
    backend.start_flow(FlowStart(1, 0, 2, S, 1))
    backend.run()
    assert seen[0] == (0.0, 1) and seen[-1][1] == 0
    assert done == {0: S * 8 / C, 1: 2 * S * 8 / C}


def test_parking_and_room_books_hold_through_a_random_run():
    """Random flows in three classes on a k=4 fat-tree, with class changes: after every
    allocation the parking books and the rooms hold, and groups were parked on the way."""
    rng = np.random.default_rng(3)
    topo = fat_tree(4, rate_bps=8e9)
    backend = FluidBackend(topo, n_classes=3, latency=False)
    parked = []
    backend.on_allocate = lambda alloc: (parked.append(_check_parking(backend._groups)), _check_rooms(backend))
    for fid in range(150):
        src, dst = rng.choice(topo.n_hosts, size=2, replace=False)
        flow = FlowStart(fid, int(src), int(dst), int(rng.integers(1_000, 2_000_000)), int(rng.integers(0, 3)))
        backend.at(float(rng.uniform(0, 1e-3)), lambda f=flow: backend.start_flow(f))
    for fid in rng.choice(150, size=40).tolist():
        backend.at(float(rng.uniform(1e-3, 3e-3)), lambda f=fid, c=int(rng.integers(0, 3)): backend.set_priority(f, c))
    backend.run()
    assert max(parked) > 10 and parked[-1] == 0


def test_coflow_orders_moving_whole_classes_keep_the_books_and_the_allocators_rates():
    """Decisions as ``aalo`` and ``sincronia`` make them: each coflow its own class, in an order
    that keeps its coflows' places as the ones ahead finish (so classes move up whole), sends
    one to the back (a cycle of classes) or shuffles them, the coflows past the last class
    sharing it; now and then a flow is named twice (the last naming counts), and two flows
    from one host hold half the line each, filling its uplink (their groups park but send).
    After every allocation the books hold, every flow is in the class named last, and the
    rates are the allocator's from scratch; classes moved whole on the way."""
    rng = np.random.default_rng(7)
    C, n_classes = 8e9, 4
    topo = fat_tree(4, rate_bps=C)
    backend = FluidBackend(topo, n_classes=n_classes, latency=False)
    coflows, paths, named, left = {}, {}, {}, {}
    order, parked_given = [], []

    def decide():
        live = [k for k in order if left[k]]
        choice = rng.random()
        if choice < 0.2 and live:
            live.append(live.pop(int(rng.integers(len(live)))))
        elif choice < 0.35:
            live = [live[i] for i in rng.permutation(len(live))]
        order[:] = live
        ids = [fid for k in live for fid in coflows[k]]
        classes = [min(pos, n_classes - 1) for pos, k in enumerate(live) for _ in coflows[k]]
        if ids and rng.random() < 0.1:
            ids.append(ids[0])
            classes.append(int(rng.integers(n_classes)))
        backend.set_priorities(np.array(ids, dtype=np.int64), np.array(classes, dtype=np.int64))
        named.update(zip(ids, classes))
        sending = [fid for k in live for fid in coflows[k] if fid in named and fid not in done]
        by_host = {}
        for fid in sending:
            by_host.setdefault(flows[fid].src, []).append(fid)
        pairs = [fids[:2] for fids in by_host.values() if len(fids) >= 2]
        given = {}
        if pairs and rng.random() < 0.5:
            given = dict.fromkeys(pairs[int(rng.integers(len(pairs)))], C / 2)
        backend.set_rates(given)

    def arrive(k):
        for fid in coflows[k]:
            backend.start_flow(flows[fid])
            named[fid] = flows[fid].priority
        order.insert(int(rng.integers(len(order) + 1)), k)
        decide()

    done = set()

    def flow_done(fid, t):
        done.add(fid)
        k = fid // 4
        left[k] -= 1
        if left[k] == 0:
            backend.at(t, decide)

    def check(alloc):
        table = backend._groups
        _check_parking(table)
        _check_rooms(backend)
        _check_slots(backend)
        parked_given.append(int((table.alone & (table.blocked > 0))[table.live_groups()].sum()))
        assert alloc.classes.tolist() == [named[fid] for fid in alloc.flow_ids.tolist()]
        given = backend._flows.given_bps[backend._flows.records(alloc.flow_ids)]
        scratch = max_min_allocate([paths[fid] for fid in alloc.flow_ids.tolist()], alloc.classes,
                                   topo.port_capacity_bps, given_rate=given)
        np.testing.assert_allclose(alloc.rates_bps, scratch, rtol=1e-9, atol=1e-3)

    flows = []
    for k in range(30):
        coflows[k], left[k] = list(range(4 * k, 4 * k + 4)), 4
        for fid in coflows[k]:
            src, dst = rng.choice(topo.n_hosts, size=2, replace=False)
            flows.append(FlowStart(fid, int(src), int(dst), int(rng.integers(10_000, 2_000_000)),
                                   n_classes - 1, k))
            paths[fid] = topo.flow_path(fid, int(src), int(dst))
        backend.at(float(rng.uniform(0, 3e-3)), lambda k=k: arrive(k))
    backend.on_allocate = check
    backend.on_flows_done = each_flow(flow_done)
    backend.run()
    assert done == set(paths)
    assert backend._groups.counts[N_CLASS_MOVES] > 20 and max(parked_given) > 0


@pytest.mark.parametrize("background, moved, scanned", [(300, 2, False), (4, 60, True)])
def test_a_class_moved_whole_is_relabelled_whether_walked_or_scanned(background, moved, scanned):
    """A coflow in class 1 moves up whole when the flow in class 0 finishes. A class with
    few hops among many live groups is found by walking its hop lists, one with many by
    reading the live groups (:data:`SCAN_RATIO`); either way its flows are in class 0 with
    their groups, the slots hold, and the rates are the allocator's from scratch."""
    rng = np.random.default_rng(5)
    C = 8e9
    topo = fat_tree(4, rate_bps=C)
    backend = FluidBackend(topo, n_classes=3, latency=False)
    flows, paths, named, regime = [], {}, {}, []
    for fid in range(1 + moved + background):
        klass, size = (0, 10_000) if fid == 0 else (1, 50_000_000) if fid <= moved else (2, 50_000_000)
        src, dst = rng.choice(topo.n_hosts, size=2, replace=False)
        flows.append(FlowStart(fid, int(src), int(dst), size, klass))
        paths[fid], named[fid] = topo.flow_path(fid, int(src), int(dst)), klass

    def move_up(fid, t):
        if fid == 0:
            table = backend._groups
            regime.append(bool(table.class_crossings[1] * SCAN_RATIO >= table.counts[N_LIVE]))
            ids = np.arange(1, 1 + moved)
            backend.set_priorities(ids, np.zeros(moved, dtype=np.int64))
            named.update(dict.fromkeys(ids.tolist(), 0))

    def check(alloc):
        _check_slots(backend)
        assert alloc.classes.tolist() == [named[fid] for fid in alloc.flow_ids.tolist()]
        scratch = max_min_allocate([paths[fid] for fid in alloc.flow_ids.tolist()], alloc.classes,
                                   topo.port_capacity_bps)
        np.testing.assert_allclose(alloc.rates_bps, scratch, rtol=1e-9, atol=1e-3)

    backend.on_flows_done = each_flow(move_up)
    backend.on_allocate = check
    for flow in flows:
        backend.start_flow(flow)
    backend.run()
    assert regime == [scanned] and backend._groups.counts[N_CLASS_MOVES] == 1
