"""The user's front door: ``invoke simulate``, ``invoke test``, ``invoke crosscheck``, ...

Run ``invoke --list`` for the tasks and ``invoke --help TASK`` for each one's options.
"""

from __future__ import annotations

import sys

from invoke import task


def _fail_cleanly(fn):
    """Show bad input as one clear line (field, problem, fix), not a traceback."""
    from functools import wraps

    @wraps(fn)
    def wrapper(*args, **kwargs):
        from ns3_hpsched.errors import ConfigError

        try:
            return fn(*args, **kwargs)
        except ConfigError as exc:
            sys.exit(f"error: {exc}")

    return wrapper


@task(iterable=["set"], help={
    "scenario": "scenario name in scenarios/ or a path to a .toml file (default: 'default')",
    "backend": "packet or fluid (default: the scenario's)",
    "scheduler": "policy name (fair, fifo-lm, varys, aalo, sincronia, grouper, beamer) or pkg.mod:Class",
    "seed": "seed for workload generation and the simulator",
    "set": "override any scenario field, KEY=VALUE with a dotted key (repeatable)",
    "out": "results folder (default: results/<scenario>-<scheduler>-<backend>-seed<seed>)",
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


@task(help={"quick": "skip the packet-level (ns-3) tests", "k": "only tests matching this pytest -k expression"})
def test(c, quick=False, k=None):
    """Run the test suite (packet-level tests included unless --quick)."""
    args = ["-q"]
    if quick:
        args += ["-m", "not packet"]
    if k:
        args += ["-k", k]
    c.run(f"{sys.executable} -m pytest " + " ".join(f"'{a}'" for a in args), pty=False)
