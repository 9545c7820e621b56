"""Small fakes for driver tests: a contention-free backend and a recording policy."""

from __future__ import annotations

import heapq
import itertools

import numpy as np
import pandas as pd

from ns3_hpsched.backends.base import Backend, FlowBatch, RunStats
from ns3_hpsched.sched.base import Policy
from ns3_hpsched.sched.view import Decision, View


class IdealBackend(Backend):
    """Every flow runs alone at its path's bottleneck rate: the contention-free oracle.

    Records every call so tests can check what the driver asked for and when: one
    ``("start_flows", t, batch)`` / ``("set_priorities", t, n)`` entry per bulk call, then one
    ``("start", t, flow, class)`` / ``("priority", t, flow, class)`` entry per flow.
    """

    name = "ideal"

    def __init__(self, topology, **kw):
        super().__init__(topology, **kw)
        self._now = 0.0
        self._queue = []
        self._seq = itertools.count()
        self.flows = {}
        self.log = []

    def now(self):
        return self._now

    def at(self, time_s, fn):
        assert time_s >= self._now - 1e-12
        heapq.heappush(self._queue, (time_s, next(self._seq), fn))

    def start_flows(self, batch: FlowBatch):
        self.log.append(("start_flows", self._now, batch))
        for i in range(len(batch)):
            fid, size = int(batch.flow_id[i]), int(batch.size_bytes[i])
            ports = batch.path_ports[batch.path_offsets[i]:batch.path_offsets[i + 1]]
            rate = min(self.topology.port_capacity_bps[p] for p in ports)
            finish = self._now + size * 8 / rate
            self.flows[fid] = {"flow_id": fid, "src": int(batch.src[i]), "dst": int(batch.dst[i]),
                               "bytes": size, "start_s": self._now, "finish_s": finish,
                               "fct_s": finish - self._now}
            self.log.append(("start", self._now, fid, int(batch.priority[i])))
            self.at(finish, lambda fid=fid, finish=finish: self.on_flows_done(np.array([fid]), np.array([finish])))

    def set_priorities(self, flow_ids, priorities):
        self.log.append(("set_priorities", self._now, len(flow_ids)))
        for fid, priority in zip(np.asarray(flow_ids).tolist(), np.asarray(priorities).tolist()):
            self.log.append(("priority", self._now, fid, priority))

    def bytes_sent(self, flow_ids):
        out = []
        for fid in flow_ids:
            f = self.flows[fid]
            frac = min(1.0, (self._now - f["start_s"]) / max(f["fct_s"], 1e-300))
            out.append(int(f["bytes"] * frac))
        return np.array(out, dtype=np.int64)

    def watch_coflow(self, coflow_id, threshold_bytes):
        self.log.append(("watch", self._now, coflow_id, threshold_bytes))

    def run(self):
        events = 0
        while self._queue:
            self._now, _, fn = heapq.heappop(self._queue)
            fn()
            events += 1
        return RunStats(end_s=self._now, wall_s=0.0, events=events)

    def flows_table(self):
        return pd.DataFrame(list(self.flows.values()),
                            columns=["flow_id", "src", "dst", "bytes", "start_s", "finish_s", "fct_s"])

    def ports_table(self):
        return pd.DataFrame({"port": range(self.topology.n_ports)})


class OneClass(Policy):
    """Every flow in class 0; records (time, active coflows) of every call (a stand-in for fair).

    The view is live (valid only during ``decide``), so what a test checks is copied here.
    """

    name = "one-class"

    def __init__(self):
        self.seen = []

    def decide(self, view: View) -> Decision:
        self.seen.append((view.now_s, len(view.coflows)))
        return Decision(order=[[f.flow_id for c in view.coflows.values() for f in c.flows]])
