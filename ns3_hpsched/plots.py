"""Figures of a result store: how the schedulers compare, as seaborn PNGs.

Each ``fig_*`` function takes the tables of :func:`ns3_hpsched.store.load_store` and
returns a matplotlib Figure, or ``None`` (with a :class:`FigureSkipped` warning saying why)
when the store lacks what the figure needs. :func:`analyze` draws them all and writes PNGs;
the notebooks in ``analysis/`` call the same functions, so both show the same figures.

Every figure uses the same scheduler order and colours (:data:`SCHEDULER_ORDER`, seaborn's
colour-blind palette), so a scheduler looks the same everywhere. "Load" is a grid parameter
of the sweep (by default the only one with several values); figures facet or group by it.
"""

from __future__ import annotations

import os
import sys
import warnings
from pathlib import Path

import matplotlib

if "matplotlib.pyplot" not in sys.modules and "MPLBACKEND" not in os.environ:
    matplotlib.use("Agg")  # headless unless the user (or a notebook kernel) chose a backend

import numpy as np
import pandas as pd
import seaborn as sns
from matplotlib import pyplot as plt
from matplotlib.figure import Figure
from matplotlib.ticker import NullFormatter, ScalarFormatter

from .errors import ConfigError
from .store import INDEX_COLUMNS, load_store

__all__ = [
    "SCHEDULER_ORDER",
    "FigureSkipped",
    "scheduler_palette",
    "load_parameter",
    "normalised_sct",
    "sct_summary",
    "fig_sct_vs_load",
    "fig_sct_cdf",
    "fig_sct_lower_bound",
    "fig_cct_cdf",
    "fig_fct_slowdown",
    "fig_packet_vs_fluid",
    "FIGURES",
    "analyze",
]

#: Fixed order (and colour) of the schedulers: baselines in publication order, then the
#: stage-aware policies. Schedulers not listed follow, sorted by name.
SCHEDULER_ORDER = ("fair", "fifo-lm", "varys", "aalo", "sincronia", "grouper", "beamer")


class FigureSkipped(UserWarning):
    """A figure was not drawn because the store lacks the data it needs."""


def _skip(reason: str) -> None:
    """Warn that a figure is skipped, and why."""
    warnings.warn(reason, FigureSkipped, stacklevel=3)


def _schedulers(frame: pd.DataFrame) -> list[str]:
    """Schedulers present in ``frame``, in the fixed order."""
    present = set(frame["scheduler"])
    known = [name for name in SCHEDULER_ORDER if name in present]
    return known + sorted(present - set(SCHEDULER_ORDER))


def scheduler_palette(schedulers: list[str]) -> dict[str, tuple]:
    """Colour of each scheduler: its place in :data:`SCHEDULER_ORDER` in the colour-blind palette."""
    extra = sorted(set(schedulers) - set(SCHEDULER_ORDER))
    names = list(SCHEDULER_ORDER) + extra
    colours = sns.color_palette("colorblind", len(names))
    return {name: colours[names.index(name)] for name in schedulers}


def _hue(frame: pd.DataFrame) -> dict:
    """seaborn keyword arguments colouring by scheduler in the fixed order and colours."""
    order = _schedulers(frame)
    return {"hue": "scheduler", "hue_order": order, "palette": scheduler_palette(order)}


def _grid_parameters(index: pd.DataFrame) -> list[str]:
    """The grid parameters (dotted scenario keys) recorded in a store's index."""
    return [c for c in index.columns if c not in INDEX_COLUMNS]


def load_parameter(tables: dict[str, pd.DataFrame], load: str | None = None) -> str | None:
    """The grid parameter that is the load: ``load`` if given, else the only varying one.

    ``backend`` is never taken for the load (figures facet by backend instead).

    Returns ``None`` when no grid parameter varies (figures then show a single load).

    Raises
    ------
    ConfigError
        If ``load`` is not a grid parameter of the store, or several vary and none is named.
    """
    index = tables["index"]
    params = _grid_parameters(index)
    if load is not None:
        if load not in params:
            raise ConfigError("load", f"{load!r} is not a grid parameter of the store",
                              f"use one of {params}")
        return load
    varying = [p for p in params if p != "backend" and index[p].nunique() > 1]
    if len(varying) > 1:
        raise ConfigError("load", f"several grid parameters vary: {varying}",
                          "name the one that is the load")
    return varying[0] if varying else None


def _facets(frame: pd.DataFrame, load: str | None) -> dict:
    """Facet keyword arguments: a column per load value, a row per backend if several."""
    return {**({"col": load} if load else {}),
            **({"row": "backend"} if frame["backend"].nunique() > 1 else {})}


def normalised_sct(tables: dict[str, pd.DataFrame], baseline: str = "beamer") -> pd.DataFrame:
    """Average SCT of every run, and its ratio to the ``baseline`` scheduler's same run.

    Runs are paired with the baseline run that has the same grid point, seed and backend,
    so the ratio removes the seed-to-seed variation of the workload.

    Returns
    -------
    pandas.DataFrame
        One row per run with a baseline partner: its tags, ``mean_sct_s`` (average stage
        completion time, s) and ``sct_ratio`` (``mean_sct_s`` / the baseline's).
    """
    stages = tables["stages"]
    if baseline not in set(stages["scheduler"]):
        raise ConfigError("baseline", f"no run of scheduler {baseline!r} in the store",
                          f"pick one of {_schedulers(stages)}")
    pair = [*_grid_parameters(tables["index"]), "seed", "backend"]
    runs = stages.groupby(["hash", "scheduler", *pair], dropna=False, as_index=False)["sct_s"].mean()
    runs = runs.rename(columns={"sct_s": "mean_sct_s"})
    base = runs[runs["scheduler"] == baseline][[*pair, "mean_sct_s"]]
    runs = runs.merge(base, on=pair, suffixes=("", "_baseline"))
    runs["sct_ratio"] = runs["mean_sct_s"] / runs.pop("mean_sct_s_baseline")
    return runs


def sct_summary(store: Path, load: str | None = None, baseline: str = "beamer") -> pd.DataFrame:
    """Average SCT ratio to ``baseline`` per scheduler (and load, backend) over seeds.

    Columns: the load (if any), ``backend``, ``scheduler``, ``seeds`` (runs averaged),
    ``sct_ratio`` (mean over seeds), ``ci_low``/``ci_high`` (95 % bootstrap interval over
    seeds, as in :func:`fig_sct_vs_load`). A ratio above 1 means slower than the baseline.
    """
    tables = load_store(store)
    load = load_parameter(tables, load)
    runs = normalised_sct(tables, baseline)
    rng = np.random.default_rng(0)
    rows = []
    keys = [*([load] if load else []), "backend", "scheduler"]
    for key, group in runs.groupby(keys, sort=False):
        ratios = group["sct_ratio"].to_numpy()
        boot = rng.choice(ratios, size=(1000, len(ratios))).mean(axis=1)
        rows.append({**dict(zip(keys, key)), "seeds": len(ratios), "sct_ratio": ratios.mean(),
                     "ci_low": np.percentile(boot, 2.5), "ci_high": np.percentile(boot, 97.5)})
    summary = pd.DataFrame(rows)
    summary["scheduler"] = pd.Categorical(summary["scheduler"], _schedulers(runs), ordered=True)
    return summary.sort_values(keys, ignore_index=True)


def _plain_log_y(grid) -> None:
    """Label a log-scaled y axis with plain numbers (2, 5, 10) instead of powers of ten."""
    for ax in grid.axes.flat:
        ax.yaxis.set_major_formatter(ScalarFormatter())
        ax.yaxis.set_minor_formatter(NullFormatter())


def _titled(grid, title: str) -> Figure:
    """The figure of a seaborn grid, with ``title`` above its panels."""
    grid.figure.suptitle(title, y=1.02)
    return grid.figure


#: Axis labels, with units, of grid parameters the shipped scenarios sweep.
PARAMETER_LABELS = {
    "workload.arrival_rate": "cojob arrival rate (cojobs per second)",
    "workload.configurations": "configurations per cojob",
    "workload.stages": "stages per cojob",
    "workload.eta": "reduction factor eta",
    "workload.pattern": "synchronisation pattern",
    "scheduler.n_classes": "priority queues per port (K)",
    "transport.kind": "transport",
    "topology.k": "fat-tree k",
}


def _x_label(load: str | None) -> str:
    """Axis label of the load parameter (with its unit when known), or of the schedulers."""
    return PARAMETER_LABELS.get(load, load) if load else "scheduler"


def fig_sct_vs_load(tables: dict[str, pd.DataFrame], load: str | None = None,
                    baseline: str = "beamer") -> Figure | None:
    """Average SCT of each scheduler normalised to ``baseline``, vs load, with 95 % CIs over seeds."""
    if tables["stages"].empty:
        _skip("average SCT vs load: the store has no stages table")
        return None
    if baseline not in set(tables["stages"]["scheduler"]):
        _skip(f"average SCT vs load: no run of the baseline scheduler {baseline!r} to normalise to")
        return None
    load = load_parameter(tables, load)
    runs = normalised_sct(tables, baseline)
    facets = {"col": "backend"} if runs["backend"].nunique() > 1 else {}
    x = load or "scheduler"
    grid = sns.catplot(runs, kind="point", x=x, y="sct_ratio", **_hue(runs), **facets,
                       errorbar=("ci", 95), seed=0, dodge=0.3, height=4, aspect=1.4)
    grid.refline(y=1.0, color="0.4", linestyle="--")
    grid.set_axis_labels(_x_label(load), f"average SCT / average SCT of {baseline}")
    return _titled(grid, f"Average stage completion time normalised to {baseline} "
                         "(mean over seeds, 95% CI)")


def fig_sct_cdf(tables: dict[str, pd.DataFrame], load: str | None = None) -> Figure | None:
    """CDF of the stage completion time per scheduler, one panel per load."""
    stages = tables["stages"]
    if stages.empty:
        _skip("SCT CDF: the store has no stages table")
        return None
    load = load_parameter(tables, load)
    grid = sns.displot(stages, kind="ecdf", x="sct_s", **_hue(stages), **_facets(stages, load),
                       log_scale=True, height=3.5)
    grid.set_axis_labels("stage completion time (s)", "fraction of stages")
    return _titled(grid, "Stage completion time (SCT) distribution per scheduler")


def fig_sct_lower_bound(tables: dict[str, pd.DataFrame], load: str | None = None) -> Figure | None:
    """Ratio of each stage's SCT to its lower bound, per scheduler (1 = optimal)."""
    stages = tables["stages"]
    if stages.empty or "lower_bound_s" not in stages or not (stages["lower_bound_s"] > 0).any():
        _skip("SCT / lower bound: the stages table has no positive lower_bound_s")
        return None
    load = load_parameter(tables, load)
    stages = stages[stages["lower_bound_s"] > 0].assign(
        bound_ratio=lambda s: s["sct_s"] / s["lower_bound_s"])
    grid = sns.catplot(stages, kind="box", x=load or "scheduler", y="bound_ratio", **_hue(stages),
                       log_scale=True, showfliers=False, height=4, aspect=1.4)
    grid.refline(y=1.0, color="0.4", linestyle="--")
    grid.set_axis_labels(_x_label(load), "SCT / lower bound (ratio, log scale)")
    _plain_log_y(grid)
    return _titled(grid, "Stage completion time relative to its lower bound (boxes: quartiles)")


def fig_cct_cdf(tables: dict[str, pd.DataFrame], load: str | None = None) -> Figure | None:
    """CDF of the coflow completion time per scheduler, one panel per load."""
    coflows = tables["coflows"]
    if coflows.empty:
        _skip("CCT CDF: the store has no coflows table")
        return None
    coflows = coflows[coflows["cct_s"] > 0]
    load = load_parameter(tables, load)
    grid = sns.displot(coflows, kind="ecdf", x="cct_s", **_hue(coflows), **_facets(coflows, load),
                       log_scale=True, height=3.5)
    grid.set_axis_labels("coflow completion time (s)", "fraction of coflows")
    return _titled(grid, "Coflow completion time (CCT) distribution per scheduler")


def _size_bins(sizes: pd.Series) -> pd.Series:
    """Flow sizes binned by decade, labelled with their range in bytes (e.g. '1MB-10MB')."""
    decades = np.floor(np.log10(sizes.clip(lower=1))).astype(int)
    units = ["B", "KB", "MB", "GB", "TB"]

    def label(d: int) -> str:
        lo, hi = divmod(d, 3), divmod(d + 1, 3)
        return f"{10 ** lo[1]}{units[lo[0]]}-{10 ** hi[1]}{units[hi[0]]}"

    order = sorted(decades.unique())
    return pd.Categorical(decades.map(label), categories=[label(d) for d in order], ordered=True)


def fig_fct_slowdown(tables: dict[str, pd.DataFrame], load: str | None = None) -> Figure | None:
    """Mean FCT slowdown (FCT / FCT alone on an idle network) per flow-size decade and scheduler."""
    flows = tables["flows"]
    if flows.empty or "standalone_fct_s" not in flows or not (flows["standalone_fct_s"] > 0).any():
        _skip("FCT slowdown: the flows table has no standalone_fct_s (FCT alone on an idle network)")
        return None
    load = load_parameter(tables, load)
    flows = flows[flows["standalone_fct_s"] > 0]
    flows = flows.assign(slowdown=flows["fct_s"] / flows["standalone_fct_s"],
                         size=_size_bins(flows["bytes"]))
    grid = sns.catplot(flows, kind="point", x="size", y="slowdown", **_hue(flows), **_facets(flows, load),
                       errorbar=None, log_scale=(False, True), dodge=0.3, height=3.5, aspect=1.3)
    grid.set_axis_labels("flow size (bytes)", "mean FCT slowdown (FCT / standalone FCT)")
    grid.tick_params(axis="x", labelrotation=30)
    _plain_log_y(grid)
    return _titled(grid, "Flow completion time slowdown by flow size")


def fig_packet_vs_fluid(tables: dict[str, pd.DataFrame], load: str | None = None) -> Figure | None:
    """SCT of each stage on the packet backend vs the fluid backend, for the same run config."""
    stages = tables["stages"]
    if stages.empty or not {"packet", "fluid"} <= set(stages["backend"]):
        _skip("packet vs fluid: the store does not hold runs of both backends")
        return None
    key = [p for p in _grid_parameters(tables["index"]) if p != "backend"]
    key += ["scheduler", "seed", "cojob", "stage"]
    packet = stages[stages["backend"] == "packet"]
    fluid = stages[stages["backend"] == "fluid"]
    both = packet.merge(fluid, on=key, suffixes=("_packet", "_fluid"))
    if both.empty:
        _skip("packet vs fluid: no stage was run with the same config on both backends")
        return None
    fig, ax = plt.subplots(figsize=(5.5, 5))
    sns.scatterplot(both, x="sct_s_fluid", y="sct_s_packet", **_hue(both), ax=ax)
    ax.set(xscale="log", yscale="log", xlabel="SCT on the fluid backend (s)",
           ylabel="SCT on the packet backend (s)")
    limits = [both[["sct_s_fluid", "sct_s_packet"]].min().min(),
              both[["sct_s_fluid", "sct_s_packet"]].max().max()]
    ax.plot(limits, limits, color="0.4", linestyle="--", label="y = x")
    ax.legend()
    ax.set_title("Stage completion time: packet vs fluid backend (one point per stage)")
    return fig


#: File name -> figure function, in the order :func:`analyze` writes them.
FIGURES = {
    "sct_vs_load.png": fig_sct_vs_load,
    "sct_cdf.png": fig_sct_cdf,
    "sct_lower_bound.png": fig_sct_lower_bound,
    "cct_cdf.png": fig_cct_cdf,
    "fct_slowdown.png": fig_fct_slowdown,
    "packet_vs_fluid.png": fig_packet_vs_fluid,
}


def analyze(store: Path, out_dir: Path, *, load: str | None = None,
            baseline: str = "beamer") -> list[Path]:
    """Draw every figure the store supports and write them as PNGs to ``out_dir``.

    Parameters
    ----------
    store:
        A result store (as written by :func:`ns3_hpsched.sweep.run_sweep`).
    out_dir:
        Folder for the PNGs (created if missing).
    load:
        Grid parameter that is the load (default: the only one that varies).
    baseline:
        Scheduler the average SCT is normalised to.

    Returns
    -------
    list of Path
        The PNGs written, in :data:`FIGURES` order. Figures the store cannot support are
        skipped with a :class:`FigureSkipped` warning saying why.
    """
    tables = load_store(store)
    if tables["index"].empty or not (tables["index"]["status"] == "ok").any():
        raise ConfigError("store", f"{store} holds no finished run", "run a sweep into it first")
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    written = []
    with sns.axes_style("whitegrid"):
        for name, draw in FIGURES.items():
            kwargs = {"baseline": baseline} if draw is fig_sct_vs_load else {}
            fig = draw(tables, load, **kwargs)
            if fig is not None:
                fig.savefig(out_dir / name, dpi=150, bbox_inches="tight")
                plt.close(fig)
                written.append(out_dir / name)
    return written
