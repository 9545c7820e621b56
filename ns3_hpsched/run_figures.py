"""Figures of ONE run folder with monitors (``[monitor]``): what the switches did over time.

* queue length over time at the busiest monitored ports, one panel per port, a colour per
  class (``queues``);
* a PFC pause raster: when each port's classes were paused (``pfc``);
* link utilisation, port x time (``links``).

Stage boundaries (the ``stages`` table's starts and finishes) are dotted vertical lines on
every figure, so a slow stage can be matched with what its ports did. Each ``fig_*``
returns a Figure, or ``None`` when the run lacks the table (e.g. no PFC on TCP).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import matplotlib

if "matplotlib.pyplot" not in sys.modules and "MPLBACKEND" not in os.environ:
    matplotlib.use("Agg")

import numpy as np
import pandas as pd
import seaborn as sns
from matplotlib import pyplot as plt
from matplotlib.figure import Figure

from .errors import ConfigError
from .results import read_run

__all__ = ["fig_queues", "fig_pfc", "fig_link_heatmap", "is_run_folder", "draw_run"]

#: Queue panels drawn at most (the ports with the most queued bytes summed over samples).
MAX_QUEUE_PANELS = 4
#: Time columns of the heatmap at most (intervals are merged to fit).
MAX_HEATMAP_COLUMNS = 300


def is_run_folder(path: Path) -> bool:
    """A single run's folder (``run.json``, no ``runs/``), as opposed to a sweep store."""
    return (Path(path) / "run.json").is_file() and not (Path(path) / "runs").exists()


def _class_palette(classes) -> dict[int, tuple]:
    """One colour per class, the same in every figure (class 0 first in the palette)."""
    colours = sns.color_palette("colorblind", max(int(max(classes, default=0)) + 1, 1))
    return {int(c): colours[int(c)] for c in classes}


def _port_names(tables: dict[str, pd.DataFrame]) -> dict[int, str]:
    ports = tables["ports"]
    return dict(zip(ports["port"].astype(int), ports["name"]))


def _stage_lines(ax, tables: dict[str, pd.DataFrame], scale: float = 1e3) -> None:
    """Dotted lines at every stage start and finish (the stages table), in milliseconds."""
    stages = tables.get("stages")
    if stages is None or stages.empty:
        return
    for t in np.unique(np.concatenate([stages["start_s"], stages["finish_s"]])):
        ax.axvline(t * scale, color="0.4", linestyle=":", linewidth=0.8, zorder=0)


def fig_queues(tables: dict[str, pd.DataFrame]) -> Figure | None:
    """Queue length (KB) over time (ms) per class, at the ports whose queues held the most."""
    queues = tables.get("queues")
    if queues is None or queues.empty:
        return None
    held = queues.groupby("port")["bytes"].sum().sort_values(ascending=False, kind="stable")
    ports = held.index[:MAX_QUEUE_PANELS].tolist()
    names = _port_names(tables)
    palette = _class_palette(queues["class"].unique())
    fig, axes = plt.subplots(len(ports), 1, figsize=(9, 1.9 * len(ports) + 0.6), sharex=True, squeeze=False)
    for ax, port in zip(axes[:, 0], ports):
        mine = queues[queues["port"] == port]
        for cls, rows in mine.groupby("class"):
            ax.step(rows["time_s"] * 1e3, rows["bytes"] / 1e3, where="post", color=palette[int(cls)],
                    label=f"class {cls}", linewidth=1)
        _stage_lines(ax, tables)
        ax.set_ylabel("queued (KB)")
        ax.set_title(f"port {port} ({names.get(port, '?')})", fontsize=9, loc="left")
        ax.legend(fontsize=7, loc="upper right")
    axes[-1, 0].set_xlabel("simulated time (ms)")
    fig.suptitle("Queue length at the busiest ports, by priority class (0 = highest; dotted: stage starts/ends)")
    fig.tight_layout()
    return fig


def pause_intervals(pfc: pd.DataFrame, end_s: float) -> pd.DataFrame:
    """PAUSE..RESUME intervals per port and class (a pause never resumed lasts to ``end_s``)."""
    rows = []
    for (port, cls), events in pfc.sort_values("time_s", kind="stable").groupby(["port", "class"]):
        since = None
        for t, paused in zip(events["time_s"], events["paused"]):
            if paused and since is None:
                since = t
            elif not paused and since is not None:
                rows.append((port, cls, since, t))
                since = None
        if since is not None:
            rows.append((port, cls, since, end_s))
    return pd.DataFrame(rows, columns=["port", "class", "start_s", "end_s"])


def fig_pfc(tables: dict[str, pd.DataFrame], end_s: float) -> Figure | None:
    """When each port's classes were paused by PFC: one row per port, a bar per pause."""
    pfc = tables.get("pfc")
    if pfc is None or pfc.empty:
        return None
    spans = pause_intervals(pfc, end_s)
    ports = sorted(spans["port"].unique())
    names = _port_names(tables)
    palette = _class_palette(spans["class"].unique())
    fig, ax = plt.subplots(figsize=(9, 0.35 * len(ports) + 1.5))
    for row, port in enumerate(ports):
        for cls, mine in spans[spans["port"] == port].groupby("class"):
            ax.broken_barh(list(zip(mine["start_s"] * 1e3, (mine["end_s"] - mine["start_s"]) * 1e3)),
                           (row - 0.4, 0.8), color=palette[int(cls)])
    for cls, colour in palette.items():
        ax.bar(0, 0, color=colour, label=f"class {cls} paused")
    _stage_lines(ax, tables)
    ax.set_yticks(range(len(ports)), [f"{p} ({names.get(p, '?')})" for p in ports], fontsize=8)
    ax.set_xlabel("simulated time (ms)")
    ax.set_ylabel("egress port paused")
    ax.set_title("PFC pauses: when each port's classes were stopped by the next hop (dotted: stage starts/ends)")
    ax.legend(fontsize=8, loc="upper right")
    fig.tight_layout()
    return fig


def fig_link_heatmap(tables: dict[str, pd.DataFrame], start_s: float = 0.0) -> Figure | None:
    """Utilisation (all classes, %) of each monitored port over time, from the window's ``start_s``."""
    links = tables.get("links")
    if links is None or links.empty:
        return None
    width = float((links["interval_end_s"] - links["interval_start_s"]).max())
    t0, t1 = start_s, float(links["interval_end_s"].max())
    merge = max(1, int(np.ceil((t1 - t0) / width / MAX_HEATMAP_COLUMNS)))
    column = ((links["interval_start_s"] - t0) / (width * merge)).round(6).astype(int)
    seconds = width * merge
    capacity = (links["bytes"] * 8 / links["utilisation"] / (links["interval_end_s"] - links["interval_start_s"]))
    used = (links["bytes"] * 8 / (capacity * seconds)).groupby([links["port"], column]).sum() * 100
    grid = used.unstack(fill_value=0.0).reindex(columns=range(int(column.max()) + 1), fill_value=0.0)
    names = _port_names(tables)
    fig, ax = plt.subplots(figsize=(10, 0.3 * len(grid) + 1.8))
    extent = (t0 * 1e3, (t0 + seconds * grid.shape[1]) * 1e3, len(grid) - 0.5, -0.5)
    image = ax.imshow(grid.to_numpy(), aspect="auto", interpolation="nearest", cmap="rocket_r",
                      vmin=0, vmax=100, extent=extent)
    _stage_lines(ax, tables)
    ax.set_yticks(range(len(grid)), [f"{p} ({names.get(p, '?')})" for p in grid.index], fontsize=8)
    ax.set_xlabel(f"simulated time (ms; columns of {seconds * 1e6:.3g} us)")
    ax.set_ylabel("port")
    ax.set_title("Link utilisation over time, all classes (dotted: stage starts/ends)")
    fig.colorbar(image, ax=ax, label="utilisation (% of capacity)")
    fig.tight_layout()
    return fig


def draw_run(run_dir: Path, out_dir: Path) -> list[Path]:
    """Write the PNGs of the run at ``run_dir`` into ``out_dir``; return their paths."""
    tables, manifest = read_run(run_dir)
    end_s = float(manifest.get("sim_end_s", 0.0))
    start_s = float((manifest["scenario"].get("monitor") or {}).get("start_s", 0.0))
    figures = {"queues.png": fig_queues(tables), "pfc.png": fig_pfc(tables, end_s),
               "link_utilisation.png": fig_link_heatmap(tables, start_s)}
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    if all(fig is None for fig in figures.values()):
        raise ConfigError(str(run_dir), "has no queues, pfc or links table to draw",
                          "add a [monitor] table to the scenario (or --set monitor.busiest=8) and run it again")
    written = []
    for name, fig in figures.items():
        if fig is not None:
            fig.savefig(out_dir / name, dpi=150, bbox_inches="tight")
            plt.close(fig)
            written.append(out_dir / name)
    return written
