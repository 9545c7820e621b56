"""The invoke tasks' command line: one short flag scheme across every task."""

from __future__ import annotations

import importlib.util
from pathlib import Path

from invoke import Collection

ROOT = Path(__file__).resolve().parents[1]


def task_arguments():
    """``{task name: {long option: short flag or None}}`` as invoke parses tasks.py."""
    spec = importlib.util.spec_from_file_location("tasks", ROOT / "tasks.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    out = {}
    for name in Collection.from_module(module).task_names:
        args = Collection.from_module(module)[name].get_arguments()
        out[name] = {arg.name: next((n for n in arg.names if len(n) == 1 and n != arg.name), None)
                     for arg in args}
    return out


def test_a_short_flag_means_one_option_everywhere():
    """The same option has the same short flag in every task, and no flag names two options."""
    meaning = {}
    for task, options in task_arguments().items():
        for option, short in options.items():
            if short is not None:
                assert meaning.setdefault(short, option) == option, (task, short, option, meaning[short])
    by_option = {}
    for task, options in task_arguments().items():
        for option, short in options.items():
            assert by_option.setdefault(option, short) == short, (task, option)


def test_the_documented_scheme():
    """-s scenario, -b backend, -p scheduler, -r seed, -c set, -o out, -d store."""
    simulate, sweep = task_arguments()["simulate"], task_arguments()["sweep"]
    assert {k: simulate[k] for k in ("scenario", "backend", "scheduler", "seed", "set", "out")} == {
        "scenario": "s", "backend": "b", "scheduler": "p", "seed": "r", "set": "c", "out": "o"}
    assert sweep["store"] == "d" and sweep["grid"] == "g" and sweep["workers"] == "w"
