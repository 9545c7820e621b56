"""Monitors of a packet run (``cpp/monitors.h``) and their tables: queues, pfc, links.

Everything is sampled and counted in C++; Python builds the monitors before the run and
copies their arrays out once after it.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ...monitor import MonitorSpec, links_table

__all__ = ["PacketMonitors"]

_HEADER = "monitors.h"


def _cpp(backend):
    """The C++ namespace with the monitors compiled (once per process)."""
    import cppyy

    if not hasattr(cppyy.gbl.hpsched, "PortMonitor"):
        if not cppyy.include(_HEADER):
            raise ImportError(f"cppyy could not compile {_HEADER}")
    return backend._lib.cpp


class PacketMonitors:
    """Queue sampling and link metering on ``ports``, PFC events on every port.

    Parameters
    ----------
    backend:
        A :class:`~ns3_hpsched.backends.packet.PacketBackend` that has not run yet. Its
        fabric, session and flow starter are read (not changed); the monitors stay alive
        as long as the backend (they are kept on it), so the simulator never calls into a
        freed monitor.
    spec:
        Interval and window.
    ports:
        Ports whose queues are sampled and whose link use is metered.
    """

    def __init__(self, backend, spec: MonitorSpec, ports: list[int]) -> None:
        cpp = _cpp(backend)
        import cppyy

        self._backend, self._spec = backend, spec
        self._ports = cppyy.gbl.std.vector["uint32_t"](ports)
        self._port = cpp.PortMonitor(backend._fabric, backend._session, self._ports, backend.n_classes,
                                     float(spec.interval_s), float(spec.start_s), float(spec.stop))
        rdma = hasattr(backend._flows, "GetPfc")
        self._pfc = cpp.PfcMonitor(backend._flows, float(spec.start_s), float(spec.stop)) if rdma else None
        backend._hpsched_monitors = self

    def tables(self, end_s: float) -> dict[str, pd.DataFrame]:
        """``queues``, ``links`` and (RDMA) ``pfc`` tables of the finished run."""
        tables = {"queues": self._queues(), "links": self._links(end_s)}
        if self._pfc is not None:
            tables["pfc"] = self._pfc_events()
        return tables

    def _queues(self) -> pd.DataFrame:
        n = int(self._port.NQueueRows())
        time_s = np.zeros(n)
        port, cls, nbytes, packets = (np.zeros(n, dtype=np.int64) for _ in range(4))
        if n:
            self._port.ExportQueues(time_s, port, cls, nbytes, packets)
        return pd.DataFrame({"time_s": time_s, "port": port, "class": cls, "bytes": nbytes, "packets": packets})

    def _links(self, end_s: float) -> pd.DataFrame:
        n = int(self._port.CloseLinks())
        bins, port, cls = (np.zeros(n, dtype=np.int64) for _ in range(3))
        nbytes = np.zeros(n)
        if n:
            self._port.ExportLinks(bins, port, cls, nbytes)
        return links_table(bins, port, cls, nbytes, self._spec, end_s, self._backend.topology.port_capacity_bps)

    def _pfc_events(self) -> pd.DataFrame:
        n = int(self._pfc.NEvents())
        time_s = np.zeros(n)
        port, cls, paused = (np.zeros(n, dtype=np.int64) for _ in range(3))
        if n:
            self._pfc.Export(time_s, port, cls, paused)
        return pd.DataFrame({"time_s": time_s, "port": port, "class": cls, "paused": paused.astype(bool)})
