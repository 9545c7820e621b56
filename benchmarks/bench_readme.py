"""Re-measure the numbers the README quotes, and print them as the README's Markdown.

The README's times (install, first ns-3 import, ``invoke simulate``, ``invoke test`` and
``--quick``) and its cross-check table are written between markers
(``<!-- timings -->`` ... ``<!-- /timings -->``, ``<!-- crosscheck-table -->`` ...), so
they are measured here, not typed. ``--write`` replaces those sections of README.md.

What each measurement costs (wall time on a 2-core machine, roughly):

* ``install``: a fresh venv and ``pip install -e '.[dev]'`` (warm pip cache: ~30 s), then
  the first ``from ns import ns`` in it;
* ``simulate``: ``invoke simulate`` (the default scenario, packet backend: ~10 s);
* ``quick`` / ``tests``: ``invoke test --quick`` (~40 s) and ``invoke test`` (~90 s);
* ``crosscheck``: ``invoke crosscheck`` of the small search, 7 schedulers x 2 backends
  (14 packet runs of ~35 s each: ~10 minutes).

Usage::

    python benchmarks/bench_readme.py                          # everything, print the Markdown
    python benchmarks/bench_readme.py --only simulate,quick    # some measurements
    python benchmarks/bench_readme.py --write                  # and update README.md
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # measure this checkout, whichever copy of the package is installed
README = ROOT / "README.md"
MEASUREMENTS = ("install", "simulate", "quick", "tests", "crosscheck")


def timed(command: list[str], cwd: Path = ROOT) -> dict[str, float]:
    """Run ``command`` (must succeed); its wall time and the CPU time of its processes."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    subprocess.run(command, cwd=cwd, env=env, check=True, stdout=subprocess.DEVNULL)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return {"wall_s": wall, "cpu_s": (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)}


def measure_install() -> dict[str, dict[str, float]]:
    """``pip install -e '.[dev]'`` into a fresh venv, then its first ``from ns import ns``."""
    with tempfile.TemporaryDirectory() as tmp:
        venv = Path(tmp) / "venv"
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        python = str(venv / "bin" / "python")
        install = timed([python, "-m", "pip", "install", "-q", "-e", ".[dev]"])
        first_import = timed([python, "-c", "from ns import ns"], cwd=Path(tmp))
    return {"install": install, "ns3_import": first_import}


def measure_simulate() -> dict[str, float]:
    """``invoke simulate`` (the README's first command), into a scratch results folder."""
    with tempfile.TemporaryDirectory() as tmp:
        return timed([sys.executable, "-m", "invoke", "-r", str(ROOT), "simulate", "--out", f"{tmp}/run"],
                     cwd=Path(tmp))


def measure_tests(quick: bool) -> dict[str, float]:
    """``invoke test`` (with ``--quick``: without the ns-3 tests)."""
    return timed([sys.executable, "-m", "invoke", "test", *(["--quick"] if quick else [])])


def measure_crosscheck() -> pd.DataFrame:
    """``invoke crosscheck`` of the small search for every scheduler; its summary table.

    One simulation per CPU: each packet run gets a core to itself.
    """
    from ns3_hpsched.cli import crosscheck
    from ns3_hpsched.sched import POLICIES

    with tempfile.TemporaryDirectory() as tmp:
        store = crosscheck("small-search", list(POLICIES), {}, store=f"{tmp}/store", workers=os.cpu_count() or 1)
        return pd.read_csv(store / "crosscheck_summary.csv")


def duration(seconds: float) -> str:
    """``9.3 s``, ``85 s``, ``about 6 minutes``: how the README writes a wall time."""
    if seconds < 10:
        return f"{seconds:.1f} s"
    if seconds < 120:
        return f"{seconds:.0f} s"
    return f"about {round(seconds / 60)} minutes"


def timings_markdown(times: dict[str, dict[str, float]]) -> str:
    """The README's timings paragraph from measured wall (and CPU) times.

    ``times`` maps ``install``, ``ns3_import``, ``simulate``, ``quick``, ``tests`` to
    ``{"wall_s": ..., "cpu_s": ...}``.
    """
    def item(key: str) -> str:
        t = times[key]
        return f"{duration(t['wall_s'])} ({duration(t['cpu_s'])} CPU)"

    return (f"Measured by `invoke bench --which readme` (wall time, CPU time in brackets): "
            f"`pip install -e '.[dev]'` into a fresh venv with a warm pip cache {item('install')}, "
            f"and the first `from ns import ns` after it {item('ns3_import')}; "
            f"`invoke simulate` {item('simulate')}; `invoke test` {item('tests')}; "
            f"`invoke test --quick` {item('quick')}.")


def crosscheck_markdown(summary: pd.DataFrame, scenario: str = "small-search") -> str:
    """The README's cross-check section: what was run, then the table of :func:`summary_markdown`."""
    from ns3_hpsched.crosscheck import summary_markdown
    from ns3_hpsched.scenario import load_scenario

    sc = load_scenario(scenario, {})
    counts = [f"{int(summary[f'{m}_n'].iloc[0])} {word} per scheduler" for m, word in
              (("sct", "stages"), ("cct", "coflows")) if f"{m}_n" in summary and summary[f"{m}_n"].nunique() == 1]
    what = ", ".join([sc.transport.kind.upper(), f"MTU {sc.built_topology.mtu_bytes}"])
    return (f"Measured with `invoke crosscheck` ({sc.name}, {what}; {' and '.join(counts)}):\n\n"
            + summary_markdown(summary))


def replace_section(text: str, name: str, body: str) -> str:
    """``text`` with what lies between ``<!-- name -->`` and ``<!-- /name -->`` replaced by ``body``."""
    start, end = f"<!-- {name} -->", f"<!-- /{name} -->"
    if text.count(start) != 1 or text.count(end) != 1 or text.index(start) > text.index(end):
        raise ValueError(f"README.md needs exactly one {start} ... {end} section")
    head, rest = text.split(start)
    _, tail = rest.split(end)
    return f"{head}{start}\n{body.strip()}\n{end}{tail}"


def sections(only: set[str]) -> dict[str, str]:
    """Run the measurements in ``only``; the README sections they complete (timings need all five)."""
    times: dict[str, dict[str, float]] = {}
    out = {}
    if "install" in only:
        times |= measure_install()
    if "simulate" in only:
        times["simulate"] = measure_simulate()
    for key in ("quick", "tests"):
        if key in only:
            times[key] = measure_tests(quick=key == "quick")
    for key, t in times.items():
        print(f"{key}: {t['wall_s']:.1f} s wall, {t['cpu_s']:.1f} s CPU", file=sys.stderr)
    if {"install", "simulate", "quick", "tests"} <= only:
        out["timings"] = timings_markdown(times)
    if "crosscheck" in only:
        out["crosscheck-table"] = crosscheck_markdown(measure_crosscheck())
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", default=",".join(MEASUREMENTS),
                        help=f"comma-separated subset of {','.join(MEASUREMENTS)} (default: all)")
    parser.add_argument("--write", action="store_true", help="replace the measured sections of README.md")
    args = parser.parse_args()
    only = set(args.only.split(","))
    if only - set(MEASUREMENTS):
        parser.error(f"--only: unknown {sorted(only - set(MEASUREMENTS))}; choose from {MEASUREMENTS}")
    measured = sections(only)
    for name, body in measured.items():
        print(f"<!-- {name} -->\n{body}\n<!-- /{name} -->\n")
    if args.write:
        text = README.read_text()
        for name, body in measured.items():
            text = replace_section(text, name, body)
        README.write_text(text)
        print(f"updated {', '.join(measured) or 'nothing'} in {README}", file=sys.stderr)


if __name__ == "__main__":
    main()
