"""Workload files: round trip, a hand-written instance, and every bad-file case."""

import copy
import json

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from ns3_hpsched.errors import ConfigError
from ns3_hpsched.validate import MAX_BYTES
from ns3_hpsched.workload import (Cojob, Flow, Job, Stage, Sync, Workload, generate_search, read_workload,
                                  validate_workload, write_workload)
from ns3_hpsched.workload.files import _check_flows, _plainly_valid

HAND_WRITTEN = {
    "format": "ns3-hpsched-workload", "version": 1,
    "cojobs": [{
        "cojob": 0, "arrival_s": 0.5,
        "jobs": [
            {"job": 0, "hosts": [0, 1, 2], "compute_s": 0.1, "pattern": "ring", "model_bytes": 300},
            {"job": 1, "hosts": [2, 3], "compute_s": 0.2,
             "phases": [[{"src": 2, "dst": 3, "bytes": 70}], [{"src": 3, "dst": 2, "bytes": 80}]]},
            {"job": 2, "hosts": [1], "compute_s": 0.3, "pattern": "ps", "model_bytes": 10, "ps_hosts": [3]},
            {"job": 3, "hosts": [0, 3], "compute_s": 0.0, "pattern": "ring", "model_bytes": 5},
        ],
        "stages": [{"iterations": 2},
                   {"iterations": 3, "jobs": [1, 0]},
                   {"iterations": 4, "eta": 2, "join": [3]}],
    }],
}


def load(tmp_path, doc, n_hosts=4):
    path = tmp_path / "w.json"
    path.write_text(json.dumps(doc))
    return read_workload(path, n_hosts)


def test_generated_workload_round_trips_identically(tmp_path):
    """A generated workload (ps, joiners, random placement) reads back equal to itself."""
    w = generate_search(n_hosts=16, seed=4, pattern="ps", ps="separate", ps_shards=2, join=1,
                        workers=2, gpus_per_host=2, placement="random", arrival_rate=1.0, bytes_scale=0.01)
    write_workload(w, tmp_path / "w.json")
    assert read_workload(tmp_path / "w.json", 16) == w
    assert not list(tmp_path.glob("*.tmp"))


def test_pinned_priority_round_trips(tmp_path):
    """A cojob's pinned priority class is written and read back; a negative one is refused."""
    w = load(tmp_path, bad(C + ["priority"], 2))
    assert w.cojobs[0].priority == 2
    write_workload(w, tmp_path / "again.json")
    assert read_workload(tmp_path / "again.json", 4) == w
    with pytest.raises(ConfigError) as err:
        load(tmp_path, bad(C + ["priority"], -1))
    assert err.value.field == "w.json:cojobs[0].priority"


def test_hand_written_file_gives_exactly_what_it_says(tmp_path):
    """Each job, flow and stage of a hand-written file comes out as written (hand-computed)."""
    w = load(tmp_path, HAND_WRITTEN)
    (cojob,) = w.cojobs
    assert cojob.arrival_s == 0.5
    ring, explicit, ps, late = cojob.jobs
    assert ring.sync.phases == ((Flow(0, 1, 400), Flow(1, 2, 400), Flow(2, 0, 400)),)  # 2*2/3*300
    assert explicit.sync == Sync(((Flow(2, 3, 70),), (Flow(3, 2, 80),)), "explicit")
    assert ps.sync.phases == ((Flow(1, 3, 10),), (Flow(3, 1, 10),))
    assert cojob.stages == (Stage(2, (0, 1, 2)), Stage(3, (1, 0)), Stage(4, (1, 3), joined=(3,)))
    assert w.network_bytes() == 2 * (1200 + 150 + 20) + 3 * (150 + 1200) + 4 * (150 + 10)


def bad(doc_path, value):
    """HAND_WRITTEN with the item at ``doc_path`` (a list of keys) set to ``value``."""
    doc = copy.deepcopy(HAND_WRITTEN)
    node = doc
    for key in doc_path[:-1]:
        node = node[key]
    node[doc_path[-1]] = value
    return doc


C = ["cojobs", 0]


@pytest.mark.parametrize("doc, field, fix_word", [
    (bad(C + ["stages", 1, "jobs"], [1, 9]), "w.json:cojobs[0].stages[1].jobs", "cojob"),
    (bad(C + ["jobs", 1, "hosts"], [2, 4]), "w.json:cojobs[0].jobs[1].hosts[1]", "0..3"),
    (bad(C + ["jobs", 0, "hosts"], [0, -1]), "w.json:cojobs[0].jobs[0].hosts[1]", "0..3"),
    (bad(C + ["jobs", 1, "phases", 0, 0, "bytes"], -5), "w.json:cojobs[0].jobs[1].phases[0][0].bytes", "bytes"),
    (bad(C + ["jobs", 1, "phases", 0, 0, "bytes"], 0), "w.json:cojobs[0].jobs[1].phases[0][0].bytes", "bytes"),
    (bad(C + ["jobs", 0, "model_bytes"], -1), "w.json:cojobs[0].jobs[0].model_bytes", "bytes"),
    (bad(C + ["jobs", 1, "phases", 1, 0, "dst"], 3), "w.json:cojobs[0].jobs[1].phases[1][0]", "different hosts"),
    (bad(C + ["stages", 1, "jobs"], [0, 1, 2, 3]), "w.json:cojobs[0].stages[1].jobs", "join"),
    (bad(C + ["stages", 2, "iterations"], 0), "w.json:cojobs[0].stages[2].iterations", "at least one"),
    (bad(C + ["jobs", 3, "job"], 1), "w.json:cojobs[0].jobs[3].job", "unique"),
    (bad(C + ["stages", 2, "join"], [9]), "w.json:cojobs[0].stages[2].join", "cojob"),
    (bad(C + ["stages"], [{"iterations": 1, "jobs": [0, 1, 2]}, {"iterations": 1, "jobs": [1]},
                          {"iterations": 1, "jobs": [1], "join": [0]}]),
     "w.json:cojobs[0].stages[2].join", "new configurations"),
    (bad(C + ["jobs", 0, "pattern"], "tree"), "w.json:cojobs[0].jobs[0].pattern", "ring"),
    (bad(C + ["jobs", 0, "colour"], "red"), "w.json:cojobs[0].jobs[0].colour", "use only"),
    (bad(["version"], 2), "w.json:format", "version 1"),
    (bad(["version"], True), "w.json:format", "version 1"),  # equal to 1 in Python, not a version
    (bad(["version"], 1.0), "w.json:format", "version 1"),
])
def test_bad_file_names_field_and_fix(tmp_path, doc, field, fix_word):
    """Every bad-file case fails on reading with the JSON path of the field and a fix."""
    with pytest.raises(ConfigError) as err:
        load(tmp_path, doc)
    assert err.value.field == field
    assert fix_word in err.value.fix


def test_generated_workload_is_validated_the_same_way():
    """validate_workload checks a Workload built in code by the same rules as a file."""
    job = Job(job_id=0, hosts=(0, 1), compute_s=0.1, sync=Sync(((Flow(0, 1, 10),),)))
    ok = Workload((Cojob(0, 0.0, (job,), (Stage(1, (0,)), Stage(1, (0,)))),), n_hosts=2)
    validate_workload(ok, 2)
    grows = Workload((Cojob(0, 0.0, (job,), (Stage(1, ()), Stage(1, (0,)))),), n_hosts=2)
    with pytest.raises(ConfigError) as err:
        validate_workload(grows, 2)
    assert err.value.field == "workload.cojobs[0].stages[0].jobs"
    with pytest.raises(ConfigError) as err:
        validate_workload(ok, 1)
    assert err.value.field == "workload.cojobs[0].jobs[0].hosts[1]"


#: Values a flow's field may hold in code: in range or at its edges, out of range, too
#: large for int64, and the types the rules treat apart (bool, float, numpy integers).
_FIELD = st.one_of(st.integers(-1, 5), st.sampled_from([MAX_BYTES, MAX_BYTES + 1, 2**63, -2**63 - 1]),
                   st.booleans(), st.floats(-1, 5), st.integers(0, 5).map(np.int64))


def _outcome(check):
    """The field ``check()`` names in its error, or ``None`` if it passes."""
    try:
        check()
    except ConfigError as err:
        return err.field
    return None


@given(st.lists(st.tuples(_FIELD, _FIELD, _FIELD), min_size=1, max_size=4))
def test_flows_checked_in_one_pass_fail_exactly_where_the_rules_fail(fields):
    """A phase's flows checked in one numpy pass (:func:`_plainly_valid`) are accepted only
    where the rules, flow by flow (:func:`_check_flows`, the oracle), accept them, and the
    error names the field the rules name."""
    phase = tuple(Flow(*f) for f in fields)
    job = Job(job_id=0, hosts=(0, 1), compute_s=0.1, sync=Sync((phase,)))
    workload = Workload((Cojob(0, 0.0, (job,), (Stage(1, (0,)),)),), n_hosts=4)
    expected = _outcome(lambda: _check_flows(phase, 4, "workload.cojobs[0].jobs[0].phases[0]"))
    if expected is None and sum(f.bytes for f in phase) > MAX_BYTES:
        expected = "workload.cojobs[0].jobs[0].phases[0]"
    assert _outcome(lambda: validate_workload(workload, 4)) == expected
    if _plainly_valid(phase, 4):
        assert _outcome(lambda: _check_flows(phase, 4, "p")) is None


def test_plain_valid_flows_take_the_one_pass():
    """Python ints in range, as the generators and the trace reader make them, are vouched
    for in one pass (else the pass would never be used), and one bad value is not."""
    phase = tuple(Flow(s, (s + 1) % 4, 1 + s) for s in range(4))
    assert _plainly_valid(phase, 4)
    assert not _plainly_valid((*phase, Flow(0, 4, 1)), 4)
    assert not _plainly_valid((*phase, Flow(0, 1, True)), 4)


def test_malformed_json_names_the_line(tmp_path):
    """A JSON syntax error is reported with the file and line."""
    path = tmp_path / "w.json"
    path.write_text('{"cojobs": [\n  {"cojob": 0,,}\n]}')
    with pytest.raises(ConfigError) as err:
        read_workload(path, 4)
    assert err.value.field == "w.json:2"
