"""The fluid backend's route index numbers paths as a dict of port tuples would, whatever the paths."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from ns3_hpsched.backends.fluid.routes import RouteIndex

#: Batches of paths: one to eight ports from a few (so paths repeat, share prefixes and
#: extend one another), ports from anywhere in int64's non-negative range.
_PATH = st.lists(st.one_of(st.integers(0, 3), st.integers(0, 2**63 - 1)), min_size=1, max_size=8)
_BATCHES = st.lists(st.lists(_PATH, max_size=40), min_size=1, max_size=8)


def _columns(paths: list[list[int]]) -> tuple[np.ndarray, np.ndarray]:
    """``path_offsets``, ``path_ports`` of ``paths``, as a flow batch gives them."""
    offsets = np.concatenate([[0], np.cumsum([len(p) for p in paths], dtype=np.int64)]).astype(np.int64)
    return offsets, np.array([port for p in paths for port in p], dtype=np.int64)


@settings(deadline=None)  # the first examples compile the table's kernels (growing, rehashing)
@given(_BATCHES, st.integers(1, 4), st.integers(1, 3))
def test_routes_are_numbered_in_order_of_first_appearance(batches, capacity, width):
    """Batch by batch, every path gets the number a dict would give it (new paths in order
    of first appearance), and its row holds exactly its ports, even after the rows grow
    (capacity 1: at once) and widen (width 1: at the first longer path)."""
    index, oracle = RouteIndex(capacity, width), {}
    for paths in batches:
        got = index.routes(*_columns(paths))
        assert got.tolist() == [oracle.setdefault(tuple(p), len(oracle)) for p in paths]
    assert len(index) == len(oracle)
    for path, route in oracle.items():
        row = index.path[route].tolist()
        assert row[:len(path)] == list(path) and all(port == -1 for port in row[len(path):])


def test_a_path_and_its_prefix_are_two_routes():
    """Ports [1, 2] and [1, 2, 3] differ, although the shorter is the other's start."""
    index = RouteIndex()
    assert index.routes(*_columns([[1, 2, 3], [1, 2], [1, 2, 3], [1, 2]])).tolist() == [0, 1, 0, 1]
