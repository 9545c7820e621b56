"""The Facebook coflow-benchmark trace as a workload."""

import pytest

from ns3_hpsched.errors import ConfigError
from ns3_hpsched.workload import DEFAULT_TRACE, read_fb_trace

MIB = 1 << 20
pytestmark = pytest.mark.skipif(not DEFAULT_TRACE.exists(), reason="shared FB trace not present")


@pytest.fixture(scope="module")
def trace():
    return read_fb_trace()


def test_trace_loads_as_526_coflows_on_150_ports(trace):
    """The whole trace is 526 one-coflow cojobs on 150 ports, arrivals in file order from 0."""
    assert len(trace.cojobs) == 526 and trace.n_hosts == 150
    assert trace.cojobs[0].arrival_s == 0.0 and trace.cojobs[-1].arrival_s == pytest.approx(3629.235)
    assert all(len(c.jobs) == 1 and c.stages[0].iterations == 1 and c.jobs[0].compute_s == 0 for c in trace.cojobs)


def test_trace_pairs_and_bytes_match_the_data_readme(trace):
    """Network pairs + dropped same-port pairs = 706,397; all bytes = 35,533,534 MiB (data README)."""
    flows = [f for c in trace.cojobs for p in c.jobs[0].sync.phases for f in p]
    assert trace.source["local_pairs_dropped"] == 4911
    assert len(flows) + 4911 == 706_397
    assert sum(f.bytes for f in flows) + trace.source["local_bytes_dropped"] == 35_533_534 * MIB
    assert all(f.src != f.dst for f in flows)


def test_coflow_two_splits_reducer_bytes_over_mappers():
    """Line 2 (`2 10833 2 104 132 1 140:48.0`) gives two 24 MiB flows into port 140 at 10.833 s."""
    w = read_fb_trace(max_coflows=2, bytes_scale=0.5)
    cojob = w.cojobs[1]
    assert (cojob.cojob_id, cojob.arrival_s) == (2, 10.833)
    assert sorted((f.src, f.dst, f.bytes) for f in cojob.jobs[0].sync.phases[0]) == \
        [(104, 140, 12 * MIB), (132, 140, 12 * MIB)]
    assert w.bytes_scale == 0.5 and len(w.cojobs) == 2


def test_malformed_trace_line_is_named(tmp_path):
    """A coflow line with fewer reducers than announced fails naming file and line."""
    path = tmp_path / "t.txt"
    path.write_text("4 2\n1 0 1 0 1 1:2.0\n2 5 1 0 2 1:2.0\n")
    with pytest.raises(ConfigError) as err:
        read_fb_trace(path)
    assert err.value.field == "t.txt:3"
