"""Topologies (pure descriptions, no ns-3) and the per-flow ECMP path rule."""

import inspect

from .base import Link, Topology
from .ecmp import FiveTuple, flow_five_tuple, flow_hash, flow_ports, host_ip
from .library import (TOPOLOGIES, topology_keys, BigSwitch, Dumbbell, FatTree, LeafSpine, big_switch, dumbbell,
                      fat_tree, leaf_spine)

__all__ = ["Link", "Topology", "FatTree", "LeafSpine", "BigSwitch", "Dumbbell", "TOPOLOGIES",
           "fat_tree", "leaf_spine", "big_switch", "dumbbell", "FiveTuple", "flow_five_tuple",
           "flow_ports", "flow_hash", "host_ip", "make_topology", "topology_keys"]


def make_topology(kind: str, **params) -> Topology:
    """Build a topology by its scenario-file name (``fat_tree``, ``leaf_spine``, ..., ``hpcc``).

    Every key of ``params`` must be one the kind takes (:func:`topology_keys`); each value
    is checked by the builder. Errors name ``topology.<key>``.
    """
    from .. import validate
    from ..errors import ConfigError

    validate.choice("topology.kind", kind, TOPOLOGIES, "topology")
    keys = topology_keys(kind)
    validate.known_keys("topology", params, keys, f"kind = {kind!r}")
    missing = [p.name for p in inspect.signature(TOPOLOGIES[kind]).parameters.values()
               if p.default is p.empty and p.kind is p.POSITIONAL_OR_KEYWORD and p.name not in params]
    if missing:
        raise ConfigError(f"topology.{missing[0]}", f"is missing for kind = {kind!r}", f"set topology.{missing[0]}")
    return TOPOLOGIES[kind](**params)
