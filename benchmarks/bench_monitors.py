"""Cost of the monitors ([monitor]) on the packet and fluid backends (a script, not a test).

Plays ``scenarios/monitor-demo.toml`` (k=4 fat-tree, RDMA with PFC, two small searches)
in one process, alternating monitoring off and on (default interval 10 us, the 8 busiest
ports): off, on, off, on. The two off runs bound the noise of the machine; on/off is the
monitors' cost. Reported per run: simulator events, wall seconds of the simulation
(``run.json``'s ``wall_s``: the fluid pass that picks the busiest ports and the build are
not in it), CPU seconds of the whole ``simulate`` call, events per wall second, and the
rows the monitors wrote. Results are the same with and without monitors (checked: the
stages table is identical), so the runs simulate the same thing.

Monitoring off builds nothing (the ``[monitor]`` table is absent); its only trace in the
simulator is one empty-callback test per PFC frame, so off is today's speed by
construction, and the off/off ratio shows what "nothing measurable" means here.

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
    """Simulate the demo once; its speed and the monitor rows."""
    from ns3_hpsched.runner import simulate
    from ns3_hpsched.scenario import load_scenario

    scenario = load_scenario(SCENARIO, {"backend": backend, "monitor.enabled": monitor})
    cpu = time.process_time()
    records, manifest, tables = simulate(scenario)
    cpu = time.process_time() - cpu
    rows = sum(len(t) for name, t in tables.items() if name != "ports")
    return {"monitor": "on" if monitor else "off", "events": manifest["events"], "wall_s": manifest["wall_s"],
            "cpu_s": cpu, "events_per_s": manifest["events"] / manifest["wall_s"], "rows": rows,
            "stages": records.stages}


def bench(backend: str) -> None:
    runs = [one_run(backend, monitor) for monitor in (False, True, False, True)]
    print(f"\n{backend}: {SCENARIO.name}, monitors at the default interval on the 8 busiest ports")
    print(f"{'monitor':>8} {'events':>9} {'wall s':>8} {'cpu s':>7} {'events/s':>11} {'rows':>7}")
    for r in runs:
        print(f"{r['monitor']:>8} {r['events']:>9} {r['wall_s']:>8.3f} {r['cpu_s']:>7.2f} "
              f"{r['events_per_s']:>11.4g} {r['rows']:>7}")
    off = [r for r in runs if r["monitor"] == "off"]
    on = [r for r in runs if r["monitor"] == "on"]
    same = all(r["stages"].equals(runs[0]["stages"]) for r in runs)
    wall_off = min(r["wall_s"] for r in off)
    print(f"off/off wall ratio (noise): {max(r['wall_s'] for r in off) / wall_off:.3f}")
    print(f"on/off wall ratio (monitor cost): {min(r['wall_s'] for r in on) / wall_off:.3f}")
    print(f"same stages table with and without monitors: {same}")


def main(which: str = "all") -> None:
    for backend in ("fluid", "packet"):
        if which in ("all", backend):
            bench(backend)


if __name__ == "__main__":
    main(*sys.argv[1:])
