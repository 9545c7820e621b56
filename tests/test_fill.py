"""The compiled float allocator (``sched/fill.py``) against the numpy arrays, exact Fractions, and itself per flow."""

from fractions import Fraction as F

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from ns3_hpsched.sched.allocator import Incidence, _allocate_arrays, allocate
from ns3_hpsched.sched.fill import allocate_grouped, allocate_rates, fill_classes


@st.composite
def float_instances(draw, max_ports=8, max_flows=14, max_class=3):
    """Random ports with float capacities, flows on random port sets, classes, and given rates
    that fit (each a random fraction of an equal split of its tightest port)."""
    n_ports = draw(st.integers(1, max_ports))
    capacity = np.array([draw(st.floats(0.5, 100.0)) for _ in range(n_ports)])
    n_flows = draw(st.integers(1, max_flows))
    ports = st.lists(st.integers(0, n_ports - 1), min_size=1, max_size=4, unique=True)
    flow_ports = [tuple(draw(ports)) for _ in range(n_flows)]
    klass = np.array([draw(st.integers(0, max_class)) for _ in range(n_flows)], dtype=np.int64)
    crossing = np.zeros(n_ports)
    for fp in flow_ports:
        crossing[list(fp)] += 1
    fraction = [draw(st.sampled_from([0.0, 0.0, 0.3, 0.99])) for _ in range(n_flows)]
    given_rate = np.array([min(capacity[p] / crossing[p] for p in fp) * x for fp, x in zip(flow_ports, fraction)])
    return Incidence.from_paths(flow_ports), klass, capacity, given_rate


@settings(max_examples=200, deadline=None)
@given(float_instances())
def test_compiled_equals_numpy_arrays_bit_for_bit(inst):
    """Same operations in the same order: without explicit rates (which are water-filled, see
    the exact-fractions tests) the compiled rounds give the numpy path's floats exactly."""
    inc, klass, capacity, _ = inst
    no_rates = np.zeros(inc.n_flows)
    compiled = allocate(inc, klass, capacity, given_rate=no_rates)
    arrays = _allocate_arrays(inc, klass, no_rates.copy(), capacity.copy())
    assert compiled.tolist() == arrays.tolist()


@settings(max_examples=200, deadline=None)
@given(float_instances(), st.lists(st.integers(1, 4), min_size=14, max_size=14))
def test_a_group_gets_what_its_flows_get_one_by_one(inst, copies):
    """Flow ``i`` repeated ``copies[i]`` times, filled per flow, gets the rate its group of that
    weight gets (one fill per path and class), within round-off; explicit rates stay per flow."""
    inc, klass, capacity, given_rate = inst
    n = inc.n_flows
    copies = np.array(copies[:n])
    given_rate = given_rate / copies.max()  # still feasible with the copies
    flows = np.repeat(np.arange(n), copies)
    paths = [inc.port[inc.flow == f].tolist() for f in flows]
    one_by_one = allocate(Incidence.from_paths(paths), klass[flows], capacity, given_rate=given_rate[flows])
    grouped, over = allocate_grouped(inc.flow, inc.port, flows, klass, given_rate[flows], capacity,
                                     given_rate[flows], 0, int(klass.max()) + 1, 1e-9, 1e-12)
    assert over == -1
    np.testing.assert_allclose(grouped, one_by_one, rtol=1e-9, atol=1e-9 * capacity.max())


@settings(max_examples=200, deadline=None)
@given(float_instances())
def test_compiled_float_equals_exact_fractions(inst):
    """The compiled float rates are the exact rational rates within 1e-9 relative."""
    inc, klass, capacity, given_rate = inst
    exact = allocate(inc, klass, np.array([F(c) for c in capacity], dtype=object),
                     given_rate=np.array([F(g) for g in given_rate], dtype=object)).astype(float)
    fast = allocate(inc, klass, capacity, given_rate=given_rate)
    np.testing.assert_allclose(fast, exact, rtol=1e-9, atol=1e-9 * capacity.max())


@settings(max_examples=200, deadline=None)
@given(float_instances(), st.integers(1, 3))
def test_refilling_from_a_class_keeps_what_from_scratch_gives(inst, top):
    """Keeping the rates of classes above ``top`` and refilling the rest (also with explicit
    rates) gives the from-scratch rates, up to float round-off."""
    inc, klass, capacity, given_rate = inst
    scratch = allocate(inc, klass, capacity, given_rate=given_rate)
    kept = np.where(klass < top, scratch, np.nan)
    refilled, over = allocate_rates(inc.flow, inc.port, klass, given_rate, capacity, kept, top,
                                    int(klass.max()) + 1, 1e-9, 1e-12)
    assert over == -1
    np.testing.assert_allclose(refilled, scratch, rtol=1e-9, atol=1e-9 * capacity.max())


@settings(max_examples=200, deadline=None)
@given(float_instances(max_ports=40, max_flows=60), st.integers(0, 3))
def test_water_filling_after_any_number_of_rounds_gives_the_exact_rates(inst, max_rounds):
    """Flows still unfrozen after ``max_rounds`` parallel rounds (none: all of them) are
    water-filled: the class's rates are the exact rational max-min rates within 1e-9."""
    inc, klass, capacity, given_rate = inst
    klass = np.zeros_like(klass)
    exact = allocate(inc, klass, np.array([F(c) for c in capacity], dtype=object)).astype(float)
    fast = np.zeros(inc.n_flows)
    fill_classes(inc.flow, inc.port, klass, np.ones(inc.n_flows, dtype=np.int64), fast, capacity.copy(), 0, 1,
                 max_rounds)
    np.testing.assert_allclose(fast, exact, rtol=1e-9, atol=1e-9 * capacity.max())
