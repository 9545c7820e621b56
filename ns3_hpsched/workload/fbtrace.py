"""The Facebook coflow-benchmark trace (FB2010, 526 coflows on 150 ports) as a workload.

Format (``coflow/coflow-benchmark``; see ``../shared/data/README.md``): a header
``<ports> <coflows>``, then one line per coflow::

    <id> <arrival ms> <M> <mapper ports ...> <R> <reducer port>:<MB> ...

Each line becomes one cojob (id = the trace's coflow id, arrival = ms / 1000) holding one
job (same id) with one stage of one iteration, no compute, and one phase: the coflow.
As CoflowSim does, every (mapper, reducer) pair is one flow of ``ceil(MB / M)`` MiB.
Ports are hosts of a ``big_switch(150)`` (one host per rack port).

Mapper-reducer pairs on the *same* port cannot be network flows here (a flow needs
``src != dst``, and with one host per port the rack-local shuffle never crosses the
fabric in our model). They are left out and counted in ``Workload.source``
(``local_pairs_dropped``, ``local_bytes_dropped``); a coflow made only of such pairs
stays as a cojob whose job has no phases (it completes at its arrival). CoflowSim
instead charges them to the port's uplink and downlink, so CCTs of those coflows differ.
"""

from __future__ import annotations

import math
import os
from pathlib import Path

from .. import validate
from ..errors import ConfigError
from ..validate import MAX_BYTES, MAX_SECONDS, Number
from .spec import Cojob, Flow, Job, Stage, Sync, Workload

__all__ = ["read_fb_trace", "DEFAULT_TRACE", "MIB"]

#: CoflowSim's megabyte: 1 MiB.
MIB = 1 << 20
#: The trace in the team's shared data folder, which sits next to the repository root.
DEFAULT_TRACE = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "FB2010-1Hr-150-0.txt"


_LINE = "use '<id> <arrival ms> <M> <mappers...> <R> <port>:<MB> ...'"
#: A reducer's megabytes: positive, and small enough that its flows' bytes stay exact.
_MB = Number(low=0.0, low_open=True, high=MAX_BYTES / MIB, fix="a reducer receives a positive number of MB")


def _fields(line: str, where: str) -> tuple[int, float, list[int], list[tuple[int, float]]]:
    tokens = line.split()
    try:
        coflow, arrival_ms, m = int(tokens[0]), int(tokens[1]), int(tokens[2])
        mappers = [int(t) for t in tokens[3:3 + m]]
        r = int(tokens[3 + m])
        reducers = [(int(p), float(mb)) for p, mb in (t.split(":") for t in tokens[4 + m:4 + m + r])]
    except (IndexError, ValueError) as exc:
        raise ConfigError(where, f"malformed coflow line ({exc})", _LINE) from None
    if len(mappers) != m or len(reducers) != r or len(tokens) != 4 + m + r or m < 1 or r < 1:
        raise ConfigError(where, f"expected {m} mappers and {r} reducers, got {len(tokens)} fields",
                          "make M and R match the ports listed")
    validate.integer(f"{where}.id", coflow, fix="a coflow id is an integer")
    arrival_s = validate.number(f"{where}.arrival", arrival_ms / 1000.0, low=0.0, high=MAX_SECONDS,
                                fix="the arrival in ms, >= 0")
    for k, (_, mb) in enumerate(reducers):
        _MB.check(f"{where}.reducers[{k}]", mb)
    return coflow, arrival_s, mappers, reducers


def read_fb_trace(path: str | os.PathLike | None = None, *, max_coflows: int | None = None,
                  bytes_scale: float = 1.0) -> Workload:
    """Read the coflow-benchmark trace as a workload of one-coflow cojobs.

    Parameters
    ----------
    path:
        Trace file; default :data:`DEFAULT_TRACE` (``../shared/data/FB2010-1Hr-150-0.txt``
        relative to the repository root).
    max_coflows:
        Read only the first this many coflows (for small runs); None reads all.
    bytes_scale:
        Multiplies every flow's bytes (rounded to the nearest integer, at least 1).

    Returns
    -------
    A :class:`Workload` with ``n_hosts`` = the trace's port count.
    """
    path = DEFAULT_TRACE if path is None else Path(path)
    validate.integer("workload.max_coflows", max_coflows, low=1, optional=True, fix="e.g. 50, or unset for all")
    validate.number("workload.bytes_scale", bytes_scale, low=0.0, low_open=True, fix="e.g. 0.01")
    lines = validate.read_text(path, "workload.path", "trace").splitlines()
    try:
        ports, count = (int(t) for t in lines[0].split())
    except (IndexError, ValueError):
        raise ConfigError(f"{path.name}:1", "header must be '<ports> <coflows>'", "fix the first line") from None
    body = [(n, line) for n, line in enumerate(lines[1:], start=2) if line.strip()]
    if len(body) != count:
        raise ConfigError(f"{path.name}:1", f"header announces {count} coflows, the file has {len(body)}",
                          "fix the header or the file")
    cojobs, dropped_pairs, dropped_bytes, n_flows = [], 0, 0, 0
    for n, line in body[:max_coflows]:
        where = f"{path.name}:{n}"
        coflow, arrival_s, mappers, reducers = _fields(line, where)
        n_flows = validate.size(where, n_flows + len(mappers) * len(reducers), "flows (mappers x reducers)")
        for port in mappers + [p for p, _ in reducers]:
            if not 0 <= port < ports:
                raise ConfigError(where, f"port {port} is out of range", f"use ports 0..{ports - 1}")
        flows = []
        for dst, mb in reducers:
            size = validate.scaled_bytes(where, math.ceil(mb / len(mappers)) * MIB, bytes_scale)
            for src in mappers:
                if src == dst:
                    dropped_pairs += 1
                    dropped_bytes += size
                else:
                    flows.append(Flow(src, dst, size))
        hosts = tuple(sorted(set(mappers) | {p for p, _ in reducers}))
        sync = Sync(phases=(tuple(flows),) if flows else (), pattern="fb_coflow")
        job = Job(job_id=coflow, hosts=hosts, compute_s=0.0, sync=sync, model="")
        cojobs.append(Cojob(cojob_id=coflow, arrival_s=arrival_s, jobs=(job,), stages=(Stage(1, (coflow,)),)))
    source = {"kind": "fb_trace", "path": str(path), "coflows": len(cojobs), "ports": ports,
              "bytes_scale": float(bytes_scale), "local_pairs_dropped": dropped_pairs,
              "local_bytes_dropped": dropped_bytes}
    return Workload(cojobs=tuple(cojobs), n_hosts=ports, bytes_scale=float(bytes_scale), source=source)
