"""The fluid backend's per-flow latency term, so that small transfers are not free.

A fluid flow is pure bandwidth: without this term a 1-byte flow would finish at once.
With it (the default), a flow of ``size`` bytes on a path of ports ``p_1 .. p_h`` that
starts at ``t0``:

1. sends nothing for one base RTT of its path, ``2 * sum(delay(p_i))`` (the TCP
   handshake: SYN, SYN-ACK, then the first data segment leaves with the ACK);
2. then takes its share of bandwidth from the allocator until its last byte has left
   the sender at ``t_end``;
3. and is reported finished at ``t_end + sum(delay(p_i)) + sum_{i>=2} min(mtu, size) * 8 / C(p_i)``:
   the one-way propagation plus the store-and-forward of its last packet at every hop
   after the first (the fluid rate already accounts for the first).

Ignored (see the README's fluid section): slow start, queueing delay, losses, ACK
clocking and header bytes.
"""

from __future__ import annotations

import numpy as np

__all__ = ["handshake_s", "delivery_s"]


def handshake_s(path_offsets: np.ndarray, path_ports: np.ndarray, port_delay_s: np.ndarray) -> np.ndarray:
    """Base RTT of each path (the time before a new flow's first byte is sent), for several flows.

    The ports of flow ``i`` are ``path_ports[path_offsets[i]:path_offsets[i + 1]]`` (as in a
    :class:`~ns3_hpsched.backends.base.FlowBatch`); an empty path has no delay.
    """
    delay = np.concatenate([port_delay_s[path_ports], [0.0]])  # the 0 closes reduceat's last slice
    one_way = np.add.reduceat(delay, path_offsets[:-1]) if len(path_offsets) > 1 else np.empty(0)
    return 2.0 * np.where(np.diff(path_offsets) > 0, one_way, 0.0)


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
