"""The driver's columnar flow state against the per-flow definitions it replaces."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from ns3_hpsched.driver.flows import FlowTable, LiveCoflow, LiveView
from ns3_hpsched.sched.view import CoflowState, port_bytes
from ns3_hpsched.topology import fat_tree, flow_five_tuple
from ns3_hpsched.workload.spec import Flow

TOPO = fat_tree(4)


@dataclass(frozen=True)
class PortedFlow(Flow):
    """A workload flow carrying its destination port (as an HPCC flow list gives it)."""

    dport: int | None = None


def test_a_given_destination_port_is_used_for_the_path_and_the_wire():
    """A flow's own dport goes into its five-tuple, hence its ECMP path and its batch."""
    table = FlowTable(TOPO, lambda ids: np.zeros(len(ids), dtype=np.int64))
    flows = [PortedFlow(0, 15, 1000, dport=4791), Flow(0, 15, 1000)]
    rows = table.release(flows, coflow=0, job=0, cojob=0, stage=0)
    batch = table.batch(rows, np.zeros(2, dtype=np.int64))
    assert batch.dport.tolist() == [4791, flow_five_tuple(1, 0, 15).dport]
    wire = [flow_five_tuple(0, 0, 15)._replace(dport=4791), flow_five_tuple(1, 0, 15)]
    for i in range(2):
        path = batch.path_ports[batch.path_offsets[i]:batch.path_offsets[i + 1]].tolist()
        assert tuple(path) == TOPO.tuple_path(wire[i], 0, 15)


coflows_strategy = st.lists(                      # coflows of flows (src, dst offset, bytes, fraction sent)
    st.lists(st.tuples(st.integers(0, 15), st.integers(1, 15), st.integers(1, 10**9),
                       st.sampled_from([0.0, 0.3, 1.0])), min_size=1, max_size=6),
    min_size=1, max_size=5)


@settings(max_examples=40, deadline=None)
@given(coflows_strategy, st.data())
def test_live_coflows_answer_as_their_flows_do(coflows, data):
    """Sent, remaining, flow ids, bytes and seconds per port of a live coflow equal those
    computed flow by flow from its FlowStates (the definitions of :mod:`sched.view`)."""
    sent_by_id: dict[int, int] = {}
    table = FlowTable(TOPO, lambda ids: np.array([sent_by_id[i] for i in ids.tolist()], dtype=np.int64))
    view = LiveView(table, 0.0, TOPO.port_capacity_bps, 8)
    for cid, spec in enumerate(coflows):
        flows = [Flow(s, (s + d) % 16, b) for s, d, b, _ in spec]
        rows = table.release(flows, coflow=cid, job=cid, cojob=cid, stage=0)
        view.coflows[cid] = LiveCoflow(table, rows, cid, cid, cid, 0, 0, 0, 0.0)
        table.klass[rows.start:rows.stop] = 0            # started
        for row, (_, _, b, frac) in zip(rows, spec):
            sent_by_id[row] = int(b * frac)
    finished = data.draw(st.sets(st.sampled_from(range(table.n))))
    table.finish(np.array(sorted(finished), dtype=np.int64))
    table.new_decision()
    ids = []
    for c in view.coflows.values():
        hand = CoflowState(c.coflow_id, c.job, c.cojob, c.stage, 0, 0, 0.0, c.size_bytes,
                           c.sent_bytes, c.flows)
        assert [f.flow_id for f in c.flows] == c.flow_ids() == [r for r in c.rows if r not in finished]
        done = sum(int(table.size[r]) for r in c.rows if r in finished)
        assert c.sent_bytes == done + sum(f.sent_bytes for f in c.flows)
        assert c.remaining_bytes == sum(f.remaining_bytes for f in c.flows)
        assert c.port_bytes() == port_bytes(c.flows) == hand.port_bytes()
        assert c.demand_s(TOPO.port_capacity_bps) == hand.demand_s(TOPO.port_capacity_bps)
        ids += c.flow_ids()
    assert view.flow_ids().tolist() == ids


@settings(max_examples=60, deadline=None)
@given(coflows_strategy, st.data())
def test_flows_finishing_in_batches_name_each_coflow_once_at_its_last_flow(coflows, data):
    """Flows finishing in batches, in any order: each batch names the position of every
    coflow's last flow in it that leaves the coflow with no unfinished flow, once, in
    order (the oracle: each coflow's flows, checked off one by one)."""
    table = FlowTable(TOPO, lambda ids: np.zeros(len(ids), dtype=np.int64))
    members = {}
    for cid, spec in enumerate(coflows):
        members[cid] = set(table.release([Flow(s, (s + d) % 16, b) for s, d, b, _ in spec],
                                         coflow=cid, job=cid, cojob=cid, stage=0))
    order = data.draw(st.permutations(range(table.n)))
    cuts = sorted(data.draw(st.sets(st.integers(1, table.n - 1))) if table.n > 1 else set())
    finished: set[int] = set()
    for batch in np.split(np.array(order, dtype=np.int64), cuts):
        ends = table.finish(batch)
        finished |= set(batch.tolist())
        coflow_of = [int(table.coflow[f]) for f in batch.tolist()]
        expected = [i for i, c in enumerate(coflow_of) if c not in coflow_of[i + 1:] and members[c] <= finished]
        assert ends.tolist() == expected
    assert not table.open[:table.n].any() and (table.sent[:table.n] == table.size[:table.n]).all()


def test_the_first_coflow_asked_what_it_sent_is_read_alone_a_second_reads_all():
    """FIFO-LM asks one coflow of many how much it sent: the backend is asked for that
    coflow's unfinished, started flows only. A policy asking a second coflow (Aalo asks
    them all) gets every unfinished flow read at once, not one call per coflow."""
    asked: list[list[int]] = []
    table = FlowTable(TOPO, lambda ids: asked.append(ids.tolist()) or 10 * ids)
    coflows = []
    for cid in range(3):
        rows = table.release([Flow(0, 15, 1000)] * 4, coflow=cid, job=cid, cojob=cid, stage=0)
        coflows.append(LiveCoflow(table, rows, cid, cid, cid, 0, 0, 0, 0.0))
        table.klass[rows.start:rows.stop] = 0              # started
    table.klass[7] = -1                                    # coflow 1's last flow not started yet
    table.finish(np.array([4]))                            # and its first finished
    table.new_decision()
    assert coflows[1].sent_bytes == 1000 + 10 * (5 + 6)    # finished: its size; unstarted: nothing
    assert coflows[1].sent_bytes == 1000 + 10 * (5 + 6)
    assert asked == [[5, 6]]
    table.new_decision()
    assert coflows[0].sent_bytes == 10 * (0 + 1 + 2 + 3)
    assert coflows[2].sent_bytes == 10 * (8 + 9 + 10 + 11)
    assert coflows[1].sent_bytes == 1000 + 10 * (5 + 6)
    assert asked[1:] == [[0, 1, 2, 3], [5, 6, 8, 9, 10, 11]]   # the first coflow's not read twice
    table.new_decision()
    table.sent_now()
    assert asked[3:] == [[0, 1, 2, 3, 5, 6, 8, 9, 10, 11]]
