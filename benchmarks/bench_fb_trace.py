"""Classic coflow mode, timed: the Facebook 2010 trace on the fluid backend, per policy.

Runs ``scenarios/fb-trace.toml`` (150-port big switch at 1 Gbps) with each coflow policy
and prints the wall and CPU seconds, the number of flows and policy decisions, and the
average CCT. A script, not a test.

Usage::

    python benchmarks/bench_fb_trace.py                  # first 100 coflows, 5 policies
    python benchmarks/bench_fb_trace.py --coflows 526    # the whole hour
"""

from __future__ import annotations

import argparse
import time

from ns3_hpsched.runner import simulate
from ns3_hpsched.scenario import load_scenario

POLICIES = ("fair", "fifo-lm", "varys", "aalo", "sincronia")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--coflows", type=int, default=100, help="first N coflows of the trace")
    parser.add_argument("--policy", action="append", help="policy (repeatable; default: all five)")
    parser.add_argument("--trace", help="trace file (default: the scenario's workload.path)")
    args = parser.parse_args()
    print(f"{'policy':10s} {'coflows':>7s} {'flows':>7s} {'decisions':>9s} {'wall_s':>7s} {'cpu_s':>7s} "
          f"{'avg CCT s':>9s}")
    for policy in args.policy or POLICIES:
        overrides = {"workload.max_coflows": args.coflows, "scheduler.name": policy}
        if args.trace:
            overrides["workload.path"] = args.trace
        scenario = load_scenario("fb-trace", overrides)
        wall, cpu = time.perf_counter(), time.process_time()
        records, _, _ = simulate(scenario)
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
        print(f"{policy:10s} {len(records.coflows):7d} {len(records.flows):7d} {records.decisions:9d} "
              f"{wall:7.1f} {cpu:7.1f} {records.coflows['cct_s'].mean():9.3f}", flush=True)


if __name__ == "__main__":
    main()
