"""Cross-check arithmetic: joining runs on natural keys, relative errors, external CSVs."""

from __future__ import annotations

import pandas as pd
import pytest

from ns3_hpsched import crosscheck as cc
from ns3_hpsched.errors import ConfigError


def tables(sct, cct):
    """Stage and coflow tables of a run of one cojob with two stages of one coflow each."""
    stages = pd.DataFrame({"cojob": [0, 0], "stage": [0, 1], "sct_s": sct})
    coflows = pd.DataFrame({"cojob": [0, 0], "job": [3, 3], "stage": [0, 1], "iteration": [0, 0],
                            "phase": [0, 0], "cct_s": cct, "coflow_id": [0, 1]})
    return {"stages": stages, "coflows": coflows}


def test_relative_errors_and_summary():
    """Errors are (other - packet) / packet; the summary takes medians of absolute errors, in percent."""
    pairs = cc.compare(tables([1.0, 2.0], [0.5, 0.25]), tables([1.1, 1.8], [0.5, 0.5]))
    stage = pairs[pairs["level"] == "stage"]["rel_error"].tolist()
    assert stage == pytest.approx([0.1, -0.1])
    summary = cc.summarize(pairs).iloc[0]
    assert summary["sct_n"] == 2 and summary["cct_n"] == 2
    assert summary["median_abs_sct_error_pct"] == pytest.approx(10.0)
    assert summary["max_abs_cct_error_pct"] == pytest.approx(100.0)
    assert summary["sct_error_of_means_pct"] == pytest.approx(100 * (2.9 / 2 - 1.5) / 1.5)
    assert summary["mean_packet_sct_s"] == pytest.approx(1.5)
    assert summary["mean_fluid_sct_s"] == pytest.approx(1.45)


def test_summary_per_scheduler_names_the_other_backend():
    """One row per scheduler, stage columns first; the compared backend is named in its mean column."""
    pairs = pd.concat([cc.compare(tables([1.0, 2.0], [0.5, 0.25]), tables(sct, [0.5, 0.5])).assign(scheduler=name)
                       for name, sct in (("fair", [1.1, 1.8]), ("beamer", [1.0, 2.0]))], ignore_index=True)
    summary = cc.summarize(pairs, by=["scheduler"], other="external")
    assert summary["scheduler"].tolist() == ["fair", "beamer"]
    assert list(summary.columns[1:3]) == ["sct_n", "median_abs_sct_error_pct"]
    assert summary["mean_external_cct_s"].tolist() == pytest.approx([0.5, 0.5])
    assert summary["median_abs_sct_error_pct"].tolist() == pytest.approx([10.0, 0.0])


def test_summary_markdown_is_the_readme_table():
    """The Markdown table has the README's columns, percentages to 0.1 and a signed error of the mean."""
    pairs = cc.compare(tables([1.0, 2.0], [0.5, 0.25]), tables([1.1, 1.8], [0.5, 0.5])).assign(scheduler="fair")
    text = cc.summary_markdown(cc.summarize(pairs, by=["scheduler"]))
    assert text.splitlines() == [
        "| scheduler | median \\|SCT error\\| | p95 \\|SCT error\\| | error of mean SCT | median \\|CCT error\\| |",
        "|---|---|---|---|---|",
        "| fair | 10.0% | 10.0% | \u22123.3% | 50.0% |",
    ]


def test_join_is_on_natural_keys_not_ids():
    """Coflows whose ids differ between runs still match on (cojob, job, stage, iteration, phase)."""
    other = tables([1.0, 2.0], [0.5, 0.25])
    other["coflows"]["coflow_id"] = [7, 3]
    pairs = cc.compare(tables([1.0, 2.0], [0.5, 0.25]), other)
    assert (pairs["rel_error"] == 0).all()


def test_mismatched_runs_are_refused():
    """Runs that did not play the same workload are an error, not a silent partial join."""
    other = tables([1.0, 2.0], [0.5, 0.25])
    other["stages"] = other["stages"].iloc[:1]
    with pytest.raises(ValueError, match="only one run"):
        cc.compare(tables([1.0, 2.0], [0.5, 0.25]), other)


def test_external_csv_of_stage_finish_times(tmp_path):
    """An external CSV with finish times is compared as times at its level."""
    path = tmp_path / "ext.csv"
    path.write_text("cojob,stage,finish_s\n0,0,1.5\n0,1,3.0\n")
    other, value = cc.read_external(path)
    packet = tables([1.0, 2.0], [0.5, 0.25])
    packet["stages"]["finish_s"] = [1.0, 3.0]
    pairs = cc.compare(packet, other, value=value)
    assert pairs["level"].unique().tolist() == ["stage"]
    assert pairs["rel_error"].tolist() == pytest.approx([0.5, 0.0])


def test_external_csv_without_keys_is_refused(tmp_path):
    """A CSV lacking the key columns names the columns it needs."""
    path = tmp_path / "ext.csv"
    path.write_text("id,finish_s\n0,1.0\n")
    with pytest.raises(ConfigError, match="cojob,stage"):
        cc.read_external(path)
