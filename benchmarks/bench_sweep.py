"""How long does a fluid sweep take? The README's 63-run load sweep, timed (a script, not a test).

Runs ``invoke sweep load --grid workload.arrival_rate=5,10,20 --seed 1 --seed 2 --seed 3``
(7 schedulers x 3 loads x 3 seeds) into a fresh store and prints the wall time, the CPU
time of the sweep and of all its run processes (the fairer number on a shared machine),
the cost per run (wall x workers / runs, and CPU / runs) and the mean time a run spends
simulating in its process (``wall_s`` of the index): per-run cost minus that is what each
run pays for process start-up and the sweep's own work. The peak memory of the largest run
process shows whether a long-lived worker grows over its runs. A digest of the result tables
lets two invocations (e.g. ``--one-process-per-run``) be checked for identical results.

Usage::

    python benchmarks/bench_sweep.py                    # default workers (one per CPU)
    python benchmarks/bench_sweep.py --workers 1
    python benchmarks/bench_sweep.py --workers 2 --one-process-per-run
"""

from __future__ import annotations

import argparse
import hashlib
import os
import resource
import tempfile
import time
from pathlib import Path

from ns3_hpsched.sched import POLICIES
from ns3_hpsched.store import TABLES, runs_dir
from ns3_hpsched.sweep import run_sweep

GRID = {"workload.arrival_rate": [5.0, 10.0, 20.0]}
SEEDS = [1, 2, 3]


def _children_cpu_s() -> float:
    """CPU seconds (user + system) of this process's finished child processes so far."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _digest(store: Path) -> str:
    """sha256 over every run's result tables (file bytes), in hash order."""
    digest = hashlib.sha256()
    for run in sorted(runs_dir(store).iterdir()):
        for name in TABLES:
            digest.update((run / f"{name}.parquet").read_bytes())
    return digest.hexdigest()[:16]


def bench(workers: int | None, reuse: bool) -> dict:
    """Run the sweep once into a fresh store; return its measurements."""
    with tempfile.TemporaryDirectory() as tmp:
        store = Path(tmp) / "store"
        wall, cpu, children = time.perf_counter(), time.process_time(), _children_cpu_s()
        kwargs = {} if reuse else {"reuse_workers": False}
        index = run_sweep("load", GRID, list(POLICIES), SEEDS, store, workers=workers,
                          progress=False, **kwargs)
        wall_s = time.perf_counter() - wall
        sweep_cpu_s = time.process_time() - cpu
        runs_cpu_s = _children_cpu_s() - children
        assert set(index["status"]) == {"ok"}, index[index["status"] != "ok"]
        n, used = len(index), workers or os.cpu_count() or 1
        return {"runs": n, "workers": used, "wall_s": wall_s, "sweep_cpu_s": sweep_cpu_s,
                "runs_cpu_s": runs_cpu_s, "per_run_wall_s": wall_s * used / n,
                "per_run_cpu_s": (sweep_cpu_s + runs_cpu_s) / n,
                "simulating_s": float(index["wall_s"].mean()), "digest": _digest(store),
                "peak_rss_mb": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024}


def main() -> None:
    """Parse the arguments, run the benchmark, print one line of numbers."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, default=None)
    parser.add_argument("--one-process-per-run", action="store_true",
                        help="start a fresh process for every run (how sweeps ran before)")
    args = parser.parse_args()
    r = bench(args.workers, not args.one_process_per_run)
    print(f"{r['runs']} runs, {r['workers']} workers: wall {r['wall_s']:.1f} s, CPU {r['sweep_cpu_s']:.1f} s "
          f"(sweep) + {r['runs_cpu_s']:.1f} s (run processes); per run {r['per_run_wall_s']:.2f} s wall "
          f"x worker, {r['per_run_cpu_s']:.2f} s CPU, of which simulating {r['simulating_s']:.2f} s; "
          f"largest run process {r['peak_rss_mb']:.0f} MB; tables digest {r['digest']}")


if __name__ == "__main__":
    main()
