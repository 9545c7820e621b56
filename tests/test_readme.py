"""The README's promises: its two set-up commands, CI running the test one, documented columns."""

from __future__ import annotations

import re
from pathlib import Path

from ns3_hpsched.results import SCHEMA, schema_markdown

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text()


def quick_start_lines():
    """The command lines of the README's quick start block."""
    block = README.split("## Quick start", 1)[1].split("```sh", 1)[1].split("```", 1)[0]
    return [line.split("#", 1)[0].strip() for line in block.strip().splitlines()]


def test_quick_start_has_a_run_and_a_test_line():
    """One line installs and runs invoke simulate, the other installs and runs the tests."""
    run, test = quick_start_lines()
    assert run == "pip install -e '.[dev]' && invoke simulate"
    assert test == "pip install -e '.[dev]' && invoke test"


def test_ci_runs_the_readme_test_line():
    """.ci/run executes exactly the README's test command."""
    ci = (ROOT / ".ci" / "run").read_text().splitlines()
    assert quick_start_lines()[1] in [line.strip() for line in ci]


def test_readme_documents_every_result_column():
    """The README's results section is the schema every written table is checked against."""
    section = README.split("<!-- schema -->", 1)[1].split("<!-- /schema -->", 1)[0]
    assert section.strip() == schema_markdown().strip()
    documented = set(re.findall(r"^\| `(\w+)` \|", section, flags=re.M))
    assert documented == {c for columns in SCHEMA.values() for c in columns}


def test_readme_names_every_shipped_scenario():
    """Every scenario file is listed in the README's scenario table."""
    for path in (ROOT / "scenarios").glob("*.toml"):
        assert f"`{path.stem}`" in README, path.stem


# -- Every example command runs, as a user would type it (cheapest settings) -------------------

import importlib.util
import json
import os
import shlex
import subprocess
import sys

import pandas as pd
import pytest


def sh_lines() -> list[str]:
    """Every command of the README's ``sh`` blocks, comments and the ``pip install ... &&`` dropped."""
    lines = []
    for block in re.findall(r"```sh\n(.*?)```", README, flags=re.S):
        for line in block.splitlines():
            command = line.split("#", 1)[0].split("&&")[-1].strip()
            if command:
                lines.append(command)
    return lines


def cheapest(line: str) -> str:
    """The README line as run in the tests: the same command, made as cheap as it allows.

    ``simulate`` runs on the fluid backend (unless the line names one); ``sweep`` keeps its
    grid but runs two schedulers (beamer, the figures' baseline, and fair) and its first seed;
    the others run as written.
    """
    argv = shlex.split(line)
    task = argv[1]
    if task == "simulate" and "--backend" not in argv:
        argv += ["--backend", "fluid"]
    if task == "sweep":
        seeds = [i for i, a in enumerate(argv) if a == "--seed"]
        argv = [a for i, a in enumerate(argv) if i not in seeds[1:] and i - 1 not in seeds[1:]]
        argv += ["--scheduler", "fair", "--scheduler", "beamer"]
    return shlex.join(argv)


#: Tasks whose README lines are run by these tests (``invoke test`` is what CI runs, above).
RUN_HERE = {"simulate", "sweep", "analyze"}


def invoke(line: str, cwd, pythonpath: str = str(ROOT)) -> subprocess.CompletedProcess:
    """Run an ``invoke ...`` line in ``cwd`` with this checkout's tasks and package."""
    argv = shlex.split(line)
    assert argv[0] == "invoke"
    env = {**os.environ, "PYTHONPATH": pythonpath}
    return subprocess.run([sys.executable, "-m", "invoke", "-r", str(ROOT), *argv[1:]], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=600)


def assert_clean(result: subprocess.CompletedProcess) -> None:
    """The command succeeded, and stderr has no traceback and no Python-style warning."""
    assert result.returncode == 0, result.stderr[-2000:]
    assert "Traceback" not in result.stderr
    assert not re.search(r"\.py:\d+: \w*Warning", result.stderr), result.stderr[-2000:]


def test_every_example_line_is_run_by_a_test():
    """Each sh line is `invoke test` (CI) or a task these tests run, so no example goes untested."""
    lines = sh_lines()
    assert len(lines) >= 7
    for line in lines:
        task = shlex.split(line)[1]
        assert task == "test" or task in RUN_HERE, line


def test_example_commands_run_as_a_user_would(tmp_path):
    """The README's simulate, sweep and analyze examples run in order in a fresh folder, cleanly."""
    for line in sh_lines():
        if shlex.split(line)[1] not in RUN_HERE:
            continue
        result = invoke(cheapest(line), tmp_path)
        assert_clean(result)
        task = shlex.split(line)[1]
        if task == "simulate":
            assert re.search(r"average SCT .* over \d+ stages|^flows:", result.stdout, flags=re.M), line
        if task == "analyze":
            pngs = [tmp_path / p for p in result.stdout.split()]
            assert pngs and all(p.suffix == ".png" and p.stat().st_size > 0 for p in pngs), line
            assert "warning: packet vs fluid" in result.stderr  # the one skipped figure, said in one line


def test_bad_input_example_prints_the_documented_error(tmp_path):
    """The README's bad-input example prints exactly the error line it shows, and fails."""
    block = README.split("Bad input fails", 1)[1].split("```\n", 1)[1].split("```", 1)[0]
    command, expected = block.strip().splitlines()
    result = invoke(command.removeprefix("$ "), tmp_path)
    assert result.returncode != 0
    assert result.stderr.strip() == expected


def test_plug_in_policy_example_runs(tmp_path):
    """The README's own-policy module, saved as mypkg/mymod.py, runs with --scheduler mypkg.mymod:LargestFirst."""
    code = README.split("# mypkg/mymod.py\n", 1)[1].split("```", 1)[0]
    (tmp_path / "mypkg").mkdir()
    (tmp_path / "mypkg" / "__init__.py").write_text("")
    (tmp_path / "mypkg" / "mymod.py").write_text(code)
    assert "--scheduler mypkg.mymod:LargestFirst" in README
    result = invoke("invoke simulate --scenario small-search --backend fluid --scheduler mypkg.mymod:LargestFirst",
                    tmp_path, pythonpath=f"{ROOT}{os.pathsep}{tmp_path}")
    assert_clean(result)
    folder = tmp_path / re.search(r"results in (\S+)$", result.stdout.strip()).group(1)
    assert json.loads((folder / "run.json").read_text())["scheduler"]["name"] == "largest-first"


@pytest.mark.packet
def test_quick_start_simulate_runs_as_written(tmp_path):
    """`invoke simulate`, the README's first command, runs the default scenario on ns-3."""
    result = invoke(quick_start_lines()[0].split("&&")[-1].strip(), tmp_path)
    assert_clean(result)
    assert "flows:" in result.stdout


# -- The README's measured numbers: benchmarks/bench_readme.py's Markdown ---------------------


def bench_readme():
    """benchmarks/bench_readme.py as a module."""
    spec = importlib.util.spec_from_file_location("bench_readme", ROOT / "benchmarks" / "bench_readme.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_timings_markdown_from_measured_times():
    """Wall times under 10 s to 0.1 s, under 2 minutes to the second, then in minutes; CPU beside each."""
    times = {"install": {"wall_s": 28.4, "cpu_s": 20.2}, "ns3_import": {"wall_s": 7.25, "cpu_s": 6.0},
             "simulate": {"wall_s": 9.31, "cpu_s": 8.0}, "tests": {"wall_s": 365.0, "cpu_s": 300.0},
             "quick": {"wall_s": 36.2, "cpu_s": 30.0}}
    text = bench_readme().timings_markdown(times)
    assert "warm pip cache 28 s (20 s CPU)" in text
    assert "`from ns import ns` after it 7.2 s (6.0 s CPU)" in text
    assert "`invoke simulate` 9.3 s (8.0 s CPU)" in text
    assert "`invoke test` about 6 minutes (about 5 minutes CPU)" in text
    assert "`invoke test --quick` 36 s (30 s CPU)" in text


def test_crosscheck_markdown_names_the_run_and_has_the_readme_columns():
    """The cross-check section says what ran (scenario, transport, MTU, counts) above the README's table."""
    from ns3_hpsched import crosscheck as cc

    stages = pd.DataFrame({"cojob": [0, 0], "stage": [0, 1], "sct_s": [1.0, 2.0]})
    coflows = pd.DataFrame({"cojob": 0, "job": 0, "stage": [0, 1], "iteration": 0, "phase": 0, "cct_s": [0.5, 0.5]})
    other = {"stages": stages.assign(sct_s=[1.1, 1.8]), "coflows": coflows.assign(cct_s=[0.6, 0.5])}
    pairs = cc.compare({"stages": stages, "coflows": coflows}, other).assign(scheduler="fair")
    text = bench_readme().crosscheck_markdown(cc.summarize(pairs, by=["scheduler"]))
    intro, table = text.split("\n\n")
    assert intro == ("Measured with `invoke crosscheck` (small-search, DCTCP, MTU 9000; "
                     "2 stages per scheduler and 2 coflows per scheduler):")
    assert table.splitlines()[2] == "| fair | 10.0% | 10.0% | \u22123.3% | 10.0% |"
    readme_table = README.split("<!-- crosscheck-table -->", 1)[1].split("<!-- /crosscheck-table -->")[0]
    assert table.splitlines()[0] in readme_table.splitlines(), "--write would change the README's columns"


def test_replace_section_touches_only_the_marked_text():
    """--write replaces what lies between a section's markers and nothing else; a missing marker is an error."""
    replace = bench_readme().replace_section
    text = "a\n<!-- t -->\nold\n<!-- /t -->\nb\n"
    assert replace(text, "t", "new\n") == "a\n<!-- t -->\nnew\n<!-- /t -->\nb\n"
    with pytest.raises(ValueError, match="<!-- u -->"):
        replace(text, "u", "x")
    for name in ("timings", "crosscheck-table"):
        section = README.split(f"<!-- {name} -->\n", 1)[1].split(f"<!-- /{name} -->", 1)[0]
        assert replace(README, name, section) == README
