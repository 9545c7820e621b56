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
  (:meth:`~Transport.startup_s`, for a batch of flows at once), and the queue it keeps
  standing at a busy port (:meth:`~Transport.standing_queue_bytes`). The delivery delay
  after a flow's last byte leaves its sender is the same rule for every transport
  (:func:`flow_delivery_s`, compiled, called by the fluid backend's event loop): the path's
  propagation and store-and-forward (:func:`delivery_s`) plus the wait behind that standing
  queue at every port of the path that other flows saturate (:func:`queue_wait_s`).

The fluid model still ignores losses and retransmission timeouts, PFC pauses, rate and
window dynamics past the start-up, and how unequally packet flows share a link.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import ClassVar

import numba
import numpy as np

from ..topology import Topology
from ..validate import Flag, Number, choice

__all__ = ["Transport", "UINT32_MAX", "SATURATED_RTOL", "delivery_s", "flow_delivery_s", "queue_wait_s"]

#: Largest value of an ns-3 ``UintegerValue`` attribute of 32 bits (buffers, windows).
UINT32_MAX = 2**32 - 1
#: A port whose fluid rate is within this fraction of its capacity is saturated; a flow's
#: own share within it of the whole port is the whole port (a lone flow waits for nothing).
SATURATED_RTOL = 1e-9


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

    def standing_queue_bytes(self, port_capacity_bps: np.ndarray, mtu_bytes: int) -> np.ndarray:
        """Bytes of other flows a packet waits behind at a port these flows saturate.

        The fluid model's stand-in for the queue the transport keeps at a busy port, per
        port (an array like ``port_capacity_bps``). None by default.
        """
        return np.zeros(len(port_capacity_bps))


def delivery_s(paths: np.ndarray, size_bytes: np.ndarray, port_delay_s: np.ndarray,
               port_capacity_bps: np.ndarray, mtu_bytes: int) -> np.ndarray:
    """Time from the last byte leaving the sender to its delivery, for several flows.

    The one-way propagation plus the store-and-forward of the last packet
    (``min(mtu, size)`` bytes) at every hop after the first (the fluid rate already
    accounts for the first). ``paths`` is a padded matrix of ports (one row per flow,
    ``-1`` after the last hop).
    """
    return _path_delivery(np.asarray(paths, dtype=np.int64), np.asarray(size_bytes, dtype=np.float64),
                          port_delay_s, port_capacity_bps, float(mtu_bytes))


def queue_wait_s(paths: np.ndarray, own_rate_bps: np.ndarray, port_rate_bps: np.ndarray,
                 port_capacity_bps: np.ndarray, queue_bytes: np.ndarray) -> np.ndarray:
    """Wait behind standing queues of other flows along each path, for several flows.

    A port ``p`` of a flow's path is busy when its fluid rate fills its capacity (within
    :data:`SATURATED_RTOL`); there the flow's last packet waits ``queue_bytes[p] * 8 / C_p``
    times the share of the port the *other* flows hold, ``1 - r / C_p`` with ``r`` the
    flow's own (average) rate. A port the flow fills alone, and a port with room to spare,
    add nothing, so a lone flow is delivered as before. The queue is charged once per
    busy port: a small flow's one packet crosses it, and a large flow's rate already pays
    for its own backlog.

    Parameters
    ----------
    paths:
        Padded port matrix, one row per flow, ``-1`` after the last hop.
    own_rate_bps:
        Each flow's own rate.
    port_rate_bps, port_capacity_bps:
        Total fluid rate and capacity of every port.
    queue_bytes:
        Standing queue of every port (:meth:`Transport.standing_queue_bytes`).
    """
    return _queue_wait(np.asarray(paths, dtype=np.int64), np.asarray(own_rate_bps, dtype=np.float64),
                       port_rate_bps, port_capacity_bps, queue_bytes, SATURATED_RTOL)


# The kernels add a path's terms one by one in hop order. numpy's row sums of a padded port
# matrix add up to 7 terms in the same order (padding adds 0.0), so for paths of up to 7
# ports these are the floats of the array version they replaced, bit for bit.

@numba.njit(cache=True)
def flow_delivery_s(path, size, sending_s, port_delay_s, port_capacity_bps, mtu_bytes, port_rate_bps, queue_bytes):
    """The fluid model's delivery delay of one flow whose last byte just left its sender.

    Its path's propagation and store-and-forward (:func:`delivery_s`), plus its wait behind
    the transport's standing queue ``queue_bytes`` at every port of ``path`` (a padded row)
    that other flows saturate (:func:`queue_wait_s`); its own share of a port is its
    average rate, ``size`` over ``sending_s`` seconds of sending, so a lone flow waits for
    nothing. ``port_rate_bps`` are the ports' total fluid rates in the allocation the flow
    finished in. Called by the fluid backend's event loop for every finishing flow.
    """
    delay = _path_delay(path, size, port_delay_s, port_capacity_bps, mtu_bytes)
    if _is_busy(path, port_rate_bps, port_capacity_bps, SATURATED_RTOL):
        own_bps = size * 8.0 / max(sending_s, 1e-300)
        delay += _wait(path, own_bps, port_rate_bps, port_capacity_bps, queue_bytes, SATURATED_RTOL)
    return delay


@numba.njit(cache=True)
def _path_delay(path, size, port_delay_s, port_capacity_bps, mtu_bytes):
    """:func:`delivery_s` of one padded path: propagation, then store-and-forward after the first hop."""
    propagation, forward = 0.0, 0.0
    packet_bits = min(size, mtu_bytes) * 8.0
    for j in range(len(path)):
        p = path[j]
        if p < 0:
            continue
        propagation += port_delay_s[p]
        if j > 0:
            forward += packet_bits / port_capacity_bps[p]
    return propagation + forward


@numba.njit(cache=True)
def _is_busy(path, port_rate_bps, port_capacity_bps, rtol):
    """Whether the padded ``path`` crosses a port whose rate fills its capacity (within ``rtol``)."""
    for p in path:
        if p >= 0 and port_rate_bps[p] >= port_capacity_bps[p] * (1.0 - rtol):
            return True
    return False


@numba.njit(cache=True)
def _wait(path, own_rate_bps, port_rate_bps, port_capacity_bps, queue_bytes, rtol):
    """:func:`queue_wait_s` of one padded path."""
    wait = 0.0
    for p in path:
        if p < 0:
            continue
        capacity = port_capacity_bps[p]
        if port_rate_bps[p] >= capacity * (1.0 - rtol):
            others = 1.0 - own_rate_bps / capacity
            if others > rtol:
                wait += others * queue_bytes[p] * 8.0 / capacity
    return wait


@numba.njit(cache=True)
def _path_delivery(paths, size, port_delay_s, port_capacity_bps, mtu_bytes):
    """:func:`delivery_s`, row by row."""
    out = np.empty(len(paths))
    for i in range(len(paths)):
        out[i] = _path_delay(paths[i], size[i], port_delay_s, port_capacity_bps, mtu_bytes)
    return out


@numba.njit(cache=True)
def _queue_wait(paths, own_rate_bps, port_rate_bps, port_capacity_bps, queue_bytes, rtol):
    """:func:`queue_wait_s`, row by row."""
    out = np.empty(len(paths))
    for i in range(len(paths)):
        out[i] = _wait(paths[i], own_rate_bps[i], port_rate_bps, port_capacity_bps, queue_bytes, rtol)
    return out
