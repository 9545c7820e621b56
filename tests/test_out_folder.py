"""Where `invoke simulate` puts results: never over the user's files, one folder per run."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pandas as pd
import pytest

from ns3_hpsched import cli
from ns3_hpsched.errors import ConfigError
from ns3_hpsched.results import read_run

#: A fluid run of a few milliseconds: one cojob of the `load` scenario.
QUICK = {"backend": "fluid", "workload.cojobs": "1"}


def snapshot(folder: Path) -> dict[str, tuple[bytes, int, int]]:
    """Every file under ``folder`` with its bytes, mode and modification time."""
    return {str(p.relative_to(folder)): (p.read_bytes() if p.is_file() else b"", p.stat().st_mode,
                                         p.stat().st_mtime_ns)
            for p in sorted(folder.rglob("*"))}


@pytest.fixture
def no_simulation(monkeypatch):
    """Fail the test if a simulation starts (errors must come before any run)."""
    def refuse(*args, **kwargs):
        raise AssertionError("a simulation started although the target was bad")

    monkeypatch.setattr(cli, "run_scenario", refuse)


@pytest.fixture
def read_only_folder(tmp_path):
    """A folder nobody may write in, root included (chattr +i as root, chmod otherwise)."""
    folder = tmp_path / "locked"
    folder.mkdir()
    (folder / "keep.txt").write_text("mine")
    if os.geteuid() != 0:
        folder.chmod(0o555)
        yield folder
        folder.chmod(0o755)
        return
    if shutil.which("chattr") is None or subprocess.run(["chattr", "+i", str(folder)],
                                                         capture_output=True).returncode != 0:
        pytest.skip("running as root on a file system without chattr +i: no folder is read-only to root")
    yield folder
    subprocess.run(["chattr", "-i", str(folder)], check=True)


def test_folder_with_other_files_is_refused_and_untouched(tmp_path, no_simulation):
    """--out at a folder holding the user's files: a clear error naming --out, every file as it was."""
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "important.txt").write_text("x\n")
    (mine / "scenario.toml").write_text("name = 'kept beside its results'\n")
    before = snapshot(tmp_path)
    with pytest.raises(ConfigError) as info:
        cli.simulate("load", dict(QUICK), out=str(mine))
    assert info.value.field == "--out" and "important.txt" in str(info.value)
    assert snapshot(tmp_path) == before


def test_file_is_refused_and_untouched(tmp_path, no_simulation):
    """--out at an existing file: refused; the file keeps its name and bytes, nothing appears beside it."""
    notes = tmp_path / "notes.txt"
    notes.write_text("my notes\n")
    before = snapshot(tmp_path)
    with pytest.raises(ConfigError, match="is a file") as info:
        cli.simulate("load", dict(QUICK), out=str(notes))
    assert info.value.field == "--out"
    assert snapshot(tmp_path) == before


def test_read_only_folder_is_refused_before_running(read_only_folder, no_simulation):
    """A target inside a folder that cannot be written is found before the run, not after it."""
    before = snapshot(read_only_folder)
    with pytest.raises(ConfigError, match="cannot write") as info:
        cli.simulate("load", dict(QUICK), out=str(read_only_folder / "run"))
    assert info.value.field == "--out"
    assert snapshot(read_only_folder) == before


def test_name_too_long_is_refused_before_running(tmp_path, no_simulation):
    """A folder name the file system cannot hold is refused up front, naming the limit."""
    with pytest.raises(ConfigError, match="too long"):
        cli.simulate("load", dict(QUICK), out=str(tmp_path / ("r" * 300)))
    assert list(tmp_path.iterdir()) == []


def test_runs_differing_in_a_field_get_two_folders_and_reruns_are_idempotent(tmp_path, monkeypatch):
    """Default folders are unique per resolved config; the same run again replaces only itself."""
    monkeypatch.chdir(tmp_path)
    first = cli.simulate("load", dict(QUICK))
    second = cli.simulate("load", {**QUICK, "fluid.latency": "false"})
    assert first != second and first.parent == second.parent == Path("results")
    tables, manifest = read_run(first)
    again = cli.simulate("load", dict(QUICK))
    assert again == first
    assert sorted(p.name for p in Path("results").iterdir()) == sorted([first.name, second.name])
    tables_again, manifest_again = read_run(again)
    for name, frame in tables.items():
        pd.testing.assert_frame_equal(frame, tables_again[name])
    assert manifest_again["run_id"] == manifest["run_id"]


def test_explicit_out_reruns_the_same_run_in_place(tmp_path):
    """--out at an earlier copy of the same run is allowed (idempotent); another run there is not."""
    out = tmp_path / "run"
    cli.simulate("load", dict(QUICK), out=str(out))
    cli.simulate("load", dict(QUICK), out=str(out))
    with pytest.raises(ConfigError, match="other than this run"):
        cli.simulate("load", {**QUICK, "seed": "2"}, out=str(out))
    assert read_run(out)[1]["seed"] == 1


def test_folder_gets_the_users_umask(tmp_path):
    """The results folder is created with the user's umask, not mkdtemp's private 0700."""
    old = os.umask(0o027)
    try:
        out = cli.simulate("load", dict(QUICK), out=str(tmp_path / "run"))
    finally:
        os.umask(old)
    assert out.stat().st_mode & 0o777 == 0o750


def test_header_names_every_setting_and_override(tmp_path, capsys):
    """The run header shows backend, transport, K, scheduler, seed, each override and the folder."""
    out = tmp_path / "run"
    cli.simulate("load", {**QUICK, "scheduler.n_classes": "4"}, out=str(out))
    header = capsys.readouterr().out.splitlines()[:3]
    assert "fluid backend" in header[0] and "transport dctcp" in header[0] and "K=4" in header[0]
    assert "scheduler 'beamer'" in header[0] and "seed 1" in header[0]
    assert header[1] == "  overrides: backend=fluid, workload.cojobs=1, scheduler.n_classes=4"
    assert header[2] == f"  results: {out}"
