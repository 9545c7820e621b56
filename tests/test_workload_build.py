"""build_workload: scenario [workload] tables of every kind, and their errors."""

import json

import pytest

from ns3_hpsched.errors import ConfigError
from ns3_hpsched.workload import build_workload, generate_search, write_workload


def test_default_small_search_is_cheap_for_the_packet_backend():
    """The lead's small search (16 hosts, 2x4 jobs, 3 stages, bytes_scale 0.05) is under a few GB."""
    w = build_workload({"kind": "search", "bytes_scale": 0.05}, n_hosts=16, seed=1)
    assert [len(c.jobs) for c in w.cojobs] == [4, 4]
    assert [[len(s.jobs) for s in c.stages] for c in w.cojobs] == [[4, 2, 1]] * 2
    m = round(102_228_128 * 0.05)  # scaled ResNet-50 gradient
    ring_job = 4 * (2 * 3 * m / 4)  # 4 workers, each sends 2(N-1)/N * M
    assert w.network_bytes() == 2 * (4 * 1 + 2 * 2 + 1 * 4) * ring_job  # stages run 1, 2, 4 iterations
    assert w.network_bytes() < 2e9
    assert w.bytes_scale == 0.05 and w.source["bytes_scale"] == 0.05


def test_search_kind_equals_generator_with_the_same_keys():
    """kind = "search" passes its keys to the generator unchanged."""
    spec = {"kind": "search", "configurations": 2, "stages": 2, "pattern": "ps", "placement": "spread"}
    assert build_workload(spec, 16, 3) == generate_search(n_hosts=16, seed=3, configurations=2, stages=2,
                                                          pattern="ps", placement="spread")


def test_file_kind_reads_relative_to_base_dir(tmp_path):
    """kind = "file" reads a workload file, relative paths from the scenario's folder."""
    w = generate_search(n_hosts=16, seed=0, bytes_scale=0.01)
    write_workload(w, tmp_path / "w.json")
    assert build_workload({"kind": "file", "path": "w.json"}, 16, 99, base_dir=tmp_path) == w


@pytest.mark.parametrize("spec, field", [
    ({"kind": "search", "stagez": 3}, "workload.stagez"),
    ({"kind": "nope"}, "workload.kind"),
    ({"kind": "search", "eta": 1}, "workload.eta"),
    ({"kind": "search", "model": "alexnet"}, "workload.model"),
    ({"kind": "search", "pattern": "tree"}, "workload.pattern"),
    ({"kind": "search", "placement": "diagonal"}, "workload.placement"),
    ({"kind": "search", "bytes_scale": 0}, "workload.bytes_scale"),
    ({"kind": "search", "workers": 20}, "workload.workers"),
    ({"kind": "search", "pattern": "ps", "ps_shards": 5}, "workload.ps_shards"),
    ({"kind": "search", "search": "hyperband", "stages": 3}, "workload.stages"),
    ({"kind": "search", "arrivals": [0.0]}, "workload.arrivals"),
    ({"kind": "file"}, "workload.path"),
    ({"kind": "fb_trace", "max_coflows": 0}, "workload.max_coflows"),
])
def test_bad_keys_and_values_name_the_field(spec, field):
    """Unknown keys and bad values raise ConfigError("workload.<key>", ..., fix)."""
    with pytest.raises(ConfigError) as err:
        build_workload(spec, 16, 0)
    assert err.value.field == field and err.value.fix


def test_fb_trace_needs_enough_hosts(tmp_path):
    """A trace with more ports than the topology has hosts is refused before running."""
    path = tmp_path / "t.txt"
    path.write_text("40 1\n1 0 1 0 1 39:2.0\n")
    with pytest.raises(ConfigError) as err:
        build_workload({"kind": "fb_trace", "path": str(path)}, 16, 0)
    assert "40" in err.value.problem
    assert build_workload({"kind": "fb_trace", "path": str(path)}, 40, 0).n_hosts == 40
