"""Explicit flow lists as workloads: each flow is a one-flow cojob with a pinned class.

This is how the packet core runs the field's plain flow lists (HPCC's ``flow.txt``, or a
``flows = [...]`` array in a scenario): a flow ``{src, dst, bytes, start_s, priority[, dport]}``
becomes a cojob arriving at ``start_s`` with one job, one stage of one iteration, no
compute, and one coflow holding the flow; ``priority`` is pinned on the cojob and the
``pinned`` policy applies it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from ..errors import ConfigError
from .spec import Cojob, Flow, Job, Stage, Sync, Workload

__all__ = ["flow_list_workload"]

_KEYS = {"src", "dst", "bytes", "start_s", "priority", "dport"}


def flow_list_workload(flows: Sequence[Mapping], n_hosts: int, *, field: str = "workload.flows",
                       source: dict | None = None) -> Workload:
    """Turn flow records into a :class:`Workload` (see the module docstring).

    ``field`` names the records in error messages (e.g. ``"flow.txt"``); record ``i`` is
    reported as ``field[i]``.
    """
    if not flows:
        raise ConfigError(field, "holds no flow", "give at least one flow")
    cojobs = []
    for i, rec in enumerate(flows):
        where = f"{field}[{i}]"
        unknown = set(rec) - _KEYS
        if unknown:
            raise ConfigError(f"{where}.{sorted(unknown)[0]}", "unknown key", f"use only {sorted(_KEYS)}")
        for key in ("src", "dst", "bytes"):
            if key not in rec:
                raise ConfigError(f"{where}.{key}", "missing", "give src, dst and bytes for every flow")
        src, dst, size = rec["src"], rec["dst"], rec["bytes"]
        start, priority = rec.get("start_s", 0.0), rec.get("priority", 0)
        for key, host in (("src", src), ("dst", dst)):
            if not isinstance(host, int) or not 0 <= host < n_hosts:
                raise ConfigError(f"{where}.{key}", f"host {host!r} does not exist",
                                  f"use a host number in 0..{n_hosts - 1}")
        if src == dst:
            raise ConfigError(where, f"src and dst are both host {src}", "a flow must cross the network")
        if not isinstance(size, int) or size <= 0:
            raise ConfigError(f"{where}.bytes", f"must be a positive integer, got {size!r}", "give the size in bytes")
        if not isinstance(start, (int, float)) or start < 0:
            raise ConfigError(f"{where}.start_s", f"must be >= 0 seconds, got {start!r}", "give the start time in seconds")
        if not isinstance(priority, int) or priority < 0:
            raise ConfigError(f"{where}.priority", f"must be a class >= 0, got {priority!r}", "0 is the highest class")
        dport = rec.get("dport")
        if dport is not None and (not isinstance(dport, int) or not 0 <= dport < 65536):
            raise ConfigError(f"{where}.dport", f"must be a port in 0..65535, got {dport!r}", "or leave it out")
        job = Job(i, (src, dst), 0.0, Sync(phases=((Flow(src, dst, size, dport),),), pattern="explicit"))
        cojobs.append(Cojob(i, float(start), (job,), (Stage(1, (i,)),), priority=priority))
    return Workload(tuple(cojobs), n_hosts=n_hosts, source={"kind": "flows", "flows": len(cojobs),
                                                            **(source or {})})
