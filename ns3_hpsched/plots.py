"""Figures of a result store: how the schedulers compare, as seaborn PNGs.

Each ``fig_*`` function takes the tables of :func:`ns3_hpsched.store.load_store` and
returns a matplotlib Figure, or ``None`` (with a :class:`FigureSkipped` warning saying why)
when the store lacks what the figure needs. :func:`analyze` draws them all and writes PNGs;
the notebooks in ``analysis/`` call the same functions, so both show the same figures.

Every figure uses the same scheduler order and colours (:data:`SCHEDULER_ORDER`, seaborn's
colour-blind palette), so a scheduler looks the same everywhere, and one style
(:func:`figure_style`, :func:`finish`, also used by the cross-check figure): labels in words
with units, round labelled ticks on log axes (:func:`log_ticks`), a numeric load drawn on a
numeric axis, a caption under the title saying what points and bars are -- a confidence
interval only when there are two seeds or more to draw it from. "Load" is a grid parameter
of the sweep (by default the only one with several values); figures facet or group by it.
"""

from __future__ import annotations

import os
import sys
import textwrap
import warnings
from collections.abc import Callable
from contextlib import contextmanager
from functools import wraps
from pathlib import Path

import matplotlib

if "matplotlib.pyplot" not in sys.modules and "MPLBACKEND" not in os.environ:
    matplotlib.use("Agg")  # headless unless the user (or a notebook kernel) chose a backend

import numpy as np
import pandas as pd
import seaborn as sns
from matplotlib import pyplot as plt
from matplotlib.figure import Figure
from matplotlib.ticker import FixedLocator, FuncFormatter, MaxNLocator, NullFormatter

from .errors import ConfigError
from .store import INDEX_COLUMNS, load_store

__all__ = [
    "SCHEDULER_ORDER",
    "FigureSkipped",
    "scheduler_order",
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
    "figure_style",
    "finish",
    "log_ticks",
    "plain_number",
    "byte_size",
    "parameter_label",
    "size_bins",
    "identity_line",
]

#: Fixed order (and colour) of the schedulers: baselines in publication order, then the
#: stage-aware policies. Schedulers not listed follow, sorted by name.
SCHEDULER_ORDER = ("fair", "fifo-lm", "varys", "aalo", "sincronia", "grouper", "beamer")


class FigureSkipped(UserWarning):
    """A figure was not drawn because the store lacks the data it needs."""


def _skip(reason: str) -> None:
    """Warn that a figure is skipped, and why."""
    warnings.warn(reason, FigureSkipped, stacklevel=3)


def scheduler_order(names) -> list[str]:
    """The distinct scheduler ``names`` in the fixed order (:data:`SCHEDULER_ORDER`, then by name)."""
    present = set(names)
    known = [name for name in SCHEDULER_ORDER if name in present]
    return known + sorted(present - set(SCHEDULER_ORDER))


def _schedulers(frame: pd.DataFrame) -> list[str]:
    """Schedulers present in ``frame``, in the fixed order."""
    return scheduler_order(frame["scheduler"])


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


@contextmanager
def figure_style():
    """The one style of every figure (seaborn's white grid, notebook sizes), as a context."""
    with sns.axes_style("whitegrid"), sns.plotting_context("notebook"):
        yield


def _styled(draw):
    """Decorator: draw the figure inside :func:`figure_style`."""
    @wraps(draw)
    def wrapper(*args, **kwargs):
        with figure_style():
            return draw(*args, **kwargs)
    return wrapper


def plain_number(value: float, _pos=None) -> str:
    """A tick label without powers of ten or trailing zeros: 0.2, 1, 50, 1e+06."""
    return f"{value:g}"


def byte_size(value: float, _pos=None) -> str:
    """A tick label of a size in bytes with its SI prefix: 500 B, 20 kB, 1.5 MB."""
    for unit, scale in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if value >= scale:
            return f"{value / scale:g} {unit}"
    return f"{value:g} B"


def log_ticks(lo: float, hi: float) -> list[float]:
    """At least two round tick positions inside ``[lo, hi]`` for a log axis.

    Tries powers of ten, then 1-2-5 and 1-2-3-5 steps per decade, and keeps the first that
    gives three ticks; a range narrower than that gets evenly spaced round values.
    """
    lo, hi = sorted((lo, hi))
    decades = range(int(np.floor(np.log10(lo))), int(np.ceil(np.log10(hi))) + 1)
    for subs in ((1,), (1, 2, 5), (1, 2, 3, 5)):
        ticks = [m * 10.0 ** e for e in decades for m in subs if lo <= m * 10.0 ** e <= hi]
        if len(ticks) >= 3:
            return ticks[:: max(1, len(ticks) // 8)]
    linear = MaxNLocator(nbins=4, steps=[1, 2, 2.5, 5, 10]).tick_values(lo, hi)
    return [t for t in linear if lo <= t <= hi]


def _label_log_axes(fig: Figure, formats: dict[str, Callable]) -> None:
    """Give every log axis of ``fig`` round, labelled ticks (:func:`log_ticks`)."""
    for ax in fig.axes:
        for name, axis, limits in (("x", ax.xaxis, ax.get_xlim()), ("y", ax.yaxis, ax.get_ylim())):
            if axis.get_scale() != "log":
                continue
            axis.set_major_locator(FixedLocator(log_ticks(*limits)))
            axis.set_major_formatter(FuncFormatter(formats.get(name, plain_number)))
            axis.set_minor_formatter(NullFormatter())


def finish(figure, title: str, caption: str = "", *,
           formats: dict[str, Callable] | None = None) -> Figure:
    """Label log axes, lay the panels out without overlap, put ``title`` and ``caption`` above.

    ``figure`` is a matplotlib Figure or a seaborn grid; ``caption`` (what the points and
    bars are) goes on a line of its own under the title; ``formats`` maps ``"x"``/``"y"``
    to a tick-label function for that log axis (default :func:`plain_number`).
    """
    fig = figure if isinstance(figure, Figure) else figure.figure
    _label_log_axes(fig, formats or {})
    figure.tight_layout()
    size = plt.rcParams["figure.titlesize"]
    points = size if isinstance(size, (int, float)) else 12 * 1.2
    width = int(fig.get_figwidth() * 72 / (0.55 * points))
    text = "\n".join(textwrap.fill(line, width) for line in (title, caption) if line)
    fig.suptitle(text, y=1.02, va="bottom")
    return fig


#: Axis labels (with units) and panel-title formats of grid parameters the scenarios sweep.
PARAMETER_LABELS = {
    "workload.arrival_rate": ("cojob arrival rate (cojobs per second)", "{} cojobs/s"),
    "workload.configurations": ("configurations per cojob", "{} configurations"),
    "workload.stages": ("stages per cojob", "{} stages"),
    "workload.eta": ("reduction factor eta", "eta = {}"),
    "workload.pattern": ("synchronisation pattern", "{}"),
    "scheduler.n_classes": ("priority queues per port (K)", "K = {}"),
    "transport.kind": ("transport", "{}"),
    "topology.k": ("fat-tree k", "k = {}"),
}


def parameter_label(key: str | None) -> str:
    """Axis label of a grid parameter in words (its unit when known), or ``scheduler``."""
    if key is None:
        return "scheduler"
    words = key.replace(".", " ").replace("_", " ")
    return PARAMETER_LABELS.get(key, (words, ""))[0]


def _panel_value(key: str, value) -> str:
    """A grid parameter's value as a panel title: ``10 cojobs/s``, ``K = 4``, ``fluid backend``."""
    text = f"{value:g}" if isinstance(value, (int, float, np.number)) else str(value)
    if key == "backend":
        return f"{text} backend"
    return PARAMETER_LABELS.get(key, (None, parameter_label(key) + " = {}"))[1].format(text)


def _panel_titles(grid, facets: dict) -> None:
    """Title every panel of a faceted grid with its values in words, not ``column = value``."""
    keys = [facets[k] for k in ("row", "col") if k in facets]
    for value, ax in grid.axes_dict.items():
        values = value if len(keys) == 2 else (value,)
        ax.set_title(" | ".join(_panel_value(k, v) for k, v in zip(keys, values)))


def _numeric(frame: pd.DataFrame, column: str | None) -> bool:
    """Whether ``column`` (a grid parameter) holds numbers, drawn on a numeric axis."""
    return column is not None and pd.api.types.is_numeric_dtype(frame[column])


def _by_load(frame: pd.DataFrame, y: str, load: str | None, facets: dict, **stats):
    """Points of ``y`` per scheduler against the load, joined by lines; ``stats`` say which.

    A numeric load gets a numeric axis (ticks at the swept values); a categorical load, or
    none (x = scheduler), gets categories. ``stats`` are seaborn's ``estimator``/``errorbar``.
    """
    if _numeric(frame, load):
        values = sorted(frame[load].unique())
        grid = sns.relplot(_dodged(frame, load), kind="line", x="dodged_load", y=y, **_hue(frame),
                           **facets, **stats, err_style="bars", marker="o", markersize=8, seed=0,
                           height=4, aspect=1.4)
        for ax in grid.axes.flat:
            if len(values) <= 12:
                ax.set_xticks(values, [plain_number(v) for v in values])
    else:
        grid = sns.catplot(frame, kind="point", x=load or "scheduler", y=y, **_hue(frame), **facets,
                           **stats, seed=0, dodge=0.3 if load else False, height=4, aspect=1.4)
    _panel_titles(grid, facets)
    return grid


def _dodged(frame: pd.DataFrame, load: str) -> pd.DataFrame:
    """``frame`` with ``dodged_load``: the load shifted a little per scheduler, so that
    schedulers' points and bars at one load sit side by side instead of on top of each other."""
    order = _schedulers(frame)
    span = float(frame[load].max() - frame[load].min()) or abs(float(frame[load].iloc[0])) or 1.0
    rank = frame["scheduler"].map({name: i for i, name in enumerate(order)})
    return frame.assign(dodged_load=frame[load] + (rank - (len(order) - 1) / 2) * 0.012 * span)


def _seed_caption(runs: pd.DataFrame, keys: list[str]) -> tuple[tuple | None, str]:
    """The errorbar of a mean over seeds and its caption: a 95 % CI only with two seeds or more."""
    seeds = runs.groupby(keys, dropna=False)["seed"].nunique()
    low, high = int(seeds.min()), int(seeds.max())
    if low < 2:
        return None, ("one seed: no interval" if high < 2
                      else "some points have one seed: no intervals drawn")
    count = f"{low}" if low == high else f"{low}-{high}"
    return ("ci", 95), f"points: mean over {count} seeds; bars: 95% bootstrap CI over seeds"


@_styled
def fig_sct_vs_load(tables: dict[str, pd.DataFrame], load: str | None = None,
                    baseline: str = "beamer") -> Figure | None:
    """Average SCT of each scheduler normalised to ``baseline``, vs load.

    Points are means over seeds; the 95 % bootstrap interval over seeds is drawn (and
    named in the title) only when every point has at least two seeds.
    """
    if tables["stages"].empty:
        _skip("average SCT vs load: the store has no stages table")
        return None
    if baseline not in set(tables["stages"]["scheduler"]):
        _skip(f"average SCT vs load: no run of the baseline scheduler {baseline!r} to normalise to")
        return None
    load = load_parameter(tables, load)
    runs = normalised_sct(tables, baseline)
    facets = {"col": "backend"} if runs["backend"].nunique() > 1 else {}
    errorbar, caption = _seed_caption(runs, [*([load] if load else []), "backend", "scheduler"])
    grid = _by_load(runs, "sct_ratio", load, facets, errorbar=errorbar)
    grid.refline(y=1.0, color="0.4", linestyle="--")
    grid.set_axis_labels(parameter_label(load), f"average SCT / average SCT of {baseline}")
    return finish(grid, f"Average stage completion time normalised to {baseline}", caption)


def _cdf(frame: pd.DataFrame, x: str, load: str | None, xlabel: str, ylabel: str, title: str) -> Figure:
    """Empirical CDF of ``x`` per scheduler on a log axis, one panel per load (and backend)."""
    facets = _facets(frame, load)
    grid = sns.displot(frame, kind="ecdf", x=x, **_hue(frame), **facets, log_scale=True, height=3.5)
    grid.set_axis_labels(xlabel, ylabel)
    _panel_titles(grid, facets)
    return finish(grid, title)


@_styled
def fig_sct_cdf(tables: dict[str, pd.DataFrame], load: str | None = None) -> Figure | None:
    """CDF of the stage completion time per scheduler, one panel per load."""
    stages = tables["stages"]
    if stages.empty:
        _skip("SCT CDF: the store has no stages table")
        return None
    return _cdf(stages, "sct_s", load_parameter(tables, load), "stage completion time (s)",
                "fraction of stages", "Stage completion time (SCT) distribution per scheduler")


@_styled
def fig_sct_lower_bound(tables: dict[str, pd.DataFrame], load: str | None = None) -> Figure | None:
    """Ratio of each stage's SCT to its lower bound per scheduler: median and quartiles (1 = optimal)."""
    stages = tables["stages"]
    if stages.empty or "lower_bound_s" not in stages or not (stages["lower_bound_s"] > 0).any():
        _skip("SCT / lower bound: the stages table has no positive lower_bound_s")
        return None
    load = load_parameter(tables, load)
    stages = stages[stages["lower_bound_s"] > 0].assign(
        bound_ratio=lambda s: s["sct_s"] / s["lower_bound_s"])
    facets = {"col": "backend"} if stages["backend"].nunique() > 1 else {}
    grid = _by_load(stages, "bound_ratio", load, facets, estimator="median", errorbar=("pi", 50))
    grid.refline(y=1.0, color="0.4", linestyle="--")
    grid.set(yscale="log")
    grid.set_axis_labels(parameter_label(load), "SCT / lower bound (ratio, log scale)")
    return finish(grid, "Stage completion time relative to its lower bound",
                  "points: median stage; bars: quartiles over stages")


@_styled
def fig_cct_cdf(tables: dict[str, pd.DataFrame], load: str | None = None) -> Figure | None:
    """CDF of the coflow completion time per scheduler, one panel per load."""
    coflows = tables["coflows"]
    if coflows.empty:
        _skip("CCT CDF: the store has no coflows table")
        return None
    return _cdf(coflows[coflows["cct_s"] > 0], "cct_s", load_parameter(tables, load),
                "coflow completion time (s)", "fraction of coflows",
                "Coflow completion time (CCT) distribution per scheduler")


def size_bins(sizes: pd.Series, most: int = 6) -> pd.Series:
    """Each flow's size bin, as the bin's geometric centre in bytes.

    Up to ``most`` bins, equal on a log scale, spanning exactly the smallest to the largest
    size (fewer when there are fewer distinct sizes; one when all flows are one size).
    """
    lo, hi = float(sizes.min()), float(sizes.max())
    n = min(most, sizes.nunique())
    if n < 2:
        return pd.Series(lo, index=sizes.index)
    edges = np.geomspace(lo, hi, n + 1)
    which = np.clip(np.searchsorted(edges, sizes.to_numpy(float), side="right") - 1, 0, n - 1)
    return pd.Series(np.sqrt(edges[which] * edges[which + 1]), index=sizes.index)


@_styled
def fig_fct_slowdown(tables: dict[str, pd.DataFrame], load: str | None = None) -> Figure | None:
    """Mean FCT slowdown (FCT / FCT alone on an idle network) per flow-size bin and scheduler."""
    flows = tables["flows"]
    if flows.empty or "standalone_fct_s" not in flows or not (flows["standalone_fct_s"] > 0).any():
        _skip("FCT slowdown: the flows table has no standalone_fct_s (FCT alone on an idle network)")
        return None
    load = load_parameter(tables, load)
    flows = flows[flows["standalone_fct_s"] > 0]
    flows = flows.assign(slowdown=flows["fct_s"] / flows["standalone_fct_s"],
                         size_bin=size_bins(flows["bytes"]))
    facets = _facets(flows, load)
    grid = sns.relplot(flows, kind="line", x="size_bin", y="slowdown", **_hue(flows), **facets,
                       errorbar=None, marker="o", markersize=8, height=3.5, aspect=1.3)
    grid.set(xscale="log", yscale="log")
    if flows["size_bin"].nunique() == 1:
        grid.set(xlim=(flows["size_bin"].iloc[0] / 2, flows["size_bin"].iloc[0] * 2))
    grid.set_axis_labels("flow size (bytes)", "mean FCT slowdown")
    _panel_titles(grid, facets)
    return finish(grid, "Flow completion time slowdown by flow size",
                  "slowdown: FCT / FCT alone on an idle network; sizes in bins equal on a log scale",
                  formats={"x": byte_size})


@_styled
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
    identity_line(ax, both[["sct_s_fluid", "sct_s_packet"]].to_numpy())
    ax.legend()
    return finish(fig, "Stage completion time: packet vs fluid backend", "one point per stage")


def identity_line(ax, values: np.ndarray) -> None:
    """Draw the dashed y = x line across the range of ``values`` on ``ax``."""
    limits = [np.nanmin(values), np.nanmax(values)]
    ax.plot(limits, limits, color="0.4", linestyle="--", linewidth=1, label="y = x")


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
    for name, draw in FIGURES.items():
        kwargs = {"baseline": baseline} if draw is fig_sct_vs_load else {}
        fig = draw(tables, load, **kwargs)
        if fig is not None:
            fig.savefig(out_dir / name, dpi=150, bbox_inches="tight")
            plt.close(fig)
            written.append(out_dir / name)
    return written
