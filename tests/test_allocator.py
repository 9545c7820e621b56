"""The flow-level allocator: hand-computed cases and the defining properties (hypothesis)."""

from fractions import Fraction as F

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ns3_hpsched.sched.allocator import Incidence, allocate, max_min_allocate

INF = float("inf")


def test_one_link_shared_by_n_flows_gives_each_c_over_n():
    """n flows on one port of capacity C each get exactly C/n."""
    for n in (1, 2, 3, 7):
        rates = max_min_allocate([(0,)] * n, [0] * n, [F(10)])
        assert rates.tolist() == [F(10, n)] * n


def test_classic_max_min_with_two_bottlenecks():
    """Bertsekas-Gallager style: a long flow limited by the busier port, the rest take the slack."""
    # port 0 (cap 1): f0, f1; port 1 (cap 1): f1, f2, f3. Port 1 is the bottleneck of f1, f2, f3
    # at 1/3; f0 then gets the 2/3 that f1 leaves on port 0.
    rates = max_min_allocate([(0,), (0, 1), (1,), (1,)], [0] * 4, [F(1), F(1)])
    assert rates.tolist() == [F(2, 3), F(1, 3), F(1, 3), F(1, 3)]


def test_mixed_capacities_three_levels():
    """Three bottleneck levels on ports of different speeds, checked by hand."""
    # port 0 cap 6: f0, f1, f2; port 1 cap 1: f2, f3; port 2 cap 10: f1, f4.
    # Round 1: port 1 share 1/2 -> f2, f3 = 1/2. Port 0: (6 - 1/2)/2 = 11/4 -> f0, f1.
    # Port 2: f4 = 10 - 11/4 = 29/4.
    rates = max_min_allocate([(0,), (0, 2), (0, 1), (1,), (2,)], [0] * 5, [F(6), F(1), F(10)])
    assert rates.tolist() == [F(11, 4), F(11, 4), F(1, 2), F(1, 2), F(29, 4)]


def test_strict_priority_starves_the_lower_class():
    """A class-0 flow takes the whole port; the class-1 flow there gets 0, elsewhere it is free."""
    rates = max_min_allocate([(0,), (0,), (1,)], [0, 1, 1], [F(4), F(4)])
    assert rates.tolist() == [F(4), F(0), F(4)]


def test_lower_class_takes_what_the_higher_class_leaves():
    """A class-0 flow held to 1/2 elsewhere leaves the other half of its port to class 1."""
    rates = max_min_allocate([(0, 1), (1,), (0,)], [0, 0, 1], [F(1), F(1)])
    assert rates.tolist() == [F(1, 2), F(1, 2), F(1, 2)]


def test_rate_cap_behaves_like_a_private_port():
    """A capped flow stops at its cap and the others share the rest max-min."""
    rates = max_min_allocate([(0,), (0,), (0,)], [0, 0, 0], [F(1)], rate_cap=[F(1, 10), INF, INF])
    assert rates.tolist() == [F(1, 10), F(9, 20), F(9, 20)]


def test_flow_without_ports_is_unconstrained():
    """A flow crossing no port gets inf, or its cap when it has one."""
    rates = max_min_allocate([(), (0,), ()], [0, 0, 0], [1.0], rate_cap=[INF, INF, 2.5])
    assert rates.tolist() == [INF, 1.0, 2.5]


def test_given_rates_are_granted_then_backfilled_in_class_order():
    """MADD-style given rates come first; leftover capacity goes to class 0, then class 1."""
    # port 0 cap 1: f0 (given 1/4, class 1), f1 (class 0); port 1 cap 1: f0, f2 (class 1).
    # Given: f0 = 1/4. Class 0 on port 0: f1 = 3/4. Class 1: port 0 is full, so f0 stays 1/4;
    # port 1 has 3/4 left for f2.
    rates = max_min_allocate([(0, 1), (0,), (1,)], [1, 0, 1], [F(1), F(1)], given_rate=[F(1, 4), 0, 0])
    assert rates.tolist() == [F(1, 4), F(3, 4), F(3, 4)]


def test_given_rates_that_overload_a_port_are_rejected():
    """Given rates above a port's capacity are a policy bug and raise naming the port."""
    with pytest.raises(ValueError, match="port 0"):
        max_min_allocate([(0,), (0,)], [0, 0], [1.0], given_rate=[0.75, 0.5])


# -- properties on random instances ---------------------------------------------------------


@st.composite
def instances(draw, max_ports=5, max_flows=8, max_class=2):
    """Random ports with integer capacities and flows crossing random non-empty port sets."""
    n_ports = draw(st.integers(1, max_ports))
    capacity = [F(draw(st.integers(1, 12))) for _ in range(n_ports)]
    n_flows = draw(st.integers(1, max_flows))
    ports = st.lists(st.integers(0, n_ports - 1), min_size=1, max_size=3, unique=True)
    flow_ports = [tuple(draw(ports)) for _ in range(n_flows)]
    flow_class = [draw(st.integers(0, max_class)) for _ in range(n_flows)]
    return flow_ports, flow_class, capacity


def _load(flow_ports, rates, n_ports, flows=None):
    """Total rate on each port of the given flows (all flows by default)."""
    load = [F(0)] * n_ports
    for f, ports in enumerate(flow_ports):
        if flows is None or f in flows:
            for p in ports:
                load[p] += rates[f]
    return load


@settings(max_examples=150, deadline=None)
@given(instances())
def test_no_port_exceeds_its_capacity(inst):
    """Summed over all classes, no port carries more than its capacity."""
    flow_ports, flow_class, capacity = inst
    rates = max_min_allocate(flow_ports, flow_class, capacity)
    assert all(r >= 0 for r in rates)
    assert all(l <= c for l, c in zip(_load(flow_ports, rates, len(capacity)), capacity))


@settings(max_examples=150, deadline=None)
@given(instances())
def test_every_flow_has_a_saturated_bottleneck_where_it_is_largest(inst):
    """Max-min with priorities: each flow crosses a port saturated by its own and higher classes
    on which no flow of its class gets more (this also implies work conservation)."""
    flow_ports, flow_class, capacity = inst
    rates = max_min_allocate(flow_ports, flow_class, capacity)
    for f, ports in enumerate(flow_ports):
        mine = {g for g, c in enumerate(flow_class) if c <= flow_class[f]}
        load = _load(flow_ports, rates, len(capacity), mine)
        assert any(load[p] == capacity[p]
                   and all(rates[g] <= rates[f] for g in mine
                           if flow_class[g] == flow_class[f] and p in flow_ports[g])
                   for p in ports), f"flow {f} has no bottleneck"


@settings(max_examples=150, deadline=None)
@given(instances(), st.lists(st.integers(0, 4), min_size=1, max_size=3, unique=True))
def test_adding_a_lower_class_flow_never_changes_higher_class_rates(inst, new_ports):
    """Strict priority: a new flow of a class below all others leaves every other rate as it was."""
    flow_ports, flow_class, capacity = inst
    new_ports = tuple(p % len(capacity) for p in new_ports)
    before = max_min_allocate(flow_ports, flow_class, capacity)
    after = max_min_allocate(flow_ports + [new_ports], flow_class + [max(flow_class) + 1], capacity)
    assert after[:-1].tolist() == before.tolist()


@settings(max_examples=150, deadline=None)
@given(instances())
def test_floats_agree_with_exact_fractions(inst):
    """The float path gives the exact rates up to round-off."""
    flow_ports, flow_class, capacity = inst
    exact = max_min_allocate(flow_ports, flow_class, capacity).astype(float)
    fast = max_min_allocate(flow_ports, flow_class, [float(c) for c in capacity])
    assert fast.dtype == np.float64
    np.testing.assert_allclose(fast, exact, rtol=1e-12, atol=1e-12)


@settings(max_examples=100, deadline=None)
@given(instances(), st.data())
def test_caps_and_given_rates_stay_work_conserving(inst, data):
    """With caps and feasible given rates: rates respect both and every flow is at its cap
    or crosses a saturated port."""
    flow_ports, flow_class, capacity = inst
    n = len(flow_ports)
    cap = [data.draw(st.sampled_from([INF, F(1, 2), F(3)])) for _ in range(n)]
    # given rates: a random fraction of what an equal split of each flow's tightest port allows
    crossing = [sum(p in fp for fp in flow_ports) for p in range(len(capacity))]
    given_rate = [min(min(capacity[p] / crossing[p] for p in fp), cap[f]) * F(data.draw(st.integers(0, 4)), 4)
                  for f, fp in enumerate(flow_ports)]
    rates = max_min_allocate(flow_ports, flow_class, capacity, rate_cap=cap, given_rate=given_rate)
    load = _load(flow_ports, rates, len(capacity))
    assert all(l <= c for l, c in zip(load, capacity))
    for f, ports in enumerate(flow_ports):
        assert given_rate[f] <= rates[f] <= cap[f]
        assert rates[f] == cap[f] or any(load[p] == capacity[p] for p in ports)


def test_incidence_from_paths_lists_every_hop():
    """The incidence of ragged paths has one (flow, port) entry per hop, flows in order."""
    inc = Incidence.from_paths([(3, 1), (), (2,)])
    assert inc.flow.tolist() == [0, 0, 2] and inc.port.tolist() == [3, 1, 2] and inc.n_flows == 3
    rates = allocate(inc, [0, 0, 0], [1.0, 1.0, 1.0, 1.0])
    assert rates.tolist() == [1.0, INF, 1.0]
