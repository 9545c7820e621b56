"""Mapping an order onto K physical strict-priority queues: position r -> min(r, K-1)."""

from __future__ import annotations

import pytest

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


@pytest.mark.parametrize("k", [0, -1, 2.0, True])
def test_k_must_be_a_positive_integer(k):
    """K below 1 or not an integer is rejected."""
    with pytest.raises(ValueError, match="n_classes"):
        order_to_classes(ORDER, k)
