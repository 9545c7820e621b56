"""Cost of the monitors ([monitor]) on the packet and fluid backends (a script, not a test).

Plays ``scenarios/monitor-demo.toml`` (k=4 fat-tree, RDMA with PFC, two small searches)
in one process, after a warm-up run, alternating monitoring off and on three times
(default interval 10 us, the 8 busiest ports). The spread of the off runs bounds the
noise of the machine; the on/off ratio of median CPU seconds is the monitors' cost.
Reported per run: simulator events (the monitors add one per interval), wall and CPU
seconds of the simulation alone (the build and the fluid pass that picks the busiest ports
are not timed), events per wall second, and the rows the monitors wrote. The stages table
is checked identical with and without monitors: the runs simulate the same thing.

Monitoring off builds nothing (the ``[monitor]`` table is absent); its only trace in the
simulator is one empty-callback test per PFC frame, so off is today's speed by
construction (measured against main before the merge: 0.73 vs 0.74 CPU s per run, inside
the noise); the spread of the off runs shows what "nothing measurable" means here.

Usage: ``python benchmarks/bench_monitors.py [packet|fluid|all]``.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

SCENARIO = ROOT / "scenarios" / "monitor-demo.toml"


def one_run(backend: str, monitor: bool) -> dict:
    """Play the demo once; wall and CPU seconds of the simulation alone, and the monitor rows."""
    from ns3_hpsched.driver import play
    from ns3_hpsched.monitor import plan_monitors
    from ns3_hpsched.runner import make_backend
    from ns3_hpsched.scenario import load_scenario

    scenario = load_scenario(SCENARIO, {"backend": backend, "monitor.enabled": monitor})
    plan = plan_monitors(scenario)  # the fluid pass choosing the busiest ports is not timed
    sim = make_backend(scenario)
    monitors = plan.attach(sim) if plan else None
    wall, cpu = time.perf_counter(), time.process_time()
    records = play(scenario.built_workload, sim, scenario.built_policy)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    rows = sum(len(t) for t in monitors.tables(records.stats.end_s).values()) if monitors else 0
    return {"monitor": "on" if monitor else "off", "events": records.stats.events, "wall_s": wall,
            "cpu_s": cpu, "events_per_s": records.stats.events / wall, "rows": rows, "stages": records.stages}


def bench(backend: str, rounds: int = 3) -> None:
    one_run(backend, False)  # warm-up: loads ns-3 and compiles the C++ (not reported)
    runs = [one_run(backend, monitor) for _ in range(rounds) for monitor in (False, True)]
    print(f"\n{backend}: {SCENARIO.name}, monitors at the default interval on the 8 busiest ports")
    print(f"{'monitor':>8} {'events':>9} {'wall s':>8} {'cpu s':>7} {'events/s':>11} {'rows':>7}")
    for r in runs:
        print(f"{r['monitor']:>8} {r['events']:>9} {r['wall_s']:>8.3f} {r['cpu_s']:>7.3f} "
              f"{r['events_per_s']:>11.4g} {r['rows']:>7}")
    cpu = {m: sorted(r["cpu_s"] for r in runs if r["monitor"] == m) for m in ("off", "on")}
    median = {m: v[len(v) // 2] for m, v in cpu.items()}
    print(f"off runs, CPU max/min (noise): {cpu['off'][-1] / cpu['off'][0]:.3f}")
    print(f"on/off CPU ratio of the medians (monitor cost): {median['on'] / median['off']:.3f}")
    print(f"same stages table with and without monitors: {all(r['stages'].equals(runs[0]['stages']) for r in runs)}")


def main(which: str = "all") -> None:
    for backend in ("fluid", "packet"):
        if which in ("all", backend):
            bench(backend)


if __name__ == "__main__":
    main(*sys.argv[1:])
