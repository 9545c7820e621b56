"""Realise a :class:`~ns3_hpsched.topology.Topology` in ns-3.

Order matters (NS3-NOTES): queue discs go on every device BEFORE addresses are assigned
(address assignment otherwise installs ns-3's default FqCoDel); routing tables are
handed over once, after addresses exist.
"""

from __future__ import annotations

import numpy as np

from ...topology import Topology
from ...transports import Transport

__all__ = ["realise", "routing_table"]


def realise(cpp, topology: Topology, transport: Transport, *, n_bands: int, device_queue_packets: int):
    """Build the ns-3 network of ``topology``; return the C++ ``hpsched::Fabric``."""
    fabric = cpp.Fabric()
    links = topology.links
    fabric.Build(topology.n_nodes, topology.n_hosts,
                 [l.a for l in links], [l.b for l in links],
                 [l.rate_bps for l in links], [l.delay_s for l in links],
                 topology.mtu_bytes, device_queue_packets)
    children = {}
    for port, rate in enumerate(topology.port_capacity_bps):
        if rate not in children:
            kind, attrs = transport.queue_disc(float(rate), topology)
            children[rate] = (kind, _strings(list(attrs)), _strings(list(attrs.values())))
        fabric.InstallQueueDisc(port, n_bands, *children[rate])
    fabric.AssignAddresses()
    for node in range(topology.n_nodes):
        row_of_host, offsets, hops = routing_table(topology, node)
        fabric.SetRoutes(node, int(topology.node_seeds[node]), row_of_host, offsets, len(offsets) - 1, hops)
    return fabric


def routing_table(topology: Topology, node: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Next hops of ``node`` toward every host, as deduplicated rows.

    Returns ``row_of_host`` (row index per destination host), ``offsets`` (row ``r``
    is ``hops[offsets[r]:offsets[r+1]]``) and ``hops`` (next-hop node numbers), all
    uint32. Hosts behind one switch share their next hops except at that switch, so
    ``Topology.next_hops`` is asked once per destination switch.
    """
    rows: dict[tuple[int, ...], int] = {}
    switches, first_host, group = np.unique(topology.host_switch, return_index=True, return_inverse=True)
    row_of_group = np.array([rows.setdefault(topology.next_hops(node, int(h)), len(rows)) if t != node else 0
                             for t, h in zip(switches, first_host)], dtype=np.uint32)
    row_of_host = row_of_group[group]
    for h in np.flatnonzero(topology.host_switch == node):
        row_of_host[h] = rows.setdefault((int(h),), len(rows))
    hop_rows = sorted(rows, key=rows.get)
    offsets = np.concatenate([[0], np.cumsum([len(r) for r in hop_rows])]).astype(np.uint32)
    hops = np.fromiter((h for r in hop_rows for h in r), dtype=np.uint32, count=int(offsets[-1]))
    return row_of_host.astype(np.uint32), offsets, hops


def _strings(items: list[str]):
    import cppyy

    vec = cppyy.gbl.std.vector["std::string"]()
    for item in items:
        vec.push_back(item)
    return vec
