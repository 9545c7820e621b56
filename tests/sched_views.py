"""Views built by hand for the policy tests: a 4-host big switch at one byte per second.

Hosts 0, 1 are the senders (in1, in2) and 2, 3 the receivers (out1, out2) of the worked
oracle of SCHEDULERS.md. At 8 bits/s a port carries one byte per second, so demands in
seconds equal bytes and every hand derivation is in whole numbers.
"""

from __future__ import annotations

from hypothesis import strategies as st

from ns3_hpsched.sched.view import CoflowState, FlowState, JobState, View
from ns3_hpsched.topology import big_switch

#: 4 hosts, every port 8 bits/s = 1 byte/s.
BYTE_SWITCH = big_switch(4, rate_bps=8.0)


def coflow(cid, flows, *, release_s=0.0, job=None, cojob=None, stage=0, finished_bytes=0):
    """A coflow from ``(flow_id, src, dst, size_bytes[, sent_bytes])`` tuples on BYTE_SWITCH.

    ``job`` and ``cojob`` default to the coflow id (one coflow per job and per cojob).
    """
    states = tuple(FlowState(f[0], cid, f[1], f[2], f[3], f[4] if len(f) > 4 else 0,
                             BYTE_SWITCH.flow_path(f[0], f[1], f[2])) for f in flows)
    return CoflowState(cid, cid if job is None else job, cid if cojob is None else cojob, stage, 0, 0,
                       release_s, finished_bytes + sum(f.size_bytes for f in states),
                       finished_bytes + sum(f.sent_bytes for f in states), states)


def as_lists(order):
    """A decision's order as lists of ints (the policies' helpers give int64 arrays), to compare by ``==``."""
    return [[int(f) for f in group] for group in order]


def view(coflows, *, now_s=0.0, n_classes=8, jobs=()):
    """A view of ``coflows`` (and ``jobs``) on BYTE_SWITCH."""
    return View(now_s, BYTE_SWITCH.port_capacity_bps, n_classes,
                {c.coflow_id: c for c in coflows}, {j.job_id: j for j in jobs})


def job(j, *, cojob, stage=0, iterations=1, done=0, released=1, compute_s=0.0, sync_port_bytes=None):
    """A job state; ``sync_port_bytes`` is T_j^p."""
    return JobState(j, cojob, stage, iterations, done, released, compute_s, dict(sync_port_bytes or {}), ())


def oracle(sent=(0, 0, 0, 0), now_s=0.0):
    """The worked oracle: C1 in1->out1 3; C2 in2->out2 5; C3 in1->out1 4 and in2->out2 1.

    Flow ids: C1 = 1, C2 = 2, C3 = 3 (in1->out1) and 4 (in2->out2); ``sent`` per flow.
    """
    s1, s2, s3, s4 = sent
    return view([coflow(1, [(1, 0, 2, 3, s1)]), coflow(2, [(2, 1, 3, 5, s2)]),
                 coflow(3, [(3, 0, 2, 4, s3), (4, 1, 3, 1, s4)])], now_s=now_s)


@st.composite
def random_views(draw, max_coflows=5):
    """Random views: 1..max_coflows coflows of 1..3 flows, partly sent, released at 0..2 s."""
    coflows, fid = [], 0
    for cid in range(draw(st.integers(1, max_coflows))):
        flows = []
        for _ in range(draw(st.integers(1, 3))):
            src = draw(st.integers(0, 3))
            dst = (src + draw(st.integers(1, 3))) % 4
            size = draw(st.integers(1, 20))
            flows.append((fid, src, dst, size, draw(st.integers(0, size - 1))))
            fid += 1
        coflows.append(coflow(cid, flows, release_s=float(draw(st.integers(0, 2)))))
    return view(coflows)
