"""The :class:`Transport` base: one transport's options, packet implementation and fluid model.

A transport is what moves a flow's bytes, whatever the backend:

* its **options**: the keys of the scenario's ``[transport]`` table besides ``kind``
  (:attr:`Transport.OPTIONS`), checked on either backend;
* its **packet implementation**: ns-3 defaults set before the network is built
  (:meth:`~Transport.configure`), the child queue disc of every strict-priority band
  (:meth:`~Transport.queue_disc`), and the C++ object that starts flows
  (``StartFlow(time_s, id, src, dst, size, cls, coflow, sport, dport)``) and reports
  delivered bytes to the ``Session`` (:meth:`~Transport.create_flows`). The hooks receive
  ``ns`` or the compiled ``cpp`` namespace, so importing a transport never loads ns-3;
* its **fluid model**: the start-up before a new flow's first byte
  (:meth:`~Transport.startup_s`, for a batch of flows at once).

After its last byte has left the sender, a fluid flow is delivered after the path's
delay (:func:`delivery_s`), the same for every transport. The fluid model ignores the
queue a transport keeps standing at a busy port (e.g. near DCTCP's marking threshold),
losses, and ACK clocking past the start-up.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import ClassVar

import numpy as np

from ..topology import Topology
from ..validate import Flag, Number, choice

__all__ = ["Transport", "UINT32_MAX", "base_rtt_s", "delivery_s"]

#: Largest value of an ns-3 ``UintegerValue`` attribute of 32 bits (buffers, windows).
UINT32_MAX = 2**32 - 1


class Transport(ABC):
    """How flows move bytes: options, packet hooks and fluid model of one transport.

    A subclass is a dataclass whose fields are its options (plus ``name``, its kind),
    listed with their rules in :attr:`OPTIONS`; it calls :meth:`check_options` when built.
    """

    #: The ``[transport] kind`` names this class implements.
    KINDS: ClassVar[tuple[str, ...]]
    #: Rules of this transport's options, by ``[transport]`` key.
    OPTIONS: ClassVar[dict[str, Number | Flag]]

    name: str

    def check_options(self) -> None:
        """Raise a :class:`~ns3_hpsched.errors.ConfigError` naming ``transport.<key>`` for
        the first bad kind or option value."""
        choice("transport.kind", self.name, self.KINDS, "transport")
        for key, rule in self.OPTIONS.items():
            rule.check(f"transport.{key}", getattr(self, key))

    # -- packet backend -----------------------------------------------------------------

    @abstractmethod
    def configure(self, ns, topology: Topology) -> None:
        """Set ns-3 defaults (``Config::SetDefault``) before any node is built.

        Every setting this transport depends on must be set here each time: defaults
        persist across simulations of one process.
        """

    @abstractmethod
    def queue_disc(self, rate_bps: float, topology: Topology) -> tuple[str, dict[str, str]]:
        """The child queue disc of each priority band of a port: ns-3 type and attributes."""

    @abstractmethod
    def create_flows(self, cpp, fabric, session):
        """The C++ flow starter of this transport (kept alive by the backend)."""

    def describe(self) -> dict:
        """Transport settings for ``run.json``."""
        return {"name": self.name}

    def port_stats(self, flows, n_ports: int) -> dict:
        """Extra columns of the ports table from the flow starter ``flows`` (none here)."""
        return {}

    # -- fluid backend ------------------------------------------------------------------

    @abstractmethod
    def startup_s(self, path_offsets: np.ndarray, path_ports: np.ndarray, size_bytes: np.ndarray,
                  port_delay_s: np.ndarray, port_capacity_bps: np.ndarray, mtu_bytes: int) -> np.ndarray:
        """Time from each flow's start to its first byte, for a batch of flows.

        Parameters
        ----------
        path_offsets, path_ports:
            The ports of flow ``i`` are ``path_ports[path_offsets[i]:path_offsets[i + 1]]``
            (as in a :class:`~ns3_hpsched.backends.base.FlowBatch`).
        size_bytes:
            Each flow's size.
        port_delay_s, port_capacity_bps, mtu_bytes:
            The topology's per-port propagation delay and capacity, and its MTU.
        """


def base_rtt_s(path_offsets: np.ndarray, path_ports: np.ndarray, port_delay_s: np.ndarray) -> np.ndarray:
    """Base RTT (twice the propagation) of each path, for several flows.

    Paths as in :meth:`Transport.startup_s`; an empty path has no delay.
    """
    delay = np.concatenate([port_delay_s[path_ports], [0.0]])  # the 0 closes reduceat's last slice
    one_way = np.add.reduceat(delay, path_offsets[:-1]) if len(path_offsets) > 1 else np.empty(0)
    return 2.0 * np.where(np.diff(path_offsets) > 0, one_way, 0.0)


def delivery_s(paths: np.ndarray, size_bytes: np.ndarray, port_delay_s: np.ndarray,
               port_capacity_bps: np.ndarray, mtu_bytes: int) -> np.ndarray:
    """Time from the last byte leaving the sender to its delivery, for several flows.

    The one-way propagation plus the store-and-forward of the last packet
    (``min(mtu, size)`` bytes) at every hop after the first (the fluid rate already
    accounts for the first). ``paths`` is a padded matrix of ports (one row per flow,
    ``-1`` after the last hop).
    """
    hop = paths >= 0
    port = np.where(hop, paths, 0)
    propagation = np.where(hop, port_delay_s[port], 0.0).sum(axis=1)
    packet_bits = np.minimum(size_bytes, mtu_bytes)[:, None] * 8.0
    forward = np.where(hop[:, 1:], packet_bits / port_capacity_bps[port[:, 1:]], 0.0).sum(axis=1)
    return propagation + forward
