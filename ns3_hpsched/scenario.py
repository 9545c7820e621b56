"""Scenario files: load, override, validate -- every error names its field, before any run.

A scenario is a TOML file (``scenarios/NAME.toml``) with these tables::

    name = "small-search"            # defaults to the file name
    description = "what question this scenario answers"
    backend = "packet"               # "packet" (ns-3) or "fluid"
    seed = 1                         # one seed for workload generation and the simulator

    [topology]                       # kind + the topology's own parameters
    kind = "fat_tree"                # fat_tree | leaf_spine | big_switch | dumbbell | hpcc
    k = 4

    [transport]                      # used by both backends (ns3_hpsched.transports)
    kind = "dctcp"                   # dctcp | newreno | cubic | rdma, plus transport knobs

    [fluid]                          # fluid backend only
    latency = true                   # add the transport's start-up and the path's delay per flow

    [scheduler]
    name = "beamer"                  # a registered policy, or "pkg.module:Class"
    n_classes = 8                    # K strict-priority queues per port
    control_delay_s = 0.0            # trigger -> classes at the senders
    params = {}                      # the policy's own parameters

    [workload]                       # kind + generator parameters (see workload.build_workload)
    kind = "search"                  # search | file | fb_trace | flows | hpcc_flows

Every table is checked key by key against its package's name map (a misspelt key gets a
"did you mean"), every value against its rule (:mod:`ns3_hpsched.validate`), and the
topology, transport, workload and policy are built, all in :func:`load_scenario`. Sizes
are bounded by memory: 64 KiB per node or link, 1 KiB per flow, job or GPU slot, of this
machine's memory or of ``$NS3_HPSCHED_MEMORY_GIB`` (set it to plan for a larger machine).

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

from . import validate
from .errors import ConfigError
from .monitor import MonitorSpec
from .sched import make_policy
from .sched.base import Policy
from .topology import Topology, make_topology
from .transports import DEFAULT_TRANSPORT, Transport, check_transport_table
from .validate import MAX_SECONDS, Flag, Number
from .workload import Workload, build_workload

__all__ = ["Scenario", "load_scenario", "scenario_names", "scenario_from_dict", "SCENARIO_DIR"]

#: Where named scenarios live (the repository's ``scenarios/`` folder).
SCENARIO_DIR = Path(__file__).resolve().parents[1] / "scenarios"
#: Most strict-priority classes: the class travels in the 6-bit DSCP field.
MAX_CLASSES = 64


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, allow_inf_nan=False)


class TransportSpec(BaseModel):
    """The ``[transport]`` table: ``kind`` plus its knobs, checked against the transport's own
    name map (:func:`~ns3_hpsched.transports.transport_options`)."""

    model_config = ConfigDict(extra="allow")
    kind: str = DEFAULT_TRANSPORT


class FluidSpec(_Section):
    """Fluid backend settings."""

    latency: bool = True


class SchedulerSpec(_Section):
    """The scheduling policy and how its decisions reach the network."""

    name: str = "fair"
    n_classes: int = 8
    control_delay_s: float = 0.0
    params: dict[str, Any] = Field(default_factory=dict)


class Scenario(_Section):
    """A validated scenario; :attr:`built_topology`, :attr:`built_workload` and
    :attr:`built_policy` build (once) the parts its tables describe."""

    name: str
    description: str = ""
    backend: Literal["packet", "fluid"] = "packet"
    seed: int = 1
    topology: dict[str, Any]
    transport: TransportSpec = Field(default_factory=TransportSpec)
    fluid: FluidSpec = Field(default_factory=FluidSpec)
    scheduler: SchedulerSpec = Field(default_factory=SchedulerSpec)
    workload: dict[str, Any]
    monitor: MonitorSpec | None = Field(None, exclude_if=lambda m: m is None or not m.enabled)
    base_dir: str = Field(".", exclude=True)

    @cached_property
    def built_topology(self) -> Topology:
        """The topology this scenario describes."""
        params = self._resolve_path(self.topology)
        kind = params.pop("kind", None)
        if kind is None:
            raise ConfigError("topology.kind", "is missing", "add kind = \"fat_tree\" (or leaf_spine, big_switch, ...)")
        return make_topology(kind, **params)

    @cached_property
    def built_transport(self) -> Transport:
        """The transport of the ``[transport]`` table (checked on either backend)."""
        return check_transport_table(self.transport.model_dump())

    @cached_property
    def built_workload(self) -> Workload:
        """The explicit workload (generated with :attr:`seed`, or read from a file)."""
        return build_workload(self._resolve_path(self.workload), self.built_topology.n_hosts, self.seed,
                              topology=self.built_topology)

    @cached_property
    def built_policy(self) -> Policy:
        """The scheduling policy with its parameters."""
        return make_policy(self.scheduler.name, **self.scheduler.params)

    def validate_all(self) -> "Scenario":
        """Build topology, transport, workload and policy, so bad input fails before any run."""
        _ = self.built_topology, self.built_transport, self.built_workload, self.built_policy
        return self

    def resolved(self) -> dict:
        """The fully resolved configuration as JSON-ready data (hashed by sweeps, in run.json)."""
        return self.model_dump(mode="json")

    def _resolve_path(self, spec: dict[str, Any]) -> dict[str, Any]:
        """A copy of a table with its ``path`` (a file) made relative to the scenario file."""
        params = dict(spec)
        if isinstance(params.get("path"), str) and params["path"]:
            params["path"] = str(Path(self.base_dir) / params["path"])
        return params


#: Rules of the scenario's own values (each package checks its tables' values itself).
_RULES: dict[str, Number | Flag] = {
    "seed": Number(integer=True, low=0, fix="a non-negative integer, e.g. 1"),
    "scheduler.n_classes": Number(integer=True, low=1, high=MAX_CLASSES, fix="8 matches commodity switches"),
    "scheduler.control_delay_s": Number(low=0.0, high=MAX_SECONDS, fix="seconds, e.g. 0.0 or 1e-4"),
    "fluid.latency": Flag(),
}
_TABLES = {"topology": None, "transport": None, "fluid": FluidSpec, "scheduler": SchedulerSpec, "workload": None}


def scenario_names() -> list[str]:
    """Names of the scenarios shipped in ``scenarios/``."""
    return sorted(p.stem for p in SCENARIO_DIR.glob("*.toml"))


def load_scenario(name_or_path: str | Path, overrides: dict[str, Any] | None = None) -> Scenario:
    """Load a scenario by name or path, apply dotted-key overrides, and validate it fully.

    Everything is checked here, before any simulation: each table key by key against the
    name map of its package (topology, transport, workload, policy), each value against its
    rule, and the parts built (topology, transport, workload, policy). A sweep validates a
    grid point by calling this with the point's overrides.
    """
    path = Path(name_or_path)
    if not path.suffix:
        path = SCENARIO_DIR / f"{name_or_path}.toml"
    if not path.exists():
        raise ConfigError("scenario", f"no scenario {str(name_or_path)!r}",
                          f"{validate.did_you_mean(str(name_or_path), scenario_names())}"
                          f"give a path to a .toml file or one of {scenario_names()}")
    try:
        raw = tomllib.loads(validate.read_text(path, "scenario", "scenario file"))
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(path.name, f"is not valid TOML: {exc}", "fix the TOML syntax") from None
    raw.setdefault("name", path.stem)
    raw = apply_overrides(raw, overrides or {})
    raw["base_dir"] = str(path.resolve().parent)
    return scenario_from_dict(raw)


def scenario_from_dict(raw: dict[str, Any]) -> Scenario:
    """Validate a scenario given as a dict (as parsed from TOML), then build its parts."""
    raw = copy.deepcopy(raw)
    _check_tables(raw)
    try:
        scenario = Scenario.model_validate(raw)
    except ValidationError as exc:
        err = exc.errors()[0]
        field = ".".join(str(part) for part in err["loc"]) or "scenario"
        raise ConfigError(field, err["msg"], "see the scenario reference in scenario.py's docstring") from None
    return scenario.validate_all()


def _check_tables(raw: dict[str, Any]) -> None:
    """Check the scenario's keys and its own values (with a did-you-mean for a misspelt key)."""
    validate.known_keys("", raw, Scenario.model_fields, "a scenario")
    for name, model in _TABLES.items():
        if name in raw:
            section = validate.table(name, raw[name])
            if model is not None:
                validate.known_keys(name, section, model.model_fields, f"[{name}]")
    for dotted, rule in _RULES.items():
        *tables, key = dotted.split(".")
        node = raw.get(tables[0], {}) if tables else raw
        if key in node:
            node[key] = rule.check(dotted, node[key])  # numpy integers become Python ints
    if "backend" in raw:
        validate.choice("backend", raw["backend"], ("packet", "fluid"), "backend")


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
