"""Flow-size workloads: sizes from an empirical CDF, Poisson arrivals at a target load.

This is how the datacenter-transport literature (HPCC, pFabric, Parsimon, m3) evaluates a
transport: flows whose sizes follow a published distribution (web search, Facebook
Hadoop), arriving as a Poisson process between random distinct host pairs, at a *load*
given as a fraction of the host bandwidth. It follows HPCC's generator
(``traffic_gen/traffic_gen.py``):

* **sizes** by inverse transform on the CDF table with linear interpolation between its
  points, truncated to whole bytes (at least 1);
* **arrivals**: every host ``h`` starts flows as a Poisson process of rate
  ``load * rate_h / (8 * mean size)`` per second, so its uplink is offered ``load`` of
  its capacity on average (the superposition is drawn as one process whose sources are
  chosen in proportion to the rates);
* **destinations** uniformly among the other hosts.

The CDF file holds one point per line, ``<size bytes> <cumulative percent>``, sizes
increasing, the first point at 0 %, the last at 100 % (``data/README.md`` cites the
origin of the two shipped ones). Each flow becomes a one-flow cojob, exactly as a flow
list does (:func:`~ns3_hpsched.workload.flowlist.flow_list_workload`).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from ..errors import ConfigError
from .flowlist import flow_list_workload
from .spec import Workload

__all__ = ["SizeCdf", "read_size_cdf", "size_cdf_workload", "host_rates_bps", "SHIPPED_CDFS"]

_DATA = Path(__file__).resolve().parent / "data"
#: CDF names usable as ``cdf = "<name>"``: the files shipped with the package.
SHIPPED_CDFS = {"websearch": _DATA / "websearch_cdf.txt", "fb_hadoop": _DATA / "fb_hadoop_cdf.txt"}


class SizeCdf:
    """A piecewise-linear flow-size CDF: ``sizes`` (bytes) against ``cdf`` (0 .. 1)."""

    def __init__(self, sizes: Sequence[float], cdf: Sequence[float]) -> None:
        self.sizes = np.asarray(sizes, dtype=float)
        self.cdf = np.asarray(cdf, dtype=float)

    @property
    def mean_bytes(self) -> float:
        """Mean flow size under linear interpolation (what sets the arrival rate)."""
        mid = (self.sizes[1:] + self.sizes[:-1]) / 2.0
        return float((mid * np.diff(self.cdf)).sum())

    def quantile(self, u: np.ndarray) -> np.ndarray:
        """Inverse transform: the size at cumulative probability ``u`` (linear interpolation)."""
        return np.interp(u, self.cdf, self.sizes)

    def __call__(self, size_bytes: np.ndarray) -> np.ndarray:
        """The cumulative probability of ``size_bytes``."""
        return np.interp(size_bytes, self.sizes, self.cdf)


def read_size_cdf(path: str | os.PathLike) -> SizeCdf:
    """Read a two-column CDF file; errors name the file and line."""
    path = Path(path)
    try:
        text = path.read_text()
    except FileNotFoundError:
        raise ConfigError("workload.cdf", f"{str(path)!r} does not exist",
                          f"give one of {sorted(SHIPPED_CDFS)} or the path of a CDF file") from None
    points = []
    for n, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            size, percent = (float(t) for t in line.split())
        except ValueError:
            raise ConfigError(f"{path.name}:{n}", f"malformed CDF line {line.strip()!r}",
                              "write '<flow size in bytes> <cumulative percent>', e.g. '10000 15'") from None
        points.append((size, percent))
    sizes, percent = (np.array(c) for c in zip(*points)) if points else (np.empty(0), np.empty(0))
    if len(points) < 2 or percent[0] != 0 or percent[-1] != 100 or sizes[0] < 0 \
            or np.any(np.diff(sizes) <= 0) or np.any(np.diff(percent) < 0):
        raise ConfigError(path.name, "is not a CDF: sizes must increase, percents must not decrease, "
                          "from 0 % to 100 %", "start with a point at 0 and end with one at 100")
    return SizeCdf(sizes, percent / 100.0)


def host_rates_bps(topology) -> np.ndarray:
    """Each host's uplink capacity (bits per second), the bandwidth ``load`` is a fraction of."""
    ports = [topology.port_of[(h, int(topology.host_switch[h]))] for h in topology.hosts]
    return topology.port_capacity_bps[ports]


def size_cdf_workload(*, n_hosts: int, seed: int, host_rate_bps: Sequence[float], cdf: str | None = None,
                      load: float | None = None,
                      duration_s: float | None = None, n_flows: int | None = None,
                      classes: int = 1) -> Workload:
    """Draw a flow-size workload (see the module docstring).

    Parameters
    ----------
    n_hosts, seed:
        The topology's host count and the run's seed (same seed, same flows).
    host_rate_bps:
        Uplink capacity of every host (:func:`host_rates_bps`).
    cdf:
        ``"websearch"``, ``"fb_hadoop"`` (the shipped files) or a CDF file's path.
    load:
        Offered load per host as a fraction of its bandwidth, in (0, 1].
    duration_s, n_flows:
        Exactly one: draw arrivals in ``[0, duration_s)``, or draw ``n_flows`` flows.
    classes:
        Priority classes; each flow is pinned to one drawn uniformly from ``0 .. classes-1``
        (applied by the ``pinned`` policy). Default 1: every flow in class 0.
    """
    if host_rate_bps is None:
        raise ValueError("size_cdf_workload needs the hosts' rates (host_rates_bps(topology))")
    if not isinstance(cdf, str):
        raise ConfigError("workload.cdf", f"must be a CDF name or file path, got {cdf!r}",
                          f"give one of {sorted(SHIPPED_CDFS)} or the path of a CDF file")
    _check(n_hosts, load, duration_s, n_flows, classes)
    table = read_size_cdf(SHIPPED_CDFS.get(cdf, cdf))
    rates = np.asarray(host_rate_bps, dtype=float) * load / (8.0 * table.mean_bytes)  # flows/s per host
    rng = np.random.default_rng(seed)
    total = float(rates.sum())
    if n_flows is None:
        n_flows = int(rng.poisson(total * duration_s))
        starts = np.sort(rng.uniform(0.0, duration_s, n_flows))
    else:
        gaps = rng.exponential(1.0 / total, n_flows)
        starts = np.cumsum(gaps) - gaps[0]  # the first flow at 0
    if n_flows == 0:
        raise ConfigError("workload.duration_s", f"draws no flow at load {load}", "give a longer duration")
    src = rng.choice(n_hosts, size=n_flows, p=rates / total)
    dst = (src + rng.integers(1, n_hosts, size=n_flows)) % n_hosts
    sizes = np.maximum(table.quantile(rng.uniform(0.0, 1.0, n_flows)).astype(np.int64), 1)
    klass = rng.integers(0, classes, size=n_flows)
    records = [{"src": int(s), "dst": int(d), "bytes": int(b), "start_s": float(t), "priority": int(k)}
               for s, d, b, t, k in zip(src, dst, sizes, starts, klass)]
    source = {"kind": "size_cdf", "cdf": str(cdf), "load": load, "mean_bytes": table.mean_bytes}
    return flow_list_workload(records, n_hosts, field="workload.flows", source=source)


def _check(n_hosts: int, load: float, duration_s: float | None, n_flows: int | None, classes: int) -> None:
    """Refuse bad parameters before drawing anything."""
    if n_hosts < 2:
        raise ConfigError("topology", f"has {n_hosts} host(s)", "a flow workload needs at least 2 hosts")
    if isinstance(load, bool) or not isinstance(load, (int, float)) or not 0 < load <= 1:
        raise ConfigError("workload.load", f"must be a fraction in (0, 1], got {load!r}",
                          "e.g. load = 0.3 for 30 % of the host bandwidth")
    if (duration_s is None) == (n_flows is None):
        raise ConfigError("workload.duration_s", "give exactly one of duration_s and n_flows",
                          "e.g. n_flows = 2000")
    if duration_s is not None and (not isinstance(duration_s, (int, float)) or not duration_s > 0):
        raise ConfigError("workload.duration_s", f"must be > 0 seconds, got {duration_s!r}", "e.g. 0.01")
    if n_flows is not None and (isinstance(n_flows, bool) or not isinstance(n_flows, int) or n_flows < 1):
        raise ConfigError("workload.n_flows", f"must be an integer >= 1, got {n_flows!r}", "e.g. 2000")
    if isinstance(classes, bool) or not isinstance(classes, int) or classes < 1:
        raise ConfigError("workload.classes", f"must be an integer >= 1, got {classes!r}", "e.g. 1")
