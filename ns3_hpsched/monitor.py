"""Monitors of one run: queue lengths, PFC pauses and link use over time (``[monitor]``).

A scenario asks for them with a ``[monitor]`` table (absent = off, and then nothing is
built and nothing is paid)::

    [monitor]
    busiest = 8          # the 8 busiest ports ... (default)
    # ports = [12, 13]   # ... or these ports
    interval_s = 10e-6   # sampling interval and link-use bin (default 10 us)
    start_s = 0.0        # window [start_s, stop_s) of simulated time
    # stop_s = 0.05      # (default: the end of the run)

and the run folder gains three tables (columns in :data:`ns3_hpsched.results.SCHEMA`):

* ``queues`` (packet): the bytes and packets queued per port and class, sampled;
* ``pfc`` (packet, RDMA): every PAUSE/RESUME frame applied at any port;
* ``links`` (both backends): bytes each class sent on each port per interval.

**Busiest ports** are the ``busiest`` ports that carry the most bytes over the whole run.
The fluid backend knows that after its run, so it meters every port and keeps those. The
packet backend must choose before it starts, so a fluid pass of the same scenario chooses:
both backends play the same flows over the same per-flow ECMP paths, so every port carries
the same payload bytes on both (the packet backend adds only headers), whatever the
timing. The pass costs one fluid run (a small fraction of a packet run).
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
from pydantic import BaseModel, ConfigDict, Field

from .errors import ConfigError
from .topology import Topology

__all__ = ["MonitorSpec", "MonitorPlan", "plan_monitors", "busiest_ports", "links_table"]


class MonitorSpec(BaseModel):
    """The ``[monitor]`` table: which ports, how often, when (see the module docstring)."""

    model_config = ConfigDict(extra="forbid")

    enabled: bool = True
    ports: list[int] | None = None
    busiest: int = Field(8, ge=1)
    interval_s: float = Field(10e-6, gt=0)
    start_s: float = Field(0.0, ge=0)
    stop_s: float | None = None

    @property
    def stop(self) -> float:
        """End of the window (``inf`` for the end of the run)."""
        return math.inf if self.stop_s is None else self.stop_s

    def check(self, topology: Topology) -> None:
        """Raise :class:`ConfigError` naming the ``monitor.*`` field of any inconsistency."""
        if self.ports is not None and "busiest" in self.model_fields_set:
            raise ConfigError("monitor.busiest", "given together with monitor.ports",
                              "give either a list of ports or busiest = N")
        if self.ports is not None and (not self.ports or len(set(self.ports)) != len(self.ports)):
            raise ConfigError("monitor.ports", f"must be a non-empty list of distinct ports, got {self.ports}",
                              "e.g. ports = [4, 5], or busiest = 8")
        for i, port in enumerate(self.ports or []):
            if not 0 <= port < topology.n_ports:
                raise ConfigError(f"monitor.ports[{i}]", f"port {port} does not exist",
                                  f"use ports 0..{topology.n_ports - 1} (see the ports table)")
        if self.stop_s is not None and not self.stop_s > self.start_s:
            raise ConfigError("monitor.stop_s", f"must be after start_s ({self.start_s}), got {self.stop_s}",
                              "leave it out to monitor until the end of the run")


def busiest_ports(ports: pd.DataFrame, n: int) -> list[int]:
    """The ``n`` ports of a ports table with the most ``tx_bytes`` (ties: lower port first)."""
    ranked = ports.sort_values(["tx_bytes", "port"], ascending=[False, True], kind="stable")
    return sorted(ranked["port"].head(n).astype(int).tolist())


def links_table(bins: np.ndarray, ports: np.ndarray, classes: np.ndarray, bytes_: np.ndarray,
                spec: MonitorSpec, end_s: float, capacity_bps: np.ndarray) -> pd.DataFrame:
    """The ``links`` table from per-(interval, port, class) byte counts.

    Interval ``b`` is ``[start_s + b * interval_s, start_s + (b + 1) * interval_s)``, cut at
    the window's stop and at the end of the run; ``utilisation`` is the class's share of the
    port's capacity over that (possibly cut) interval.
    """
    begin = spec.start_s + bins * spec.interval_s
    end = np.minimum(begin + spec.interval_s, min(spec.stop, end_s))
    frame = pd.DataFrame({
        "interval_start_s": begin, "interval_end_s": end, "port": ports.astype(np.int64),
        "class": classes.astype(np.int64), "bytes": bytes_,
        "utilisation": bytes_ * 8 / ((end - begin) * capacity_bps[ports]),
    })
    frame = frame[frame["interval_end_s"] > frame["interval_start_s"]]
    return frame.sort_values(["interval_start_s", "port", "class"], ignore_index=True)


class MonitorPlan:
    """What to monitor in one run, decided before its backend is built."""

    def __init__(self, spec: MonitorSpec, ports: list[int] | None) -> None:
        self.spec = spec
        #: Ports to monitor; ``None`` on the fluid backend with ``busiest`` (chosen after the run).
        self.ports = ports

    def attach(self, backend):
        """Build the monitors on ``backend`` (before it runs); ``.tables(end_s)`` reads them after."""
        if backend.name == "fluid":
            from .backends.fluid.links import LinkMeter

            return LinkMeter(backend, self.spec, self.ports)
        from .backends.packet.monitors import PacketMonitors

        return PacketMonitors(backend, self.spec, self.ports)


def plan_monitors(scenario) -> MonitorPlan | None:
    """Check ``scenario.monitor`` and choose its ports; ``None`` when monitoring is off."""
    spec: MonitorSpec | None = scenario.monitor
    if spec is None or not spec.enabled:
        return None
    spec.check(scenario.built_topology)
    if spec.ports is not None:
        return MonitorPlan(spec, list(spec.ports))
    if scenario.backend == "fluid":
        return MonitorPlan(spec, None)
    return MonitorPlan(spec, _busiest_by_fluid_pass(scenario, spec.busiest))


def _busiest_by_fluid_pass(scenario, n: int) -> list[int]:
    """The ``n`` busiest ports of ``scenario``, from a fluid run of it (module docstring)."""
    from .runner import simulate
    from .scenario import scenario_from_dict

    raw = {**scenario.model_dump(), "backend": "fluid", "monitor": None, "base_dir": scenario.base_dir}
    _, _, tables = simulate(scenario_from_dict(raw))
    return busiest_ports(tables["ports"], n)
