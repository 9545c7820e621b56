"""Fuzz figures of the validation layer in issue 13's form (a script, not a test).

Runs the generators of ``tests/fuzzing.py`` (the ones ``tests/test_fuzz.py`` asserts on)
and prints, per kind of input: cases, clean errors, valid inputs accepted, bad outcomes
(tracebacks, hangs, invalid inputs accepted, unclear messages, files written), with wall
and CPU time. Bad cases are listed below the table.

Usage (from the repository root)::

    PYTHONPATH=$PWD python benchmarks/fuzz_report.py              # 250 cases per kind
    PYTHONPATH=$PWD python benchmarks/fuzz_report.py --cases 1000 --seed 2
"""

from __future__ import annotations

import argparse
import collections
import tempfile
import time
from pathlib import Path

from hypothesis import HealthCheck, given, seed, settings

from tests import fuzzing


def run_kind(kind: str, cases: int, folder: Path, rng_seed: int) -> tuple[collections.Counter, list[str]]:
    """Outcome counts of ``cases`` generated inputs of ``kind``, and the bad ones."""
    counts: collections.Counter = collections.Counter()
    bad: list[str] = []

    @seed(rng_seed)
    @settings(max_examples=cases, deadline=None, database=None, suppress_health_check=list(HealthCheck))
    @given(fuzzing.STRATEGIES[kind]())
    def record(case):
        outcome = fuzzing.judge(case, folder)
        counts["bad" if outcome.startswith("bad") else outcome] += 1
        if outcome.startswith("bad"):
            bad.append(f"{kind}: {case.label}: {outcome}")

    record()
    return counts, bad


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=250, help="generated inputs per kind")
    parser.add_argument("--seed", type=int, default=1, help="hypothesis seed")
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="fuzz-"))
    rows, bad = [], []
    wall, cpu = time.perf_counter(), time.process_time()
    for kind in fuzzing.KINDS:
        counts, kind_bad = run_kind(kind, args.cases, folder, args.seed)
        rows.append((kind, sum(counts.values()), counts["clean error"], counts["valid accepted"], counts["bad"]))
        bad += kind_bad
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    print(f"| kind | cases | clean errors | valid accepted | bad |\n|---|---|---|---|---|")
    for row in [*rows, ("total", *(sum(r[i] for r in rows) for i in range(1, 5)))]:
        print("| " + " | ".join(f"{v:,}" if isinstance(v, int) else v for v in row) + " |")
    print(f"\n{wall:.1f} s wall, {cpu:.1f} s CPU; seed {args.seed}")
    for line in bad:
        print(line)


if __name__ == "__main__":
    main()
