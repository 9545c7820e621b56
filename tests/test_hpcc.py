"""HPCC interchange: topology.txt and flow.txt readers, fct.txt writer, standalone FCT."""

from pathlib import Path

import pandas as pd
import pytest

from ns3_hpsched.errors import ConfigError
from ns3_hpsched.interchange.hpcc import FlowFileTail, read_flows, read_topology, standalone_fct_s, write_fct
from ns3_hpsched.topology import big_switch

# HPCC numbering puts the switch first here (id 0); hosts are 1..3.
TOPOLOGY = """4 1 3
0
1 0 100Gbps 0.001ms 0
2 0 10Gbps 1us 0
3 0 100Gbps 0.001ms 0
"""
FLOWS = """2
1 2 3 100 1000000 2.0
3 1 0 101 500 0.000001
"""


@pytest.fixture
def topo(tmp_path):
    (tmp_path / "topology.txt").write_text(TOPOLOGY)
    return read_topology(tmp_path / "topology.txt")


def test_topology_renumbers_hosts_first(topo):
    """HPCC ids 1,2,3 become hosts 0,1,2 and switch 0 becomes node 3, with rates and delays."""
    assert topo.n_hosts == 3 and topo.n_nodes == 4
    assert topo.node_of_hpcc == {1: 0, 2: 1, 3: 2, 0: 3}
    assert [(l.a, l.b, l.rate_bps, l.delay_s) for l in topo.links] == [
        (0, 3, 100e9, 1e-6), (1, 3, 10e9, 1e-6), (2, 3, 100e9, 1e-6)]


def test_flows_map_to_our_hosts(tmp_path, topo):
    """flow.txt lines become records in our host numbering, pg as the priority class."""
    (tmp_path / "flow.txt").write_text(FLOWS)
    assert read_flows(tmp_path / "flow.txt", topo) == [
        {"src": 0, "dst": 1, "bytes": 1_000_000, "start_s": 2.0, "priority": 3, "dport": 100},
        {"src": 2, "dst": 0, "bytes": 500, "start_s": 1e-6, "priority": 0, "dport": 101}]


def test_flow_file_as_hpcc_ships_it_honours_the_count(tmp_path, topo):
    """HPCC's own mix/flow.txt: a count of 2, more flow lines, then a text note. HPCC reads
    the count and stops; so do we, warning about the ignored tail (which names its line)."""
    (tmp_path / "flow.txt").write_text(FLOWS + "2 3 3 100 700 3.0\n\nFirst line: # of flows\n"
                                       "src dst priority dport size start_time\n")
    with pytest.warns(FlowFileTail, match=r"flow\.txt:4: .*announces 2 flows; the 3 lines"):
        records = read_flows(tmp_path / "flow.txt", topo)
    assert [(r["src"], r["dst"], r["bytes"]) for r in records] == [(0, 1, 1_000_000), (2, 0, 500)]


def test_fct_dports_read_back_equal_the_flow_file(tmp_path):
    """fct.txt carries each flow's dport from flow.txt (HPCC's users join on it)."""
    from ns3_hpsched.cli import simulate

    example = Path(__file__).resolve().parents[1] / "examples" / "hpcc"
    out = simulate(topology=str(example / "topology.txt"), flows=str(example / "flow.txt"),
                   overrides={"backend": "fluid"}, out=str(tmp_path / "run"))
    given = [int(line.split()[3]) for line in (example / "flow.txt").read_text().splitlines()[1:]]
    fct = [line.split() for line in (out / "fct.txt").read_text().splitlines()]
    assert [int(f[3]) for f in fct] == given and set(given) == {100, 200, 300}


def test_flow_records_become_a_pinned_flow_list(tmp_path, topo):
    """The records feed flow_list_workload: one cojob per flow, pg pinned as its class."""
    from ns3_hpsched.workload.flowlist import flow_list_workload

    (tmp_path / "flow.txt").write_text(FLOWS)
    w = flow_list_workload(read_flows(tmp_path / "flow.txt", topo), topo.n_hosts)
    assert [(c.arrival_s, c.priority, c.jobs[0].sync.bytes) for c in w.cojobs] == [(2.0, 3, 1_000_000), (1e-6, 0, 500)]


@pytest.mark.parametrize("text, line, word", [
    ("2\n1 2 3 100 1000000 2.0\n3 1 0 x 500 0\n", 3, "malformed"),
    ("1\n1 2 3 100\n", 2, "malformed"),
    ("1\n1 0 3 100 10 0\n", 2, "not a host"),
    ("1\n1 9 3 100 10 0\n", 2, "not a host"),
    ("1\n1 1 3 100 10 0\n", 2, "src == dst"),
    ("1\n1 2 3 100 0 0\n", 2, "size"),
    ("3\n1 2 3 100 10 0\n", 1, "announces"),
])
def test_bad_flow_lines_name_the_line(tmp_path, topo, text, line, word):
    """Malformed lines, missing hosts and wrong counts fail naming the file's line."""
    (tmp_path / "flow.txt").write_text(text)
    with pytest.raises(ConfigError) as err:
        read_flows(tmp_path / "flow.txt", topo)
    assert err.value.field == f"flow.txt:{line}" and word in err.value.problem and err.value.fix


@pytest.mark.parametrize("text, line", [
    (TOPOLOGY.replace("10Gbps", "10Gbit"), 4),
    (TOPOLOGY.replace("1us 0", "1us 0.01"), 4),
    (TOPOLOGY.replace("3 0 100Gbps", "7 0 100Gbps"), 5),
    (TOPOLOGY.replace("4 1 3", "4 1 4"), 1),
])
def test_bad_topology_lines_name_the_line(tmp_path, text, line):
    """Unreadable rates, loss, unknown nodes and wrong counts name the line of topology.txt."""
    (tmp_path / "topology.txt").write_text(text)
    with pytest.raises(ConfigError) as err:
        read_topology(tmp_path / "topology.txt")
    assert err.value.field == f"topology.txt:{line}"


def test_standalone_fct_by_hand(topo):
    """10 MTU-payloads from the 100G host to the 10G host: store-and-forward by hand."""
    payload, wire = 9000 - 52, 9000 + 2
    fct = standalone_fct_s(topo, 0, 1, 10 * payload)
    by_hand = 2e-6 + wire * 8 / 100e9 + wire * 8 / 10e9 + 9 * wire * 8 / 10e9
    assert fct == pytest.approx(by_hand, rel=1e-12)


def test_standalone_fct_counts_partial_last_packet():
    """One byte costs one header: delay + (1 + 54) bytes through both hops of a big switch."""
    t = big_switch(2, rate_bps=1e9, delay_s=5e-6, mtu_bytes=1500)
    assert standalone_fct_s(t, 0, 1, 1) == pytest.approx(2 * 5e-6 + 2 * 55 * 8 / 1e9, rel=1e-12)


def test_fct_file_has_hpcc_columns_and_our_ips(tmp_path):
    """fct.txt rows: hex IPs (host i = 10.0.0.(i+1)), ports, size, start/fct/ideal in ns."""
    flows = pd.DataFrame({"src": [0, 15], "dst": [1, 2], "sport": [49152, 49153], "dport": [5000, 5000],
                          "bytes": [1000, 20], "start_s": [0.5, 1e-9], "fct_s": [2.5e-6, 1e-3],
                          "standalone_fct_s": [1.25e-6, 4e-7], "job": [3, 4]})
    write_fct(flows, tmp_path / "fct.txt", extra=("job",))
    assert (tmp_path / "fct.txt").read_text().splitlines() == [
        "0a000001 0a000002 49152 5000 1000 500000000 2500 1250 3",
        "0a000010 0a000003 49153 5000 20 1 1000000 400 4",
    ]


def test_fct_file_missing_column_fails(tmp_path):
    """A DataFrame without the required columns is refused, naming them."""
    with pytest.raises(ConfigError) as err:
        write_fct(pd.DataFrame({"src": [0]}), tmp_path / "fct.txt")
    assert "dst" in err.value.problem
