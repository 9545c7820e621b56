"""The fluid backend's per-flow latency term, so that small transfers are not free.

A fluid flow is pure bandwidth: without this term a 1-byte flow would finish at once.
With it (the default), a flow of ``size`` bytes on a path of ports ``p_1 .. p_h`` that
starts at ``t0``:

1. waits for its transport's start-up (:func:`startup_s`). TCP (``dctcp``, ``newreno``,
   ``cubic``): one base RTT of its path, ``2 * sum(delay(p_i))`` (the handshake: SYN,
   SYN-ACK, then the first data segment leaves with the ACK), plus the time slow start
   leaves the path idle (:func:`slow_start_s`). RDMA (``rdma``: a queue pair already
   connected, DCQCN starting at line rate): none, the first byte leaves at once;
2. then takes its share of bandwidth from the allocator until its last byte has left
   the sender at ``t_end``;
3. and is reported finished at ``t_end + sum(delay(p_i)) + sum_{i>=2} min(mtu, size) * 8 / C(p_i)``:
   the one-way propagation plus the store-and-forward of its last packet at every hop
   after the first (the fluid rate already accounts for the first).

Ignored (see the README's fluid section): queueing delay (e.g. the standing queue near
DCTCP's marking threshold), losses, ACK clocking beyond slow start, and header bytes.

The transport names are the packet backend's (``scenario.transport.kind``), so one
scenario means the same start-up on either backend.
"""

from __future__ import annotations

import numpy as np

from ...errors import ConfigError

__all__ = ["STARTUP_RTTS", "INITIAL_CWND_SEGMENTS", "check_transport", "handshake_s", "slow_start_s",
           "startup_s", "delivery_s"]

#: Base RTTs a new flow waits before its first byte, per transport kind.
STARTUP_RTTS: dict[str, int] = {"dctcp": 1, "newreno": 1, "cubic": 1, "rdma": 0}


def check_transport(transport: str) -> str:
    """``transport`` if it is a known transport kind, else a :class:`ConfigError`."""
    if transport not in STARTUP_RTTS:
        raise ConfigError("transport.kind", f"unknown transport {transport!r}",
                          f"use one of {sorted(STARTUP_RTTS)}")
    return transport


def handshake_s(path: tuple[int, ...], port_delay_s: np.ndarray) -> float:
    """Base RTT of a path: what a TCP handshake costs before the first byte is sent."""
    return 2.0 * float(port_delay_s[list(path)].sum())


#: TCP's initial congestion window, segments (the packet backend's default).
INITIAL_CWND_SEGMENTS = 10
#: Header bytes per TCP segment on the packet backend (payload = MTU - 52).
_TCP_HEADER_BYTES = 52


def slow_start_s(size_bytes: int, rtt_s: float, bottleneck_bps: float, mtu_bytes: int,
                 initial_cwnd: int = INITIAL_CWND_SEGMENTS) -> float:
    """Idle time slow start adds to a lone TCP flow, compared with sending at line rate.

    Round ``i`` sends a window of ``initial_cwnd * 2**i`` segments, then waits for its
    first ACK, one RTT after the round began; a round whose window takes at least an RTT
    to send fills the pipe, and so does the round that sends the last byte.
    """
    window = initial_cwnd * (mtu_bytes - _TCP_HEADER_BYTES)
    sent, idle = 0, 0.0
    while sent + window < size_bytes and window * 8.0 / bottleneck_bps < rtt_s:
        idle += rtt_s - window * 8.0 / bottleneck_bps
        sent, window = sent + window, 2 * window
    return idle


def startup_s(path: tuple[int, ...], size_bytes: int, port_delay_s: np.ndarray, port_capacity_bps: np.ndarray,
              mtu_bytes: int, transport: str = "dctcp") -> float:
    """Time from a flow's start to its first byte (TCP: handshake and slow start; RDMA: 0).

    The slow-start RTT is the base RTT plus one full packet's store-and-forward at every
    hop; it is charged at once, before the first byte, as a lone flow would feel it.
    """
    if not STARTUP_RTTS[transport]:
        return 0.0
    ports = list(path)
    rtt = handshake_s(path, port_delay_s) + float((mtu_bytes * 8.0 / port_capacity_bps[ports]).sum())
    slow = slow_start_s(size_bytes, rtt, float(port_capacity_bps[ports].min()), mtu_bytes)
    return STARTUP_RTTS[transport] * handshake_s(path, port_delay_s) + slow


def delivery_s(paths: np.ndarray, size_bytes: np.ndarray, port_delay_s: np.ndarray,
               port_capacity_bps: np.ndarray, mtu_bytes: int) -> np.ndarray:
    """Time from the last byte leaving the sender to its delivery, for several flows.

    ``paths`` is a padded matrix of ports (one row per flow, ``-1`` after the last hop).
    """
    hop = paths >= 0
    port = np.where(hop, paths, 0)
    propagation = np.where(hop, port_delay_s[port], 0.0).sum(axis=1)
    packet_bits = np.minimum(size_bytes, mtu_bytes)[:, None] * 8.0
    forward = np.where(hop[:, 1:], packet_bits / port_capacity_bps[port[:, 1:]], 0.0).sum(axis=1)
    return propagation + forward
