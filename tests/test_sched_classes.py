"""Mapping an order onto K physical strict-priority queues: position r -> min(r, K-1)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ns3_hpsched.sched import order_to_classes

ORDER = [[10], [20, 21], [30], [40], [50], [60], [70], [80], [90], [100]]


def test_k1_puts_every_flow_in_one_shared_class():
    """K = 1 degenerates to one class for all flows."""
    assert set(order_to_classes(ORDER, 1).values()) == {0}


def test_k2_separates_the_first_class_from_the_rest():
    """K = 2: the head of the order gets queue 0, everything else shares queue 1."""
    classes = order_to_classes(ORDER, 2)
    assert classes[10] == 0
    assert {classes[f] for f in classes if f != 10} == {1}


def test_k8_gives_positions_up_to_the_last_queue_which_the_tail_shares():
    """K = 8: positions 0..6 keep their number, positions 7 and later share queue 7."""
    classes = order_to_classes(ORDER, 8)
    assert [classes[g[0]] for g in ORDER] == [0, 1, 2, 3, 4, 5, 6, 7, 7, 7]
    assert classes[21] == classes[20] == 1


def test_empty_classes_take_no_queue():
    """An empty class consumes no position: the flows after it keep consecutive queues."""
    assert order_to_classes([[], [1], [], [], [2, 3], [4]], 8) == {1: 0, 2: 1, 3: 1, 4: 2}


def test_a_flow_listed_twice_is_a_policy_bug():
    """A flow in two classes raises instead of silently taking one of them."""
    with pytest.raises(ValueError, match="flow 2"):
        order_to_classes([[1, 2], [2]], 8)


@pytest.mark.parametrize("order, again", [([[5, 6, 7], [1, 2], [7, 8]], 7), ([[1, 2, 3], [4, 5], [0, 3]], 3),
                                          ([[10, 11], [0, 1], [11]], 11)])
def test_a_repeat_between_rising_runs_is_found(order, again):
    """Classes of rising ids (coflows' rows, the usual order) whose ranges overlap by one id:
    the quick pass for disjoint runs must not pass them, and the id is named."""
    with pytest.raises(ValueError, match=f"flow {again} appears"):
        order_to_classes(order, 8)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.lists(st.one_of(st.integers(0, 40), st.integers(0, 2**40)), max_size=6), max_size=6),
       st.integers(1, 8))
def test_the_first_flow_listed_again_is_named_and_a_clean_order_maps_by_position(order, k):
    """Against a plain-Python reading of the rule: with dense and with sparse ids (two checks
    inside), the error names the first id seen a second time; without one, class ``r`` of
    the non-empty classes goes to queue ``min(r, k - 1)``."""
    flat = [f for group in order for f in group]
    seen: set[int] = set()
    again = next((f for f in flat if f in seen or seen.add(f)), None)
    if again is not None:
        with pytest.raises(ValueError, match=f"flow {again} appears"):
            order_to_classes(order, k)
        return
    queues = [min(r, k - 1) for r in range(sum(1 for g in order if g))]
    expected = {f: q for q, group in zip(queues, [g for g in order if g]) for f in group}
    assert order_to_classes(order, k) == expected


@pytest.mark.parametrize("k", [0, -1, 2.0, True])
def test_k_must_be_a_positive_integer(k):
    """K below 1 or not an integer is rejected."""
    with pytest.raises(ValueError, match="n_classes"):
        order_to_classes(ORDER, k)
