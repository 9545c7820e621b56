"""Run folders: written atomically, every column documented, read back as written."""

from __future__ import annotations

import pandas as pd
import pytest

from ns3_hpsched.results import read_run, write_run


def jobs(n):
    """A jobs table of ``n`` rows."""
    return pd.DataFrame({"job": range(n), "cojob": 0, "start_s": 0.0, "end_s": 1.0,
                         "stopped_after_stage": 0, "stages_run": 1})


def test_round_trip(tmp_path):
    """Tables and manifest read back equal to what was written."""
    write_run(tmp_path / "run", {"jobs": jobs(3)}, {"seed": 7})
    tables, manifest = read_run(tmp_path / "run")
    assert tables["jobs"].equals(jobs(3)) and manifest == {"seed": 7}


def test_undocumented_column_is_refused_before_writing(tmp_path):
    """A column missing from the schema fails, and the existing folder stays as it was."""
    write_run(tmp_path / "run", {"jobs": jobs(2)}, {"v": 1})
    with pytest.raises(ValueError, match="undocumented"):
        write_run(tmp_path / "run", {"jobs": jobs(2).assign(colour="red")}, {"v": 2})
    assert read_run(tmp_path / "run")[1] == {"v": 1}


def test_failed_write_keeps_the_old_results(tmp_path):
    """A write that fails half-way leaves the previous complete folder and no debris."""
    write_run(tmp_path / "run", {"jobs": jobs(2)}, {"v": 1})
    bad = jobs(2).astype({"end_s": object})
    bad.loc[0, "end_s"] = object()  # Parquet cannot store it: fails while writing
    with pytest.raises(Exception):
        write_run(tmp_path / "run", {"ports": pd.DataFrame({"port": [0, 1]}), "jobs": bad}, {"v": 2})
    tables, manifest = read_run(tmp_path / "run")
    assert manifest == {"v": 1} and len(tables["jobs"]) == 2
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run"]


def test_replacing_a_folder_is_complete(tmp_path):
    """Writing over a run folder leaves only the new run's files."""
    write_run(tmp_path / "run", {"jobs": jobs(2), "ports": pd.DataFrame({"port": [0]})}, {"v": 1})
    write_run(tmp_path / "run", {"jobs": jobs(4)}, {"v": 2})
    tables, manifest = read_run(tmp_path / "run")
    assert set(tables) == {"jobs"} and len(tables["jobs"]) == 4 and manifest == {"v": 2}
