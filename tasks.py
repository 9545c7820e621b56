"""The user's front door: ``invoke simulate``, ``invoke test``, ``invoke crosscheck``, ...

Run ``invoke --list`` for the tasks and ``invoke --help TASK`` for each one's options.
Short flags mean the same in every task (:data:`SHORT_FLAGS`): ``-s`` scenario, ``-b``
backend, ``-p`` scheduler (policy), ``-r`` seed, ``-c`` a config override (``--set``), ...
"""

from __future__ import annotations

import sys

from invoke import Task, task

#: One short flag per option name, the same in every task that has the option (a one-letter
#: option such as test's ``-k`` is its own short flag; bench's ``--which`` has none).
SHORT_FLAGS = {
    "scenario": "s", "backend": "b", "scheduler": "p", "seed": "r", "set": "c", "grid": "g",
    "out": "o", "store": "d", "workers": "w", "dask": "a", "topology": "t", "flows": "f",
    "external": "x", "load": "l", "quick": "q",
}


class FlagTask(Task):
    """A task whose short flags come from :data:`SHORT_FLAGS`, not from invoke's first-free-letter rule."""

    def arg_opts(self, name, default, taken_names):
        opts = super().arg_opts(name, default, taken_names)
        opts["names"] = [opts["names"][0], *([SHORT_FLAGS[name]] if name in SHORT_FLAGS else [])]
        return opts


def _fail_cleanly(fn):
    """Show bad input as one clear line (field, problem, fix), not a traceback; warnings as one line."""
    from functools import wraps

    @wraps(fn)
    def wrapper(*args, **kwargs):
        from ns3_hpsched.console import show_warnings_as_lines
        from ns3_hpsched.errors import ConfigError

        show_warnings_as_lines()
        try:
            return fn(*args, **kwargs)
        except ConfigError as exc:
            sys.exit(f"error: {exc}")

    return wrapper


@task(klass=FlagTask, iterable=["set"], help={
    "scenario": "scenario name in scenarios/ or a path to a .toml file (default: 'default')",
    "backend": "packet or fluid (default: the scenario's)",
    "scheduler": "policy name (fair, fifo-lm, varys, aalo, sincronia, grouper, beamer) or pkg.mod:Class",
    "seed": "seed for workload generation and the simulator",
    "set": "override any scenario field, KEY=VALUE with a dotted key (repeatable)",
    "out": "results folder: new, empty, or an earlier copy of this run (default: results/<scenario>-<scheduler>-<backend>-<transport>-seed<seed>-<run id>)",
    "topology": "HPCC topology.txt to run (with --flows)",
    "flows": "HPCC flow.txt to run (with --topology)",
})
@_fail_cleanly
def simulate(c, scenario="default", backend=None, scheduler=None, seed=None, set=None, out=None,
             topology=None, flows=None):
    """Run one simulation and print a short summary; results land in a folder of Parquet tables."""
    from ns3_hpsched.cli import parse_overrides, simulate as run

    overrides = parse_overrides(set or [])
    for key, value in (("backend", backend), ("scheduler.name", scheduler), ("seed", seed)):
        if value is not None:
            overrides[key] = value
    run(scenario, overrides, out=out, topology=topology, flows=flows)


@task(klass=FlagTask, help={"quick": "skip the packet-level (ns-3) tests", "k": "only tests matching this pytest -k expression"})
def test(c, quick=False, k=None):
    """Run the test suite (packet-level tests included unless --quick)."""
    args = ["-q"]
    if quick:
        args += ["-m", "not packet"]
    if k:
        args += ["-k", k]
    c.run(f"{sys.executable} -m pytest " + " ".join(f"'{a}'" for a in args), pty=False)


@task(klass=FlagTask, iterable=["scheduler", "set"], help={
    "scenario": "scenario name or path (default: small-search)",
    "scheduler": "policy to check (repeatable; default: all seven, or the scenario's for a flow workload)",
    "set": "override a scenario field, KEY=VALUE (repeatable)",
    "store": "result store folder (default: results/crosscheck-<scenario>)",
    "external": "CSV of an external fluid simulator to check against the packet backend instead",
    "workers": "simulations at a time (default 1: packet runs want a core each)",
})
@_fail_cleanly
def crosscheck(c, scenario="small-search", scheduler=None, set=None, store=None, external=None, workers=1):
    """Run a scenario on the packet and fluid backends and report, number by number, how they agree."""
    from ns3_hpsched.cli import crosscheck as run, parse_overrides

    run(scenario, list(scheduler or []), parse_overrides(set or []), store=store, external=external,
        workers=int(workers))


@task(klass=FlagTask, iterable=["scheduler", "seed", "grid"], help={
    "scenario": "scenario name or path",
    "grid": "a grid axis KEY=V1,V2,... with a dotted scenario key (repeatable)",
    "scheduler": "policy (repeatable; default: all seven)",
    "seed": "seed (repeatable; default: 1)",
    "store": "result store folder (default: results/sweep-<scenario>)",
    "workers": "simulations at a time on this machine (default: one per CPU)",
    "dask": "address of a dask.distributed scheduler to send runs to (e.g. tcp://host:8786)",
})
@_fail_cleanly
def sweep(c, scenario, grid=None, scheduler=None, seed=None, store=None, workers=None, dask=None):
    """Run a grid of simulations (scenario x grid x schedulers x seeds); resumes where it stopped.

    Prints the store, the runs done / skipped (already in the store) / failed and the
    workers; exits with an error if any run failed.
    """
    from pathlib import Path

    from ns3_hpsched.cli import parse_grid
    from ns3_hpsched.sched import POLICIES
    from ns3_hpsched.sweep import execute_sweep

    store = Path(store or f"results/sweep-{Path(scenario).stem}")
    report = execute_sweep(scenario, parse_grid(grid or []), list(scheduler or POLICIES),
                           [int(s) for s in (seed or [1])], store,
                           workers=int(workers) if workers else None, dask_address=dask)
    print("\n".join(report.lines()))
    if report.failed:
        sys.exit(f"error: {report.failed} of {len(report.index)} runs failed, "
                 f"the first with: {report.first_error}")


@task(klass=FlagTask, help={"store": "result store folder written by invoke sweep, or one run's folder (monitor figures)",
            "out": "folder for the figures (default: STORE/figures; for a run folder RUN-figures)",
            "load": "grid parameter that is the load (default: the one that varies)"})
@_fail_cleanly
def analyze(c, store, out=None, load=None):
    """Draw the figures of a result store (or of one run folder's monitors) as PNG files, and list them."""
    from pathlib import Path

    from ns3_hpsched.plots import analyze as draw
    from ns3_hpsched.run_figures import draw_run, is_run_folder

    if is_run_folder(Path(store)):  # one run: queues, PFC pauses, link use ([monitor])
        for path in draw_run(Path(store), Path(out or f"{Path(store)}-figures")):
            print(path)
        return
    for path in draw(Path(store), Path(out or Path(store) / "figures"), load=load):
        print(path)


@task(klass=FlagTask, help={"which": "packet, fluid, fb_trace, readme (the README's numbers) or all (default)"})
def bench(c, which="all"):
    """Run the speed and memory benchmarks in benchmarks/ and print their numbers."""
    from pathlib import Path

    for script in sorted(Path("benchmarks").glob("bench_*.py")):
        if which in ("all", script.stem.removeprefix("bench_")):
            c.run(f"{sys.executable} {script}")
