"""``build_workload``: the ``[workload]`` table of a scenario file -> a validated Workload."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from .. import validate
from ..errors import ConfigError
from .fbtrace import read_fb_trace
from .files import read_workload, validate_workload
from .flowlist import flow_list_workload
from .generate import generate_search
from .sizecdf import host_rates_bps, size_cdf_workload
from .spec import Workload

__all__ = ["build_workload", "WORKLOAD_KINDS"]


def build_workload(spec: dict, n_hosts: int, seed: int, base_dir: str | Path | None = None, *,
                   topology=None) -> Workload:
    """Build the workload a scenario's ``[workload]`` table describes, and validate it.

    Parameters
    ----------
    spec:
        The ``[workload]`` table, parsed (TOML -> dict). ``kind`` selects the rest.
    n_hosts:
        Hosts of the scenario's topology; every host the workload names must exist.
    seed:
        The run's seed (only ``kind = "search"`` draws random numbers).
    base_dir:
        Folder that relative ``path`` values are resolved against (the scenario file's
        folder); default the current directory.
    topology:
        The scenario's topology, for the kinds that need it: ``hpcc_flows`` (node ids of an
        HPCC topology) and ``size_cdf`` (its ``load`` is a fraction of each host's uplink,
        :func:`~ns3_hpsched.workload.sizecdf.host_rates_bps`).

    Keys of ``kind = "search"`` (a generated hyperparameter search)
    -----------------------------------------------------------------
    search : "halving" (default) or "hyperband"
        Successive halving per cojob, or one cojob per Hyperband bracket (Li et al. 2018).
    cojobs : int, default 2 (halving only)
        Number of searches (cojobs).
    configurations : int, default 4 (halving only)
        Configurations (jobs) starting each cojob.
    stages : int, default 3 (halving only)
        Stages per cojob.
    iterations : int or list of int, default 1 (halving only)
        Iterations of the first stage, growing by eta each stage (1, 2, 4 with eta 2), or
        one count per stage.
    eta : number > 1, default 2 (halving) or 3 (hyperband)
        Reduction factor: after a stage of n jobs the best max(1, floor(n/eta)) continue.
    max_resource : int, default 81 (hyperband only)
        Hyperband's R: iterations of the longest stage, in units.
    iterations_per_unit : int, default 1 (hyperband only)
        Iterations per Hyperband resource unit (a stage runs round(r_i * this)).
    join : int, default 0 (halving only)
        New configurations joining at every stage boundary (as in Beamer).
    model : str or list of str, default "resnet50"
        Model profile(s) (``resnet50``, ``vgg16``, ``inception_v3``, ``bert_base``,
        ``gpt2_small``); cojob g trains model[g mod len].
    compute_s : float, default the model's V100 compute time
        Seconds of compute per iteration, overriding the profile.
    pattern : "ring" (default), "ring_chained" or "ps"
        Synchronisation: one-phase ring all-reduce, the 2(N-1) chained ring steps, or
        parameter server (push phase, then pull phase).
    ps : "colocated" (default) or "separate"
        Parameter servers on the workers' hosts, or on hosts of their own (placed like
        workers, one GPU slot each).
    ps_shards : int, default 1
        Parameter-server shards per job.
    workers : int, default 4
        Workers (GPUs) per job.
    gpus_per_host : int, default 1
        GPUs per host; jobs of one cojob never share a GPU.
    placement : "packed" (default), "spread" or "random"
        How workers are placed on hosts (random is seeded).
    arrivals : list of float
        Arrival time of every cojob, seconds. Default: all at 0.
    arrival_rate : float
        Instead of arrivals: Poisson arrivals at this many cojobs per second (first at 0).
    bytes_scale : float, default 1.0
        Multiplies the gradient bytes (rounded to an integer, at least 1), to shrink
        traffic for packet-level runs; recorded in Workload.bytes_scale and source.

    Keys of ``kind = "file"`` (a workload file, see docs/workload-format.md)
    --------------------------------------------------------------------------
    path : str
        The JSON workload file.

    Keys of ``kind = "fb_trace"`` (the Facebook coflow-benchmark trace)
    --------------------------------------------------------------------
    path : str, default ``../shared/data/FB2010-1Hr-150-0.txt`` next to the repository
        The trace; it has 150 ports, so the topology needs at least 150 hosts.
    max_coflows : int, default all (526)
        Read only the first coflows.
    bytes_scale : float, default 1.0
        Multiplies every flow's bytes.

    Keys of ``kind = "flows"`` (an explicit flow list, see workload.flowlist)
    --------------------------------------------------------------------------
    flows : list of tables
        ``{src, dst, bytes, start_s = 0, priority = 0, dport}`` per flow (``dport`` optional: the
        five-tuple port reported in the flows table and ``fct.txt``).

    Keys of ``kind = "hpcc_flows"`` (HPCC's ``flow.txt``, see interchange.hpcc)
    ----------------------------------------------------------------------------
    path : str
        The flow file; needs ``topology`` (node ids are mapped when it is an HPCC topology).

    Keys of ``kind = "size_cdf"`` (flow sizes from a CDF, Poisson arrivals)
    ------------------------------------------------------------------------
    cdf : str
        ``"websearch"``, ``"fb_hadoop"`` (shipped with the package) or a CDF file's path.
    load : float in (0, 1]
        Offered load per host, as a fraction of its bandwidth.
    duration_s : float, or n_flows : int
        Exactly one: arrivals during this many seconds, or this many flows.
    classes : int, default 1
        Priority classes each flow is pinned to at random (the ``pinned`` policy applies them).

    Raises
    ------
    ConfigError
        ``workload.<key>`` for an unknown key or a bad value, with the fix.
    """
    params = validate.table("workload", spec)
    kind = validate.choice("workload.kind", params.pop("kind", None), WORKLOAD_KINDS, "workload kind")
    keys, builder = WORKLOAD_KINDS[kind]
    validate.known_keys("workload", params, keys, f"kind = {kind!r}")
    if "path" in params:
        if not isinstance(params["path"], str) or not params["path"]:
            raise ConfigError("workload.path", f"must be a file path, got {params['path']!r}", "give a file path")
        params["path"] = Path(base_dir or ".") / params["path"]
    elif kind in ("file", "hpcc_flows"):
        raise ConfigError("workload.path", "is missing", f"give the path of the {kind} file")
    workload = builder(params, n_hosts, seed, topology)
    source = {**workload.source, "spec": {k: str(v) if isinstance(v, Path) else v for k, v in spec.items()},
              "seed": seed}
    return replace(workload, source=source)


def _search(params: dict, n_hosts: int, seed: int, topology) -> Workload:
    workload = generate_search(n_hosts=n_hosts, seed=seed, **params)
    validate_workload(workload, n_hosts)
    return workload


def _file(params: dict, n_hosts: int, seed: int, topology) -> Workload:
    return read_workload(params["path"], n_hosts)  # validated while read


def _fb_trace(params: dict, n_hosts: int, seed: int, topology) -> Workload:
    workload = read_fb_trace(**params)
    if workload.n_hosts > n_hosts:
        raise ConfigError("workload.path", f"the trace has {workload.n_hosts} ports but the topology "
                          f"{n_hosts} hosts", f"use a topology of at least {workload.n_hosts} hosts, "
                          f"e.g. big_switch with n = {workload.n_hosts}")
    workload = replace(workload, n_hosts=n_hosts)
    validate_workload(workload, n_hosts)
    return workload


def _flows(params: dict, n_hosts: int, seed: int, topology) -> Workload:
    return flow_list_workload(params.get("flows"), n_hosts)


def _hpcc_flows(params: dict, n_hosts: int, seed: int, topology) -> Workload:
    from ..interchange.hpcc import read_flows  # interchange builds on the workload package

    if topology is None:
        raise ValueError("kind = 'hpcc_flows' needs the topology")
    path = params["path"]
    return flow_list_workload(read_flows(path, topology), n_hosts, field=path.name, source={"path": str(path)})


def _size_cdf(params: dict, n_hosts: int, seed: int, topology) -> Workload:
    if topology is None:
        raise ValueError("kind = 'size_cdf' needs the topology (its load is a fraction of host bandwidth)")
    return size_cdf_workload(n_hosts=n_hosts, seed=seed, host_rate_bps=host_rates_bps(topology), **params)


#: Every ``workload.kind``: its keys (besides ``kind``) and its builder ``(params, n_hosts,
#: seed, topology) -> Workload`` -- the one name map of workload kinds and keys.
WORKLOAD_KINDS: dict[str, tuple[tuple[str, ...], Callable[..., Workload]]] = {
    "search": (tuple(p for p in inspect.signature(generate_search).parameters if p not in ("n_hosts", "seed")),
               _search),
    "file": (("path",), _file),
    "fb_trace": (("path", "max_coflows", "bytes_scale"), _fb_trace),
    "flows": (("flows",), _flows),
    "hpcc_flows": (("path",), _hpcc_flows),
    "size_cdf": (("cdf", "load", "duration_s", "n_flows", "classes"), _size_cdf),
}
