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
    """One transfer of ``bytes`` from host ``src`` to host ``dst`` (``src != dst``)."""

    src: int
    dst: int
    bytes: int


@dataclass(frozen=True)
class Sync:
    """The synchronisation of one iteration of a job.

    ``phases`` run one after another; each phase is one coflow (ring all-reduce: one
    phase, or 2(N-1) chained steps; parameter server: push then pull).
    """

    phases: tuple[tuple[Flow, ...], ...]
    pattern: str = "explicit"


@dataclass(frozen=True)
class Job:
    """One configuration of a search, trained data-parallel on ``hosts``.

    An iteration is ``compute_s`` of computation, then :attr:`sync`.
    """

    job: int
    hosts: tuple[int, ...]
    compute_s: float
    sync: Sync
    model: str = ""


@dataclass(frozen=True)
class Stage:
    """One round of a cojob: every job in ``jobs`` runs ``iterations`` iterations."""

    iterations: int
    jobs: tuple[int, ...]


@dataclass(frozen=True)
class Cojob:
    """The jobs of one hyperparameter search, arriving together at ``arrival_s``.

    ``stages[s].jobs`` are the jobs that run stage ``s``: the survivors of stage ``s-1``
    plus any new configurations joining at that boundary.
    """

    cojob: int
    arrival_s: float
    jobs: tuple[Job, ...]
    stages: tuple[Stage, ...]


@dataclass(frozen=True)
class Workload:
    """Everything the driver plays out. ``source`` records how it was made (for run.json)."""

    cojobs: tuple[Cojob, ...]
    n_hosts: int
    bytes_scale: float = 1.0
    source: dict = field(default_factory=dict, compare=False)
