"""Each policy's order at t = 0 on the worked oracle of SCHEDULERS.md, derived by hand.

C1: in1->out1 3 B (flow 1). C2: in2->out2 5 B (flow 2). C3: in1->out1 4 B (flow 3) and
in2->out2 1 B (flow 4). Every port carries 1 B/s, so demands in seconds equal bytes.
"""

from __future__ import annotations

from ns3_hpsched.sched import make_policy

from .sched_views import as_lists, oracle


def test_fair_puts_every_flow_in_one_class():
    """Per-flow fair: one class with all four flows."""
    assert as_lists(make_policy("fair").decide(oracle()).order) == [[1, 2, 3, 4]]


def test_fifo_lm_starts_as_fifo_and_watches_the_head():
    """FIFO-LM, theta = 1: nobody heavy, so the prefix is C1 alone; C2, C3 follow in FIFO."""
    decision = make_policy("fifo-lm", theta_bytes=1).decide(oracle())
    assert as_lists(decision.order) == [[1], [2], [3, 4]]
    assert decision.watch == {1: 1}


def test_aalo_starts_every_coflow_in_queue_zero_in_fifo_order():
    """Aalo Q1=2, E=2, K=3: all in queue 0, same entry time, ties by release then id."""
    decision = make_policy("aalo", n_queues=3, first_threshold_bytes=2, multiplier=2).decide(oracle())
    assert as_lists(decision.order) == [[1], [2], [3, 4]]
    assert decision.watch == {1: 2, 2: 2, 3: 2}


def test_varys_orders_by_smallest_effective_bottleneck():
    """SEBF: bottlenecks C1 = 3, C3 = max(4, 1) = 4, C2 = 5, so C1, C3, C2."""
    assert as_lists(make_policy("varys").decide(oracle()).order) == [[1], [3, 4], [2]]


def test_sincronia_bssi_order():
    """BSSI: in1 (total 7, first of the tied in1/out1) picks C3 last (1/4 < 1/3);
    then in2 (5 > 3) holds only C2; C1 goes first: C1, C2, C3."""
    assert as_lists(make_policy("sincronia").decide(oracle()).order) == [[1], [2], [3, 4]]


def test_stage_aware_policies_equal_sincronia_with_one_coflow_per_stage():
    """Each oracle coflow is its own cojob and stage, so Grouper-R and Beamer-R rank as BSSI."""
    for name in ("grouper", "beamer"):
        assert as_lists(make_policy(name).decide(oracle()).order) == [[1], [2], [3, 4]], name
