"""Stage-aware reconstructions: Grouper-R's stage demands and permutation, Beamer-R's lag order."""

from __future__ import annotations

from hypothesis import given, settings

from ns3_hpsched.sched import make_policy, stage_demands
from ns3_hpsched.sched.beamer import lag_s

from .sched_views import as_lists, coflow, job, random_views, view

# BYTE_SWITCH ports: host h sends on port 2h and receives on port 2h + 1 (1 B/s each).
UP0, UP1, DOWN2, DOWN3 = 0, 2, 5, 7


def test_stage_demand_counts_released_bytes_and_unreleased_iterations():
    """Job 5: 2 B left of its released coflow h0->h2, and 4 - 2 = 2 iterations of T = 3 B
    still to release: D = 2 + 2 * 3 = 8 s on both ports; a jobless coflow counts its bytes."""
    v = view([coflow(1, [(1, 0, 2, 3, 1)], job=5, cojob=0, stage=1), coflow(2, [(2, 1, 3, 4)], cojob=1)],
             jobs=[job(5, cojob=0, stage=1, iterations=4, released=2, sync_port_bytes={UP0: 3, DOWN2: 3})])
    assert stage_demands(v) == {(0, 1): {UP0: 8.0, DOWN2: 8.0}, (1, 0): {UP1: 4.0, DOWN3: 4.0}}


def test_grouper_puts_a_short_stage_before_a_long_one_despite_a_smaller_coflow():
    """Stage A's coflow (2 B) is smaller than B's (3 B), but A has 4 more iterations of 2 B:
    D_A = 10 > D_B = 3, so BSSI runs stage B first; Sincronia sees coflows only and runs A first."""
    v = view([coflow(1, [(1, 0, 2, 2)], job=0, cojob=0), coflow(2, [(2, 0, 2, 3)], job=1, cojob=1)],
             jobs=[job(0, cojob=0, iterations=5, released=1, sync_port_bytes={UP0: 2, DOWN2: 2}),
                   job(1, cojob=1, iterations=1, released=1, sync_port_bytes={UP0: 3, DOWN2: 3})])
    assert as_lists(make_policy("grouper").decide(v).order) == [[2], [1]]
    assert as_lists(make_policy("sincronia").decide(v).order) == [[1], [2]]


def test_grouper_gives_all_coflows_of_a_stage_one_class():
    """Stage (0, 0) holds coflows 1 and 2 (1 B each), stage (1, 0) coflow 3 (3 B on up0, down3).
    Port up0 totals 4: stage (1, 0) has the smaller w/d (1/3), so it goes last."""
    v = view([coflow(1, [(1, 0, 2, 1)], cojob=0), coflow(2, [(2, 1, 3, 1)], cojob=0),
              coflow(3, [(3, 0, 3, 3)], cojob=1)])
    assert as_lists(make_policy("grouper").decide(v).order) == [[1, 2], [3]]
    assert as_lists(make_policy("sincronia").decide(v).order) == [[2], [1], [3]]


def beamer_view():
    """Stage (0, 0): job 0 (coflow 1, 5 B h0->h2, 3 iterations, compute 1 s, T = 5 B) and job 1
    (coflow 2, 2 B h1->h3, last iteration). Stage (1, 0): job 2 (coflow 3, 1 B h0->h3, last)."""
    return view([coflow(1, [(1, 0, 2, 5)], job=0, cojob=0), coflow(2, [(2, 1, 3, 2)], job=1, cojob=0),
                 coflow(3, [(3, 0, 3, 1)], job=2, cojob=1)],
                jobs=[job(0, cojob=0, iterations=3, compute_s=1.0, sync_port_bytes={UP0: 5, DOWN2: 5}),
                      job(1, cojob=0, sync_port_bytes={UP1: 2, DOWN3: 2}),
                      job(2, cojob=1, sync_port_bytes={UP0: 1, DOWN3: 1})])


def test_beamer_lag_is_current_coflow_plus_remaining_iterations():
    """L_0 = 5 + (3 - 0 - 1) * (1 + 5) = 17 s; L_1 = 2 s (last iteration); L_2 = 1 s."""
    v = beamer_view()
    assert [lag_s(v.coflows[c], v) for c in (1, 2, 3)] == [17.0, 2.0, 1.0]


def test_beamer_orders_by_stage_rank_then_lagging_job_first():
    """Stage demands: (0, 0) 5 + 2 * 5 = 15 on up0/down2 and 2 on up1/down3; (1, 0) 1 on up0/down3.
    up0 totals 16: (0, 0) has w/d 1/15 < 1/1 and goes last, so coflow 3 first (despite L = 1),
    then job 0's coflow (L = 17) before job 1's (L = 2)."""
    assert as_lists(make_policy("beamer").decide(beamer_view()).order) == [[3], [1], [2]]


def test_beamer_without_job_state_ranks_by_the_coflow_bottleneck():
    """Coflows whose jobs are not in the view have L = their bottleneck: the larger first."""
    v = view([coflow(1, [(1, 0, 2, 2)], cojob=0), coflow(2, [(2, 1, 3, 5)], cojob=0)])
    assert as_lists(make_policy("beamer").decide(v).order) == [[2], [1]]


@given(random_views())
@settings(max_examples=60, deadline=None)
def test_stage_policies_equal_sincronia_with_one_coflow_per_stage(v):
    """Every random coflow is its own cojob and stage (ids sort alike): Grouper-R and Beamer-R
    order exactly as Sincronia."""
    expected = as_lists(make_policy("sincronia").decide(v).order)
    assert as_lists(make_policy("grouper").decide(v).order) == expected
    assert as_lists(make_policy("beamer").decide(v).order) == expected
