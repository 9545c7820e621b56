"""Classic coflow mode, timed: the Facebook 2010 trace on the fluid backend, per policy.

Runs ``scenarios/fb-trace.toml`` (150-port big switch at 1 Gbps) with each coflow policy
and prints the wall and CPU seconds, the number of flows and policy decisions, and the
average CCT. A script, not a test.

Usage::

    python benchmarks/bench_fb_trace.py                  # first 100 coflows, 5 policies
    python benchmarks/bench_fb_trace.py --coflows 526    # the whole hour
    python benchmarks/bench_fb_trace.py --policy varys --coflows 20 --profile
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import time

from ns3_hpsched.runner import simulate
from ns3_hpsched.scenario import load_scenario

POLICIES = ("fair", "fifo-lm", "varys", "aalo", "sincronia")


#: Parts of the package, by path fragment (first match wins); everything else is "other".
PARTS = {"fluid backend": ("backends/fluid/", "sched/fill", "sched/allocator"), "driver": ("ns3_hpsched/driver",),
         "policies": ("ns3_hpsched/sched/",), "topology": ("ns3_hpsched/topology/",)}


def _split(profile: cProfile.Profile) -> dict[str, float]:
    """Own (not cumulative) profiled seconds per part of the package, numpy calls counted as other."""
    seconds = dict.fromkeys([*PARTS, "other"], 0.0)
    for (path, _, _), (_, _, own, _, _) in pstats.Stats(profile).stats.items():
        part = next((name for name, frags in PARTS.items() if any(f in path for f in frags)), "other")
        seconds[part] += own
    return seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--coflows", type=int, default=100, help="first N coflows of the trace")
    parser.add_argument("--policy", action="append", help="policy (repeatable; default: all five)")
    parser.add_argument("--trace", help="trace file (default: the scenario's workload.path)")
    parser.add_argument("--profile", action="store_true",
                        help="also print where the time goes (cProfile, own time per part of the package)")
    args = parser.parse_args()
    print(f"{'policy':10s} {'coflows':>7s} {'flows':>7s} {'decisions':>9s} {'wall_s':>7s} {'cpu_s':>7s} "
          f"{'avg CCT s':>9s}")
    for policy in args.policy or POLICIES:
        overrides = {"workload.max_coflows": args.coflows, "scheduler.name": policy}
        if args.trace:
            overrides["workload.path"] = args.trace
        scenario = load_scenario("fb-trace", overrides)
        profile = cProfile.Profile() if args.profile else None
        wall, cpu = time.perf_counter(), time.process_time()
        if profile:
            profile.enable()
        records, _, _ = simulate(scenario)
        if profile:
            profile.disable()
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
        print(f"{policy:10s} {len(records.coflows):7d} {len(records.flows):7d} {records.decisions:9d} "
              f"{wall:7.1f} {cpu:7.1f} {records.coflows['cct_s'].mean():9.3f}", flush=True)
        if profile:
            print("   own time (profiled):", ", ".join(f"{part} {s:.1f} s" for part, s in _split(profile).items()))


if __name__ == "__main__":
    main()
