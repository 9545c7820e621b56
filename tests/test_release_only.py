"""Policies whose order changes on releases only skip the other triggers, and lose nothing.

The oracle is the same policy deciding on every trigger, which must give the same tables
with more decisions: fair (one class) bit for bit; pinned (the workload's classes, here with
a gap between them) within round-off, because there a completion renumbers the queues, and
the class moves it sends make the oracle tally its byte counts at more instants (the rates
are the same at every allocation; finish times move by about 1e-17 s).
"""

from __future__ import annotations

import pandas as pd
import pytest

from ns3_hpsched.backends.fluid import FluidBackend
from ns3_hpsched.driver import play
from ns3_hpsched.sched import make_policy
from ns3_hpsched.topology import big_switch
from ns3_hpsched.workload.spec import Cojob, Flow, Job, Stage, Sync, Workload


def _workload() -> Workload:
    """Three cojobs on four hosts, contending on every host link: pinned classes 3, 0 and
    none (last), arrivals staggered so coflows of each class finish while others run."""
    cojobs = []
    for c, (arrival_s, priority, nbytes) in enumerate([(0.0, 3, 3_000_000), (0.001, 0, 1_000_000),
                                                       (0.0015, None, 2_000_000)]):
        hosts = (0, 1, 2, 3)
        sync = Sync(phases=(tuple(Flow(h, hosts[(i + 1 + c) % 4], nbytes) for i, h in enumerate(hosts)),),
                    pattern="ring")
        jobs = (Job(10 * c, hosts[:2] if c else hosts, 0.0005 * c, sync), Job(10 * c + 1, hosts, 0.0002, sync))
        cojobs.append(Cojob(c, arrival_s, jobs, (Stage(3, (10 * c, 10 * c + 1)), Stage(2, (10 * c,))), priority))
    return Workload(tuple(cojobs), n_hosts=4)


@pytest.mark.parametrize("name", ["fair", "pinned"])
def test_deciding_on_releases_only_gives_the_tables_of_deciding_on_every_trigger(name):
    every = make_policy(name)
    every.release_only = False  # the oracle: the same policy, asked on every trigger
    runs = {}
    for policy in (make_policy(name), every):
        backend = FluidBackend(big_switch(4, rate_bps=10e9), n_classes=8)
        runs[policy.release_only] = play(_workload(), backend, policy)
    fast, oracle = runs[True], runs[False]
    for table in ("flows", "coflows", "stages", "jobs"):
        pd.testing.assert_frame_equal(getattr(fast, table), getattr(oracle, table),
                                      check_exact=name == "fair", rtol=1e-12, obj=table)
    assert fast.decisions < oracle.decisions
