"""The flow-level allocator: priority classes and flow paths in, rates out.

This is the one rate model of the project (``SCHEDULERS.md``, "Common model"): the
worked oracle, the policies' tests and the fluid backend all use it.

* **Strict priority across classes.** Class 0 is served first; every lower class gets
  only the capacity the higher classes left (it is starved on a port they saturate).
* **Max-min fair inside a class**, by progressive filling (what TCP approximates).
* **Work conserving.** Afterwards every flow crosses a saturated port or runs at its cap.
* **Explicit rates first.** Rates given by a policy (Varys' MADD) are granted before
  anything else; the capacity they leave is then filled by the two rules above, in class
  order, on top of the given rates (Varys hands leftover capacity out the same way).

A flow that crosses no port and has no cap is constrained by nothing: its rate is
``inf`` (the backends never create one: a flow's source and destination differ).

One algorithm serves two number types. Give the capacities as floats for speed (runs),
or as :class:`fractions.Fraction` (an ``object`` array) for exact rates (tests, oracle).
Fractions go through the numpy version below (every step an array operation); floats go
through its compiled twin :mod:`ns3_hpsched.sched.fill`, which does the same operations in
the same order and so gives the same floats bit for bit (a property test holds it to that),
except when explicit rates are given, which it water-fills instead (see its docstring):
the same rates within round-off, held to the exact rationals by another property test.

Progressive filling in parallel rounds
---------------------------------------
Each round every port with unfrozen flows offers the *fair share*
``residual capacity / number of unfrozen flows``. A port whose share is no larger than
the share of any port its flows cross (a *local* minimum) is a bottleneck: its flows are
frozen at that share. The global minimum is always a local minimum, so every round
saturates at least one port; freezing flows at a share never lowers another port's share,
so the result equals sequential progressive filling (Bertsekas & Gallager, *Data
Networks*, 2nd ed., sec. 6.5.2) while needing far fewer rounds on large networks. The
"no larger" test compares a value with a minimum of the same values, so it is exact in
floating point too.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from .fill import allocate_rates

__all__ = ["Incidence", "allocate", "max_min_allocate"]

#: Given rates may exceed a port's capacity by this relative amount (float round-off).
GIVEN_RTOL = 1e-9


@dataclass(frozen=True)
class Incidence:
    """Which flow crosses which port, as two parallel integer arrays (one entry per hop).

    Parameters
    ----------
    flow, port:
        Entry ``i`` says flow ``flow[i]`` crosses port ``port[i]``.
    n_flows:
        Number of flows (flows ``0 .. n_flows-1``; a flow may have no entry).
    """

    flow: np.ndarray
    port: np.ndarray
    n_flows: int

    @classmethod
    def from_paths(cls, flow_ports: Sequence[Sequence[int]]) -> Incidence:
        """Build from one sequence of ports per flow (``flow_ports[f]`` = ports of flow ``f``)."""
        lengths = np.fromiter((len(p) for p in flow_ports), dtype=np.int64, count=len(flow_ports))
        port = np.fromiter((q for p in flow_ports for q in p), dtype=np.int64, count=int(lengths.sum()))
        flow = np.repeat(np.arange(len(flow_ports), dtype=np.int64), lengths)
        return cls(flow, port, len(flow_ports))


def max_min_allocate(flow_ports: Sequence[Sequence[int]], flow_class: Sequence[int],
                     capacity: Sequence, rate_cap: Sequence | None = None,
                     given_rate: Sequence | None = None) -> np.ndarray:
    """Rates of flows given their ports and classes (see the module docstring for the rules).

    Parameters
    ----------
    flow_ports:
        Ports crossed by each flow, e.g. ``[(0,), (0, 1)]``.
    flow_class:
        Priority class of each flow (0 highest; any non-negative integers).
    capacity:
        Capacity of each port (bits/s). Floats for speed; :class:`~fractions.Fraction`
        values for exact rates.
    rate_cap:
        Optional largest rate of each flow (``inf`` = no cap).
    given_rate:
        Optional explicit rate of each flow, granted first (0 = none). They must fit in the
        capacities (a ``ValueError`` says which port they overload).

    Returns
    -------
    numpy.ndarray
        Rate of each flow: float64, or an ``object`` array of exact rationals when the
        capacities are Fractions.

    Examples
    --------
    >>> from fractions import Fraction
    >>> max_min_allocate([(0,), (0,), (0,)], [0, 0, 0], [Fraction(1)]).tolist()
    [Fraction(1, 3), Fraction(1, 3), Fraction(1, 3)]
    """
    return allocate(Incidence.from_paths(flow_ports), flow_class, capacity, rate_cap, given_rate)


def allocate(incidence: Incidence, flow_class: Sequence[int], capacity: Sequence,
             rate_cap: Sequence | None = None, given_rate: Sequence | None = None) -> np.ndarray:
    """Like :func:`max_min_allocate`, with the flow paths as an :class:`Incidence` (fast path)."""
    capacity = _numbers(capacity)
    n = incidence.n_flows
    flow_class = np.asarray(flow_class, dtype=np.int64)
    if flow_class.shape != (n,):
        raise ValueError(f"flow_class must give one class per flow ({n}), got shape {flow_class.shape}")
    inc, capacity = _add_cap_ports(incidence, capacity, rate_cap)
    rate = _zeros(n, like=capacity) if given_rate is None else _numbers(given_rate, like=capacity)
    if capacity.dtype != object:
        return _allocate_compiled(inc, flow_class, rate, capacity)
    return _allocate_arrays(inc, flow_class, rate, capacity)


def _allocate_arrays(inc: Incidence, flow_class: np.ndarray, rate: np.ndarray, capacity: np.ndarray) -> np.ndarray:
    """Explicit ``rate`` plus strict-priority max-min fill, in numpy array operations.

    Works on floats and on Fractions alike; :func:`allocate` sends only Fractions here
    (the compiled twin handles floats), and tests compare the two on floats.
    """
    n = inc.n_flows
    residual = capacity - _port_sum(inc.port, rate[inc.flow], capacity)
    _check_given_fit(residual, capacity)
    residual = np.maximum(residual, _zeros(1, like=capacity))
    inc_class = flow_class[inc.flow]
    for c in np.unique(flow_class):
        hop = inc_class == c
        rate += _progressive_fill(inc.flow[hop], inc.port[hop], n, residual)
    crosses = np.zeros(n, dtype=bool)
    crosses[inc.flow] = True
    rate[~crosses] = np.inf
    return rate


def _allocate_compiled(inc: Incidence, flow_class: np.ndarray, given: np.ndarray,
                       capacity: np.ndarray) -> np.ndarray:
    """The float path: :func:`~ns3_hpsched.sched.fill.allocate_rates` (compiled; see the module docstring)."""
    if given.shape != (inc.n_flows,):
        raise ValueError(f"given_rate must give one rate per flow ({inc.n_flows}), got shape {given.shape}")
    if len(flow_class) and flow_class.min() < 0:
        raise ValueError("flow classes must be non-negative integers (0 highest)")
    n_classes = int(flow_class.max()) + 1 if len(flow_class) else 1
    rate, over = allocate_rates(inc.flow.astype(np.int64), inc.port.astype(np.int64), flow_class, given,
                                capacity, given, 0, n_classes, GIVEN_RTOL, 0.0)
    if over >= 0:
        _check_given_fit(capacity - _port_sum(inc.port, given[inc.flow], capacity), capacity)
    return rate


def _progressive_fill(flow: np.ndarray, port: np.ndarray, n_flows: int, residual: np.ndarray) -> np.ndarray:
    """Max-min rates of the flows in the incidence ``(flow, port)`` over ``residual`` capacity.

    Returns the rate of every flow (0 for flows absent from the incidence) and subtracts
    what they use from ``residual`` in place, so lower classes see what is left.
    """
    rate = _zeros(n_flows, like=residual)
    zero = _zeros(1, like=residual)
    n_ports = len(residual)
    no_flow_share = np.full(n_flows, np.inf, dtype=residual.dtype)
    no_port_share = np.full(n_ports, np.inf, dtype=residual.dtype)
    count = np.bincount(port, minlength=n_ports)  # unfrozen flows per port
    while len(flow):
        used = count > 0
        share = residual / np.maximum(count, 1).astype(residual.dtype)  # read only where used
        flow_share = no_flow_share.copy()
        np.minimum.at(flow_share, flow, share[port])
        hop_share = flow_share[flow]
        neighbour_share = no_port_share.copy()
        np.minimum.at(neighbour_share, port, hop_share)
        bottleneck = used & (share <= neighbour_share)
        frozen = np.zeros(n_flows, dtype=bool)
        frozen[flow[bottleneck[port]]] = True
        done = frozen[flow]
        rate[flow[done]] = hop_share[done]
        residual -= _port_sum(port[done], hop_share[done], residual)
        count -= np.bincount(port[done], minlength=n_ports)
        residual[bottleneck] = zero  # saturated by construction; no round-off dust for lower classes
        np.maximum(residual, zero, out=residual)
        flow, port = flow[~done], port[~done]
    return rate


def _add_cap_ports(incidence: Incidence, capacity: np.ndarray,
                   rate_cap: Sequence | None) -> tuple[Incidence, np.ndarray]:
    """Turn every finite rate cap into a private port of that capacity crossed by its flow alone."""
    if rate_cap is None:
        return incidence, capacity
    cap = np.asarray(rate_cap, dtype=object if capacity.dtype == object else np.float64)
    if cap.shape != (incidence.n_flows,):
        raise ValueError(f"rate_cap must give one cap per flow ({incidence.n_flows}), got shape {cap.shape}")
    capped = np.flatnonzero(cap != np.inf)
    if np.any(cap[capped] < 0):
        raise ValueError("rate_cap must be non-negative (use inf for no cap)")
    new_ports = len(capacity) + np.arange(len(capped))
    inc = Incidence(np.concatenate([incidence.flow, capped]), np.concatenate([incidence.port, new_ports]),
                    incidence.n_flows)
    return inc, np.concatenate([capacity, _numbers(cap[capped], like=capacity)])


def _numbers(values: Sequence, like: np.ndarray | None = None) -> np.ndarray:
    """Values as a float64 array, or as an object array of Fractions if ``like`` is one / they are."""
    arr = np.asarray(values)
    exact = arr.dtype == object if like is None else like.dtype == object
    if not exact:
        return arr.astype(np.float64)
    return np.array([Fraction(v) for v in arr.tolist()], dtype=object).reshape(arr.shape)


def _port_sum(port: np.ndarray, values: np.ndarray, like: np.ndarray) -> np.ndarray:
    """Sum of ``values`` per port (same length and number type as ``like``)."""
    if like.dtype != object:
        return np.bincount(port, weights=values, minlength=len(like))
    total = _zeros(len(like), like=like)
    np.add.at(total, port, values)
    return total


def _zeros(n: int, like: np.ndarray) -> np.ndarray:
    """``n`` zeros of the number type of ``like`` (Fraction zeros keep exact sums exact)."""
    return np.zeros(n) if like.dtype != object else np.full(n, Fraction(0), dtype=object)


def _check_given_fit(residual: np.ndarray, capacity: np.ndarray) -> None:
    """Raise if the given rates overload a port (beyond float round-off)."""
    tol = 0 if capacity.dtype == object else GIVEN_RTOL * capacity
    over = np.flatnonzero(residual < -tol)
    if len(over):
        p = int(over[0])
        raise ValueError(f"given rates exceed the capacity of port {p} "
                         f"by {-residual[p]} (of {capacity[p]}): give feasible rates")
