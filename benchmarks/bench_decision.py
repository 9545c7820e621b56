"""Cost of one scheduling decision: 64 coflows x 8 flows on a k=8 fat-tree (a script, not a test).

For each policy and backend, 64 one-job cojobs arrive at t = 0, each synchronising with one
ring coflow of 8 flows over 8 hosts (flows of 1 TB: nothing finishes while we measure).
Reported per decision, CPU (``time.process_time``) and wall:

* ``first``: the decision at t = 0 that starts all 512 flows (64 ``start_flows`` calls);
* ``steady``: a decision taken again with nothing changed (view, policy, no class moves);
* ``moves``: a decision where every flow's class must be sent again (one ``set_priorities``).

A first, unreported run warms up (on packet, the first call of each C++ method through
cppyy costs up to a second of wrapper compilation). Every measured decision is the driver's own (:class:`ns3_hpsched.driver.control.Control`),
and ``--profile`` prints a cProfile of the ``steady`` repeats of one policy.

Usage: ``python benchmarks/bench_decision.py [fluid|packet|all] [--profile POLICY]``.
"""

from __future__ import annotations

import cProfile
import pstats
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from ns3_hpsched.driver import Control, FlowTable, LiveView, RecordBook, Training  # noqa: E402
from ns3_hpsched.sched import make_policy  # noqa: E402
from ns3_hpsched.topology import fat_tree  # noqa: E402
from ns3_hpsched.workload.spec import Cojob, Flow, Job, Stage, Sync, Workload  # noqa: E402

N_COFLOWS, WIDTH, REPEATS = 64, 8, 20
POLICIES = ("fair", "fifo-lm", "varys", "aalo", "sincronia", "grouper", "beamer")


class _Measured(Exception):
    """Raised from the probe to end the run once measured."""


def workload(n_hosts: int) -> Workload:
    """64 cojobs of one job each; job i rings hosts i, i+16, i+32, ... (8 distinct hosts)."""
    cojobs = []
    for i in range(N_COFLOWS):
        hosts = [(i + 16 * j) % n_hosts for j in range(WIDTH)]
        ring = tuple(Flow(h, hosts[(k + 1) % WIDTH], 10**12) for k, h in enumerate(hosts))
        job = Job(i, tuple(hosts), 0.0, Sync((ring,), "ring"))
        cojobs.append(Cojob(i, 0.0, (job,), (Stage(1, (i,)),)))
    return Workload(tuple(cojobs), n_hosts=n_hosts)


def make_backend(kind: str, topology):
    if kind == "fluid":
        from ns3_hpsched.backends.fluid import FluidBackend

        return FluidBackend(topology)
    from ns3_hpsched.backends.packet import PacketBackend

    return PacketBackend(topology)


def clock() -> tuple[float, float]:
    return time.process_time(), time.perf_counter()


def since(start: tuple[float, float]) -> tuple[float, float]:
    cpu, wall = clock()
    return cpu - start[0], wall - start[1]


def measure(kind: str, name: str, profile: bool = False) -> dict:
    """Per-decision (cpu, wall) seconds of ``first``, ``steady`` and ``moves`` for one policy."""
    topology = fat_tree(8)
    backend, policy, w = make_backend(kind, topology), make_policy(name), workload(topology.n_hosts)
    flows = FlowTable(topology, backend.bytes_sent)
    view = LiveView(flows, 0.0, topology.port_capacity_bps, backend.n_classes)
    control = Control(backend, policy, view, flows)
    training = Training(w, backend, view, flows, control, RecordBook())
    policy.setup(w)
    backend.on_flows_done = training.flows_done
    result: dict = {}
    decide = control._decide

    def first() -> None:
        start = clock()
        decide()
        result.setdefault("first", since(start))
        control._decide = decide

    def probe() -> None:
        assert len(view.coflows) == N_COFLOWS and flows.n == N_COFLOWS * WIDTH
        profiler = cProfile.Profile() if profile else None
        start = clock()
        if profiler:
            profiler.enable()
        for _ in range(REPEATS):
            decide()
        if profiler:
            profiler.disable()
            pstats.Stats(profiler).sort_stats("tottime").print_stats(15)
        result["steady"] = tuple(t / REPEATS for t in since(start))
        rows = flows.open_rows()
        total = (0.0, 0.0)
        for _ in range(REPEATS):
            flows.klass[rows] = (flows.klass[rows] + 1) % backend.n_classes  # every class must be re-sent
            start = clock()
            decide()
            total = tuple(a + b for a, b in zip(total, since(start)))
        result["moves"] = tuple(t / REPEATS for t in total)
        raise _Measured

    control._decide = first
    training.schedule_arrivals()
    backend.at(1e-5, probe)
    try:
        backend.run()
    except _Measured:
        pass
    return result


def main(kinds: list[str], profile: str | None) -> None:
    print(f"one decision, {N_COFLOWS} coflows x {WIDTH} flows on a k=8 fat-tree; ms CPU / ms wall")
    for kind in kinds:
        measure(kind, "fifo-lm")  # warm-up, not shown: the first cppyy calls compile their wrappers
        for name in POLICIES:
            r = measure(kind, name, profile == name)
            cells = "  ".join(f"{part} {r[part][0] * 1e3:6.2f} / {r[part][1] * 1e3:6.2f}"
                              for part in ("first", "steady", "moves"))
            print(f"{kind:6} {name:9} {cells}", flush=True)


if __name__ == "__main__":
    args = sys.argv[1:]
    profile = args[args.index("--profile") + 1] if "--profile" in args else None
    which = next((a for a in args if a in ("fluid", "packet", "all")), "all")
    main(["fluid", "packet"] if which == "all" else [which], profile)
