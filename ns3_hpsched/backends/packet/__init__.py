"""ns-3 packet backend: strict-priority fat-trees, per-flow ECMP, flows of every transport in C++.

The transports themselves (options, packet hooks, fluid model) are :mod:`ns3_hpsched.transports`;
their C++ halves are compiled from ``cpp/`` by :func:`load`.
"""

from .backend import PacketBackend
from .loader import load

__all__ = ["PacketBackend", "load"]
