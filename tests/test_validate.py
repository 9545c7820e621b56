"""The one checker (ns3_hpsched.validate): numbers, flags, choices, keys, sizes, files."""

from __future__ import annotations

import math

import numpy as np
import pytest

from ns3_hpsched import validate
from ns3_hpsched.errors import ConfigError
from ns3_hpsched.validate import INT64_MAX, Flag, Number


@pytest.mark.parametrize("value", [True, False, math.nan, math.inf, -math.inf, "3", None, [3], 2**63, 3.5])
def test_an_integer_rule_refuses(value):
    """Booleans, NaN, infinities, strings, None, lists, 2^63 and non-integral floats."""
    with pytest.raises(ConfigError) as err:
        Number(integer=True, low=0).check("t.n", value)
    assert err.value.field == "t.n" and "an integer >= 0" in err.value.problem


def test_booleans_are_named_as_such():
    with pytest.raises(ConfigError, match="a boolean is not a number"):
        validate.number("t.x", True)


@pytest.mark.parametrize("value,out", [(0, 0), (INT64_MAX, INT64_MAX), (-INT64_MAX - 1, -INT64_MAX - 1),
                                       (np.int64(7), 7), (np.uint8(3), 3)])
def test_an_integer_rule_accepts_int64_and_numpy(value, out):
    got = validate.integer("t.n", value)
    assert got == out and type(got) is int


def test_real_rules_bounds_and_infinity():
    rule = Number(low=0.0, low_open=True, high=1.0)
    assert rule.check("p", 1) == 1.0 and type(rule.check("p", 1)) is float
    for bad in (0, 0.0, 1.0000001, math.nan, 10**400):
        with pytest.raises(ConfigError, match=r"a finite number > 0 and <= 1"):
            rule.check("p", bad)
    assert validate.number("t", math.inf, allow_inf=True) == math.inf
    with pytest.raises(ConfigError):
        validate.number("t", -math.inf, allow_inf=True)


def test_optional_and_flag():
    assert Number(optional=True).check("t", None) is None
    with pytest.raises(ConfigError, match="or unset"):
        Number(integer=True, low=1, optional=True).check("t", 0)
    assert Flag().check("t", False) is False
    for bad in (0, 1, "true", None):
        with pytest.raises(ConfigError, match="true or false"):
            Flag().check("t", bad)


def test_int64_bounds_are_written_as_powers_of_two():
    assert Number(integer=True, low=0, high=2**32 - 1).describe() == "an integer in 0..2^32-1"
    assert Number(integer=True, low=1, high=2**53).describe() == "an integer in 1..2^53"


def test_choice_and_keys_suggest_the_closest():
    with pytest.raises(ConfigError) as err:
        validate.choice("backend", "fluidd", ("packet", "fluid"), "backend")
    assert err.value.field == "backend" and "did you mean 'fluid'?" in err.value.fix
    with pytest.raises(ConfigError) as err:
        validate.known_keys("topology", {"k": 4, "rate_bsp": 1}, ("k", "rate_bps"))
    assert err.value.field == "topology.rate_bsp" and "did you mean 'rate_bps'?" in err.value.fix
    assert validate.did_you_mean("zzzz", ("k", "n")) == "" and validate.did_you_mean(5, ("k",)) == ""


def test_size_is_memory_over_item_bytes(monkeypatch):
    """1 GiB at 1 KiB per item holds 2^20 items: 2^20 pass, 2^20 + 1 is refused."""
    monkeypatch.setenv(validate.MEMORY_ENV, "1")
    assert validate.size("w.n", 2**20, "flows") == 2**20
    with pytest.raises(ConfigError) as err:
        validate.size("w.n", 2**20 + 1, "flows")
    assert "1,048,576" in err.value.problem and validate.MEMORY_ENV in err.value.fix
    monkeypatch.setenv(validate.MEMORY_ENV, "lots")
    with pytest.raises(ConfigError, match="GiB"):
        validate.size("w.n", 1, "flows")


def test_read_text_names_the_line_of_a_bad_byte(tmp_path):
    path = tmp_path / "f.txt"
    path.write_bytes(b"ok\nstill ok\ncaf\xe9\n")
    with pytest.raises(ConfigError) as err:
        validate.read_text(path, "workload.path")
    assert err.value.field == "f.txt:3" and "UTF-8" in err.value.problem
    path.write_text("caf\u00e9\n", encoding="utf-8")
    assert validate.read_text(path, "workload.path") == "caf\u00e9\n"


@pytest.mark.parametrize("make", ["missing", "folder"])
def test_read_text_refuses_missing_paths_and_folders(tmp_path, make):
    if make == "folder":
        (tmp_path / "d").mkdir()
    with pytest.raises(ConfigError) as err:
        validate.read_text(tmp_path / "d", "topology.path")
    assert err.value.field == "topology.path" and ("folder" in err.value.problem) == (make == "folder")


def test_scaled_bytes_rounds_and_bounds():
    assert validate.scaled_bytes("s", 1000, 0.0001) == 1 and validate.scaled_bytes("s", 1000, 2.5) == 2500
    with pytest.raises(ConfigError, match="2\\^53"):
        validate.scaled_bytes("s", 10**8, 1e300)
