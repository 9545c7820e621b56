"""Run folders: written atomically, every column documented, read back as written."""

from __future__ import annotations

import pandas as pd
import pytest

from ns3_hpsched.errors import ConfigError
from ns3_hpsched.results import read_run, write_run


def jobs(n):
    """A jobs table of ``n`` rows."""
    return pd.DataFrame({"job": range(n), "cojob": 0, "start_s": 0.0, "end_s": 1.0,
                         "stopped_after_stage": 0, "stages_run": 1})


def test_round_trip(tmp_path):
    """Tables and manifest read back equal to what was written."""
    write_run(tmp_path / "run", {"jobs": jobs(3)}, {"seed": 7, "run_id": "r"})
    tables, manifest = read_run(tmp_path / "run")
    assert tables["jobs"].equals(jobs(3)) and manifest == {"seed": 7, "run_id": "r"}


def test_undocumented_column_is_refused_before_writing(tmp_path):
    """A column missing from the schema fails, and the existing folder stays as it was."""
    write_run(tmp_path / "run", {"jobs": jobs(2)}, {"v": 1, "run_id": "r"})
    with pytest.raises(ValueError, match="undocumented"):
        write_run(tmp_path / "run", {"jobs": jobs(2).assign(colour="red")}, {"v": 2, "run_id": "r"})
    assert read_run(tmp_path / "run")[1] == {"v": 1, "run_id": "r"}


def test_failed_write_keeps_the_old_results(tmp_path):
    """A write that fails half-way leaves the previous complete folder and no debris."""
    write_run(tmp_path / "run", {"jobs": jobs(2)}, {"v": 1, "run_id": "r"})
    bad = jobs(2).astype({"end_s": object})
    bad.loc[0, "end_s"] = object()  # Parquet cannot store it: fails while writing
    with pytest.raises(Exception):
        write_run(tmp_path / "run", {"ports": pd.DataFrame({"port": [0, 1]}), "jobs": bad}, {"v": 2, "run_id": "r"})
    tables, manifest = read_run(tmp_path / "run")
    assert manifest == {"v": 1, "run_id": "r"} and len(tables["jobs"]) == 2
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run"]


def test_rewriting_the_same_run_is_complete(tmp_path):
    """Writing over an earlier copy of the same run leaves only the new copy's files."""
    write_run(tmp_path / "run", {"jobs": jobs(2), "ports": pd.DataFrame({"port": [0]})}, {"v": 1, "run_id": "r"})
    write_run(tmp_path / "run", {"jobs": jobs(4)}, {"v": 2, "run_id": "r"})
    tables, manifest = read_run(tmp_path / "run")
    assert set(tables) == {"jobs"} and len(tables["jobs"]) == 4 and manifest == {"v": 2, "run_id": "r"}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run"]


def test_another_run_is_never_written_over(tmp_path):
    """A folder holding a different run is refused at write time and left byte for byte."""
    write_run(tmp_path / "run", {"jobs": jobs(2)}, {"v": 1, "run_id": "r"})
    before = {p.name: p.read_bytes() for p in (tmp_path / "run").iterdir()}
    with pytest.raises(ConfigError, match="other than this run"):
        write_run(tmp_path / "run", {"jobs": jobs(4)}, {"v": 2, "run_id": "other"})
    assert {p.name: p.read_bytes() for p in (tmp_path / "run").iterdir()} == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run"]
