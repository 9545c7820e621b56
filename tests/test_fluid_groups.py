"""The fluid backend's group table: groups keep their routes' ports as the table grows."""

from __future__ import annotations

import numpy as np

from ns3_hpsched.backends.fluid.groups import GroupTable, group_for


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
