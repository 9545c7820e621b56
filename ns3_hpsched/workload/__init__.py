"""Hyperparameter-search workloads: model profiles, searches, collectives, placement, files."""

from .spec import Cojob, Flow, Job, Stage, Sync, Workload

__all__ = ["Cojob", "Flow", "Job", "Stage", "Sync", "Workload"]
