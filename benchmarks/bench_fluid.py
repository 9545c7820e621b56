"""How fast is the fluid backend? Random flows on fat-trees, timed (a script, not a test).

Flows go between random host pairs, sizes log-uniform in [10 KB, 10 MB], random priority
classes, Poisson arrivals at a rate that offers ``load`` of the hosts' total bandwidth.
Every flow's ECMP path is computed once before the run (as the driver does; its CPU time
is printed as ``paths``) and the flows are handed over in one ``start_flows_at``, as the
driver plays an open-loop (flow-size) workload.
Prints, per configuration, the wall and CPU time of the run (CPU time is the fairer number
on a shared machine), events per CPU second, the
number of allocations and the mean number of active flows at them.

Usage::

    python benchmarks/bench_fluid.py                       # k=8 and k=16, 10k and 100k flows
    python benchmarks/bench_fluid.py --k 16 --flows 100000 --load 0.5
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from ns3_hpsched.backends.base import FlowBatch, FlowStart
from ns3_hpsched.backends.fluid import FluidBackend
from ns3_hpsched.topology import fat_tree


def bench(k: int, n_flows: int, load: float, n_classes: int, seed: int) -> dict:
    """Run one configuration and return its measurements."""
    rng = np.random.default_rng(seed)
    topo = fat_tree(k)
    src = rng.integers(0, topo.n_hosts, n_flows)
    dst = (src + rng.integers(1, topo.n_hosts, n_flows)) % topo.n_hosts
    size = np.exp(rng.uniform(np.log(1e4), np.log(1e7), n_flows)).astype(np.int64)
    span_s = size.sum() * 8 / (load * topo.n_hosts * topo.rate_bps)
    start_s = np.sort(rng.uniform(0, span_s, n_flows))
    klass = rng.integers(0, n_classes, n_flows)

    backend = FluidBackend(topo, n_classes=n_classes, latency=True)
    paths_cpu = time.process_time()
    batch = FlowBatch.of([FlowStart(fid, int(src[fid]), int(dst[fid]), int(size[fid]), int(klass[fid]))
                          for fid in range(n_flows)], topo)
    paths_cpu = time.process_time() - paths_cpu
    backend.start_flows_at(batch, start_s)
    cpu = time.process_time()
    stats = backend.run()
    cpu_s = time.process_time() - cpu
    allocations, active_sum = backend.allocation_counts()
    assert len(backend.flows_table()) == n_flows
    return {"k": k, "hosts": topo.n_hosts, "flows": n_flows, "load": load, "sim_s": stats.end_s,
            "paths_cpu_s": paths_cpu,
            "run_s": stats.wall_s, "cpu_s": cpu_s, "events": stats.events,
            "events_per_s": stats.events / cpu_s, "allocations": allocations,
            "mean_active": active_sum / max(allocations, 1)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--k", type=int, nargs="+", default=[8, 16])
    parser.add_argument("--flows", type=int, nargs="+", default=[10_000, 100_000])
    parser.add_argument("--load", type=float, default=0.5)
    parser.add_argument("--classes", type=int, default=8)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    print(f"{'k':>3} {'hosts':>5} {'flows':>7} {'sim_s':>9} {'paths':>7} {'run_s':>8} {'cpu_s':>8} {'events':>8} "
          f"{'ev/s':>8} {'allocs':>7} {'active':>7}")
    for k in args.k:
        for n in args.flows:
            r = bench(k, n, args.load, args.classes, args.seed)
            print(f"{r['k']:>3} {r['hosts']:>5} {r['flows']:>7} {r['sim_s']:>9.4f} {r['paths_cpu_s']:>7.1f} "
                  f"{r['run_s']:>8.2f} {r['cpu_s']:>8.2f} {r['events']:>8} {r['events_per_s']:>8.0f} "
                  f"{r['allocations']:>7} {r['mean_active']:>7.0f}", flush=True)


if __name__ == "__main__":
    main()
