"""TCP transports: ns-3 TCP with NewReno, Cubic or DCTCP congestion control.

Packet backend: ns-3's TCP sockets, started and counted by ``cpp/tcp_flows.h``; DCTCP
marks by RED in every band, the others use drop-tail FIFO bands. Fluid model: a new flow
waits one base RTT of its path, ``2 * sum(delay(p_i))`` (the handshake: SYN, SYN-ACK,
then the first data segment leaves with the ACK), plus the time slow start from
``initial_cwnd_segments`` leaves the path idle (:func:`_tcp_startup`). At a port other
flows saturate, a flow's last packet waits behind half an initial window
(:meth:`TcpTransport.standing_queue_bytes`).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import numba
import numpy as np

from ..topology import Topology
from ..validate import MAX_SECONDS, Flag, Number
from .base import UINT32_MAX, Transport

__all__ = ["TcpTransport", "TCP_OPTIONS"]

#: TCP+IPv4 header bytes (with timestamps option) subtracted from the MTU for the segment size.
TCP_IP_HEADER_BYTES = 52
#: DCTCP marking threshold at 10 Gbps: K = 65 packets of 1500 bytes (Alizadeh et al.,
#: "Data Center TCP", SIGCOMM 2010, section 3.4); scaled linearly with the port rate.
DCTCP_K_BYTES_AT_10G = 65 * 1500

#: Options of the TCP transports (``dctcp``, ``newreno``, ``cubic``): TcpTransport's fields.
TCP_OPTIONS: dict[str, Number | Flag] = {
    "min_rto_s": Number(low=0.0, low_open=True, high=MAX_SECONDS, fix="seconds, e.g. 5e-3"),
    "socket_buffer_bytes": Number(integer=True, low=1, high=UINT32_MAX, optional=True,
                                  fix="give bytes, or leave unset for the topology's buffer_bytes"),
    "ecn_threshold_bytes": Number(integer=True, low=1, high=UINT32_MAX, optional=True,
                                  fix="give bytes, or leave unset for 65 x 1500 B at 10 Gbps, scaled by rate"),
    "initial_cwnd_segments": Number(integer=True, low=1, high=UINT32_MAX, fix="e.g. 10"),
}


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
        Initial congestion window in segments, on either backend.
    """

    name: str = "dctcp"
    min_rto_s: float = 5e-3
    socket_buffer_bytes: int | None = None
    ecn_threshold_bytes: int | None = None
    initial_cwnd_segments: int = 10

    #: ns-3 congestion-control type of each transport name.
    CONGESTION_CONTROL = {"dctcp": "ns3::TcpDctcp", "newreno": "ns3::TcpNewReno", "cubic": "ns3::TcpCubic"}
    KINDS = tuple(CONGESTION_CONTROL)
    OPTIONS = TCP_OPTIONS

    def __post_init__(self) -> None:
        self.check_options()

    def segment_bytes(self, topology: Topology) -> int:
        """TCP segment size for the topology's MTU."""
        return topology.mtu_bytes - TCP_IP_HEADER_BYTES

    def buffer_bytes(self, topology: Topology) -> int:
        """Socket send/receive buffer in bytes."""
        return self.socket_buffer_bytes or topology.buffer_bytes

    def ecn_threshold_packets(self, rate_bps: float, topology: Topology) -> int:
        """DCTCP marking threshold of a port, in packets of one MTU."""
        return self._k_packets(rate_bps, topology.mtu_bytes)

    def _k_packets(self, rate_bps, mtu_bytes: int):
        """:meth:`ecn_threshold_packets` for one rate or an array of them."""
        k_bytes = self.ecn_threshold_bytes or DCTCP_K_BYTES_AT_10G * np.asarray(rate_bps) / 10e9
        k = np.maximum(2, np.ceil(np.asarray(k_bytes, dtype=np.float64) / mtu_bytes)).astype(np.int64)
        return int(k) if k.ndim == 0 else k

    # -- packet backend -----------------------------------------------------------------

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

    # -- fluid backend ------------------------------------------------------------------

    def startup_s(self, path_offsets: np.ndarray, path_ports: np.ndarray, size_bytes: np.ndarray,
                  port_delay_s: np.ndarray, port_capacity_bps: np.ndarray, mtu_bytes: int) -> np.ndarray:
        """Handshake (one base RTT) plus slow start, for a batch of flows.

        The slow-start RTT is the base RTT plus one full packet's store-and-forward at every
        hop; the idle time is charged at once, before the first byte, as a lone flow would
        feel it (:func:`_tcp_startup`, compiled over the batch in one pass).
        """
        return _tcp_startup(np.asarray(path_offsets, dtype=np.int64), np.asarray(path_ports, dtype=np.int64),
                            np.asarray(size_bytes, dtype=np.float64), port_delay_s, port_capacity_bps,
                            float(mtu_bytes), float(mtu_bytes - TCP_IP_HEADER_BYTES),
                            float(self.initial_cwnd_segments))

    def standing_queue_bytes(self, port_capacity_bps: np.ndarray, mtu_bytes: int) -> np.ndarray:
        """Half an initial window, ``initial_cwnd_segments * segment / 2``, at every port
        (DCTCP: at most its marking threshold K).

        A TCP flow's first window leaves its host as one burst at line rate, and most flows
        of a flow-size workload end within it or a few windows later, so a packet reaching
        a port that other flows saturate finds, on average, half such a burst ahead of it.
        The queue DCTCP holds near K takes a few RTTs of backlog to build: measured on the
        packet backend (web search 30%, k=8 fat-tree, 100 Gb/s, K = 975 kB), the queue at a
        port the fluid model saturates is empty at the median for the first 80 us of
        saturation and averages a quarter of K, so charging K (or K/2) per busy port
        overshoots every workload measured; half a window is what those runs favour for
        K = 975 kB and K = 100 kB alike (docs/flow-crosscheck.md).
        """
        burst = np.full(len(port_capacity_bps), self.initial_cwnd_segments * (mtu_bytes - TCP_IP_HEADER_BYTES) / 2.0)
        if self.name != "dctcp":
            return burst
        return np.minimum(burst, self._k_packets(port_capacity_bps, mtu_bytes) * float(mtu_bytes))


@numba.njit(cache=True)
def _tcp_startup(path_offsets, path_ports, size, port_delay_s, port_capacity_bps, mtu_bytes, segment_bytes,
                 initial_cwnd):
    """:meth:`TcpTransport.startup_s` flow by flow: the base RTT plus slow start's idle time.

    Round ``i`` sends a window of ``initial_cwnd * 2**i`` segments, then waits for its
    first ACK, one RTT after the round began; a round whose window takes at least an RTT
    to send fills the pipe, and so does the round that sends the last byte. The idle time
    is what slow start adds to a lone flow compared with sending at line rate (an empty
    path has no delay and no slow start).
    """
    n = len(path_offsets) - 1
    out = np.zeros(n)
    for i in range(n):
        lo, hi = path_offsets[i], path_offsets[i + 1]
        if hi == lo:
            continue
        one_way, serial, bottleneck = 0.0, 0.0, np.inf
        for j in range(lo, hi):
            p = path_ports[j]
            one_way += port_delay_s[p]
            serial += mtu_bytes * 8.0 / port_capacity_bps[p]
            bottleneck = min(bottleneck, port_capacity_bps[p])
        base = 2.0 * one_way
        rtt = base + serial
        window, sent, idle = initial_cwnd * segment_bytes, 0.0, 0.0
        while True:
            send_s = window * 8.0 / bottleneck
            if not (sent + window < size[i] and send_s < rtt):
                break
            idle += rtt - send_s
            sent += window
            window *= 2.0
        out[i] = base + idle
    return out
