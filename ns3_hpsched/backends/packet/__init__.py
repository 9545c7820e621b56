"""ns-3 packet backend: strict-priority fat-trees, per-flow ECMP, TCP/DCTCP flows in C++."""

from .backend import PacketBackend
from .loader import load
from .transport import TRANSPORTS, TcpTransport, Transport, make_transport

__all__ = ["PacketBackend", "Transport", "TcpTransport", "TRANSPORTS", "make_transport", "load"]
