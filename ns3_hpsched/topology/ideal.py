"""The ideal completion time of a flow alone on an idle network (FCT slowdown's denominator)."""

from __future__ import annotations

import numpy as np

from .base import Topology

__all__ = ["standalone_fct_s", "path_fct_s", "IP_TCP_HEADER_BYTES", "FRAMING_BYTES"]

#: IPv4 (20) + TCP (20) + TCP timestamp option (12) bytes per packet: payload = MTU - 52.
IP_TCP_HEADER_BYTES = 52
#: Link-layer framing per packet on ns-3 point-to-point links (the 2-byte PPP header).
FRAMING_BYTES = 2


def standalone_fct_s(topology: Topology, src: int, dst: int, size_bytes: int, flow_id: int = 0) -> float:
    """Ideal completion time of flow ``flow_id`` alone on an idle network, seconds.

    The flow follows its ECMP path (:meth:`Topology.flow_path`); see :func:`path_fct_s`.
    """
    path = np.array(topology.flow_path(flow_id, src, dst), dtype=np.int64)
    return float(path_fct_s(topology, np.array([0, len(path)]), path, np.array([size_bytes]))[0])


def path_fct_s(topology: Topology, path_offsets: np.ndarray, path_ports: np.ndarray,
               size_bytes: np.ndarray) -> np.ndarray:
    """Ideal completion times of flows alone on an idle network, seconds, given their paths.

    Flow ``i`` crosses ports ``path_ports[path_offsets[i]:path_offsets[i + 1]]`` (at least
    one). It is cut into packets of at most ``mtu - 52`` payload bytes, each carrying
    :data:`IP_TCP_HEADER_BYTES` + :data:`FRAMING_BYTES` of overhead. Store-and-forward
    along the path with hop rates r_h and delays d_h::

        sum_h d_h + sum_h first_packet_bits / r_h + (all_bits - first_packet_bits) / min_h r_h

    i.e. the first packet crosses every hop, the rest stream behind it at the bottleneck.
    One way: our FCT ends when the last byte is delivered (HPCC's own
    ``standalone_fct`` counts a base RTT, because its senders finish on the last ACK).
    """
    size = np.asarray(size_bytes, dtype=np.int64)
    starts = np.asarray(path_offsets, dtype=np.int64)[:-1]
    if len(size) == 0:
        return np.zeros(0)
    payload = topology.mtu_bytes - IP_TCP_HEADER_BYTES
    overhead = IP_TCP_HEADER_BYTES + FRAMING_BYTES
    packets = -(-size // payload)
    total_bits = 8 * (size + packets * overhead)
    first_bits = 8 * (np.minimum(size, payload) + overhead)
    hops = np.repeat(np.arange(len(size)), np.diff(path_offsets))
    rates = topology.port_capacity_bps[path_ports]
    delays = np.add.reduceat(topology.port_delay_s[path_ports], starts)
    serialise = np.add.reduceat(first_bits[hops] / rates, starts)
    return delays + serialise + (total_bits - first_bits) / np.minimum.reduceat(rates, starts)
