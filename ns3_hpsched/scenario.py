"""Scenario files: load, override, validate -- every error names its field, before any run.

A scenario is a TOML file (``scenarios/NAME.toml``) with these tables::

    name = "small-search"            # defaults to the file name
    description = "what question this scenario answers"
    backend = "packet"               # "packet" (ns-3) or "fluid"
    seed = 1                         # one seed for workload generation and the simulator

    [topology]                       # kind + the topology's own parameters
    kind = "fat_tree"                # fat_tree | leaf_spine | big_switch | dumbbell | hpcc
    k = 4

    [transport]                      # packet backend only
    kind = "dctcp"                   # dctcp | newreno | cubic | rdma, plus transport knobs

    [fluid]                          # fluid backend only
    latency = true                   # add path propagation + one RTT per flow

    [scheduler]
    name = "beamer"                  # a registered policy, or "pkg.module:Class"
    n_classes = 8                    # K strict-priority queues per port
    control_delay_s = 0.0            # trigger -> classes at the senders
    params = {}                      # the policy's own parameters

    [workload]                       # kind + generator parameters (see workload.build_workload)
    kind = "search"

Overrides use dotted keys (``{"scheduler.name": "varys", "topology.k": 8}``); values given
as strings are parsed as TOML values when they parse (``"8"`` -> 8, ``"[1, 2]"`` -> list).
"""

from __future__ import annotations

import copy
import tomllib
from functools import cached_property
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from .errors import ConfigError
from .sched import make_policy
from .sched.base import Policy
from .topology import Topology, make_topology
from .workload import Workload, build_workload
from .workload.flowlist import flow_list_workload
from .workload.sizecdf import host_rates_bps

__all__ = ["Scenario", "load_scenario", "scenario_names", "SCENARIO_DIR"]

#: Where named scenarios live (the repository's ``scenarios/`` folder).
SCENARIO_DIR = Path(__file__).resolve().parents[1] / "scenarios"


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid")


class TransportSpec(BaseModel):
    """The packet backend's transport: ``kind`` plus knobs passed to the backend."""

    model_config = ConfigDict(extra="allow")
    kind: Literal["dctcp", "newreno", "cubic", "rdma"] = "dctcp"


class FluidSpec(_Section):
    """Fluid backend settings."""

    latency: bool = True


class SchedulerSpec(_Section):
    """The scheduling policy and how its decisions reach the network."""

    name: str = "fair"
    n_classes: int = Field(8, ge=1, le=64)
    control_delay_s: float = Field(0.0, ge=0.0)
    params: dict[str, Any] = Field(default_factory=dict)


class Scenario(_Section):
    """A validated scenario; :attr:`built_topology`, :attr:`built_workload` and
    :attr:`built_policy` build (once) the parts its tables describe."""

    name: str
    description: str = ""
    backend: Literal["packet", "fluid"] = "packet"
    seed: int = Field(1, ge=0)
    topology: dict[str, Any]
    transport: TransportSpec = Field(default_factory=TransportSpec)
    fluid: FluidSpec = Field(default_factory=FluidSpec)
    scheduler: SchedulerSpec = Field(default_factory=SchedulerSpec)
    workload: dict[str, Any]
    base_dir: str = Field(".", exclude=True)

    @cached_property
    def built_topology(self) -> Topology:
        """The topology this scenario describes."""
        params = dict(self.topology)
        kind = params.pop("kind", None)
        if kind is None:
            raise ConfigError("topology.kind", "missing", "add kind = \"fat_tree\" (or leaf_spine, big_switch, dumbbell, hpcc)")
        if kind == "hpcc":
            from .interchange.hpcc import read_topology

            return read_topology(self._path(params.pop("path", None), "topology.path"), **params)
        return make_topology(kind, **params)

    @cached_property
    def built_workload(self) -> Workload:
        """The explicit workload (generated with :attr:`seed`, or read from a file)."""
        spec = dict(self.workload)
        n_hosts = self.built_topology.n_hosts
        if "path" in spec:
            spec["path"] = str(self._path(spec["path"], "workload.path"))
        kind = spec.get("kind")
        if kind == "flows":
            _only(spec, {"kind", "flows"}, "workload")
            return flow_list_workload(spec.get("flows") or [], n_hosts)
        if kind == "hpcc_flows":
            from .interchange.hpcc import read_flows

            _only(spec, {"kind", "path"}, "workload")
            records = read_flows(spec["path"], self.built_topology)
            return flow_list_workload(records, n_hosts, field=Path(spec["path"]).name,
                                      source={"path": spec["path"]})
        return build_workload(spec, n_hosts, self.seed, host_rate_bps=host_rates_bps(self.built_topology))

    @cached_property
    def built_policy(self) -> Policy:
        """The scheduling policy with its parameters."""
        return make_policy(self.scheduler.name, **self.scheduler.params)

    def validate_all(self) -> "Scenario":
        """Build topology, workload and policy, so bad input fails before any simulation."""
        _ = self.built_topology, self.built_workload, self.built_policy
        return self

    def resolved(self) -> dict:
        """The fully resolved configuration as JSON-ready data (hashed by sweeps, in run.json)."""
        return self.model_dump(mode="json")

    def _path(self, value: Any, field: str) -> Path:
        if not isinstance(value, str) or not value:
            raise ConfigError(field, f"must be a file path, got {value!r}", "give a path relative to the scenario file")
        path = Path(value)
        if not path.is_absolute():
            path = Path(self.base_dir) / path
        if not path.exists():
            raise ConfigError(field, f"file {str(path)!r} does not exist", "check the path (relative to the scenario file)")
        return path.resolve()


def _only(table: dict, allowed: set[str], name: str) -> None:
    unknown = sorted(set(table) - allowed)
    if unknown:
        raise ConfigError(f"{name}.{unknown[0]}", "unknown key", f"use only {sorted(allowed)}")


def scenario_names() -> list[str]:
    """Names of the scenarios shipped in ``scenarios/``."""
    return sorted(p.stem for p in SCENARIO_DIR.glob("*.toml"))


def load_scenario(name_or_path: str | Path, overrides: dict[str, Any] | None = None) -> Scenario:
    """Load a scenario by name or path, apply dotted-key overrides, and validate it fully."""
    path = Path(name_or_path)
    if not path.suffix:
        path = SCENARIO_DIR / f"{name_or_path}.toml"
    if not path.exists():
        raise ConfigError("scenario", f"no scenario {str(name_or_path)!r}",
                          f"give a path to a .toml file or one of {scenario_names()}")
    try:
        raw = tomllib.loads(path.read_text())
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(str(path), f"is not valid TOML: {exc}", "fix the TOML syntax") from None
    raw.setdefault("name", path.stem)
    raw = apply_overrides(raw, overrides or {})
    raw["base_dir"] = str(path.resolve().parent)
    return scenario_from_dict(raw)


def scenario_from_dict(raw: dict[str, Any]) -> Scenario:
    """Validate a scenario given as a dict (as parsed from TOML)."""
    try:
        scenario = Scenario.model_validate(raw)
    except ValidationError as exc:
        err = exc.errors()[0]
        field = ".".join(str(part) for part in err["loc"]) or "scenario"
        fix = {"extra_forbidden": "remove it or check its spelling against the README's scenario reference",
               "missing": "add it"}.get(err["type"], "see the scenario reference in the README")
        raise ConfigError(field, err["msg"], fix) from None
    return scenario.validate_all()


def apply_overrides(raw: dict[str, Any], overrides: dict[str, Any]) -> dict[str, Any]:
    """Return a copy of ``raw`` with dotted-key ``overrides`` applied."""
    out = copy.deepcopy(raw)
    for dotted, value in overrides.items():
        keys = dotted.split(".")
        node = out
        for key in keys[:-1]:
            child = node.setdefault(key, {})
            if not isinstance(child, dict):
                raise ConfigError(dotted, f"{key!r} is not a table", "override a key inside a table")
            node = child
        node[keys[-1]] = parse_value(value)
    return out


def parse_value(value: Any) -> Any:
    """Parse a command-line string as a TOML value when it is one; else keep it."""
    if not isinstance(value, str):
        return value
    try:
        return tomllib.loads(f"v = {value}")["v"]
    except tomllib.TOMLDecodeError:
        return value
