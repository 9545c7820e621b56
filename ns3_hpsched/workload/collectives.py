"""Synchronisation patterns: the flows of one iteration's gradient exchange.

Each builder takes a job's worker hosts (in ring order; a host appears once per worker
it holds) and the model's gradient size ``model_bytes`` = M, and returns a
:class:`~ns3_hpsched.workload.spec.Sync`. Flows between two workers of the same host
never reach the network and are left out; phases left without a flow are dropped.

Rounding (bytes are integers, and every rule is exact when it divides evenly):

* ring all-reduce, one phase: each worker sends ``ceil(2*(N-1)*M / N)`` bytes;
* ring all-reduce, chained: each of the 2(N-1) steps sends ``ceil(M / N)`` per worker;
* parameter server: M is split over the S shards exactly, the first ``M mod S`` shards
  one byte larger than ``M // S``, so push and pull each move exactly M per worker.
"""

from __future__ import annotations

from collections.abc import Sequence

from .. import validate
from ..errors import ConfigError
from .spec import Flow, Sync

__all__ = ["ring_allreduce", "parameter_server", "explicit_sync", "shard_sizes", "PATTERNS",
           "build_sync"]


def _network_phase(flows: Sequence[tuple[int, int, int]]) -> tuple[Flow, ...]:
    """The flows of a phase that cross the network (source and destination hosts differ)."""
    return tuple(Flow(src, dst, size) for src, dst, size in flows if src != dst)


def _sync(phases: Sequence[Sequence[tuple[int, int, int]]], pattern: str) -> Sync:
    network = (_network_phase(phase) for phase in phases)
    return Sync(phases=tuple(phase for phase in network if phase), pattern=pattern)


def _check_model_bytes(model_bytes: int) -> None:
    validate.integer("model_bytes", model_bytes, low=1, high=validate.MAX_BYTES,
                     fix="give the gradient size in bytes (4 bytes per fp32 parameter)")


def ring_allreduce(hosts: Sequence[int], model_bytes: int, *, chained: bool = False) -> Sync:
    """Ring all-reduce over the workers on ``hosts`` (worker i sends to worker i+1 mod N).

    Parameters
    ----------
    hosts:
        Host of each of the N workers, in ring order.
    model_bytes:
        Gradient size M in bytes.
    chained:
        False (default): one phase, one coflow per iteration, in which every worker sends
        ``ceil(2(N-1)M/N)`` bytes to its successor -- the total of reduce-scatter plus
        all-gather (Patarasuk & Yuan 2009). True: the 2(N-1) steps as chained phases,
        each worker sending ``ceil(M/N)`` per step, which models the step barriers.
    """
    _check_model_bytes(model_bytes)
    n = len(hosts)
    if n < 2:
        return Sync(phases=(), pattern="ring_chained" if chained else "ring")
    ring = [(hosts[i], hosts[(i + 1) % n]) for i in range(n)]
    if chained:
        chunk = -(-model_bytes // n)
        return _sync([[(a, b, chunk) for a, b in ring]] * (2 * (n - 1)), "ring_chained")
    per_worker = -(-2 * (n - 1) * model_bytes // n)
    return _sync([[(a, b, per_worker) for a, b in ring]], "ring")


def shard_sizes(model_bytes: int, shards: int) -> list[int]:
    """Split ``model_bytes`` over ``shards`` exactly: the first ``M mod S`` get one byte more."""
    base, extra = divmod(model_bytes, shards)
    return [base + (k < extra) for k in range(shards)]


def parameter_server(hosts: Sequence[int], model_bytes: int, *,
                     ps_hosts: Sequence[int] | None = None, shards: int = 1) -> Sync:
    """Parameter-server synchronisation: a push phase, then a pull phase.

    In the push every worker sends shard k of its gradient to server k; in the pull every
    server sends its updated shard back to every worker. Before intra-host traffic is
    dropped, push + pull move exactly 2*N*M bytes for N workers.

    Parameters
    ----------
    hosts:
        Host of each worker.
    model_bytes:
        Gradient size M in bytes.
    ps_hosts:
        Hosts of separate servers, one shard each (``shards`` is then ``len(ps_hosts)``);
        all N workers' traffic crosses the network: 2*N*M bytes.
        None (default): servers colocated with the workers, shard k on the host of
        worker k. A worker's exchange with its own host's shard stays local, so with
        distinct worker hosts the network carries 2*(N-1)*M bytes.
    shards:
        Number of colocated shards S (1 <= S <= N); ignored with ``ps_hosts``.
    """
    _check_model_bytes(model_bytes)
    if ps_hosts is not None:
        servers = list(ps_hosts)
        if not servers:
            raise ConfigError("ps_hosts", "is empty", "list at least one server host, or omit it")
    else:
        validate.integer("ps_shards", shards, low=1, high=len(hosts),
                         fix="colocate at most one shard per worker (1..the workers)")
        servers = list(hosts[:shards])
    sizes = shard_sizes(model_bytes, len(servers))
    push = [(w, s, size) for w in hosts for s, size in zip(servers, sizes)]
    pull = [(s, w, size) for s, size in zip(servers, sizes) for w in hosts]
    return _sync([push, pull], "ps")


def explicit_sync(phases: Sequence[Sequence[tuple[int, int, int]]]) -> Sync:
    """A synchronisation stated flow by flow: ``phases[i]`` is a list of ``(src, dst, bytes)``.

    Nothing is dropped or rounded: :func:`~ns3_hpsched.workload.files.validate_workload`
    rejects flows with ``src == dst`` or non-positive bytes.
    """
    return Sync(phases=tuple(tuple(Flow(int(s), int(d), b) for s, d, b in phase) for phase in phases),
                pattern="explicit")


#: Pattern names used in scenario and workload files.
PATTERNS: tuple[str, ...] = ("ring", "ring_chained", "ps")


def build_sync(pattern: str, hosts: Sequence[int], model_bytes: int, *, where: str,
               ps_hosts: Sequence[int] | None = None, ps_shards: int = 1) -> Sync:
    """Build the synchronisation named ``pattern`` (one of :data:`PATTERNS`).

    ``ps_hosts`` and ``ps_shards`` apply to ``"ps"`` only. Errors name their field under
    ``where`` (e.g. ``"workload.pattern"`` or ``"w.json:cojobs[0].jobs[1].ps_shards"``).
    """
    validate.choice(f"{where}.pattern", pattern, PATTERNS, "pattern")
    n = len(hosts)
    flows = {"ring": n, "ring_chained": 2 * n * n,
             "ps": 2 * n * (len(ps_hosts) if isinstance(ps_hosts, (list, tuple)) else n)}[pattern]
    validate.size(f"{where}.hosts", flows, f"flows per {pattern} synchronisation")
    try:
        if pattern == "ring":
            return ring_allreduce(hosts, model_bytes)
        if pattern == "ring_chained":
            return ring_allreduce(hosts, model_bytes, chained=True)
        return parameter_server(hosts, model_bytes, ps_hosts=ps_hosts, shards=ps_shards)
    except ConfigError as exc:
        raise ConfigError(f"{where}.{exc.field}", exc.problem, exc.fix) from None
