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


def handshake_s(path_offsets: np.ndarray, path_ports: np.ndarray, port_delay_s: np.ndarray) -> np.ndarray:
    """Base RTT of each path (the time before a new flow's first byte is sent), for several flows.

    The ports of flow ``i`` are ``path_ports[path_offsets[i]:path_offsets[i + 1]]`` (as in a
    :class:`~ns3_hpsched.backends.base.FlowBatch`); an empty path has no delay.
    """
    delay = np.concatenate([port_delay_s[path_ports], [0.0]])  # the 0 closes reduceat's last slice
    one_way = np.add.reduceat(delay, path_offsets[:-1]) if len(path_offsets) > 1 else np.empty(0)
    return 2.0 * np.where(np.diff(path_offsets) > 0, one_way, 0.0)


#: TCP's initial congestion window, segments (the packet backend's default).
INITIAL_CWND_SEGMENTS = 10
#: Header bytes per TCP segment on the packet backend (payload = MTU - 52).
_TCP_HEADER_BYTES = 52


def slow_start_s(size_bytes: np.ndarray, rtt_s: np.ndarray, bottleneck_bps: np.ndarray, mtu_bytes: int,
                 initial_cwnd: int = INITIAL_CWND_SEGMENTS) -> np.ndarray:
    """Idle time slow start adds to lone TCP flows, compared with sending at line rate.

    Round ``i`` sends a window of ``initial_cwnd * 2**i`` segments, then waits for its
    first ACK, one RTT after the round began; a round whose window takes at least an RTT
    to send fills the pipe, and so does the round that sends the last byte. The rounds
    are iterated over all flows at once (a window doubles each round, so a few dozen at most).
    """
    size = np.asarray(size_bytes, dtype=np.float64)
    window = np.full(len(size), float(initial_cwnd * (mtu_bytes - _TCP_HEADER_BYTES)))
    sent, idle = np.zeros(len(size)), np.zeros(len(size))
    growing = np.ones(len(size), dtype=bool)
    while True:
        send_s = window * 8.0 / bottleneck_bps
        growing &= (sent + window < size) & (send_s < rtt_s)
        if not growing.any():
            return idle
        idle += np.where(growing, rtt_s - send_s, 0.0)
        sent = np.where(growing, sent + window, sent)
        window = np.where(growing, 2.0 * window, window)


def startup_s(path_offsets: np.ndarray, path_ports: np.ndarray, size_bytes: np.ndarray, port_delay_s: np.ndarray,
              port_capacity_bps: np.ndarray, mtu_bytes: int, transport: str = "dctcp") -> np.ndarray:
    """Time from each flow's start to its first byte (TCP: handshake and slow start; RDMA: 0).

    Paths as in :func:`handshake_s`. The slow-start RTT is the base RTT plus one full
    packet's store-and-forward at every hop; it is charged at once, before the first byte,
    as a lone flow would feel it.
    """
    n = len(path_offsets) - 1
    if not STARTUP_RTTS[transport]:
        return np.zeros(n)
    base = handshake_s(path_offsets, path_ports, port_delay_s)
    starts, lengths = path_offsets[:-1], np.diff(path_offsets)
    serial = np.concatenate([mtu_bytes * 8.0 / port_capacity_bps[path_ports], [0.0]])
    rtt = base + np.where(lengths > 0, np.add.reduceat(serial, starts) if n else np.empty(0), 0.0)
    capacity = np.concatenate([port_capacity_bps[path_ports], [np.inf]])
    bottleneck = np.where(lengths > 0, np.minimum.reduceat(capacity, starts) if n else np.empty(0), np.inf)
    return STARTUP_RTTS[transport] * base + slow_start_s(size_bytes, rtt, bottleneck, mtu_bytes)


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
