"""Scenario files: every shipped one validates; bad input names its field before any run."""

from __future__ import annotations

import pytest

from ns3_hpsched.errors import ConfigError
from ns3_hpsched.scenario import load_scenario, scenario_names
from ns3_hpsched.workload import DEFAULT_TRACE


@pytest.mark.parametrize("name", [
    pytest.param(name, marks=pytest.mark.skipif(name == "fb-trace" and not DEFAULT_TRACE.exists(),
                                                reason="shared FB trace not present"))
    for name in scenario_names()])
def test_shipped_scenarios_validate(name):
    """Every scenario in scenarios/ loads, and builds its topology, workload and policy."""
    sc = load_scenario(name)
    assert sc.built_workload.cojobs and sc.built_topology.n_hosts >= 2


@pytest.mark.parametrize("overrides,field", [
    ({"topology.k": 5}, "topology.k"),
    ({"topology.rate_bps": 0}, "rate_bps"),
    ({"topology.rate_bps": -1e9}, "rate_bps"),
    ({"transport.kind": "quic"}, "transport.kind"),
    ({"backend": "omnet"}, "backend"),
    ({"scheduler.name": "nope"}, "scheduler.name"),
    ({"scheduler.n_classes": 0}, "scheduler.n_classes"),
    ({"seed": -1}, "seed"),
    ({"colour": "blue"}, "colour"),
    ({"workload.flows": [{"src": 0, "dst": 16, "bytes": 10}]}, r"workload\.flows\[0\]\.dst"),
    ({"workload.flows": [{"src": 0, "dst": 1, "bytes": -5}]}, r"workload\.flows\[0\]\.bytes"),
])
def test_bad_input_names_the_field(overrides, field):
    """Each bad value fails at load time with an error naming its field."""
    with pytest.raises(ConfigError, match=field):
        load_scenario("default", overrides)


def test_overrides_parse_toml_values():
    """String overrides from the command line are parsed as TOML values."""
    sc = load_scenario("default", {"topology.k": "8", "scheduler.control_delay_s": "1e-4"})
    assert sc.built_topology.n_hosts == 128 and sc.scheduler.control_delay_s == 1e-4


def test_unknown_scenario_lists_the_known_ones():
    """An unknown scenario name lists the shipped scenarios."""
    with pytest.raises(ConfigError, match="default"):
        load_scenario("no-such-scenario")


def test_hpcc_flow_file_error_names_the_line(tmp_path):
    """A malformed line of an HPCC flow.txt is reported with its file and line number."""
    from ns3_hpsched.cli import hpcc_scenario

    topo = tmp_path / "topology.txt"
    topo.write_text("3 1 2\n2\n0 2 10Gbps 0.001ms 0\n1 2 10Gbps 0.001ms 0\n")
    flows = tmp_path / "flow.txt"
    flows.write_text("2\n0 1 3 100 1000 0.0\n0 1 3 100 lots 0.0\n")
    with pytest.raises(ConfigError, match=r"flow\.txt.*3"):
        hpcc_scenario(topo, flows, {})
