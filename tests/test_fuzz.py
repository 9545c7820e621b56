"""Property-based fuzzing of the validation layer (issue 13): hostile scenario tables,
``--set`` overrides, workload JSON, HPCC topology and flow files, and FB traces.

Every generated input must end in a one-line ConfigError naming a field, or be accepted
when it may be valid -- never a traceback, a hang, an invalid input accepted, or a file
written (see ``tests/fuzzing.py`` for the generators and the judge). Only validation runs:
``load_scenario`` builds topology, transport, workload and policy; nothing is simulated.
Under CI the ``ci`` hypothesis profile (tests/conftest.py) derandomises the examples.
``benchmarks/fuzz_report.py`` prints the outcome counts by kind.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings

from tests import fuzzing

#: Examples per kind: 6 kinds x 250 = 1,500 cases (about 15 s of CPU on the lead's machine).
EXAMPLES = 250


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    """One folder for every case's files (each case overwrites the files it needs)."""
    return tmp_path_factory.mktemp("fuzz")


@pytest.mark.parametrize("kind", fuzzing.KINDS)
def test_every_input_is_a_clean_error_or_valid(kind, folder):
    """No generated input of ``kind`` gives a bad outcome."""

    @settings(max_examples=EXAMPLES, deadline=None, database=None,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
    @given(fuzzing.STRATEGIES[kind]())
    def check(case):
        outcome = fuzzing.judge(case, folder)
        assert not outcome.startswith("bad"), f"{case.label}: {outcome}"

    check()
