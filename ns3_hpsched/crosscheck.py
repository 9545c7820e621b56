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
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from .errors import ConfigError

__all__ = ["KEYS", "LEVEL_VALUE", "LEVEL_WORDS", "compare", "metric", "summarize", "summary_markdown",
           "read_external", "fig_crosscheck", "scatter"]

#: Join keys per level.
KEYS = {"coflow": ["cojob", "job", "stage", "iteration", "phase"], "stage": ["cojob", "stage"]}
#: The duration compared per level.
LEVEL_VALUE = {"coflow": "cct_s", "stage": "sct_s"}
_TABLE = {"coflow": "coflows", "stage": "stages"}


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
