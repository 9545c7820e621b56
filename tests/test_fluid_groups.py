"""The fluid backend's group table: groups keep their routes' ports as the table grows; starved
groups are parked; the rooms a fill does not work out again are the ones it would get."""

from __future__ import annotations

import numpy as np

from ns3_hpsched.backends.base import FlowStart
from ns3_hpsched.backends.fluid import FluidBackend
from ns3_hpsched.backends.fluid.groups import N_OPEN, GroupTable, group_for
from ns3_hpsched.backends.fluid.waterfill import RESIDUAL_RTOL
from ns3_hpsched.topology import big_switch, fat_tree


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


def _open_weights(table: GroupTable) -> np.ndarray:
    """Flows of open groups per (port, class), summed from the groups themselves."""
    weight = np.zeros_like(table.open_weight)
    for grp in table.live_groups().tolist():
        if table.blocked[grp] == 0:
            ports = table.path[grp][table.path[grp] >= 0]
            weight[ports, table.klass[grp]] += table.weight[grp]
    return weight


def _check_parking(table: GroupTable) -> int:
    """Assert the parking books (module docstring of ``groups``) hold; return how many groups are parked."""
    live = table.live_groups().tolist()
    parked = [grp for grp in live if table.blocked[grp] > 0]
    assert sorted(table.opened[:table.counts[N_OPEN]].tolist()) == sorted(set(live) - set(parked))
    np.testing.assert_array_equal(table.open_weight, _open_weights(table))
    for grp in live:
        ports = table.path[grp][table.path[grp] >= 0].tolist()
        klass = int(table.klass[grp])
        assert table.blocked[grp] == (0 if table.alone[grp] else table.full[ports, klass].sum())
        assert all((grp in _listed(table, port, klass)) == (grp not in parked) for port in ports)
        if grp in parked:
            assert table.fill[grp] == 0.0
    return len(parked)


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
    done = {}
    backend.on_flow_done = lambda fid, t: done.setdefault(fid, t)
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
