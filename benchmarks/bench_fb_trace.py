"""Classic coflow mode, timed: the Facebook 2010 trace on the fluid backend, per policy.

Runs ``scenarios/fb-trace.toml`` (150-port big switch at 1 Gbps) with each coflow policy
and prints the wall and CPU seconds, the number of flows and policy decisions, the
average CCT, and the rate core's work: class fills (and how many only relevelled a
recorded fill, redid it over its steps, or resumed it) and groups frozen one by one by
water-filling. A script, not a test.

Usage::

    python benchmarks/bench_fb_trace.py                  # the whole hour, 5 policies (3-4 minutes)
    python benchmarks/bench_fb_trace.py --coflows 100    # the first 100 coflows (seconds)
    python benchmarks/bench_fb_trace.py --policy varys --coflows 20 --profile
    python benchmarks/bench_fb_trace.py --policy fifo-lm --repeat 3   # and the best of three

This machine's speed moves by 30-50% from one hour to the next (``fifo-lm``'s whole hour took
14 and 19 s on one morning), so ``--repeat`` runs each policy again and prints the least CPU
time too, as ``timeit`` does: the run the machine slowed least.
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import time

from ns3_hpsched import runner
from ns3_hpsched.runner import simulate
from ns3_hpsched.scenario import load_scenario

POLICIES = ("fair", "fifo-lm", "varys", "aalo", "sincronia")


#: Parts of the package, by path fragment (first match wins); everything else is "other".
PARTS = {"fluid backend": ("backends/fluid/", "sched/fill", "sched/allocator"), "driver": ("ns3_hpsched/driver",),
         "batches": ("backends/base",), "policies": ("ns3_hpsched/sched/",),
         "topology": ("ns3_hpsched/topology/",), "workload": ("ns3_hpsched/workload/",)}


def _part(path: str) -> str | None:
    """The part of the package a source file belongs to (``None`` outside the package)."""
    return next((name for name, frags in PARTS.items() if any(f in path for f in frags)),
                "other" if "ns3_hpsched" in path else None)


def _split(profile: cProfile.Profile) -> dict[str, float]:
    """Profiled own seconds per part of the package; time in numpy and other libraries is
    charged to the part that called them (split by the calls' own time, through library frames)."""
    stats = pstats.Stats(profile).stats
    memo: dict = {}

    def shares(func, depth=0) -> dict[str, float]:
        """Fractions of ``func``'s time that belong to each part."""
        if func in memo:
            return memo[func]
        part = _part(func[0])
        if part or depth > 20 or not stats[func][4]:
            memo[func] = {part or "other": 1.0}
            return memo[func]
        memo[func] = {"other": 1.0}  # cycles: provisional
        callers = stats[func][4]
        total = sum(c[2] for c in callers.values()) or 1.0
        out: dict[str, float] = {}
        for caller, c in callers.items():
            for name, x in (shares(caller, depth + 1) if caller in stats else {"other": 1.0}).items():
                out[name] = out.get(name, 0.0) + x * (c[2] / total if total else 1 / len(callers))
        memo[func] = out
        return out

    seconds = dict.fromkeys([*PARTS, "other"], 0.0)
    for func, (_, _, own, _, _) in stats.items():
        for name, x in shares(func).items():
            seconds[name] += own * x
    return seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--coflows", type=int, default=526,
                        help="first N coflows of the trace (default: all 526, the whole hour)")
    parser.add_argument("--policy", action="append", help="policy (repeatable; default: all five)")
    parser.add_argument("--trace", help="trace file (default: the scenario's workload.path)")
    parser.add_argument("--repeat", type=int, default=1, help="runs per policy (and the best of them)")
    parser.add_argument("--profile", action="store_true",
                        help="also print where the time goes (cProfile, own time per part of the package)")
    args = parser.parse_args()
    made = []  # the backend of each run, for its work counts
    make_backend = runner.make_backend

    def keep(scenario):
        made.append(make_backend(scenario))
        return made[-1]

    runner.make_backend = keep
    best: dict[str, float] = {}  # least CPU seconds of each policy's runs
    print(f"{'policy':10s} {'coflows':>7s} {'flows':>7s} {'decisions':>9s} {'wall_s':>7s} {'cpu_s':>7s} "
          f"{'avg CCT s':>9s} {'fills':>9s} {'relevel':>9s} {'stepped':>9s} {'resume':>9s} {'frozen':>13s}")
    for policy in [p for p in args.policy or POLICIES for _ in range(args.repeat)]:
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
        work = made[-1].fill_counts()
        print(f"{policy:10s} {len(records.coflows):7d} {len(records.flows):7d} {records.decisions:9d} "
              f"{wall:7.1f} {cpu:7.1f} {records.coflows['cct_s'].mean():9.3f} {work['fills']:9,d} "
              f"{work['relevelled']:9,d} {work['stepped']:9,d} {work['resumed']:9,d} {work['frozen']:13,d}", flush=True)
        if profile:
            print("   own time (profiled):", ", ".join(f"{part} {s:.1f} s" for part, s in _split(profile).items()))
        best[policy] = min(best.get(policy, cpu), cpu)
    if args.repeat > 1:
        print("least CPU s of", args.repeat, "runs:", ", ".join(f"{policy} {cpu:.1f}" for policy, cpu in best.items()))


if __name__ == "__main__":
    main()
