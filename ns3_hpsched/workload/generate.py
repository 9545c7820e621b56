"""Generate a hyperparameter-search workload from a few parameters and a seed.

Composition only: the search (:mod:`.search`) decides stages and survivors, the placement
(:mod:`.placement`) puts each cojob's jobs on hosts, the collectives (:mod:`.collectives`)
turn a job's hosts and model into its synchronisation flows. Each concern draws from its
own random stream, ``numpy.random.default_rng([seed, stream])``, so changing for example
the placement policy does not change which configurations survive.

Each cojob is placed on the whole cluster independently of the others: jobs of one cojob
never share a GPU, jobs of different cojobs may (compute is not slowed by it; only the
network is shared, which is what the study is about).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from .. import validate
from ..errors import ConfigError
from ..validate import MAX_SECONDS
from .collectives import PATTERNS, build_sync
from .models import get_model
from .placement import Cluster, place_stages
from .search import arrival_times, hyperband_brackets, stage_iterations, successive_halving
from .spec import Cojob, Job, Workload

__all__ = ["generate_search", "SEARCHES"]

#: Search kinds.
SEARCHES: tuple[str, ...] = ("halving", "hyperband")
_ARRIVALS, _SCORES, _PLACEMENT = 0, 1, 2


def _positive_int(field: str, value, fix: str) -> int:
    return validate.integer(f"workload.{field}", value, low=1, fix=fix)


def _halving_plans(cojobs, configurations, stages, iterations, eta):
    cojobs = _positive_int("cojobs", 2 if cojobs is None else cojobs, "e.g. 2")
    configurations = _positive_int("configurations", 4 if configurations is None else configurations, "e.g. 4")
    stages = _positive_int("stages", 3 if stages is None else stages, "e.g. 3")
    validate.size("workload.cojobs" if cojobs > stages else "workload.stages", cojobs * stages, "stages")
    per_stage = stage_iterations(1 if iterations is None else iterations, eta, stages)
    return [(configurations, per_stage)] * cojobs


def _hyperband_plans(max_resource, iterations_per_unit, eta, given):
    for key in given:
        raise ConfigError(f"workload.{key}", "does not apply to search = 'hyperband'",
                          "remove it: Hyperband makes one cojob per bracket from max_resource and eta")
    unit = _positive_int("iterations_per_unit", 1 if iterations_per_unit is None else iterations_per_unit, "e.g. 1")
    brackets = hyperband_brackets(81 if max_resource is None else max_resource, eta)
    return [(b.configs[0], tuple(validate.integer("workload.iterations_per_unit", max(1, round(r * unit)),
                                                  fix="stages of that many iterations do not fit in 64 bits")
                                 for r in b.resources)) for b in brackets]


def _check_search(eta, join, bytes_scale, compute_s, ps, pattern, workers, ps_shards, model) -> list:
    """Check the search's scalar parameters; return the model profiles, one per cojob in turn."""
    validate.number("workload.eta", eta, low=1.0, low_open=True, fix="e.g. 2 or 3")
    validate.integer("workload.join", join, low=0, fix="new configurations per stage boundary, e.g. 0 or 2")
    validate.number("workload.bytes_scale", bytes_scale, low=0.0, low_open=True,
                    fix="e.g. 0.01 to shrink traffic 100x for packet-level runs")
    validate.number("workload.compute_s", compute_s, low=0.0, high=MAX_SECONDS, optional=True,
                    fix="seconds >= 0, or omit it to use the model's profile")
    validate.choice("workload.ps", ps, ("colocated", "separate"), "parameter-server placement")
    validate.choice("workload.pattern", pattern, PATTERNS, "pattern")
    _positive_int("workers", workers, "workers per job, e.g. 4")
    _positive_int("ps_shards", ps_shards, "e.g. 1")
    models = [model] if isinstance(model, str) else validate.sequence("workload.model", model,
                                                                      "a model name or a list of them")
    if not models:
        raise ConfigError("workload.model", "is an empty list", "name at least one model, e.g. 'resnet50'")
    return [get_model(m, "workload.model") for m in models]


def _check_size(plans, join: int, flows_per_job: int, factors: dict[str, int]) -> None:
    """Refuse a search whose jobs' flows this machine cannot hold, naming its largest factor."""
    jobs = sum(configs + join * (len(per_stage) - 1) for configs, per_stage in plans)
    largest = max(factors, key=lambda key: factors[key])
    validate.size(f"workload.{largest}", jobs * flows_per_job, "flows (jobs x flows per synchronisation)")


def generate_search(*, n_hosts: int, seed: int, search: str = "halving", cojobs: int | None = None,
                    configurations: int | None = None, stages: int | None = None,
                    iterations: int | Sequence[int] | None = None, eta: float | None = None,
                    max_resource: int | None = None, iterations_per_unit: int | None = None,
                    join: int = 0, model: str | Sequence[str] = "resnet50", compute_s: float | None = None,
                    pattern: str = "ring", ps: str = "colocated", ps_shards: int = 1, workers: int = 4,
                    gpus_per_host: int = 1, placement: str = "packed",
                    arrivals: Sequence[float] | None = None, arrival_rate: float | None = None,
                    bytes_scale: float = 1.0) -> Workload:
    """A seeded hyperparameter-search workload on ``n_hosts`` hosts.

    The parameters are the keys of a scenario's ``[workload]`` table with
    ``kind = "search"``; :func:`ns3_hpsched.workload.build_workload` documents each one.
    Job ids run through the whole workload (0, 1, ...), cojob ids from 0 in arrival order.
    """
    validate.choice("workload.search", search, SEARCHES, "search")
    if eta is None:
        eta = 2 if search == "halving" else 3
    profiles = _check_search(eta, join, bytes_scale, compute_s, ps, pattern, workers, ps_shards, model)
    if search == "halving":
        for key, value in (("max_resource", max_resource), ("iterations_per_unit", iterations_per_unit)):
            if value is not None:
                raise ConfigError(f"workload.{key}", "applies to search = 'hyperband' only",
                                  "remove it, or set search = 'hyperband'")
        plans = _halving_plans(cojobs, configurations, stages, iterations, eta)
    else:
        given = [k for k, v in (("cojobs", cojobs), ("configurations", configurations), ("stages", stages),
                                ("iterations", iterations), ("join", join or None)) if v is not None]
        plans = _hyperband_plans(max_resource, iterations_per_unit, eta, given)
    separate_ps = pattern == "ps" and ps == "separate"
    slots = workers + (ps_shards if separate_ps else 0)
    flows_per_job = {"ring": workers, "ring_chained": 2 * workers * workers, "ps": 2 * workers * ps_shards}[pattern]
    _check_size(plans, join, flows_per_job, {"cojobs": cojobs or 1, "configurations": configurations or 1,
                                             "join": join, "workers": workers, "ps_shards": ps_shards,
                                             "max_resource": max_resource or 1})

    arrival = arrival_times(len(plans), np.random.default_rng([seed, _ARRIVALS]),
                            times=arrivals, rate=arrival_rate)
    score_rng = np.random.default_rng([seed, _SCORES])
    cluster = Cluster(n_hosts, gpus_per_host, placement, np.random.default_rng([seed, _PLACEMENT]))
    result, first_job = [], 0
    for g, (configs, per_stage) in enumerate(plans):
        profile = profiles[g % len(profiles)]
        model_bytes = validate.scaled_bytes("workload.bytes_scale", profile.gradient_bytes, bytes_scale)
        stage_list = successive_halving(configs, per_stage, eta, score_rng, first_job=first_job, join=join)
        hosts = place_stages(stage_list, slots, cluster)
        jobs = []
        for j in sorted(hosts):
            worker_hosts, servers = hosts[j][:workers], hosts[j][workers:]
            sync = build_sync(pattern, worker_hosts, model_bytes, where="workload",
                              ps_hosts=servers if separate_ps else None, ps_shards=ps_shards)
            jobs.append(Job(job_id=j, hosts=worker_hosts, compute_s=profile.compute_s if compute_s is None
                            else float(compute_s), sync=sync, model=profile.name))
        result.append(Cojob(cojob_id=g, arrival_s=arrival[g], jobs=tuple(jobs), stages=stage_list))
        first_job += len(hosts)
    return Workload(cojobs=tuple(result), n_hosts=n_hosts, bytes_scale=float(bytes_scale),
                    source={"kind": "search", "seed": seed, "search": search, "bytes_scale": float(bytes_scale)})
