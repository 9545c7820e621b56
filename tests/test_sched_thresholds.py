"""Threshold policies: FIFO-LM's heavy threshold and Aalo's queues, watches and reclassification."""

from __future__ import annotations

import math

from hypothesis import given, settings

from ns3_hpsched.sched import make_policy
from ns3_hpsched.sched.view import CoflowState
from ns3_hpsched.workload.spec import Cojob, Flow, Job, Stage, Sync, Workload

from .sched_views import as_lists, coflow, oracle, random_views, view


def classes(order):
    """An order as a sequence of flow sets (the order inside a class means nothing)."""
    return [set(group) for group in order]


def fifo(v):
    """The FIFO reference: coflows by (release, id), each its own class."""
    ordered = sorted(v.coflows.values(), key=lambda c: (c.release_s, c.coflow_id))
    return [{f.flow_id for f in c.flows} for c in ordered]


def aalo_oracle():
    """Aalo with the oracle's parameters Q1 = 2, E = 2, K = 3 (thresholds 2 and 4 bytes)."""
    return make_policy("aalo", n_queues=3, first_threshold_bytes=2, multiplier=2)


# -- FIFO-LM -------------------------------------------------------------------------------

def test_fifo_lm_merges_heavy_prefix_with_the_first_light_coflow():
    """Oracle at t = 1 (theta = 1): C1, C2 have sent 1 B (heavy), C3 none: all three share one class."""
    decision = make_policy("fifo-lm", theta_bytes=1).decide(oracle(sent=(1, 1, 0, 0), now_s=1.0))
    assert as_lists(decision.order) == [[1, 2, 3, 4]]
    assert decision.watch == {3: 1}


def test_fifo_lm_stops_the_prefix_at_the_first_light_coflow():
    """theta = 2: C1 heavy (2 B), C2 light (1 B): C1 and C2 share class 0, C3 follows alone."""
    decision = make_policy("fifo-lm", theta_bytes=2).decide(oracle(sent=(2, 1, 0, 0), now_s=2.0))
    assert as_lists(decision.order) == [[1, 2], [3, 4]]
    assert decision.watch == {2: 2}


class Unread(CoflowState):
    """A coflow whose sent bytes must not be read."""

    __slots__ = ()

    @property
    def sent_bytes(self) -> int:
        raise AssertionError(f"coflow {self.coflow_id}'s sent bytes were read")


def test_fifo_lm_reads_a_coflow_it_found_heavy_no_more():
    """Sent bytes only grow, so a coflow once heavy stays in the prefix without its bytes
    being read again: at t = 2 the view's C1 could not say (reading it fails), yet the
    decision is t = 1's with C2 heavy too (theta = 1)."""
    policy = make_policy("fifo-lm", theta_bytes=1)
    assert as_lists(policy.decide(oracle(sent=(1, 0, 0, 0), now_s=1.0)).order) == [[1, 2], [3, 4]]
    later = oracle(sent=(1, 1, 0, 0), now_s=2.0)
    later.coflows[1].__class__ = Unread
    decision = policy.decide(later)
    assert as_lists(decision.order) == [[1, 2, 3, 4]]
    assert decision.watch == {3: 1}


def test_fifo_lm_learns_theta_as_the_percentile_of_released_coflow_sizes():
    """Nine 100 B coflows and one 1000 B coflow: the 90th percentile is 100 B;
    eight and two make it 1000 B (each iteration's coflow counts once)."""
    def workload(big_iterations):
        small = Job(0, (0, 1), 0.0, Sync(((Flow(0, 1, 100),),)))
        big = Job(1, (2, 3), 0.0, Sync(((Flow(2, 3, 600), Flow(3, 2, 400)),)))
        cojobs = (Cojob(0, 0.0, (small,), (Stage(10 - big_iterations, (0,)),)),
                  Cojob(1, 0.0, (big,), (Stage(big_iterations, (1,)),)))
        return Workload(cojobs, n_hosts=4)

    for big_iterations, theta in [(1, 100.0), (2, 1000.0)]:
        policy = make_policy("fifo-lm")
        policy.setup(workload(big_iterations))
        assert policy.describe()["params"]["theta_bytes"] == theta


@given(random_views())
@settings(max_examples=60, deadline=None)
def test_fifo_lm_theta_zero_is_per_flow_fair(v):
    """theta = 0: every coflow is heavy at once, so all flows share one class, as under fair."""
    fair = make_policy("fair").decide(v).order
    assert classes(make_policy("fifo-lm", theta_bytes=0).decide(v).order) == classes(fair)


@given(random_views())
@settings(max_examples=60, deadline=None)
def test_fifo_lm_theta_infinite_is_fifo(v):
    """theta = inf: no coflow is ever heavy, so the prefix is the head alone: FIFO, and no watch."""
    decision = make_policy("fifo-lm", theta_bytes=math.inf).decide(v)
    assert classes(decision.order) == fifo(v)
    assert decision.watch == {}


# -- Aalo ----------------------------------------------------------------------------------

def test_aalo_demotes_coflows_that_crossed_q1_behind_queue_zero():
    """Oracle at t = 2: C1, C2 sent 2 B (queue 1, entered at 2), C3 none (queue 0): C3 first;
    the next thresholds are 4 B for C1, C2 and 2 B for C3."""
    policy = aalo_oracle()
    policy.decide(oracle())
    decision = policy.decide(oracle(sent=(2, 2, 0, 0), now_s=2.0))
    assert as_lists(decision.order) == [[3, 4], [1], [2]]
    assert decision.watch == {1: 4, 2: 4, 3: 2}


def test_aalo_serves_a_queue_by_entry_time_not_release_time():
    """A (released 0) reaches queue 1 at t = 3, after B (released 1) did at t = 2: B goes first."""
    policy = make_policy("aalo", n_queues=3, first_threshold_bytes=2, multiplier=2)

    def at(now_s, sent_a, sent_b=None):
        a = coflow(1, [(1, 0, 2, 10, sent_a)], release_s=0.0)
        b = [] if sent_b is None else [coflow(2, [(2, 1, 3, 10, sent_b)], release_s=1.0)]
        return policy.decide(view([a, *b], now_s=now_s))

    assert as_lists(at(0.0, 0).order) == [[1]]
    assert as_lists(at(1.0, 1, 0).order) == [[1], [2]]
    assert as_lists(at(2.0, 1, 2).order) == [[1], [2]]  # B alone in queue 1
    assert as_lists(at(3.0, 2, 2).order) == [[2], [1]]  # both in queue 1: B entered first


def test_aalo_stops_watching_in_the_last_queue():
    """A coflow that has reached the last queue (K - 1 = 2 at 4 B) has no next threshold."""
    decision = aalo_oracle().decide(oracle(sent=(0, 4, 0, 0), now_s=4.0))
    assert decision.watch == {1: 2, 3: 2}
    assert as_lists(decision.order) == [[1], [3, 4], [2]]


def test_aalo_setup_forgets_entry_times_of_the_previous_run():
    """After setup, a coflow id seen before enters queue 0 at its release again."""
    policy = aalo_oracle()
    policy.decide(view([coflow(1, [(1, 0, 2, 10, 3)], release_s=0.0)], now_s=5.0))
    policy.setup(Workload((), n_hosts=4))
    late = coflow(2, [(2, 1, 3, 10, 3)], release_s=0.0)
    again = coflow(1, [(1, 0, 2, 10, 3)], release_s=0.0)
    # first seen in queue 1 now: both entered at now (7) and tie by (release, id)
    assert as_lists(policy.decide(view([late, again], now_s=7.0)).order) == [[1], [2]]


@given(random_views())
@settings(max_examples=60, deadline=None)
def test_aalo_with_one_queue_is_fifo(v):
    """K = 1: every coflow stays in queue 0, entered at its release: FIFO, and no watch."""
    decision = make_policy("aalo", n_queues=1, first_threshold_bytes=1).decide(v)
    assert classes(decision.order) == fifo(v)
    assert decision.watch == {}
