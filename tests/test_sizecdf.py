"""Flow-size workloads: the CDF, the offered load, seeds, and bad input."""

import numpy as np
import pytest

from ns3_hpsched.errors import ConfigError
from ns3_hpsched.scenario import load_scenario
from ns3_hpsched.topology import big_switch
from ns3_hpsched.workload import build_workload
from ns3_hpsched.workload.sizecdf import SHIPPED_CDFS, read_size_cdf, size_cdf_workload

RATE = 100e9
N_HOSTS = 128
#: 16 hosts at RATE, for the parameter checks of build_workload.
TOPOLOGY = big_switch(16, rate_bps=RATE)


def _draw(cdf="websearch", seed=1, **kw):
    kw = kw or {"n_flows": 10_000}
    return size_cdf_workload(n_hosts=N_HOSTS, seed=seed, host_rate_bps=[RATE] * N_HOSTS, cdf=cdf,
                             load=kw.pop("load", 0.3), **kw)


def _flows(workload):
    return [(c.arrival_s, f.src, f.dst, f.bytes, c.priority)
            for c in workload.cojobs for f in c.jobs[0].sync.phases[0]]


def test_shipped_cdf_means_match_the_data_readme():
    """Linear interpolation gives the means the data README (and HPCC's generator) state."""
    assert read_size_cdf(SHIPPED_CDFS["websearch"]).mean_bytes == pytest.approx(1_711_250)
    assert read_size_cdf(SHIPPED_CDFS["fb_hadoop"]).mean_bytes == pytest.approx(120_420.75)


@pytest.mark.parametrize("cdf", ["websearch", "fb_hadoop"])
def test_sizes_reproduce_the_cdf(cdf):
    """Kolmogorov-Smirnov distance between 10k drawn sizes and the CDF is small.

    The 1% critical value of the KS statistic at n = 10,000 is 1.63 / sqrt(n) = 0.016.
    """
    sizes = np.sort([f[3] for f in _flows(_draw(cdf))])
    table = read_size_cdf(SHIPPED_CDFS[cdf])
    n = len(sizes)
    model = table(sizes + 1.0)  # sizes are truncated to whole bytes: P(size <= s) = F(s + 1)
    ks = max(np.max(np.arange(1, n + 1) / n - model), np.max(model - np.arange(n) / n))
    assert ks < 1.63 / np.sqrt(n)


@pytest.mark.parametrize("cdf,load", [("websearch", 0.3), ("fb_hadoop", 0.5)])
def test_offered_load_is_the_fraction_of_host_bandwidth(cdf, load):
    """Bytes offered over the duration, per unit of total host bandwidth, is ``load`` (5%)."""
    mean = read_size_cdf(SHIPPED_CDFS[cdf]).mean_bytes
    duration = 10_000 * 8 * mean / (load * RATE * N_HOSTS)  # about 10k flows
    workload = _draw(cdf, load=load, duration_s=duration)
    flows = _flows(workload)
    assert all(0 <= f[0] < duration for f in flows)
    offered = sum(f[3] for f in flows) * 8 / (duration * RATE * N_HOSTS)
    assert offered == pytest.approx(load, rel=0.05)
    per_host = np.bincount([f[1] for f in flows], minlength=N_HOSTS)
    assert per_host.min() > 0 and all(f[1] != f[2] for f in flows)


def test_same_seed_same_flows_other_seed_differs():
    assert _flows(_draw(seed=3, n_flows=500)) == _flows(_draw(seed=3, n_flows=500))
    assert _flows(_draw(seed=3, n_flows=500)) != _flows(_draw(seed=4, n_flows=500))


def test_classes_pin_flows_to_every_class():
    classes = {f[4] for f in _flows(_draw(n_flows=500, classes=3))}
    assert classes == {0, 1, 2}


def test_every_flow_is_a_one_flow_cojob_like_a_flow_list():
    workload = _draw(n_flows=50)
    assert workload.n_flows() == 50 and len(workload.cojobs) == 50
    assert workload.source["kind"] == "size_cdf"
    assert [c.arrival_s for c in workload.cojobs] == sorted(c.arrival_s for c in workload.cojobs)


@pytest.mark.parametrize("name", ["websearch-k8", "fb-hadoop-k8"])
def test_scenarios_build_their_flows(name):
    sc = load_scenario(name, {})
    assert sc.built_topology.n_hosts == 128
    assert sc.built_workload.n_flows() == 2000


@pytest.mark.parametrize("key,value,field", [
    ("load", 1.5, "workload.load"), ("load", 0, "workload.load"), ("n_flows", 0, "workload.n_flows"),
    ("duration_s", -1.0, "workload.duration_s"), ("classes", 0, "workload.classes"),
    ("cdf", "no/such_cdf.txt", "workload.cdf"), ("bogus", 1, "workload.bogus"),
])
def test_bad_parameters_name_the_field(key, value, field):
    spec = {"kind": "size_cdf", "cdf": "websearch", "load": 0.3, "n_flows": 10, key: value}
    with pytest.raises(ConfigError, match=field.replace(".", r"\.")):
        build_workload(spec, 16, 1, topology=TOPOLOGY)


def test_both_or_neither_duration_and_count_is_refused():
    for extra in ({}, {"n_flows": 10, "duration_s": 0.01}):
        with pytest.raises(ConfigError, match=r"workload\.duration_s"):
            build_workload({"kind": "size_cdf", "cdf": "websearch", "load": 0.3, **extra}, 16, 1,
                           topology=TOPOLOGY)


def test_malformed_cdf_file_names_the_line(tmp_path):
    path = tmp_path / "cdf.txt"
    path.write_text("0 0\n100 fifty\n200 100\n")
    with pytest.raises(ConfigError, match=r"cdf\.txt:2"):
        read_size_cdf(path)
    path.write_text("0 0\n100 60\n50 100\n")
    with pytest.raises(ConfigError, match="not a CDF"):
        read_size_cdf(path)


def test_nudged_starts_move_later_by_less_than_the_jitter_and_keep_their_order():
    """``benchmarks/fct_noise.py`` nudges every start by a draw from [0, J) and keeps the
    order of the starts (flow ids, five-tuples and paths follow it), on a workload dense
    enough (most starts closer together than the jitter) that the raw draws would reorder
    many."""
    import importlib.util
    from pathlib import Path

    path = Path(__file__).resolve().parents[1] / "benchmarks" / "fct_noise.py"
    spec = importlib.util.spec_from_file_location("fct_noise", path)
    fct_noise = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(fct_noise)
    workload, jitter = _draw("fb_hadoop", n_flows=2_000, load=0.9), 100e-9
    before = np.array([c.arrival_s for c in workload.cojobs])
    after = np.array([c.arrival_s for c in fct_noise.nudged(workload, jitter, draw=1).cojobs])
    assert np.all(after - before >= 0) and np.all(after - before < jitter) and np.any(after != before)
    order = np.argsort(before, kind="stable")
    assert np.all(np.diff(after[order]) >= 0)
    assert np.mean(np.diff(before[order]) < jitter) > 0.5  # many starts closer than the jitter
