"""Topologies (pure descriptions, no ns-3) and the per-flow ECMP path rule."""

from .base import Link, Topology
from .ecmp import FiveTuple, flow_five_tuple, flow_hash, host_ip
from .library import (TOPOLOGIES, BigSwitch, Dumbbell, FatTree, LeafSpine, big_switch, dumbbell,
                      fat_tree, leaf_spine)

__all__ = ["Link", "Topology", "FatTree", "LeafSpine", "BigSwitch", "Dumbbell", "TOPOLOGIES",
           "fat_tree", "leaf_spine", "big_switch", "dumbbell", "FiveTuple", "flow_five_tuple",
           "flow_hash", "host_ip", "make_topology"]


def make_topology(kind: str, **params) -> Topology:
    """Build a topology by its scenario-file name (``fat_tree``, ``leaf_spine``, ...)."""
    from ..errors import ConfigError

    try:
        cls = TOPOLOGIES[kind]
    except KeyError:
        raise ConfigError("topology.kind", f"unknown topology {kind!r}",
                          f"use one of {sorted(TOPOLOGIES)}") from None
    try:
        return cls(**params)
    except TypeError as exc:
        raise ConfigError("topology", str(exc), f"see the docstring of {cls.__name__}") from None
