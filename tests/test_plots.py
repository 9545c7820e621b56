"""Figures of a result store: every figure is written, normalisation is right, gaps are skipped."""

from __future__ import annotations

import warnings

import pytest

from ns3_hpsched.errors import ConfigError
from ns3_hpsched.plots import (
    FIGURES,
    SCHEDULER_ORDER,
    FigureSkipped,
    analyze,
    fig_fct_slowdown,
    fig_packet_vs_fluid,
    load_parameter,
    normalised_sct,
    scheduler_palette,
    sct_summary,
)
from ns3_hpsched.store import load_store
from ns3_hpsched.sweep import run_sweep
from .test_sweep import SCENARIO, stand_in_run

LOAD = "workload.arrival_rate"


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    """A store of stand-in runs: 2 backends x 2 loads x 2 schedulers x 2 seeds."""
    root = tmp_path_factory.mktemp("plots")
    (root / "tiny.toml").write_text(SCENARIO)
    run_sweep(root / "tiny.toml", {"backend": ["fluid", "packet"], LOAD: [10.0, 20.0]},
              ["fair", "beamer"], [1, 2], root / "store", workers=2, progress=False,
              run_fn=stand_in_run)
    return root / "store"


def test_analyze_writes_every_figure(store, tmp_path):
    """analyze writes one non-empty PNG per figure when the store has all the data."""
    with warnings.catch_warnings():
        warnings.simplefilter("error", FigureSkipped)
        written = analyze(store, tmp_path / "figures")
    assert [p.name for p in written] == list(FIGURES)
    for png in written:
        assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 10_000


def test_sct_summary_is_the_mean_paired_ratio_to_the_baseline(store):
    """The summary's ratio is the per-seed average SCT over beamer's, averaged over seeds."""
    summary = sct_summary(store, baseline="beamer")
    beamer = summary[summary["scheduler"] == "beamer"]
    assert (beamer[["sct_ratio", "ci_low", "ci_high"]] == 1.0).all().all()
    stages = load_store(store)["stages"]
    mean = stages.groupby(["backend", LOAD, "seed", "scheduler"])["sct_s"].mean().unstack()
    expected = (mean["fair"] / mean["beamer"]).groupby(["backend", LOAD]).mean()
    fair = summary[summary["scheduler"] == "fair"].set_index(["backend", LOAD])["sct_ratio"]
    assert fair.sort_index().to_numpy() == pytest.approx(expected.sort_index().to_numpy())
    assert (summary["ci_low"] <= summary["sct_ratio"]).all()
    assert (summary["sct_ratio"] <= summary["ci_high"]).all()
    assert list(summary["seeds"].unique()) == [2]


def test_normalising_to_a_missing_scheduler_names_the_baseline(store):
    """A baseline with no runs in the store is a ConfigError on 'baseline'."""
    with pytest.raises(ConfigError) as info:
        normalised_sct(load_store(store), baseline="varys")
    assert info.value.field == "baseline"


def test_figures_without_their_data_are_skipped_with_a_reason(store):
    """Without standalone FCTs or a second backend, those figures warn and return None."""
    tables = load_store(store)
    tables["flows"] = tables["flows"].drop(columns="standalone_fct_s")
    with pytest.warns(FigureSkipped, match="standalone_fct_s"):
        assert fig_fct_slowdown(tables) is None
    for name in ("stages", "coflows", "flows"):
        tables[name] = tables[name][tables[name]["backend"] == "fluid"]
    with pytest.warns(FigureSkipped, match="both backends"):
        assert fig_packet_vs_fluid(tables) is None


def test_load_is_the_varying_grid_parameter(store):
    """The load defaults to the varying grid parameter other than backend; unknown names fail."""
    tables = load_store(store)
    assert load_parameter(tables) == LOAD
    with pytest.raises(ConfigError) as info:
        load_parameter(tables, "workload.cojobs")
    assert info.value.field == "load"


def test_each_scheduler_keeps_its_colour():
    """A scheduler has the same colour in every figure, and the seven built-ins are distinct."""
    full = scheduler_palette(list(SCHEDULER_ORDER))
    assert len(set(full.values())) == len(SCHEDULER_ORDER)
    assert scheduler_palette(["beamer", "fair", "mine"])["beamer"] == full["beamer"]
    assert scheduler_palette(["mine"])["mine"] not in full.values()
