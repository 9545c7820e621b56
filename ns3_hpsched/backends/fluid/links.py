"""Link use over time on the fluid backend: the ``links`` table, integrated exactly.

Between two allocations every flow's rate is constant, so the bytes a class sends on a
port in an interval are the integral of piecewise-constant rates: the meter records, per
allocation (from the backend's ``on_allocate`` hook), the rate of every (port, class)
pair, and bins those steps into intervals once the run is over.

Each allocation gives the rate of every (port, class) pair, so the meter's cost per
allocation is the number of ports, however many flows are active.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ...monitor import MonitorSpec, busiest_ports, links_table

__all__ = ["LinkMeter"]


class LinkMeter:
    """Meters the bytes each class sends on each port, per interval.

    Parameters
    ----------
    backend:
        A :class:`~ns3_hpsched.backends.fluid.FluidBackend` that has not run yet; the
        meter takes its ``on_allocate`` hook.
    spec:
        Interval and window; with ``ports=None`` the ``spec.busiest`` ports with the most
        bytes over the run are kept.
    ports:
        Ports to meter, or ``None`` to meter every port and keep the busiest.
    """

    def __init__(self, backend, spec: MonitorSpec, ports: list[int] | None) -> None:
        if backend.on_allocate is not None:
            raise ValueError("the fluid backend's on_allocate hook is already taken")
        self._backend, self._spec = backend, spec
        self._ports = None if ports is None else np.asarray(ports, dtype=np.int64)
        self._k = backend.n_classes
        self._times: list[float] = []
        self._keys: list[np.ndarray] = []    # port * n_classes + class, per allocation
        self._rates: list[np.ndarray] = []   # their rates, bits per second
        backend.on_allocate = self._record

    def _record(self, allocation) -> None:
        """Store the (port, class) rates of one allocation."""
        rate = allocation.port_class_bps
        if self._ports is not None:
            rate = rate[self._ports]
        port, cls = np.nonzero(rate > 0)
        ports = port if self._ports is None else self._ports[port]
        self._times.append(float(allocation.time_s))
        self._keys.append(ports * self._k + cls)
        self._rates.append(rate[port, cls])

    def tables(self, end_s: float) -> dict[str, pd.DataFrame]:
        """The ``links`` table of the finished run (the fluid model has no queues or PFC)."""
        bins, keys, nbytes = self._binned(end_s)
        port, cls = np.divmod(keys, self._k)
        if self._ports is None:
            keep = np.isin(port, busiest_ports(self._backend.ports_table(), self._spec.busiest))
            bins, port, cls, nbytes = bins[keep], port[keep], cls[keep], nbytes[keep]
        return {"links": links_table(bins, port, cls, nbytes, self._spec, end_s,
                                     self._backend.topology.port_capacity_bps)}

    def _binned(self, end_s: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Bytes per (interval, key) with bytes > 0: each allocation's rates held from its time
        to the next allocation's (the last to ``end_s``), cut to the window."""
        spec = self._spec
        times = np.clip(np.append(self._times, end_s), spec.start_s, min(spec.stop, end_s))
        lo, hi = times[:-1], times[1:]
        seg = np.repeat(np.arange(len(self._keys)), [len(k) for k in self._keys])
        keys = np.concatenate(self._keys) if self._keys else np.zeros(0, dtype=np.int64)
        rates = np.concatenate(self._rates) if self._rates else np.zeros(0)
        live = hi[seg] > lo[seg]
        seg, keys, rates = seg[live], keys[live], rates[live]
        first = np.floor((lo[seg] - spec.start_s) / spec.interval_s).astype(np.int64)
        last = np.ceil((hi[seg] - spec.start_s) / spec.interval_s).astype(np.int64) - 1
        n_bins = np.maximum(last - first + 1, 0)
        entry = np.repeat(np.arange(len(seg)), n_bins)  # one per (step, key, interval it touches)
        bins = first[entry] + np.arange(len(entry)) - np.repeat(np.cumsum(n_bins) - n_bins, n_bins)
        bin_lo = spec.start_s + bins * spec.interval_s
        overlap = np.minimum(hi[seg][entry], bin_lo + spec.interval_s) - np.maximum(lo[seg][entry], bin_lo)
        frame = pd.DataFrame({"bin": bins, "key": keys[entry], "bytes": rates[entry] * overlap / 8})
        frame = frame[frame["bytes"] > 0].groupby(["bin", "key"], as_index=False)["bytes"].sum()
        return frame["bin"].to_numpy(), frame["key"].to_numpy(), frame["bytes"].to_numpy()
