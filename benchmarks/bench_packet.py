"""Speed and scale of the ns-3 packet backend (a script, not a test).

Measures, each in a fresh subprocess (ns-3's simulator is a process-wide singleton):

* traffic: 8 flows of 125 MB across pods of a k=4 fat-tree at 10 Gbps, TCP (NewReno,
  MTU 9000), once with all control in C++ (flows started from C++, no Python dispatcher)
  and once played by the driver from Python (workload, policy ``fair``, decisions, bulk
  starts, ``on_flows_done`` reaching Python). Reports events per CPU second and CPU seconds per
  simulated GB; the CPU ratio python/cpp is the cost of Python control (wall too, but the
  machine may be shared).
* hadoop: about 8k small flows (sizes drawn from the Facebook Hadoop distribution,
  ``../shared/data/fb_hadoop_cdf.txt``, Poisson arrivals at 50% load) on a k=8 fat-tree of
  100 Gbps links, played by the driver (policy ``fair``) on the packet backend (RDMA) and on
  the fluid backend: events/s, wall and CPU seconds of each. The flows are lone coflows
  under a one-class policy, so the driver plays them open loop (every flow handed over
  before the run, no decisions).
* loops: the same flows played open loop and closed loop (``fair`` made to decide at every
  release, as before open-loop play existed), on both backends, alternating, with a digest
  of each run's flows table (open and closed must print the same).
* build: wall seconds and peak memory to build k = 4, 8, 16 fat-trees (after ns-3 is loaded).

Usage: ``python benchmarks/bench_packet.py [traffic|hadoop|loops|build|all]``.
"""

from __future__ import annotations

import hashlib
import json
import resource
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

N_FLOWS, FLOW_BYTES, TRANSPORT = 8, 125_000_000, "newreno"
HADOOP_FLOWS, HADOOP_LOAD, HADOOP_RATE_BPS, HADOOP_SEED = 8000, 0.5, 100e9, 1
CDF = ROOT.parent.parent / "shared" / "data" / "fb_hadoop_cdf.txt"
if not CDF.exists():
    CDF = Path("/work/shared/data/fb_hadoop_cdf.txt")


def flows(topo, flow_bytes: int):
    """Flow i: host i -> host i + n/2 (pods 0-1 to pods 2-3)."""
    return [(i, i, i + topo.n_hosts // 2, flow_bytes) for i in range(N_FLOWS)]


def traffic_cpp(flow_bytes: int = FLOW_BYTES) -> dict:
    """All control in C++: flows registered and started by C++, no Python callbacks."""
    from ns3_hpsched.backends.packet import load
    from ns3_hpsched.backends.packet.network import realise
    from ns3_hpsched.topology import fat_tree, flow_five_tuple
    from ns3_hpsched.transports import make_transport

    lib = load()
    topo, transport = fat_tree(4), make_transport(TRANSPORT)
    transport.configure(lib.ns, topo)
    fabric = realise(lib.cpp, topo, transport, n_bands=8, device_queue_packets=1)
    session = lib.cpp.Session()
    starter = transport.create_flows(lib.cpp, fabric, session)
    for flow_id, src, dst, size in flows(topo, flow_bytes):  # opened ahead, as the driver opens an open-loop workload's
        ft = flow_five_tuple(flow_id, src, dst)
        starter.StartFlow(0.0, True, flow_id, src, dst, size, 0, -1, ft.sport, ft.dport)
    cpu, started = time.process_time(), time.perf_counter()
    lib.ns.Simulator.Run()
    wall, cpu = time.perf_counter() - started, time.process_time() - cpu
    return {"wall_s": wall, "cpu_s": cpu, "events": int(lib.ns.Simulator.GetEventCount()),
            "end_s": lib.ns.Simulator.Now().GetSeconds(), "flows_done": int(session.NFlows())}


def traffic_python(flow_bytes: int = FLOW_BYTES) -> dict:
    """Driven from Python: the driver plays the flows as a workload (policy ``fair``)."""
    from ns3_hpsched.backends.packet import PacketBackend
    from ns3_hpsched.driver import play
    from ns3_hpsched.sched import make_policy
    from ns3_hpsched.topology import fat_tree
    from ns3_hpsched.workload.flowlist import flow_list_workload

    topo = fat_tree(4)
    backend = PacketBackend(topo, transport=TRANSPORT)
    workload = flow_list_workload([{"src": src, "dst": dst, "bytes": size}
                                   for _, src, dst, size in flows(topo, flow_bytes)], topo.n_hosts)
    cpu, started = time.process_time(), time.perf_counter()
    records = play(workload, backend, make_policy("fair"))
    wall, cpu = time.perf_counter() - started, time.process_time() - cpu
    stats = records.stats
    return {"wall_s": wall, "cpu_s": cpu, "events": stats.events, "end_s": stats.end_s,
            "flows_done": len(records.flows)}


def hadoop_workload(topo):
    """HADOOP_FLOWS flows: sizes by inverse transform (linear between CDF points, as HPCC's
    generator), uniform random source and destination, Poisson arrivals at HADOOP_LOAD."""
    import numpy as np

    from ns3_hpsched.workload.flowlist import flow_list_workload

    cdf = np.loadtxt(CDF)
    sizes_at, percent = cdf[:, 0], cdf[:, 1]
    mean = np.sum(np.diff(percent) / 100 * (sizes_at[1:] + sizes_at[:-1]) / 2)
    rng = np.random.default_rng(HADOOP_SEED)
    sizes = np.maximum(1, np.ceil(np.interp(rng.uniform(0, 100, HADOOP_FLOWS), percent, sizes_at))).astype(int)
    rate = HADOOP_LOAD * HADOOP_RATE_BPS * topo.n_hosts / (8 * mean)   # flows per second, whole fabric
    starts = np.cumsum(rng.exponential(1 / rate, HADOOP_FLOWS))
    src = rng.integers(0, topo.n_hosts, HADOOP_FLOWS)
    dst = (src + rng.integers(1, topo.n_hosts, HADOOP_FLOWS)) % topo.n_hosts
    flows = [{"src": int(a), "dst": int(b), "bytes": int(n), "start_s": float(t)}
             for a, b, n, t in zip(src, dst, sizes, starts)]
    return flow_list_workload(flows, topo.n_hosts)


def hadoop(backend_kind: str, closed: bool = False) -> dict:
    """The Hadoop-sized flows played by the driver on one backend (``closed``: closed loop)."""
    from ns3_hpsched.driver import play
    from ns3_hpsched.sched.fair import Fair
    from ns3_hpsched.topology import fat_tree

    class ClosedLoopFair(Fair):
        """Fair, deciding as the run goes: the driver cannot play it open loop."""

        def one_class(self, workload) -> bool:
            return False

    topo = fat_tree(8, rate_bps=HADOOP_RATE_BPS)
    workload = hadoop_workload(topo)
    if backend_kind == "packet":
        from ns3_hpsched.backends.packet import PacketBackend

        backend = PacketBackend(topo, transport="rdma")
    else:
        from ns3_hpsched.backends.fluid import FluidBackend

        backend = FluidBackend(topo)
    cpu, wall = time.process_time(), time.perf_counter()
    records = play(workload, backend, ClosedLoopFair() if closed else Fair())
    cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    digest = hashlib.sha256(records.flows.to_csv(index=False).encode()).hexdigest()[:16]
    return {"flows": len(records.flows), "events": records.stats.events, "end_s": records.stats.end_s,
            "wall_s": wall, "cpu_s": cpu, "decisions": records.decisions,
            "mean_fct_s": float(records.flows["fct_s"].mean()), "digest": digest}


def build(k: int) -> dict:
    """Wall time and memory to build a k-ary fat-tree once ns-3 is loaded."""
    from ns3_hpsched.backends.packet import PacketBackend, load
    from ns3_hpsched.topology import fat_tree

    load()
    base_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    started = time.perf_counter()
    topo = fat_tree(k)
    backend = PacketBackend(topo)
    wall = time.perf_counter() - started
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return {"k": k, "hosts": topo.n_hosts, "switches": topo.n_nodes - topo.n_hosts, "build_s": wall,
            "ns3_build_s": backend.build_s, "peak_rss_mb": peak_mb, "rss_after_load_mb": base_mb}


WORKERS = {"traffic-cpp": traffic_cpp, "traffic-python": traffic_python,
           **{f"hadoop-{kind}{suffix}": (lambda kind=kind, closed=bool(suffix): hadoop(kind, closed))
              for kind in ("packet", "fluid") for suffix in ("", "-closed")},
           **{f"build-{k}": (lambda k=k: build(k)) for k in (4, 8, 16)}}


def in_subprocess(worker: str, *args: int) -> dict:
    """Run one worker (with integer arguments, e.g. a traffic worker's flow bytes) in a fresh
    interpreter and return its JSON result."""
    out = subprocess.run([sys.executable, __file__, "--worker", worker, *map(str, args)], check=True,
                         capture_output=True, text=True, cwd=ROOT).stdout
    return json.loads(out.strip().splitlines()[-1])


def main(part: str) -> None:
    if part in ("traffic", "all"):
        gb = N_FLOWS * FLOW_BYTES / 1e9
        results = {mode: in_subprocess(f"traffic-{mode}") for mode in ("cpp", "python")}
        for mode, r in results.items():
            print(f"traffic[{mode:6}] {r['flows_done']} flows, sim {r['end_s'] * 1e3:.1f} ms, "
                  f"{r['events']:,} events in {r['wall_s']:.2f} s wall ({r['cpu_s']:.2f} s CPU): "
                  f"{r['events'] / r['cpu_s']:,.0f} events per CPU s, {r['cpu_s'] / gb:.2f} CPU s per simulated GB")
        for clock in ("cpu_s", "wall_s"):
            print(f"python/cpp {clock[:-2]} ratio: {results['python'][clock] / results['cpp'][clock]:.3f}")
    if part in ("hadoop", "all"):
        for kind in ("packet", "fluid"):
            r = in_subprocess(f"hadoop-{kind}")
            print(f"hadoop[{kind:6}] {r['flows']} flows, sim {r['end_s'] * 1e3:.2f} ms, {r['decisions']} decisions, "
                  f"{r['events']:,} events in {r['wall_s']:.2f} s wall ({r['cpu_s']:.2f} s CPU): "
                  f"{r['events'] / r['wall_s']:,.0f} events/s wall, {r['events'] / r['cpu_s']:,.0f} per CPU s; "
                  f"mean FCT {r['mean_fct_s'] * 1e6:.1f} us", flush=True)
    if part == "loops":
        for kind in ("fluid", "packet"):
            for worker in (f"hadoop-{kind}", f"hadoop-{kind}-closed") * 2:
                r = in_subprocess(worker)
                print(f"{worker:21} {r['decisions']:5} decisions, {r['events']:,} events, {r['cpu_s']:.2f} s CPU, "
                      f"flows table {r['digest']}", flush=True)
    if part in ("build", "all"):
        for k in (4, 8, 16):
            r = in_subprocess(f"build-{k}")
            print(f"build k={k:2}: {r['hosts']} hosts, {r['switches']} switches, {r['build_s']:.2f} s "
                  f"(ns-3 part {r['ns3_build_s']:.2f} s), peak RSS {r['peak_rss_mb']:.0f} MB "
                  f"(+{r['peak_rss_mb'] - r['rss_after_load_mb']:.0f} MB over loaded ns-3)")


if __name__ == "__main__":
    if len(sys.argv) >= 3 and sys.argv[1] == "--worker":
        from ns3_hpsched.backends.packet.loader import quiet_stderr

        with quiet_stderr():
            result = WORKERS[sys.argv[2]](*map(int, sys.argv[3:]))
        print(json.dumps(result))
    else:
        main(sys.argv[1] if len(sys.argv) > 1 else "all")
