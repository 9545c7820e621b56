"""Transports of the packet backend: what moves a flow's bytes and what the queues do.

A :class:`Transport` sets ns-3's defaults before the network is built, chooses the
child queue disc of every strict-priority band, and creates the C++ object that starts
flows (``StartFlow(time_s, id, src, dst, size, cls, coflow, sport, dport)``) and
reports delivered bytes to the ``Session``. :class:`TcpTransport` covers NewReno,
Cubic and DCTCP; an RDMA transport (RoCEv2/DCQCN/PFC) fits the same three hooks.
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from dataclasses import asdict, dataclass

from ...errors import ConfigError
from ...topology import Topology
from ...validate import MAX_SECONDS, Flag, Number, choice, known_keys, table

__all__ = ["Transport", "TcpTransport", "TRANSPORTS", "DEFAULT_TRANSPORT", "BACKEND_OPTIONS", "TCP_OPTIONS",
           "transport_options", "make_transport", "check_transport_table"]

#: TCP+IPv4 header bytes (with timestamps option) subtracted from the MTU for the segment size.
TCP_IP_HEADER_BYTES = 52
#: DCTCP marking threshold at 10 Gbps: K = 65 packets of 1500 bytes (Alizadeh et al.,
#: "Data Center TCP", SIGCOMM 2010, section 3.4); scaled linearly with the port rate.
DCTCP_K_BYTES_AT_10G = 65 * 1500
#: Largest value of an ns-3 ``UintegerValue`` attribute of 32 bits (buffers, windows).
UINT32_MAX = 2**32 - 1

#: Options of the ``[transport]`` table that every kind takes: the packet backend's own.
BACKEND_OPTIONS: dict[str, Number | Flag] = {
    "device_queue_packets": Number(integer=True, low=1, high=UINT32_MAX, fix="use 1 or 2"),
}
#: Options of the TCP transports (``dctcp``, ``newreno``, ``cubic``): TcpTransport's fields.
TCP_OPTIONS: dict[str, Number | Flag] = {
    "min_rto_s": Number(low=0.0, low_open=True, high=MAX_SECONDS, fix="seconds, e.g. 5e-3"),
    "socket_buffer_bytes": Number(integer=True, low=1, high=UINT32_MAX, optional=True,
                                  fix="give bytes, or leave unset for the topology's buffer_bytes"),
    "ecn_threshold_bytes": Number(integer=True, low=1, high=UINT32_MAX, optional=True,
                                  fix="give bytes, or leave unset for 65 x 1500 B at 10 Gbps, scaled by rate"),
    "initial_cwnd_segments": Number(integer=True, low=1, high=UINT32_MAX, fix="e.g. 10"),
}


class Transport(ABC):
    """How flows move bytes on the packet backend."""

    name: str

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


@dataclass(frozen=True)
class TcpTransport(Transport):
    """ns-3 TCP with NewReno, Cubic or DCTCP congestion control.

    Settings follow what behaved in experiments with the ns-3 3.44 wheel (NS3-NOTES):
    segment = MTU - 52, 1 us clock granularity, an ACK per segment, a 5 ms minimum RTO
    (datacenter RTTs are tens of microseconds; ns-3's default 1 s stalls every loss).

    Parameters
    ----------
    name:
        ``"dctcp"`` (ECN marking by RED in every band), ``"newreno"`` or ``"cubic"``
        (drop-tail FIFO bands).
    min_rto_s:
        Minimum retransmission timeout, seconds.
    socket_buffer_bytes:
        Send and receive buffer of every socket; ``None`` uses the topology's per-port
        buffer, so one flow alone can never overflow a port (far above the
        bandwidth-delay product of a datacenter path, so a lone flow runs at line rate).
    ecn_threshold_bytes:
        DCTCP marking threshold K per band; ``None`` scales 65 x 1500 bytes at 10 Gbps
        linearly with each port's rate (at least 2 MTUs). Ignored by other transports.
    initial_cwnd_segments:
        Initial congestion window in segments.
    """

    name: str = "dctcp"
    min_rto_s: float = 5e-3
    socket_buffer_bytes: int | None = None
    ecn_threshold_bytes: int | None = None
    initial_cwnd_segments: int = 10

    #: ns-3 congestion-control type of each transport name.
    CONGESTION_CONTROL = {"dctcp": "ns3::TcpDctcp", "newreno": "ns3::TcpNewReno", "cubic": "ns3::TcpCubic"}

    def __post_init__(self) -> None:
        choice("transport.kind", self.name, self.CONGESTION_CONTROL, "transport")
        for name, rule in TCP_OPTIONS.items():
            rule.check(f"transport.{name}", getattr(self, name))

    def segment_bytes(self, topology: Topology) -> int:
        """TCP segment size for the topology's MTU."""
        return topology.mtu_bytes - TCP_IP_HEADER_BYTES

    def buffer_bytes(self, topology: Topology) -> int:
        """Socket send/receive buffer in bytes."""
        return self.socket_buffer_bytes or topology.buffer_bytes

    def ecn_threshold_packets(self, rate_bps: float, topology: Topology) -> int:
        """DCTCP marking threshold of a port, in packets of one MTU."""
        k_bytes = self.ecn_threshold_bytes or DCTCP_K_BYTES_AT_10G * rate_bps / 10e9
        return max(2, math.ceil(k_bytes / topology.mtu_bytes))

    def configure(self, ns, topology: Topology) -> None:
        Config, Str = ns.Config.SetDefault, ns.StringValue
        Config("ns3::TcpL4Protocol::SocketType", Str(self.CONGESTION_CONTROL[self.name]))
        Config("ns3::TcpSocket::SegmentSize", Str(str(self.segment_bytes(topology))))
        Config("ns3::TcpSocket::SndBufSize", Str(str(self.buffer_bytes(topology))))
        Config("ns3::TcpSocket::RcvBufSize", Str(str(self.buffer_bytes(topology))))
        Config("ns3::TcpSocket::DelAckCount", Str("1"))
        Config("ns3::TcpSocket::InitialCwnd", Str(str(self.initial_cwnd_segments)))
        Config("ns3::TcpSocketBase::MinRto", Str(f"{self.min_rto_s}s"))
        Config("ns3::TcpSocketBase::ClockGranularity", Str("1us"))
        Config("ns3::TcpSocketBase::UseEcn", Str("On" if self.name == "dctcp" else "Off"))

    def queue_disc(self, rate_bps: float, topology: Topology) -> tuple[str, dict[str, str]]:
        if self.name != "dctcp":
            return "ns3::FifoQueueDisc", {"MaxSize": f"{topology.buffer_bytes}B"}
        k = self.ecn_threshold_packets(rate_bps, topology)
        # QW = 1: mark on the instantaneous queue; MinTh = K and not Gentle: mark every
        # ECN-capable packet arriving above K (DCTCP's step marking), never hard-drop.
        return "ns3::RedQueueDisc", {
            "MaxSize": f"{max(topology.buffer_bytes // topology.mtu_bytes, k + 1)}p",
            "MeanPktSize": str(topology.mtu_bytes),
            "MinTh": str(k), "MaxTh": str(k + 1), "QW": "1", "Gentle": "false",
            "UseEcn": "true", "UseHardDrop": "false",
            "LinkBandwidth": f"{int(rate_bps)}bps",
        }

    def create_flows(self, cpp, fabric, session):
        return cpp.TcpFlows(fabric, session)

    def describe(self) -> dict:
        settings = {k: v for k, v in asdict(self).items() if k != "name"}
        return {"name": self.name, "congestion_control": self.CONGESTION_CONTROL[self.name], **settings,
                "clock_granularity_s": 1e-6, "delayed_ack_count": 1,
                "segment": "mtu_bytes - 52", "ecn_k_default": "65 x 1500 B at 10 Gbps, scaled by rate"}


#: Transport names accepted by :func:`make_transport`.
TRANSPORTS = (*TcpTransport.CONGESTION_CONTROL, "rdma")
#: The transport of a scenario without ``[transport] kind``.
DEFAULT_TRANSPORT = "dctcp"


def transport_options(kind: str) -> dict[str, Number | Flag]:
    """The rules of the options transport ``kind`` takes (its ``[transport]`` keys besides
    ``kind`` and :data:`BACKEND_OPTIONS`): the one name map of transport keys."""
    choice("transport.kind", kind, TRANSPORTS, "transport")
    if kind == "rdma":
        from .rdma import RDMA_OPTIONS  # imported here: rdma.py builds on this module

        return RDMA_OPTIONS
    return TCP_OPTIONS


def make_transport(transport: str | Transport, **options) -> Transport:
    """A transport from its name and options (or the given instance, without options)."""
    if isinstance(transport, Transport):
        if options:
            raise ConfigError("backend", f"options {sorted(options)} given with a Transport instance",
                              "set them on the Transport instead")
        return transport
    known_keys("transport", options, transport_options(transport), f"kind = {transport!r}")
    if transport == "rdma":
        from .rdma import RdmaTransport

        return RdmaTransport(**options)
    return TcpTransport(transport, **options)


def check_transport_table(spec: dict) -> Transport:
    """Check a scenario's whole ``[transport]`` table (kind, every key and value) and return
    its transport; used whatever the backend, so a fluid scenario's table is checked too."""
    options = table("transport", spec)
    kind = options.pop("kind", DEFAULT_TRANSPORT)
    known_keys("transport", options, {**BACKEND_OPTIONS, **transport_options(kind)}, f"kind = {kind!r}")
    for name, rule in BACKEND_OPTIONS.items():
        rule.check(f"transport.{name}", options.pop(name, 1))
    return make_transport(kind, **options)
