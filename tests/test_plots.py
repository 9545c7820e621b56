"""Figures of a result store: every figure is written and readable, normalisation is right, gaps are skipped.

"Readable" is checked on the drawn axes of each figure: every axis has tick labels (or
shares them with the panel beside it), a log axis has at least two distinct labels spread
over it, titles and labels are words (no ``sct_s`` column names, no dotted keys), no
panel's y labels run into another panel, and a 95 % CI is drawn and named only when there
are two seeds or more to draw it from.
"""

from __future__ import annotations

import math
import re
import warnings

import matplotlib.pyplot as plt
import pytest

from ns3_hpsched import crosscheck as cc
from ns3_hpsched.errors import ConfigError
from ns3_hpsched.plots import (
    FIGURES,
    SCHEDULER_ORDER,
    FigureSkipped,
    analyze,
    fig_fct_slowdown,
    fig_packet_vs_fluid,
    fig_sct_vs_load,
    load_parameter,
    log_ticks,
    normalised_sct,
    scheduler_palette,
    sct_summary,
    size_bins,
)
from ns3_hpsched.store import load_store
from ns3_hpsched.sweep import run_sweep
from .test_sweep import SCENARIO, stand_in_run

LOAD = "workload.arrival_rate"


@pytest.fixture(scope="module")
def fluid_store(tmp_path_factory):
    """A store of real fluid runs: 2 loads x 2 schedulers x 2 seeds of a tiny search."""
    root = tmp_path_factory.mktemp("plots-fluid")
    (root / "tiny.toml").write_text(SCENARIO)
    run_sweep(root / "tiny.toml", {LOAD: [10.0, 40.0]}, ["fair", "beamer"], [1, 2], root / "store",
              workers=2, progress=False)
    return root / "store"


@pytest.fixture(scope="module")
def two_backend_store(tmp_path_factory):
    """A store of stand-in runs on both backends (2 schedulers, one load, one seed)."""
    root = tmp_path_factory.mktemp("plots-both")
    (root / "tiny.toml").write_text(SCENARIO)
    run_sweep(root / "tiny.toml", {"backend": ["fluid", "packet"], LOAD: [10.0]}, ["fair", "beamer"], [1],
              root / "store", workers=2, progress=False, run_fn=stand_in_run)
    return root / "store"


@pytest.fixture(scope="module")
def fluid_tables(fluid_store):
    """The tables of :func:`fluid_store` (read once; tests copy before changing them)."""
    return load_store(fluid_store)


@pytest.fixture(scope="module")
def both_tables(two_backend_store):
    """The tables of :func:`two_backend_store`."""
    return load_store(two_backend_store)


def one_seed(tables):
    """The tables of a store restricted to seed 1."""
    return {name: table[table["seed"] == 1] if "seed" in table else table for name, table in tables.items()}


def crosscheck_figure(tables):
    """The crosscheck figure of two real fluid runs per scheduler (the two loads stand in for
    the two backends: the figure is what is under test, and both play the same coflows)."""
    import pandas as pd

    frames = []
    for name in ("fair", "beamer"):
        runs = [{t: tables[t][(tables[t]["scheduler"] == name) & (tables[t]["seed"] == 1)
                              & (tables[t][LOAD] == load)] for t in ("coflows", "stages")} for load in (10.0, 40.0)]
        frames.append(cc.compare(*runs).assign(scheduler=name))
    return cc.fig_crosscheck(pd.concat(frames, ignore_index=True))


def texts(fig):
    """Every title, axis label and legend text of ``fig``."""
    out = [fig._suptitle.get_text() if fig._suptitle else ""]
    for ax in fig.axes:
        out += [ax.get_title(), ax.get_xlabel(), ax.get_ylabel()]
    for legend in [*fig.legends, *(ax.get_legend() for ax in fig.axes if ax.get_legend())]:
        out += [legend.get_title().get_text(), *(t.get_text() for t in legend.get_texts())]
    return [t for t in out if t]


def tick_labels(axis):
    """The visible, non-empty tick labels of a drawn axis, with their positions."""
    return [(tick.get_loc(), tick.label1.get_text()) for tick in axis.get_major_ticks()
            if tick.label1.get_visible() and tick.label1.get_text()
            and min(axis.get_view_interval()) <= tick.get_loc() <= max(axis.get_view_interval())]


def assert_readable(fig):
    """The checks of the module docstring, on every axis of ``fig``."""
    fig.canvas.draw()
    for text in texts(fig):
        assert not re.search(r"\w_\w", text), f"column name in {text!r}"
        assert not re.search(r"[a-z]\.[a-z]", text), f"dotted key in {text!r}"
    for ax in fig.axes:
        for name, axis in (("x", ax.xaxis), ("y", ax.yaxis)):
            labels = tick_labels(axis)
            siblings = (ax.get_shared_x_axes() if name == "x" else ax.get_shared_y_axes()).get_siblings(ax)
            if not labels:
                other = [s for s in siblings if s is not ax]
                assert any(tick_labels(getattr(s, f"{name}axis")) for s in other), f"{name} axis unlabelled"
                continue
            if axis.get_scale() == "log":
                assert len({text for _, text in labels}) >= 2, f"log {name} axis: {labels}"
                lo, hi = sorted(axis.get_view_interval())
                spread = math.log(max(p for p, _ in labels) / min(p for p, _ in labels)) / math.log(hi / lo)
                assert spread >= 0.4, f"log {name} axis labels bunched: {labels}"
    renderer = fig.canvas.get_renderer()
    for ax in fig.axes:
        ink = [ax.yaxis.label, *ax.get_yticklabels()]
        for other in fig.axes:
            if other is not ax:
                boxes = [other.get_window_extent(renderer)]
                if other.yaxis.label.get_text():
                    boxes.append(other.yaxis.label.get_window_extent(renderer))
                assert not any(t.get_text() and t.get_window_extent(renderer).overlaps(box)
                               for t in ink for box in boxes), "a panel's y labels overlap another panel"


@pytest.mark.parametrize("name", [n for n in FIGURES if n != "packet_vs_fluid.png"])
def test_every_figure_of_a_fluid_sweep_is_readable(fluid_tables, name):
    """Each figure of real fluid runs (numeric load, two seeds) passes the readability checks."""
    fig = FIGURES[name](fluid_tables)
    assert_readable(fig)
    plt.close(fig)


@pytest.mark.parametrize("name", list(FIGURES))
def test_every_figure_of_both_backends_is_readable(both_tables, name):
    """Each figure faceted by backend, with schedulers (not a load) on the x axis, is readable."""
    fig = FIGURES[name](both_tables)
    assert_readable(fig)
    plt.close(fig)


def test_crosscheck_figure_is_readable(fluid_tables):
    """The crosscheck scatter (two panels with their own axes) is readable, in the same style."""
    fig = crosscheck_figure(fluid_tables)
    assert_readable(fig)
    assert [ax.get_title() for ax in fig.axes] == ["coflow completion time", "stage completion time"]
    plt.close(fig)


def test_confidence_interval_only_with_two_seeds(fluid_tables):
    """With two seeds the figure draws and names a 95 % CI; with one it draws none and says so."""
    tables = fluid_tables
    fig = fig_sct_vs_load(tables)
    assert "95% bootstrap CI" in fig._suptitle.get_text()
    assert all(ax.containers for ax in fig.axes)
    single = fig_sct_vs_load(one_seed(tables))
    assert "95%" not in single._suptitle.get_text() and "one seed" in single._suptitle.get_text()
    assert not any(ax.containers for ax in single.axes)
    plt.close("all")


def test_load_axis_is_numeric(fluid_tables):
    """The arrival rate is drawn at its values (10 and 40 four times as far from 0), not as categories."""
    fig = fig_sct_vs_load(fluid_tables)
    ax = fig.axes[0]
    assert [(p, t) for p, t in tick_labels(ax.xaxis)] == [(10.0, "10"), (40.0, "40")]
    plt.close(fig)


@pytest.mark.parametrize(("lo", "hi", "expected"), [
    (1.0, 4.45, [1, 2, 3]),
    (0.09, 0.6, [0.1, 0.2, 0.5]),
    (1e-5, 20.0, [1e-5, 1e-4, 1e-3, 1e-2, 0.1, 1, 10]),
])
def test_log_ticks_are_round_and_inside(lo, hi, expected):
    """Powers of ten when the range is wide, 1-2-5 or 1-2-3-5 steps when it is not."""
    assert log_ticks(lo, hi) == pytest.approx(expected)


def test_log_ticks_of_a_narrow_range_are_even_steps():
    """A range of 30 % gets evenly spaced round values inside it."""
    ticks = log_ticks(1.0, 1.3)
    assert len(ticks) >= 2 and all(1.0 <= t <= 1.3 for t in ticks)
    assert ticks == pytest.approx([round(t, 6) for t in ticks])


def test_size_bins_span_the_sizes():
    """Bins are equal on a log scale from the smallest to the largest size; one size, one bin."""
    import pandas as pd

    sizes = pd.Series([1_000, 2_000, 100_000, 10_000_000])
    bins = size_bins(sizes, most=4)
    edges = [1e3, 1e4, 1e5, 1e6, 1e7]
    assert bins.tolist() == pytest.approx([math.sqrt(edges[0] * edges[1])] * 2
                                          + [math.sqrt(edges[2] * edges[3]), math.sqrt(edges[3] * edges[4])])
    assert size_bins(pd.Series([5, 5, 5])).tolist() == [5, 5, 5]


def test_analyze_writes_every_figure(two_backend_store, tmp_path):
    """analyze writes one non-empty PNG per figure when the store has all the data, with no warning."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        written = analyze(two_backend_store, tmp_path / "figures")
    assert [p.name for p in written] == list(FIGURES)
    for png in written:
        assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 10_000


def test_sct_summary_is_the_mean_paired_ratio_to_the_baseline(fluid_store, fluid_tables):
    """The summary's ratio is the per-seed average SCT over beamer's, averaged over seeds."""
    summary = sct_summary(fluid_store, baseline="beamer")
    beamer = summary[summary["scheduler"] == "beamer"]
    assert (beamer[["sct_ratio", "ci_low", "ci_high"]] == 1.0).all().all()
    stages = fluid_tables["stages"]
    mean = stages.groupby(["backend", LOAD, "seed", "scheduler"])["sct_s"].mean().unstack()
    expected = (mean["fair"] / mean["beamer"]).groupby(["backend", LOAD]).mean()
    fair = summary[summary["scheduler"] == "fair"].set_index(["backend", LOAD])["sct_ratio"]
    assert fair.sort_index().to_numpy() == pytest.approx(expected.sort_index().to_numpy())
    assert (summary["ci_low"] <= summary["sct_ratio"]).all()
    assert (summary["sct_ratio"] <= summary["ci_high"]).all()
    assert list(summary["seeds"].unique()) == [2]


def test_normalising_to_a_missing_scheduler_names_the_baseline(fluid_tables):
    """A baseline with no runs in the store is a ConfigError on 'baseline'."""
    with pytest.raises(ConfigError) as info:
        normalised_sct(fluid_tables, baseline="varys")
    assert info.value.field == "baseline"


def test_figures_without_their_data_are_skipped_with_a_reason(both_tables):
    """Without standalone FCTs or a second backend, those figures warn and return None."""
    tables = dict(both_tables)
    tables["flows"] = tables["flows"].drop(columns="standalone_fct_s")
    with pytest.warns(FigureSkipped, match="standalone_fct_s"):
        assert fig_fct_slowdown(tables) is None
    for name in ("stages", "coflows", "flows"):
        tables[name] = tables[name][tables[name]["backend"] == "fluid"]
    with pytest.warns(FigureSkipped, match="both backends"):
        assert fig_packet_vs_fluid(tables) is None


def test_load_is_the_varying_grid_parameter(fluid_tables, both_tables):
    """The load defaults to the varying grid parameter other than backend; unknown names fail."""
    assert load_parameter(fluid_tables) == LOAD
    assert load_parameter(both_tables) is None
    with pytest.raises(ConfigError) as info:
        load_parameter(fluid_tables, "workload.cojobs")
    assert info.value.field == "load"


def test_each_scheduler_keeps_its_colour():
    """A scheduler has the same colour in every figure, and the seven built-ins are distinct."""
    full = scheduler_palette(list(SCHEDULER_ORDER))
    assert len(set(full.values())) == len(SCHEDULER_ORDER)
    assert scheduler_palette(["beamer", "fair", "mine"])["beamer"] == full["beamer"]
    assert scheduler_palette(["mine"])["mine"] not in full.values()
