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
