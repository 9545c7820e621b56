"""The worked oracle of SCHEDULERS.md, played end to end: driver + fluid backend + policy.

2x2 big switch (hosts 0, 1 send: in1, in2; hosts 2, 3 receive: out1, out2), everything
released at 0, no compute, no latency. C1: in1->out1 3 units. C2: in2->out2 5 units.
C3: in1->out1 4 units and in2->out2 1 unit. A unit is 1000 B and every port carries one
unit per second, so every event falls on a whole number of seconds and every byte count
the policies see at an event is exact. Each test derives its row by hand.
"""

from __future__ import annotations

import pytest

from ns3_hpsched.backends.fluid import FluidBackend
from ns3_hpsched.driver import play
from ns3_hpsched.sched import make_policy
from ns3_hpsched.topology import big_switch
from ns3_hpsched.workload.spec import Cojob, Flow, Job, Stage, Sync, Workload

UNIT = 1000  # bytes; ports run at 8 * UNIT bit/s = one unit per second


def oracle_workload():
    """C1, C2, C3 as three one-job, one-iteration cojobs (cojob i holds coflow C{i+1})."""
    phases = [(Flow(0, 2, 3 * UNIT),), (Flow(1, 3, 5 * UNIT),), (Flow(0, 2, 4 * UNIT), Flow(1, 3, 1 * UNIT))]
    cojobs = tuple(Cojob(i, 0.0, (Job(i, (0, 1, 2, 3), 0.0, Sync((phase,))),), (Stage(1, (i,)),))
                   for i, phase in enumerate(phases))
    return Workload(cojobs, n_hosts=4)


def ccts(name, **params):
    """CCTs of C1, C2, C3 (seconds) under policy ``name``."""
    backend = FluidBackend(big_switch(4, rate_bps=8.0 * UNIT), latency=False)
    records = play(oracle_workload(), backend, make_policy(name, **params))
    return records.coflows.sort_values("cojob")["cct_s"].tolist()


def test_per_flow_fair():
    """All flows share max-min: C1 and C3's big flow get 1/2 of in1; C2 and C3's small flow 1/2
    of in2. t=2: C3's small flow is done, C2 (4 left) gets all of in2 and ends at 6; C1 (3 at 1/2)
    ends at 6; C3's big flow has 1 left and ends at 7."""
    assert ccts("fair") == pytest.approx([6, 6, 7])


def test_fifo_lm_theta_one_unit():
    """FIFO C1, C2, C3. t=0: prefix C1 (light); C2 has its own class and the free in2; C3 waits.
    t=1: C1 and C2 have sent 1 (heavy), so the prefix reaches C3: one class, 1/2 each on in1 and
    in2. t=3: C3's small flow is done; C2 (3 left) runs at 1 and ends at 6. C1 (2 left at t=1,
    at 1/2) ends at 5; C3's big flow (2 left) then runs at 1 and ends at 7."""
    assert ccts("fifo-lm", theta_bytes=UNIT) == pytest.approx([5, 6, 7])


def test_aalo_q1_two_e_two_k_three():
    """Queue 0 FIFO: C1, C2 run, C3 waits. t=2: C1, C2 reach Q1 = 2 (queue 1, entered at 2), C3 is
    alone in queue 0 and takes both ports. t=3: C3's small flow is done and C3 has sent 2, so it
    enters queue 1 at 3, behind C1 and C2: C1 (1 left) ends at 4, C2 (3 left) at 6; C3's big flow
    (3 left) runs from 4 and ends at 7."""
    assert ccts("aalo", n_queues=3, first_threshold_bytes=2 * UNIT, multiplier=2) == pytest.approx([4, 6, 7])


def test_sebf_with_strict_priority_and_max_min_inside():
    """Order C1, C3, C2 (bottlenecks 3, 4, 5). C1 has in1; C3's small flow takes in2 over C2 and
    ends at 1. t=3: C1 done; C2 (3 left: it ran from 1) and C3's big flow (4) are on disjoint
    ports: C2 ends at 6, C3 at 7."""
    assert ccts("varys", madd=False) == pytest.approx([3, 6, 7])


def test_sebf_with_madd():
    """t=0: C1 rate 1 (tau 3); C3 needs the full in1: skipped; C2 rate 1 (tau 5). t=3: C2 (2 left)
    before C3 (4): C2 keeps in2, C3 skipped again, backfill gives C3's big flow in1. t=5: C2 done
    (CCT 5); C3 has 2 + 1 left, both at rate 1 after backfill: done at 7."""
    assert ccts("varys") == pytest.approx([3, 5, 7])


@pytest.mark.parametrize("name", ["sincronia", "grouper", "beamer"])
def test_bssi_order(name):
    """BSSI order C1, C2, C3 (one coflow per stage makes Grouper-R and Beamer-R the same): C1 and
    C2 run, C3 waits. t=3: BSSI on C2 (2 left) and C3 (4 + 1) puts C3 last: C3's big flow takes
    in1. t=5: C2 done; C3's 2 + 1 left end at 7."""
    assert ccts(name) == pytest.approx([3, 5, 7])
