"""Every example of bad input from issue 13, through the real entry point (``cli.simulate``).

Each must end in a :class:`ConfigError` naming its field -- which ``invoke simulate`` prints
as one ``error:`` line -- before anything runs or is written. Huge sizes must be refused
before they are allocated: the peak memory traced while loading stays small.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tracemalloc
from pathlib import Path

import pytest

from ns3_hpsched.cli import parse_overrides, simulate
from ns3_hpsched.errors import ConfigError
from ns3_hpsched.scenario import load_scenario

ROOT = Path(__file__).resolve().parents[1]
#: Peak Python allocation allowed while refusing an input (a k=4 scenario loads in ~2 MB).
REFUSE_PEAK_BYTES = 32 * 2**20

BIG_SWITCH = """
backend = "fluid"
[topology]
kind = "big_switch"
n = 8
[scheduler]
name = "fair"
[workload]
kind = "flows"
flows = [{ src = 0, dst = 1, bytes = 1000 }]
"""


def refused(tmp_path: Path, field: str, scenario: str = "default", sets: tuple[str, ...] = (), **kw) -> ConfigError:
    """Run ``simulate`` with ``--set`` pairs; assert a ConfigError naming ``field``, small peak
    memory, and no results folder; return the error."""
    out = tmp_path / "out"
    tracemalloc.start()
    try:
        with pytest.raises(ConfigError) as err:
            simulate(scenario, parse_overrides(list(sets)), out=str(out), **kw)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert err.value.field == field, str(err.value)
    assert "\n" not in str(err.value) and err.value.fix
    assert peak < REFUSE_PEAK_BYTES, f"{peak / 2**20:.0f} MiB allocated before refusing"
    assert not out.exists()
    return err.value


def scenario_file(tmp_path: Path, text: str = BIG_SWITCH, name: str = "s.toml") -> str:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return str(path)


# -- huge values -------------------------------------------------------------------------------

@pytest.mark.parametrize("sets,field", [
    (("topology.k=1000",), "topology.k"),
    (("workload.gpus_per_host=1e9",), "workload.gpus_per_host"),
    (("workload.gpus_per_host=1000000000",), "workload.gpus_per_host"),
    (("workload.cojobs=1e9",), "workload.cojobs"),
    (("workload.cojobs=1000000000",), "workload.cojobs"),
    (("workload.configurations=100000000",), "workload.configurations"),
    (("workload.workers=100000", "workload.pattern='ring_chained'"), "workload.workers"),
])
def test_huge_values_are_refused_before_allocating(tmp_path, sets, field):
    """Sizes past what the machine holds are refused with the limit and how to raise it."""
    err = refused(tmp_path, field, "small-search", sets)
    assert "NS3_HPSCHED_MEMORY_GIB" in err.fix or "integer" in err.problem


def test_huge_big_switch_is_refused(tmp_path):
    """``--set topology.n=1000000000`` on a big switch: refused at once, naming the limit."""
    err = refused(tmp_path, "topology.n", scenario_file(tmp_path), ("topology.n=1000000000",))
    assert "GiB hold" in err.problem and "NS3_HPSCHED_MEMORY_GIB" in err.fix


def test_the_limit_follows_the_memory_setting(tmp_path, monkeypatch):
    """With NS3_HPSCHED_MEMORY_GIB = 1/16 GiB, 64 KiB per node or link holds 1,024: a big
    switch of 511 hosts (1,023 nodes and links) loads, one of 512 (1,025) is refused."""
    monkeypatch.setenv("NS3_HPSCHED_MEMORY_GIB", "0.0625")
    err = refused(tmp_path, "topology.n", scenario_file(tmp_path), ("topology.n=512",))
    assert "1,024" in err.problem and "$NS3_HPSCHED_MEMORY_GIB" in err.problem
    assert load_scenario(scenario_file(tmp_path), {"topology.n": 511}).built_topology.n_hosts == 511


def test_hyperband_with_a_huge_resource_is_refused(tmp_path):
    """Hyperband's first bracket grows like max_resource: 2^62 is refused by size, not built."""
    text = BIG_SWITCH.replace('kind = "flows"\nflows = [{ src = 0, dst = 1, bytes = 1000 }]',
                              'kind = "search"\nsearch = "hyperband"\nmax_resource = 4611686018427387904\n'
                              'eta = 2\nworkers = 2')
    refused(tmp_path, "workload.max_resource", scenario_file(tmp_path, text))


# -- integers past int64, and sizes past 2^53 bytes --------------------------------------------

def test_inline_flow_of_2_63_bytes(tmp_path):
    refused(tmp_path, "workload.flows[0].bytes", "default",
            ("workload.flows=[{src=0, dst=1, bytes=9223372036854775808}]",))


def write_json(tmp_path: Path, doc: dict) -> str:
    (tmp_path / "w.json").write_text(json.dumps(doc), encoding="utf-8")
    return scenario_file(tmp_path, BIG_SWITCH.replace(
        'kind = "flows"\nflows = [{ src = 0, dst = 1, bytes = 1000 }]', 'kind = "file"\npath = "w.json"'))


def workload_doc(cojob=0, model_bytes=1000, arrival_s=0.0):
    return {"format": "ns3-hpsched-workload", "version": 1, "cojobs": [
        {"cojob": cojob, "arrival_s": arrival_s,
         "jobs": [{"job": 0, "hosts": [0, 1], "compute_s": 0.1, "pattern": "ring", "model_bytes": model_bytes}],
         "stages": [{"iterations": 1}]}]}


@pytest.mark.parametrize("doc,field", [
    (workload_doc(model_bytes=2**63), "w.json:cojobs[0].jobs[0].model_bytes"),
    (workload_doc(model_bytes=2**60), "w.json:cojobs[0].jobs[0].model_bytes"),
    (workload_doc(cojob=2**63), "w.json:cojobs[0].cojob"),
    (workload_doc(arrival_s=float("inf")), "w.json:cojobs[0].arrival_s"),
])
def test_workload_file_integers_past_int64(tmp_path, doc, field):
    refused(tmp_path, field, write_json(tmp_path, doc))


def fb_scenario(tmp_path: Path, body: str) -> str:
    (tmp_path / "trace.txt").write_text(body, encoding="utf-8")
    return scenario_file(tmp_path, BIG_SWITCH.replace(
        'kind = "flows"\nflows = [{ src = 0, dst = 1, bytes = 1000 }]', 'kind = "fb_trace"\npath = "trace.txt"'))


@pytest.mark.parametrize("size", ["1e300", "-48.0", "0.0", "nan", "inf"])
def test_fb_trace_reducer_sizes(tmp_path, size):
    """A reducer of 1e300 MB, a negative or zero size: refused naming the line and reducer,
    not turned into 1-byte flows or an OverflowError."""
    refused(tmp_path, "trace.txt:2.reducers[0]", fb_scenario(tmp_path, f"4 1\n1 0 1 0 1 2:{size}\n"))


def test_fb_trace_valid_line_is_read(tmp_path):
    """The same trace with a positive size loads: one cojob, one flow of ceil(MB) MiB."""
    sc = load_scenario(fb_scenario(tmp_path, "4 1\n1 0 1 0 1 2:1.5\n"))
    assert [f.bytes for f in sc.built_workload.cojobs[0].jobs[0].sync.phases[0]] == [2 * 2**20]


# -- inf, nan and booleans as numbers -----------------------------------------------------------

@pytest.mark.parametrize("sets,field", [
    (("topology.rate_bps=true",), "topology.rate_bps"),
    (("topology.delay_s=inf",), "topology.delay_s"),
    (("topology.ecmp_seed=nan",), "topology.ecmp_seed"),
    (("topology.ecmp_seed=inf",), "topology.ecmp_seed"),
    (("topology.ecmp_seed=x",), "topology.ecmp_seed"),
    (("workload.flows=[{src=0, dst=1, bytes=10, start_s=inf}]",), "workload.flows[0].start_s"),
    (("workload.flows=[{src=0, dst=1, bytes=10, start_s=nan}]",), "workload.flows[0].start_s"),
    (("workload.flows=[1, 2]",), "workload.flows[0]"),
    (("workload.flows=5",), "workload.flows"),
    (("scheduler.n_classes=true",), "scheduler.n_classes"),
    (("scheduler.control_delay_s=nan",), "scheduler.control_delay_s"),
    (("seed=1.5",), "seed"),
    (("fluid.latency=1",), "fluid.latency"),
])
def test_non_numbers_on_a_flow_list(tmp_path, sets, field):
    refused(tmp_path, field, "default", sets)


@pytest.mark.parametrize("sets,field", [
    (("workload.eta=inf",), "workload.eta"),
    (("workload.model=5",), "workload.model"),
    (("workload.model='resnet5'",), "workload.model"),
    (("workload.arrivals=5",), "workload.arrivals"),
    (("workload.arrivals=[0.0, nan]",), "workload.arrivals[1]"),
    (("workload.bytes_scale=1e300",), "workload.bytes_scale"),
    (("workload.iterations=4611686018427387904",), "workload.iterations"),
    (("scheduler.name='aalo'", "scheduler.params={n_queues=1e6}"), "scheduler.params.n_queues"),
    (("scheduler.name='aalo'", "scheduler.params={n_queues=1000000}"), "scheduler.params.n_queues"),
    (("scheduler.name='aalo'", "scheduler.params={n_queue=4}"), "scheduler.params.n_queue"),
])
def test_non_numbers_on_a_search(tmp_path, sets, field):
    refused(tmp_path, field, "small-search", sets)


def test_aalo_queue_bound_is_the_reachable_thresholds():
    """With Q1 = 10 MiB and E = 10, queue 10's threshold is 10^15 bytes (reachable); an 11th
    queue would start at 10^16 > 2^53 bytes, which no coflow reaches."""
    from ns3_hpsched.sched import Aalo

    assert Aalo(n_queues=10).thresholds[-1] == 10 * 2**20 * 10**8
    with pytest.raises(ConfigError, match="1..10"):
        Aalo(n_queues=11)
    assert len(Aalo(n_queues=11, multiplier=5.0).thresholds) == 10


# -- did you mean -------------------------------------------------------------------------------

@pytest.mark.parametrize("sets,field,suggestion", [
    (("topology.kk=4",), "topology.kk", "'k'"),
    (("topology.kind='fat_tre'",), "topology.kind", "'fat_tree'"),
    (("scheduler.nmae='varys'",), "scheduler.nmae", "'name'"),
    (("scheduler.name='vary'",), "scheduler.name", "'varys'"),
    (("transport.kind='dctpc'",), "transport.kind", "'dctcp'"),
    (("transport.min_rto=0.01",), "transport.min_rto", "'min_rto_s'"),
    (("workload.kind='flow'",), "workload.kind", "'flows'"),
    (("sede=3",), "sede", "'seed'"),
])
def test_misspelt_keys_and_names_get_a_suggestion(tmp_path, sets, field, suggestion):
    err = refused(tmp_path, field, "default", sets)
    assert f"did you mean {suggestion}" in err.fix


# -- [transport] is checked on the fluid backend too ---------------------------------------------

@pytest.mark.parametrize("sets,field", [
    (("transport.kind='newreon'",), "transport.kind"),
    (("transport.min_rto_s=0",), "transport.min_rto_s"),
    (("transport.kind='rdma'", "transport.pmax=2.0"), "transport.pmax"),
    (("transport.kind='rdma'", "transport.min_rto_s=0.01"), "transport.min_rto_s"),
    (("transport.device_queue_packets=0",), "transport.device_queue_packets"),
])
def test_transport_table_checked_on_fluid(tmp_path, sets, field):
    refused(tmp_path, field, "default", ("backend=fluid", *sets))


def test_valid_transport_kinds_load_on_fluid():
    for kind in ("newreno", "dctcp", "cubic", "rdma"):
        sc = load_scenario("default", {"backend": "fluid", "transport.kind": kind})
        assert sc.built_transport.name == kind


# -- files: not UTF-8, folders ------------------------------------------------------------------

LATIN1_COMMENT = "# caf\u00e9\n".encode("latin-1")


def test_scenario_file_not_utf8(tmp_path):
    path = tmp_path / "s.toml"
    path.write_bytes(LATIN1_COMMENT + BIG_SWITCH.encode())
    err = refused(tmp_path, "s.toml:1", str(path))
    assert "UTF-8" in err.problem


def test_scenario_path_is_a_folder(tmp_path):
    (tmp_path / "dir.toml").mkdir()
    refused(tmp_path, "scenario", str(tmp_path / "dir.toml"))


@pytest.mark.parametrize("make", ["latin1", "folder"])
def test_workload_json_not_utf8_or_folder(tmp_path, make):
    if make == "folder":
        path = write_json(tmp_path, workload_doc())
        (tmp_path / "w.json").unlink()
        (tmp_path / "w.json").mkdir()
        refused(tmp_path, "workload.path", path)
    else:
        path = write_json(tmp_path, workload_doc())
        (tmp_path / "w.json").write_bytes(b'{"format": "ns3-hpsched-workload",\n "source": "\xe9",\n'
                                          + json.dumps(workload_doc())[1:].encode())
        refused(tmp_path, "w.json:2", path)


@pytest.mark.parametrize("make", ["latin1", "folder"])
def test_fb_trace_not_utf8_or_folder(tmp_path, make):
    path = fb_scenario(tmp_path, "4 1\n1 0 1 0 1 2:1.5\n")
    if make == "folder":
        (tmp_path / "trace.txt").unlink()
        (tmp_path / "trace.txt").mkdir()
        refused(tmp_path, "workload.path", path)
    else:
        (tmp_path / "trace.txt").write_bytes(b"4 1\n1 0 1 0 1 2:1.5 \xe9\n")
        refused(tmp_path, "trace.txt:2", path)


HPCC_TOPOLOGY = "3 1 2\n2\n0 2 10Gbps 0.001ms 0\n1 2 10Gbps 0.001ms 0\n"
HPCC_FLOWS = "1\n0 1 3 100 1000 0.0\n"


@pytest.mark.parametrize("which", ["topology.txt", "flow.txt"])
@pytest.mark.parametrize("make", ["latin1", "folder"])
def test_hpcc_files_not_utf8_or_folder(tmp_path, which, make):
    (tmp_path / "topology.txt").write_text(HPCC_TOPOLOGY)
    (tmp_path / "flow.txt").write_text(HPCC_FLOWS)
    target = tmp_path / which
    target.unlink()
    if make == "folder":
        target.mkdir()
        field = "topology.path" if which == "topology.txt" else "workload.path"
    else:
        target.write_bytes(LATIN1_COMMENT + (HPCC_TOPOLOGY if which == "topology.txt" else HPCC_FLOWS).encode())
        field = f"{which}:1"
    refused(tmp_path, field, topology=str(tmp_path / "topology.txt"), flows=str(tmp_path / "flow.txt"))


def test_hpcc_topology_with_a_huge_node_count(tmp_path):
    """The header's node count is refused by size before the node list is built."""
    (tmp_path / "topology.txt").write_text("1000000000000 1 1\n0\n0 1 10Gbps 0.001ms 0\n")
    (tmp_path / "flow.txt").write_text(HPCC_FLOWS)
    refused(tmp_path, "topology.txt:1", topology=str(tmp_path / "topology.txt"), flows=str(tmp_path / "flow.txt"))


# -- a user's policy class ------------------------------------------------------------------------

def test_policy_without_decide(tmp_path, monkeypatch):
    """``--scheduler pkg.mod:Class`` naming a Policy without decide(), or a non-Policy class."""
    (tmp_path / "mypolicies.py").write_text(
        "from ns3_hpsched.sched import Policy\n"
        "class NoDecide(Policy):\n    name = 'nodecide'\n"
        "class NotAPolicy:\n    def decide(self, view):\n        return None\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    err = refused(tmp_path, "scheduler.name", "default", ("scheduler.name=mypolicies:NoDecide",))
    assert "decide()" in err.problem
    refused(tmp_path, "scheduler.name", "default", ("scheduler.name=mypolicies:NotAPolicy",))


# -- the command line: one error line, non-zero exit -----------------------------------------------

def test_invoke_simulate_prints_one_error_line(tmp_path):
    """``invoke simulate --set topology.rate_bps=true``: exit status 1, one ``error:`` line
    naming the field on stderr, no traceback, no results folder."""
    out = tmp_path / "out"
    proc = subprocess.run([sys.executable, "-m", "invoke", "simulate", "--set", "topology.rate_bps=true",
                           "--out", str(out)], cwd=ROOT, capture_output=True, text=True, timeout=120,
                          env={**__import__("os").environ, "PYTHONPATH": str(ROOT)})
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert proc.returncode == 1, proc.stderr
    assert len(lines) == 1 and lines[0].startswith("error: topology.rate_bps:"), proc.stderr
    assert not out.exists()
