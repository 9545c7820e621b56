"""The ideal completion time of a flow alone on an idle network (FCT slowdown's denominator)."""

from __future__ import annotations

from .base import Topology

__all__ = ["standalone_fct_s", "IP_TCP_HEADER_BYTES", "FRAMING_BYTES"]

#: IPv4 (20) + TCP (20) + TCP timestamp option (12) bytes per packet: payload = MTU - 52.
IP_TCP_HEADER_BYTES = 52
#: Link-layer framing per packet on ns-3 point-to-point links (the 2-byte PPP header).
FRAMING_BYTES = 2


def standalone_fct_s(topology: Topology, src: int, dst: int, size_bytes: int, flow_id: int = 0) -> float:
    """Ideal completion time of a flow alone on an idle network, seconds.

    The flow is cut into packets of at most ``mtu - 52`` payload bytes, each carrying
    :data:`IP_TCP_HEADER_BYTES` + :data:`FRAMING_BYTES` of overhead. Store-and-forward
    along the flow's ECMP path with hop rates r_h and delays d_h::

        sum_h d_h + sum_h first_packet_bits / r_h + (all_bits - first_packet_bits) / min_h r_h

    i.e. the first packet crosses every hop, the rest stream behind it at the bottleneck.
    One way: our FCT ends when the last byte is delivered (HPCC's own
    ``standalone_fct`` counts a base RTT, because its senders finish on the last ACK).
    """
    ports = topology.flow_path(flow_id, src, dst)
    payload = topology.mtu_bytes - IP_TCP_HEADER_BYTES
    overhead = IP_TCP_HEADER_BYTES + FRAMING_BYTES
    packets = -(-size_bytes // payload)
    total_bits = 8 * (size_bytes + packets * overhead)
    first_bits = 8 * (min(size_bytes, payload) + overhead)
    rates = topology.port_capacity_bps[list(ports)]
    delays = topology.port_delay_s[list(ports)]
    return float(delays.sum() + (first_bits / rates).sum() + (total_bits - first_bits) / rates.min())
