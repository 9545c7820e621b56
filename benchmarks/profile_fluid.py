"""Where the fluid backend's compiled code spends its time: ``perf``, with numba's functions named.

cProfile stops at the compiled event loop (``run_until``). ``perf`` samples inside it, but
numba generates that code at run time, so perf cannot name it. This script runs a scenario
on the fluid backend under ``perf record`` and, before the run exits, writes
``/tmp/perf-PID.map`` (perf's map of code generated at run time) from the object code of
every compiled function; then it prints each compiled function's share of the samples.
Helpers that LLVM inlined count in their caller: ``waterfill._fill_class`` holds the heap
fill, ``_freeze`` and ``groups.finish_time``.

numba keeps a function's object code only when it compiles it, not when it loads it from
its cache, so the run gets a fresh, temporary cache and compiles everything first (a minute
or two, which perf also samples: LLVM and the interpreter, not in the table below). Needs
``perf`` (Debian: ``linux-perf``). Object code is read with numba's
``CodeLibrary._get_compiled_object``, which is not public API.

Usage::

    python benchmarks/profile_fluid.py fb-trace --set workload.max_coflows=250 --set scheduler.name=fair
    python benchmarks/profile_fluid.py large-k16 --top 20
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

#: Set in the child that ``perf record`` runs (which does the simulation): a file for its pid.
CHILD = "HPSCHED_PROFILE_PID_FILE"


def numba_name(symbol: str) -> str:
    """``module.function`` of a numba symbol (``_ZN11ns3_hpsched8backends5fluid4core9run_until...``:
    the length-prefixed parts after ``_ZN``); the Python-facing wrapper gets a ``cpython:`` prefix."""
    start = symbol.find("_ZN")
    if start < 0:
        return symbol[:60]
    parts, i = [], start + 3
    while (m := re.match(r"\d+", symbol[i:])) is not None:
        i += len(m.group())
        parts.append(symbol[i:i + int(m.group())])
        i += int(m.group())
    wrapper = "cpython:" if parts[:1] == ["cpython"] else ""
    return wrapper + ".".join(parts[-2:])


def perf_map_lines() -> list[str]:
    """``start size name`` (hex) of every function in the object code of every compiled
    overload of the package's numba functions."""
    import importlib
    import pkgutil

    from numba.core.registry import CPUDispatcher

    import ns3_hpsched

    lines, seen = [], set()
    for info in pkgutil.walk_packages(ns3_hpsched.__path__, "ns3_hpsched."):
        for obj in vars(importlib.import_module(info.name)).values():
            if not isinstance(obj, CPUDispatcher) or id(obj) in seen:
                continue
            seen.add(id(obj))
            for compiled in obj.overloads.values():
                lines += _library_lines(compiled.library)
    return lines


def _library_lines(library) -> list[str]:
    """Map lines for one code library: its symbols' offsets (``nm``) placed at the address
    of one symbol the JIT resolves."""
    with tempfile.NamedTemporaryFile(suffix=".o") as obj:
        obj.write(library._get_compiled_object())
        obj.flush()
        listing = subprocess.run(["nm", "-S", "--defined-only", obj.name], capture_output=True,
                                 text=True, check=True).stdout
    symbols = [(int(off, 16), int(size, 16), name) for off, size, kind, name in
               (line.split() for line in listing.splitlines() if len(line.split()) == 4) if kind in "tT"]
    base = next((library.get_pointer_to_function(name) - off for off, _, name in symbols
                 if library.get_pointer_to_function(name)), None)
    return [] if base is None else [f"{base + off:x} {size:x} {numba_name(name)}" for off, size, name in symbols]


def child(scenario: str, overrides: list[str], pid_file: Path) -> None:
    """Run the scenario on the fluid backend, then write this process's perf map (and its
    pid to ``pid_file``, so the parent can remove the map)."""
    from ns3_hpsched.cli import parse_overrides
    from ns3_hpsched.runner import simulate
    from ns3_hpsched.scenario import load_scenario

    simulate(load_scenario(scenario, {**parse_overrides(overrides), "backend": "fluid"}))
    pid_file.write_text(str(os.getpid()))
    Path(f"/tmp/perf-{os.getpid()}.map").write_text("\n".join(perf_map_lines()) + "\n")


def report(data: Path, top: int) -> None:
    """Print the compiled functions' shares of the compiled code's samples and of all samples."""
    out = subprocess.run(["perf", "report", "-i", str(data), "--sort", "dso,sym", "--stdio"],
                         capture_output=True, text=True, check=True).stdout
    rows = [(float(line.split()[0].rstrip("%")), line.split()[-1]) for line in out.splitlines()
            if "[JIT]" in line and line.strip()[:1].isdigit()]
    compiled = sum(share for share, _ in rows)
    print(f"{'of compiled':>11s} {'of all':>7s}  compiled function")
    for share, name in rows[:top]:
        print(f"{100 * share / compiled:10.1f}% {share:6.2f}%  {name}")
    print(f"{'':>11s} {compiled:6.2f}%  all compiled code (the rest: start-up, compiling, Python)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("scenario", help="scenario name or .toml path (run on the fluid backend)")
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="scenario override")
    parser.add_argument("--top", type=int, default=12, help="functions to list")
    args = parser.parse_args()
    if os.environ.get(CHILD):
        child(args.scenario, args.set, Path(os.environ[CHILD]))
        return
    with tempfile.TemporaryDirectory() as tmp:
        data, pid_file = Path(tmp) / "perf.data", Path(tmp) / "pid"
        env = {**os.environ, CHILD: str(pid_file), "NUMBA_CACHE_DIR": str(Path(tmp) / "numba")}
        try:
            subprocess.run(["perf", "record", "-q", "-F", "999", "-o", str(data), "--", sys.executable, *sys.argv],
                           env=env, check=True)
            report(data, args.top)
        finally:
            if pid_file.exists():
                Path(f"/tmp/perf-{pid_file.read_text()}.map").unlink(missing_ok=True)


if __name__ == "__main__":
    main()
