"""Packet vs fluid, number by number: where the flow-level model agrees with ns-3.

Coflows are matched on their natural key ``(cojob, job, stage, iteration, phase)`` and
stages on ``(cojob, stage)`` -- not on ids, which follow release order and may differ
between backends when timing differs. The relative error of a duration is
``(other - packet) / packet``.

An *external* fluid simulator's results can be checked against the packet backend too: a
CSV with the key columns of one level and its durations --

* stage level: ``cojob, stage, sct_s``
* coflow level: ``cojob, job, stage, iteration, phase, cct_s``

(``finish_s`` may stand in for the duration column; it is then compared as a time).

Flow workloads (kinds ``flows``, ``hpcc_flows``, ``size_cdf``: one one-flow cojob per
flow) are compared flow by flow instead (:func:`compare_flows`), matched on ``cojob``
(the flow's index in its list): the per-flow FCT error, and each backend's FCT
*slowdown* (FCT / standalone FCT, at least 1) per flow-size bucket as HPCC's analysis
script reports it (:func:`slowdown_by_size`: 5% size-percentile buckets, p50/p95/p99).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from .errors import ConfigError

__all__ = ["KEYS", "LEVEL_VALUE", "LEVEL_WORDS", "FLOW_WORKLOADS", "compare", "metric", "summarize",
           "summary_markdown", "read_external", "fig_crosscheck", "scatter",
           "compare_flows", "summarize_flows", "slowdown_by_size", "slowdown_figure", "flow_crosscheck"]

#: Join keys per level.
KEYS = {"coflow": ["cojob", "job", "stage", "iteration", "phase"], "stage": ["cojob", "stage"]}
#: The duration compared per level.
LEVEL_VALUE = {"coflow": "cct_s", "stage": "sct_s"}
_TABLE = {"coflow": "coflows", "stage": "stages"}
#: ``workload.kind`` values whose cojobs are single flows: cross-checked flow by flow.
FLOW_WORKLOADS = ("flows", "hpcc_flows", "size_cdf")


def compare(packet: dict[str, pd.DataFrame], other: dict[str, pd.DataFrame], *,
            value: dict[str, str] | None = None) -> pd.DataFrame:
    """Join two runs' coflows and stages; one row per matched item with its relative error.

    ``packet`` and ``other`` map table names (``coflows``, ``stages``) to tables. Returns
    columns ``level, key, packet_s, other_s, rel_error``. Items present in only one run are
    an error: both must have played the same workload to the end.
    """
    value = value or LEVEL_VALUE
    rows = []
    for level, keys in KEYS.items():
        table = _TABLE[level]
        if table not in other:
            continue
        col = value[level]
        a = packet[table][keys + [col]]
        b = other[table][keys + [col]]
        joined = a.merge(b, on=keys, how="outer", suffixes=("_packet", "_other"), indicator=True)
        lonely = joined[joined["_merge"] != "both"]
        if len(lonely):
            raise ValueError(f"{len(lonely)} {level}s appear in only one run, e.g. "
                             f"{lonely.iloc[0][keys].to_dict()}: the runs did not play the same workload")
        frame = pd.DataFrame({
            "level": level,
            "key": joined[keys].astype(str).agg("/".join, axis=1),
            "packet_s": joined[f"{col}_packet"].to_numpy(float),
            "other_s": joined[f"{col}_other"].to_numpy(float),
        })
        frame["rel_error"] = (frame["other_s"] - frame["packet_s"]) / frame["packet_s"]
        rows.append(frame)
    return pd.concat(rows, ignore_index=True)


def metric(level: str) -> str:
    """Short name of the duration compared at ``level``: ``sct``, ``cct`` (from :data:`LEVEL_VALUE`)."""
    return LEVEL_VALUE[level].removesuffix("_s")


def summarize(pairs: pd.DataFrame, by: list[str] | None = None, *, other: str = "fluid") -> pd.DataFrame:
    """How far ``other`` is from the packet backend: one row per ``by`` group, in percent.

    For each level present (stages first), with ``m`` its duration (``sct``, ``cct``):
    ``{m}_n`` items matched, ``median_abs_{m}_error_pct``, ``p95_abs_{m}_error_pct`` and
    ``max_abs_{m}_error_pct`` (|relative error| in %), ``{m}_error_of_means_pct`` (relative
    error of the mean duration, signed, in %), ``mean_packet_{m}_s`` and ``mean_{other}_{m}_s``.
    """
    levels = sorted(pairs["level"].unique(), key=lambda lv: (lv != "stage", lv))
    groups = pairs.groupby(by, sort=False) if by else [((), pairs)]
    rows = []
    for key, group in groups:
        row = dict(zip(by or [], key if isinstance(key, tuple) else (key,)))
        for level in levels:
            sub = group[group["level"] == level]
            err = 100 * sub["rel_error"].abs().to_numpy()
            m, packet, theirs = metric(level), sub["packet_s"].mean(), sub["other_s"].mean()
            row.update({f"{m}_n": len(sub),
                        f"median_abs_{m}_error_pct": float(np.median(err)),
                        f"p95_abs_{m}_error_pct": float(np.percentile(err, 95)),
                        f"max_abs_{m}_error_pct": float(err.max()),
                        f"{m}_error_of_means_pct": 100 * (theirs - packet) / packet,
                        f"mean_packet_{m}_s": packet, f"mean_{other}_{m}_s": theirs})
        rows.append(row)
    return pd.DataFrame(rows)


def _percent(value: float, signed: bool = False) -> str:
    """``6.5%``; signed: ``+2.0%`` or ``\u22124.5%`` (a true minus sign, as typeset)."""
    text = f"{value:+.1f}%" if signed else f"{value:.1f}%"
    return text.replace("-", "\u2212")


def summary_markdown(summary: pd.DataFrame) -> str:
    """A summary of :func:`summarize` as the README's Markdown table, in percent.

    One column per ``by`` key (e.g. scheduler), then median and p95 |SCT error| and the
    error of the mean SCT, then the median |error| of every other level present (CCT).
    """
    keys = [c for c in summary.columns if not c.startswith(("median_", "p95_", "max_", "mean_"))
            and not c.endswith(("_n", "_pct"))]
    metrics = [c.removeprefix("median_abs_").removesuffix("_error_pct")
               for c in summary.columns if c.startswith("median_abs_")]
    columns = []
    for m in metrics:
        name = m.upper()
        columns.append((f"median_abs_{m}_error_pct", f"median \\|{name} error\\|", False))
        if m == "sct":
            columns += [(f"p95_abs_{m}_error_pct", f"p95 \\|{name} error\\|", False),
                        (f"{m}_error_of_means_pct", f"error of mean {name}", True)]
    lines = ["| " + " | ".join([*keys, *(title for _, title, _ in columns)]) + " |",
             "|" + "---|" * (len(keys) + len(columns))]
    for _, row in summary.iterrows():
        cells = [str(row[k]) for k in keys] + [_percent(row[c], signed) for c, _, signed in columns]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def read_external(path: Path | str) -> tuple[dict[str, pd.DataFrame], dict[str, str]]:
    """Read an external simulator's CSV (see the module docstring).

    Returns ``({table: frame}, {level: compared column})`` for :func:`compare`.
    """
    frame = pd.read_csv(path)
    level = "coflow" if set(KEYS["coflow"]) <= set(frame.columns) else "stage"
    if not set(KEYS[level]) <= set(frame.columns):
        raise ConfigError(str(path), f"columns {list(frame.columns)} lack the key columns",
                          "give cojob,stage (stages) or cojob,job,stage,iteration,phase (coflows)")
    col = LEVEL_VALUE[level] if LEVEL_VALUE[level] in frame.columns else "finish_s"
    if col not in frame.columns:
        raise ConfigError(str(path), f"has no {LEVEL_VALUE[level]} or finish_s column",
                          f"add {LEVEL_VALUE[level]} (durations) or finish_s (times)")
    return {_TABLE[level]: frame}, {level: col}


#: What the duration of each level is, in words (figure labels).
LEVEL_WORDS = {"coflow": "coflow completion time", "stage": "stage completion time"}


def fig_crosscheck(pairs: pd.DataFrame, *, other_label: str = "fluid"):
    """Packet vs other durations, one panel per level, one point per coflow or stage.

    Log axes, the y = x line, schedulers coloured as in every figure of :mod:`.plots`.
    Returns the matplotlib Figure.
    """
    import seaborn as sns

    from . import plots

    with plots.figure_style():
        order = plots.scheduler_order(pairs["scheduler"])
        grid = sns.relplot(pairs, x="packet_s", y="other_s", hue="scheduler", hue_order=order,
                           palette=plots.scheduler_palette(order), col="level", height=4,
                           facet_kws={"sharex": False, "sharey": False})
        for level, ax in grid.axes_dict.items():
            sub = pairs[pairs["level"] == level]
            plots.identity_line(ax, sub[["packet_s", "other_s"]].to_numpy())
            ax.set(xscale="log", yscale="log", title=LEVEL_WORDS[level],
                   xlabel="on the packet backend (s)", ylabel=f"on the {other_label} backend (s)")
        levels = " and per ".join(grid.axes_dict)
        return plots.finish(grid, f"Packet vs {other_label} backend",
                            f"one point per {levels}; dashed: y = x")


def scatter(pairs: pd.DataFrame, path: Path | str, *, other_label: str = "fluid") -> Path:
    """Draw :func:`fig_crosscheck` and write it as a PNG at ``path``."""
    import matplotlib.pyplot as plt

    fig = fig_crosscheck(pairs, other_label=other_label)
    fig.savefig(path, dpi=150, bbox_inches="tight")
    plt.close(fig)
    return Path(path)


def compare_flows(packet: pd.DataFrame, other: pd.DataFrame) -> pd.DataFrame:
    """Join two runs' ``flows`` tables of a flow workload, one row per flow.

    Flows are matched on ``cojob`` (each flow of a flow workload is its own cojob; flow ids
    follow release order). Returns ``cojob, bytes, standalone_fct_s, packet_fct_s,
    other_fct_s, rel_error`` (``(other - packet) / packet``), sorted by ``cojob``.
    """
    cols = ["cojob", "bytes", "standalone_fct_s", "fct_s"]
    joined = packet[cols].merge(other[["cojob", "bytes", "fct_s"]], on="cojob", how="outer",
                                suffixes=("_packet", "_other"), indicator=True)
    bad = joined[(joined["_merge"] != "both") | (joined["bytes_packet"] != joined["bytes_other"])]
    if len(bad):
        raise ValueError(f"{len(bad)} flows differ between the runs, e.g. cojob {bad.iloc[0]['cojob']}: "
                         "the runs did not play the same workload")
    frame = pd.DataFrame({"cojob": joined["cojob"].astype(int), "bytes": joined["bytes_packet"].astype(int),
                          "standalone_fct_s": joined["standalone_fct_s"].to_numpy(float),
                          "packet_fct_s": joined["fct_s_packet"].to_numpy(float),
                          "other_fct_s": joined["fct_s_other"].to_numpy(float)})
    frame["rel_error"] = (frame["other_fct_s"] - frame["packet_fct_s"]) / frame["packet_fct_s"]
    return frame.sort_values("cojob", ignore_index=True)


def summarize_flows(pairs: pd.DataFrame, by: list[str] | None = None) -> pd.DataFrame:
    """Per-flow FCT error: median and p95 of |relative error|, and the error of the mean FCT."""

    def stats(g: pd.DataFrame) -> pd.Series:
        err = g["rel_error"].abs().to_numpy()
        return pd.Series({
            "n": len(g),
            "median_abs_error": float(np.median(err)),
            "p95_abs_error": float(np.percentile(err, 95)),
            "error_of_mean_fct": (g["other_fct_s"].mean() - g["packet_fct_s"].mean()) / g["packet_fct_s"].mean(),
        })

    if not by:
        return stats(pairs).to_frame().T
    return pairs.groupby(by, sort=False).apply(stats, include_groups=False).reset_index()


def slowdown_by_size(pairs: pd.DataFrame, *, step_pct: float = 5.0, other_label: str = "fluid") -> pd.DataFrame:
    """FCT slowdown percentiles per flow-size bucket, per backend (HPCC's ``fct_analysis.py``).

    Flows are sorted by size and cut into buckets of ``step_pct`` percent of the flows each
    (equal counts; ties in size keep flow order). Slowdown is FCT / standalone FCT, at
    least 1. Returns one row per (backend, bucket): ``backend, bucket, size_pct`` (the
    bucket's upper size percentile), ``max_bytes, n, p50, p95, p99``.
    """
    flows = pairs.sort_values(["bytes", "cojob"], kind="stable", ignore_index=True)
    n = len(flows)
    n_buckets = int(round(100.0 / step_pct))
    bucket = np.minimum((np.arange(n) * n_buckets) // max(n, 1), n_buckets - 1)
    rows = []
    for backend, column in (("packet", "packet_fct_s"), (other_label, "other_fct_s")):
        slowdown = np.maximum(flows[column].to_numpy() / flows["standalone_fct_s"].to_numpy(), 1.0)
        for b in np.unique(bucket):
            sel = bucket == b
            p50, p95, p99 = np.percentile(slowdown[sel], [50, 95, 99])
            rows.append({"backend": backend, "bucket": int(b), "size_pct": (b + 1) * 100.0 / n_buckets,
                         "max_bytes": int(flows["bytes"].to_numpy()[sel].max()), "n": int(sel.sum()),
                         "p50": p50, "p95": p95, "p99": p99})
    return pd.DataFrame(rows)


def slowdown_figure(table: pd.DataFrame, path: Path | str, *, title: str = "") -> Path:
    """FCT slowdown (p50 and p99) against flow size, one line per backend and percentile."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4))
    for (backend, group), color in zip(table.groupby("backend", sort=False), ("C0", "C1", "C2")):
        for pct, style in (("p50", "-"), ("p99", "--")):
            ax.plot(group["max_bytes"], group[pct], style, marker="o", markersize=3, color=color,
                    label=f"{backend} {pct}")
    ax.set(xscale="log", yscale="log", xlabel="flow size, upper end of its size bucket (bytes)",
           ylabel="FCT slowdown (FCT / standalone FCT)", title=title or "FCT slowdown by flow size")
    ax.legend(fontsize="small")
    fig.savefig(path, dpi=120, bbox_inches="tight")
    plt.close(fig)
    return Path(path)


def flow_crosscheck(tables: dict[str, pd.DataFrame], schedulers: list[str], out_dir: Path | str) -> str:
    """The flow-level cross-check of a result store holding packet and fluid runs.

    Writes into ``out_dir``: ``crosscheck_flows.parquet`` (every flow with both FCTs),
    ``crosscheck_summary.csv`` (per-flow FCT error per scheduler),
    ``crosscheck_slowdown.csv`` (slowdown percentiles per size bucket, per backend and
    scheduler) and ``crosscheck_slowdown.png``; returns the two tables as text.
    """
    out_dir = Path(out_dir)
    flows = tables["flows"]
    pairs, slowdowns = [], []
    for name in schedulers:
        run = {b: flows[(flows["scheduler"] == name) & (flows["backend"] == b)] for b in ("packet", "fluid")}
        p = compare_flows(run["packet"], run["fluid"])
        p.insert(0, "scheduler", name)
        pairs.append(p)
        slowdowns.append(slowdown_by_size(p).assign(scheduler=name))
    pairs, slowdown = pd.concat(pairs, ignore_index=True), pd.concat(slowdowns, ignore_index=True)
    summary = summarize_flows(pairs, by=["scheduler"])
    pairs.to_parquet(out_dir / "crosscheck_flows.parquet", index=False)
    summary.to_csv(out_dir / "crosscheck_summary.csv", index=False)
    slowdown.to_csv(out_dir / "crosscheck_slowdown.csv", index=False)
    slowdown_figure(slowdown[slowdown["scheduler"] == schedulers[0]], out_dir / "crosscheck_slowdown.png",
                    title=f"FCT slowdown by flow size ({schedulers[0]})")
    side = slowdown.pivot_table(index=["scheduler", "size_pct", "max_bytes"], columns="backend",
                                values=["p50", "p99"]).reset_index()
    side.columns = [" ".join(c).strip() for c in side.columns]
    fmt = {"float_format": lambda v: f"{v:.3g}", "index": False}
    return "\n".join(["per-flow FCT error (fluid vs packet):", summary.to_string(**fmt),
                      "FCT slowdown per size bucket:", side.to_string(**fmt)])
