"""Hyperparameter-search workloads: model profiles, searches, collectives, placement, files.

A :class:`Workload` is explicit data (``spec.py``). It is generated from a few seeded
parameters (``generate.py``, composing ``search.py``, ``placement.py``,
``collectives.py`` and ``models.py``), read from a workload file (``files.py``,
documented in ``docs/workload-format.md``) or from the Facebook coflow trace
(``fbtrace.py``). :func:`build_workload` does any of these from a scenario's
``[workload]`` table.
"""

from .build import WORKLOAD_KINDS, build_workload
from .collectives import PATTERNS, build_sync, explicit_sync, parameter_server, ring_allreduce
from .fbtrace import DEFAULT_TRACE, read_fb_trace
from .files import read_workload, validate_workload, write_workload
from .generate import SEARCHES, generate_search
from .models import MODELS, ModelProfile, get_model
from .placement import PLACEMENTS, Cluster, place_stages
from .search import Bracket, arrival_times, hyperband_brackets, kept, stage_iterations, successive_halving
from .spec import Cojob, Flow, Job, Stage, Sync, Workload

__all__ = [
    "Cojob", "Flow", "Job", "Stage", "Sync", "Workload",
    "build_workload", "WORKLOAD_KINDS",
    "generate_search", "SEARCHES",
    "read_workload", "write_workload", "validate_workload",
    "read_fb_trace", "DEFAULT_TRACE",
    "ModelProfile", "MODELS", "get_model",
    "ring_allreduce", "parameter_server", "explicit_sync", "build_sync", "PATTERNS",
    "Cluster", "place_stages", "PLACEMENTS",
    "kept", "stage_iterations", "Bracket", "hyperband_brackets", "successive_halving", "arrival_times",
]
