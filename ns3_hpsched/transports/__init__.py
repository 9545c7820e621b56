"""Transports: one package per transport, used by both backends.

A transport (:class:`~.base.Transport`) holds its options, its packet implementation and
its fluid model together, so a scenario's ``[transport]`` table means the same on either
backend. :mod:`.tcp` covers ``dctcp``, ``newreno`` and ``cubic``; :mod:`.rdma` covers
``rdma``. :data:`TRANSPORTS` is the one map of kind names. Nothing here imports ns-3: the
packet hooks receive it.
"""

from __future__ import annotations

from ..errors import ConfigError
from ..validate import Flag, Number, choice, known_keys, table
from .base import UINT32_MAX, Transport, delivery_s
from .rdma import RdmaTransport
from .tcp import TcpTransport

__all__ = ["Transport", "TcpTransport", "RdmaTransport", "TRANSPORTS", "DEFAULT_TRANSPORT", "BACKEND_OPTIONS",
           "transport_options", "make_transport", "check_transport_table", "delivery_s"]

#: The transport class of each ``[transport] kind``.
TRANSPORTS: dict[str, type[Transport]] = {kind: cls for cls in (TcpTransport, RdmaTransport) for kind in cls.KINDS}
#: The transport of a scenario without ``[transport] kind``.
DEFAULT_TRANSPORT = "dctcp"

#: Options of the ``[transport]`` table that every kind takes: the packet backend's own.
BACKEND_OPTIONS: dict[str, Number | Flag] = {
    "device_queue_packets": Number(integer=True, low=1, high=UINT32_MAX, fix="use 1 or 2"),
}


def transport_options(kind: str) -> dict[str, Number | Flag]:
    """The rules of the options transport ``kind`` takes (its ``[transport]`` keys besides
    ``kind`` and :data:`BACKEND_OPTIONS`)."""
    return TRANSPORTS[choice("transport.kind", kind, TRANSPORTS, "transport")].OPTIONS


def make_transport(transport: str | Transport, **options) -> Transport:
    """A transport from its kind and options (or the given instance, without options)."""
    if isinstance(transport, Transport):
        if options:
            raise ConfigError("backend", f"options {sorted(options)} given with a Transport instance",
                              "set them on the Transport instead")
        return transport
    known_keys("transport", options, transport_options(transport), f"kind = {transport!r}")
    return TRANSPORTS[transport](name=transport, **options)


def check_transport_table(spec: dict) -> Transport:
    """Check a scenario's whole ``[transport]`` table (kind, every key and value) and return
    its transport; used whatever the backend, so a fluid scenario's table is checked too."""
    options = table("transport", spec)
    kind = options.pop("kind", DEFAULT_TRANSPORT)
    known_keys("transport", options, {**BACKEND_OPTIONS, **transport_options(kind)}, f"kind = {kind!r}")
    for name, rule in BACKEND_OPTIONS.items():
        rule.check(f"transport.{name}", options.pop(name, 1))
    return make_transport(kind, **options)

