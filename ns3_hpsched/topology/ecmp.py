"""Per-flow ECMP: the one definition of which equal-cost next hop a flow takes.

Both backends use this. The packet backend's C++ router implements the same
``flow_hash`` (see ``backends/packet/cpp``) and receives the per-node seeds and the
equal-cost next-hop sets from :class:`~ns3_hpsched.topology.base.Topology`, so a flow
crosses exactly the same links in ns-3 as in the fluid model.

Why a per-node seed: with one seed everywhere, edge and aggregation switches pick
alike and traffic polarises (only 2 of 4 cores of a k=4 fat-tree carry traffic).
"""

from __future__ import annotations

from typing import NamedTuple

import numba
import numpy as np

__all__ = ["FiveTuple", "mix64", "splitmix64", "node_seed", "flow_hash", "hash_words", "flow_five_tuple", "flow_ports",
           "host_ip", "ip_str"]

PROTO_TCP = 6
PROTO_UDP = 17
#: First source port used for flows; ports cycle through 16384 values.
SPORT_BASE = 49152
#: First destination port; it advances by one every 16384 flows, so the
#: (src, dst, sport, dport) of concurrently active flows never collide.
DPORT_BASE = 5000


class FiveTuple(NamedTuple):
    """The fields a switch hashes: IPv4 addresses as integers, ports, protocol."""

    src_ip: int
    dst_ip: int
    sport: int
    dport: int
    proto: int


@numba.njit("uint64(uint64)", cache=True)
def splitmix64(z):
    """SplitMix64 finaliser on a uint64, compiled (numba's uint64 arithmetic wraps mod 2**64,
    as C++ does): the project's one 64-bit mixer, for ECMP hashes and the fluid backend's
    route table alike."""
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return z ^ (z >> np.uint64(31))


@numba.njit("uint64(uint64, uint64, uint64, uint64)", cache=True)
def hash_words(seed, src_ip, dst_ip, ports):
    """The ECMP hash of one flow's words under a node's seed: compiled, and the one definition.

    ``ports`` is ``(sport << 16) | dport``. :func:`flow_hash` and the compiled path walk
    (:mod:`~ns3_hpsched.topology.paths`) both call this; the C++ router repeats it.
    """
    h = seed
    h = splitmix64(h ^ src_ip)
    h = splitmix64(h ^ dst_ip)
    return splitmix64(h ^ ports)


def mix64(z: int) -> int:
    """SplitMix64 finaliser: a fast, well-mixed 64-bit permutation (same in C++)."""
    return int(splitmix64(np.uint64(z & 0xFFFFFFFFFFFFFFFF)))


def node_seed(ecmp_seed: int, node: int) -> int:
    """The hash seed of one node: distinct per node so tiers do not choose alike."""
    return mix64(((ecmp_seed & 0xFFFFFFFF) << 32) ^ (node + 1))


def flow_hash(ft: FiveTuple, seed: int) -> int:
    """Hash of a flow's addresses and ports under a node's seed (64-bit, identical in C++).

    The protocol is left out on purpose: a flow takes the same path whatever carries it
    (TCP, or RDMA over UDP), so the fluid model's paths hold for every transport.
    """
    words = (seed & 0xFFFFFFFFFFFFFFFF, ft.src_ip, ft.dst_ip, (ft.sport << 16) | ft.dport)
    return int(hash_words(*(np.uint64(w) for w in words)))


def host_ip(host: int) -> int:
    """IPv4 address of host ``host`` as an integer: 10.0.0.1 is host 0.

    Hosts are numbered from 0; the address encodes the number plus one in the low
    24 bits, so up to 16 million hosts are addressable.
    """
    return 0x0A000000 | (host + 1)


def ip_str(ip: int) -> str:
    """Dotted-quad form of an integer IPv4 address."""
    return ".".join(str((ip >> s) & 0xFF) for s in (24, 16, 8, 0))


def flow_ports(flow_id):
    """The ``(sport, dport)`` both backends give flow ``flow_id`` (ints, or int64 arrays of ids)."""
    return SPORT_BASE + flow_id % 16384, DPORT_BASE + flow_id // 16384


def flow_five_tuple(flow_id: int, src: int, dst: int, proto: int = PROTO_TCP) -> FiveTuple:
    """The five-tuple both backends give flow ``flow_id`` from host ``src`` to ``dst``."""
    sport, dport = flow_ports(flow_id)
    return FiveTuple(host_ip(src), host_ip(dst), sport, dport, proto)
