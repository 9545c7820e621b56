"""The fluid flow store's id index answers as a dict of the same ids would, whatever the ids."""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from ns3_hpsched.backends.fluid.ids import IdIndex

#: Batches of unique int64 ids: contiguous runs (the driver's rows), gaps, out of order, negative,
#: and out to the ends of int64 (where a difference of two ids would overflow).
_IDS = st.lists(st.one_of(st.integers(-5, 40), st.integers(-2**63, 2**63 - 1)), unique=True, max_size=60)


@given(_IDS, st.lists(st.integers(1, 12), min_size=1, max_size=6), st.lists(st.integers(-2**63, 2**63 - 1), max_size=20))
def test_records_are_the_ones_a_dict_gives(ids, cuts, probes):
    """Ids added batch by batch (in any order) map to their records; unknown ids to -1."""
    index, oracle, start = IdIndex(), {}, 0
    for cut in cuts + [len(ids)]:
        batch = ids[start:start + cut]
        index.add(np.array(batch, dtype=np.int64), np.arange(len(oracle), len(oracle) + len(batch)))
        oracle.update(zip(batch, range(len(oracle), len(oracle) + len(batch))))
        start += cut
        asked = list(oracle) + probes + [-6, 41]
        assert index.find(np.array(asked, dtype=np.int64)).tolist() == [oracle.get(i, -1) for i in asked]


def test_contiguous_ids_answer_by_offset_and_gaps_do_not_fool_it():
    """Rows 0..n-1 added in order (the driver's ids) come back as themselves; after a gap
    the lookup still tells a known id from one in the gap."""
    index = IdIndex()
    index.add(np.arange(0, 2000), np.arange(0, 2000))
    assert np.array_equal(index.find(np.array([1999, 0, 7])), [1999, 0, 7])
    index.add(np.array([2005]), np.array([2000]))
    assert index.find(np.array([2003, 2005, 1999, -1])).tolist() == [-1, 2000, 1999, -1]


def test_ids_at_the_ends_of_int64_are_sorted_and_found():
    """A batch whose ids differ by more than int64 holds (so a difference would wrap) is
    still sorted, and every id in it found."""
    index = IdIndex()
    index.add(np.array([2**63 - 1, -2**63]), np.array([0, 1]))
    assert index.find(np.array([-2**63, 2**63 - 1, 0])).tolist() == [1, 0, -1]
