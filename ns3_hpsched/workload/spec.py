"""The workload as explicit data: cojobs, jobs, stages, and each iteration's flows.

A :class:`Workload` states everything the driver plays out, with no randomness left:
generators (``search.py``, ``collectives.py``, ``placement.py``) resolve seeds, survivors
and placements into one, workload files (``files.py``) read and write it, and the
Facebook trace reader (``fbtrace.py``) produces one too (each trace coflow becomes a
one-job, one-stage, one-iteration cojob with no compute).

Units: seconds, bytes; hosts are topology host numbers ``0 .. n_hosts-1``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = ["Flow", "Sync", "Job", "Stage", "Cojob", "Workload"]


@dataclass(frozen=True)
class Flow:
    """One transfer of ``bytes`` from host ``src`` to host ``dst`` (``src != dst``).

    ``dport`` is a destination port a flow list gave (HPCC's ``flow.txt``), reported in the
    flows table and ``fct.txt``; ``None``: the flow's five-tuple chooses it.
    """

    src: int
    dst: int
    bytes: int
    dport: int | None = None


@dataclass(frozen=True)
class Sync:
    """The synchronisation of one iteration of a job.

    ``phases`` run one after another; each phase is one coflow (ring all-reduce: one
    phase, or 2(N-1) chained steps; parameter server: push then pull). Traffic between
    workers on one host does not touch the network, so generated phases leave it out; a
    phase left with no flow is dropped, and a job on a single host has no phases at all
    (its iterations are compute only).
    """

    phases: tuple[tuple[Flow, ...], ...]
    pattern: str = "explicit"

    @property
    def bytes(self) -> int:
        """Network bytes of one synchronisation (all phases)."""
        return sum(f.bytes for phase in self.phases for f in phase)


@dataclass(frozen=True)
class Job:
    """One configuration of a search, trained data-parallel on ``hosts``.

    An iteration is ``compute_s`` of computation, then :attr:`sync`.
    """

    job_id: int
    hosts: tuple[int, ...]
    compute_s: float
    sync: Sync
    model: str = ""


@dataclass(frozen=True)
class Stage:
    """One round of a cojob: every job in ``jobs`` runs ``iterations`` iterations.

    ``joined`` lists the jobs of ``jobs`` that are new configurations joining at this
    stage boundary (as in Beamer); every other job of a later stage is a survivor of the
    stage before. Stage 0 has no joiners.
    """

    iterations: int
    jobs: tuple[int, ...]
    joined: tuple[int, ...] = ()


@dataclass(frozen=True)
class Cojob:
    """The jobs of one hyperparameter search, arriving together at ``arrival_s``.

    ``stages[s].jobs`` are the jobs that run stage ``s``: the survivors of stage ``s-1``
    plus any new configurations joining at that boundary. ``priority`` pins every flow of
    the cojob to one class (HPCC flow lists give it as ``pg``); only the ``pinned`` policy
    reads it.
    """

    cojob_id: int
    arrival_s: float
    jobs: tuple[Job, ...]
    stages: tuple[Stage, ...]
    priority: int | None = None


@dataclass(frozen=True)
class Workload:
    """Everything the driver plays out. ``source`` records how it was made (for run.json)."""

    cojobs: tuple[Cojob, ...]
    n_hosts: int
    bytes_scale: float = 1.0
    source: dict = field(default_factory=dict, compare=False)

    def n_flows(self) -> int:
        """Network flows the whole workload starts (every stage, job, iteration and phase)."""
        sync_flows = {job.job_id: sum(len(phase) for phase in job.sync.phases)
                      for cojob in self.cojobs for job in cojob.jobs}
        return sum(stage.iterations * sync_flows[j]
                   for cojob in self.cojobs for stage in cojob.stages for j in stage.jobs)

    def network_bytes(self) -> int:
        """Bytes the whole workload puts on the network (every stage, job and iteration)."""
        sync_bytes = {job.job_id: job.sync.bytes for cojob in self.cojobs for job in cojob.jobs}
        return sum(stage.iterations * sync_bytes[j]
                   for cojob in self.cojobs for stage in cojob.stages for j in stage.jobs)
