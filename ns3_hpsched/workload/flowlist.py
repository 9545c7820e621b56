"""Explicit flow lists as workloads: each flow is a one-flow cojob with a pinned class.

This is how the packet core runs the field's plain flow lists (HPCC's ``flow.txt``, or a
``flows = [...]`` array in a scenario): a flow ``{src, dst, bytes, start_s, priority[, dport]}``
becomes a cojob arriving at ``start_s`` with one job, one stage of one iteration, no
compute, and one coflow holding the flow; ``priority`` is pinned on the cojob and the
``pinned`` policy applies it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from .. import validate
from ..errors import ConfigError
from ..validate import MAX_BYTES, MAX_SECONDS, Number
from .spec import Cojob, Flow, Job, Stage, Sync, Workload

__all__ = ["flow_list_workload"]

_KEYS = {"src", "dst", "bytes", "start_s", "priority", "dport"}
_BYTES = Number(integer=True, low=1, high=MAX_BYTES, fix="give the size in bytes")
_START = Number(low=0.0, high=MAX_SECONDS, fix="give the start time in seconds (finite, >= 0)")
_PRIORITY = Number(integer=True, low=0, fix="0 is the highest class")
_DPORT = Number(integer=True, low=0, high=65535, fix="a port in 0..65535, or leave it out")


def flow_list_workload(flows: Sequence[Mapping], n_hosts: int, *, field: str = "workload.flows",
                       source: dict | None = None) -> Workload:
    """Turn flow records into a :class:`Workload` (see the module docstring).

    ``field`` names the records in error messages (e.g. ``"flow.txt"``); record ``i`` is
    reported as ``field[i]``.
    """
    flows = validate.sequence(field, flows, "a list of flow tables")
    if not flows:
        raise ConfigError(field, "holds no flow", "give at least one flow")
    validate.size(field, len(flows), "flows")
    cojobs = []
    for i, rec in enumerate(flows):
        where = f"{field}[{i}]"
        rec = validate.table(where, rec)
        validate.known_keys(where, rec, _KEYS, "a flow")
        for key in ("src", "dst", "bytes"):
            if key not in rec:
                raise ConfigError(f"{where}.{key}", "missing", "give src, dst and bytes for every flow")
        src, dst = (validate.integer(f"{where}.{key}", rec[key], low=0, high=n_hosts - 1,
                                     fix=f"use a host number in 0..{n_hosts - 1}") for key in ("src", "dst"))
        if src == dst:
            raise ConfigError(where, f"src and dst are both host {src}", "a flow must cross the network")
        size = _BYTES.check(f"{where}.bytes", rec["bytes"])
        start = _START.check(f"{where}.start_s", rec.get("start_s", 0.0))
        priority = _PRIORITY.check(f"{where}.priority", rec.get("priority", 0))
        dport = None if rec.get("dport") is None else _DPORT.check(f"{where}.dport", rec["dport"])
        job = Job(i, (src, dst), 0.0, Sync(phases=((Flow(src, dst, size, dport),),), pattern="explicit"))
        cojobs.append(Cojob(i, float(start), (job,), (Stage(1, (i,)),), priority=priority))
    return Workload(tuple(cojobs), n_hosts=n_hosts, source={"kind": "flows", "flows": len(cojobs),
                                                            **(source or {})})
