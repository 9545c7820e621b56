"""Varys' MADD rates, hand-derived on the worked oracle, and their work conservation."""

from __future__ import annotations

from hypothesis import given, settings

from ns3_hpsched.sched import make_policy

from .sched_views import BYTE_SWITCH, as_lists, oracle, random_views

B = 8.0  # every port: 8 bit/s = 1 B/s


def test_madd_at_t0_gives_c1_and_c2_full_ports_and_starves_c3():
    """Order C1, C3, C2: C1 takes in1/out1 (tau 3); C3 needs in1, now full: skipped;
    C2 takes in2/out2 (tau 5); nothing is left to backfill C3's flows."""
    assert make_policy("varys").decide(oracle()).rates_bps == {1: B, 2: B, 3: 0.0, 4: 0.0}


def test_madd_at_t3_backfills_the_skipped_coflow():
    """t = 3: C1 done, C2 has 2 B left (bottleneck 2) before C3 (4). C2 gets in2 whole;
    C3 needs in2 too: skipped; backfill gives its in1 flow the idle in1/out1 path."""
    v = oracle(sent=(3, 3, 0, 0), now_s=3.0)
    del v.coflows[1]
    decision = make_policy("varys").decide(v)
    assert as_lists(decision.order) == [[2], [3, 4]]
    assert decision.rates_bps == {2: B, 3: B, 4: 0.0}


def test_madd_at_t5_finishes_both_flows_together_then_backfills():
    """t = 5: C3 has 2 B and 1 B left: tau = 2 s gives 8 and 4 bps; in2 keeps 4 bps for flow 4."""
    v = oracle(sent=(3, 5, 2, 0), now_s=5.0)
    del v.coflows[1], v.coflows[2]
    assert make_policy("varys").decide(v).rates_bps == {3: B, 4: B}


def test_sebf_without_madd_leaves_rates_to_the_allocator():
    """madd = false gives the same order and no explicit rates."""
    decision = make_policy("varys", madd=False).decide(oracle())
    assert as_lists(decision.order) == [[1], [3, 4], [2]]
    assert decision.rates_bps is None


@given(random_views())
@settings(max_examples=60, deadline=None)
def test_madd_rates_are_feasible_and_work_conserving(v):
    """No port is overloaded and every flow crosses a port with no capacity left."""
    rates = make_policy("varys").decide(v).rates_bps
    flows = [f for c in v.coflows.values() for f in c.flows]
    load = {}
    for f in flows:
        for p in f.ports:
            load[p] = load.get(p, 0.0) + rates[f.flow_id]
    capacity = BYTE_SWITCH.port_capacity_bps
    assert all(load[p] <= capacity[p] * (1 + 1e-9) for p in load)
    assert all(any(load[p] >= capacity[p] * (1 - 1e-9) for p in f.ports) for f in flows)
