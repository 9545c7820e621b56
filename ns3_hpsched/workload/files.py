"""Workload files: a JSON document that states a workload explicitly, and its validation.

The format is documented in ``docs/workload-format.md``. In short::

    {"format": "ns3-hpsched-workload", "version": 1, "bytes_scale": 1.0,
     "cojobs": [{"cojob": 0, "arrival_s": 0.0,
                 "jobs": [{"job": 0, "hosts": [0, 1], "compute_s": 0.1,
                           "pattern": "ring", "model_bytes": 1000000},
                          {"job": 1, "hosts": [2, 3], "compute_s": 0.1,
                           "phases": [[{"src": 2, "dst": 3, "bytes": 500}]]}],
                 "stages": [{"iterations": 2},
                            {"iterations": 4, "jobs": [1]},
                            {"iterations": 8, "eta": 2}]}]}

:func:`write_workload` writes every synchronisation flow by flow, so any valid workload
reads back equal to itself. :func:`validate_workload` checks a :class:`Workload` however
it was made and names the offending field by its path in this format.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

import numpy as np

from .. import validate
from ..errors import ConfigError
from ..validate import MAX_BYTES, MAX_SECONDS, Number
from .collectives import PATTERNS, build_sync
from .models import get_model
from .search import kept
from .spec import Cojob, Flow, Job, Stage, Sync, Workload

__all__ = ["FORMAT", "VERSION", "read_workload", "write_workload", "validate_workload",
           "workload_to_dict", "workload_from_dict", "write_text_atomic"]

#: Value of the ``format`` key.
FORMAT = "ns3-hpsched-workload"
#: Version of the format this module reads and writes.
VERSION = 1

_TOP_KEYS = {"format", "version", "bytes_scale", "source", "cojobs"}
_COJOB_KEYS = {"cojob", "arrival_s", "priority", "jobs", "stages"}
_JOB_KEYS = {"job", "hosts", "compute_s", "model", "pattern", "phases", "model_bytes", "ps_hosts", "ps_shards"}
_STAGE_KEYS = {"iterations", "jobs", "eta", "join"}
_FLOW_KEYS = {"src", "dst", "bytes"}


# -- validation of a Workload ------------------------------------------------------------

def _child(at: str, key: str) -> str:
    """Field name of ``key`` under ``at`` (``"w.json:"`` + ``"cojobs"``, ``"workload"`` + ``".cojobs"``)."""
    return f"{at}{key}" if at.endswith(":") else f"{at}.{key}"


_ID = Number(integer=True, fix="give every cojob and job a distinct integer id")
_SECONDS = Number(low=0.0, high=MAX_SECONDS, fix="finite seconds >= 0, e.g. 0.305")
_SCALE = Number(low=0.0, low_open=True, fix="1.0 unless the traffic was scaled")
_FLOW_BYTES = Number(integer=True, low=1, high=MAX_BYTES, fix="give the transfer size in bytes (>= 1)")


def validate_workload(workload: Workload, n_hosts: int, where: str = "workload") -> None:
    """Check that ``workload`` can run on ``n_hosts`` hosts; raise :class:`ConfigError` if not.

    Fields are named by their path in the workload file format under ``where``
    (``"workload.cojobs[0].stages[1].jobs"``). Checked: unique cojob and job ids (job ids
    are unique over the whole workload), pinned priorities >= 0, hosts in range, compute and arrival times finite
    and >= 0, flows with ``src != dst`` and a positive integer number of bytes, no empty
    phase, iterations >= 1, stages that only name the cojob's jobs, survivors that do not
    grow (a job of stage s > 0 ran stage s-1 unless it is declared in ``joined``), joiners
    that are new and listed after the survivors, and every job running at least one stage.
    """
    _SCALE.check(_child(where, "bytes_scale"), workload.bytes_scale)
    if not workload.cojobs:
        raise ConfigError(_child(where, "cojobs"), "is empty", "state at least one cojob")
    cojob_ids: set[int] = set()
    job_where: dict[int, str] = {}
    for g, cojob in enumerate(workload.cojobs):
        at = _child(where, f"cojobs[{g}]")
        if _ID.check(f"{at}.cojob", cojob.cojob_id) in cojob_ids:
            raise ConfigError(f"{at}.cojob", f"cojob id {cojob.cojob_id!r} repeats",
                              "give every cojob a distinct integer id")
        cojob_ids.add(cojob.cojob_id)
        _SECONDS.check(f"{at}.arrival_s", cojob.arrival_s)
        validate.integer(f"{at}.priority", cojob.priority, low=0, optional=True,
                         fix="0 is the highest class; omit it to let the scheduler decide")
        if not cojob.jobs:
            raise ConfigError(f"{at}.jobs", "is empty", "state at least one job")
        for i, job in enumerate(cojob.jobs):
            if _ID.check(f"{at}.jobs[{i}].job", job.job_id) in job_where:
                raise ConfigError(f"{at}.jobs[{i}].job", f"duplicate job id {job.job_id} (also {job_where[job.job_id]})",
                                  "job ids must be unique over the whole workload")
            job_where[job.job_id] = f"{at}.jobs[{i}]"
            _validate_job(job, n_hosts, f"{at}.jobs[{i}]")
        _validate_stages(cojob, at)


def _check_host(host, n_hosts: int, field: str) -> None:
    validate.integer(field, host, low=0, high=n_hosts - 1, fix=f"use hosts 0..{n_hosts - 1} of the topology")


def _validate_job(job: Job, n_hosts: int, at: str) -> None:
    if not job.hosts:
        raise ConfigError(f"{at}.hosts", "is empty", "list the host of every worker")
    for k, host in enumerate(job.hosts):
        _check_host(host, n_hosts, f"{at}.hosts[{k}]")
    _SECONDS.check(f"{at}.compute_s", job.compute_s)
    validate.text(f"{at}.model", job.model)
    for p, phase in enumerate(job.sync.phases):
        if not phase:
            raise ConfigError(f"{at}.phases[{p}]", "has no flow", "remove the empty phase")
        validate.size(f"{at}.phases[{p}]", len(phase), "flows in one coflow")
        if not _plainly_valid(phase, n_hosts):
            _check_flows(phase, n_hosts, f"{at}.phases[{p}]")
        if sum(flow.bytes for flow in phase) > MAX_BYTES:
            raise ConfigError(f"{at}.phases[{p}]", f"its flows add up to more than {MAX_BYTES:,} bytes (2^53)",
                              "a coflow's bytes must stay exact in float64: use smaller flows")


def _plainly_valid(phase: tuple[Flow, ...], n_hosts: int) -> bool:
    """Whether every flow of ``phase`` passes :func:`_check_flows`, found in one numpy pass:
    Python ints only, hosts in range and distinct, bytes within :data:`_FLOW_BYTES`. The
    rules, value by value, cost a third of the simulation on a large trace (the whole FB
    trace, 701,486 flows: 3.4 s, and 0.14 s so); a phase this does not vouch for is checked
    flow by flow, which names its first bad field."""
    values = [v for flow in phase for v in (flow.src, flow.dst, flow.bytes)]
    if set(map(type, values)) != {int}:  # a bool, a float or a numpy number: the rules decide
        return False
    try:
        src, dst, size = np.array(values, dtype=np.int64).reshape(-1, 3).T
    except OverflowError:
        return False
    return bool(((src >= 0) & (src < n_hosts) & (dst >= 0) & (dst < n_hosts) & (src != dst)
                 & (size >= 1) & (size <= MAX_BYTES)).all())


def _check_flows(phase: tuple[Flow, ...], n_hosts: int, at: str) -> None:
    """Check the flows of one phase (at field ``at``) one by one; raise for the first bad field."""
    for f, flow in enumerate(phase):
        fat = f"{at}[{f}]"
        _check_host(flow.src, n_hosts, f"{fat}.src")
        _check_host(flow.dst, n_hosts, f"{fat}.dst")
        if flow.src == flow.dst:
            raise ConfigError(fat, f"src == dst == {flow.src}: traffic inside a host is not a network flow",
                              "remove the flow, or give two different hosts")
        _FLOW_BYTES.check(f"{fat}.bytes", flow.bytes)


def _validate_stages(cojob: Cojob, at: str) -> None:
    if not cojob.stages:
        raise ConfigError(f"{at}.stages", "is empty", "state at least one stage")
    known = {job.job_id for job in cojob.jobs}
    ran: dict[int, int] = {}
    previous: set[int] = set()
    for s, stage in enumerate(cojob.stages):
        sat = f"{at}.stages[{s}]"
        validate.integer(f"{sat}.iterations", stage.iterations, low=1,
                         fix="every job of a stage runs at least one iteration")
        if s == 0 and stage.joined:
            raise ConfigError(f"{sat}.join", "stage 0 has no joiners", "list the starting jobs under jobs")
        for j in stage.joined:
            if j not in known:
                raise ConfigError(f"{sat}.join", f"unknown job {j!r}", f"name jobs of this cojob: {sorted(known)}")
            if j in ran:
                raise ConfigError(f"{sat}.join", f"job {j} already ran stage {ran[j]}",
                                  "only new configurations join; a stopped job cannot come back")
        if not stage.jobs:
            raise ConfigError(f"{sat}.jobs", "no job runs this stage", "keep at least one job, or drop the stage")
        if len(set(stage.jobs)) != len(stage.jobs):
            raise ConfigError(f"{sat}.jobs", f"lists a job twice: {list(stage.jobs)}", "list each job once")
        for j in stage.jobs:
            if j not in known:
                raise ConfigError(f"{sat}.jobs", f"unknown job {j!r}", f"name jobs of this cojob: {sorted(known)}")
            if s > 0 and j not in previous and j not in stage.joined:
                raise ConfigError(f"{sat}.jobs", f"survivors grow: job {j} did not run stage {s - 1}",
                                  "list only jobs of the previous stage, or declare new configurations under join")
        if stage.joined and tuple(stage.jobs[-len(stage.joined):]) != tuple(stage.joined):
            raise ConfigError(f"{sat}.join", "joiners must come last in the stage's jobs, in join order",
                              "list the survivors first, then the joiners")
        for j in stage.jobs:
            ran.setdefault(j, s)
        previous = set(stage.jobs)
    for i, job in enumerate(cojob.jobs):
        if job.job_id not in ran:
            raise ConfigError(f"{at}.jobs[{i}]", f"job {job.job_id} never runs", "list it in a stage, or remove it")


# -- dict <-> Workload ---------------------------------------------------------------------

def workload_to_dict(workload: Workload) -> dict:
    """The JSON-ready document of ``workload``: every flow explicit, survivors explicit."""
    def job_doc(job: Job) -> dict:
        return {"job": job.job_id, "hosts": list(job.hosts), "compute_s": job.compute_s, "model": job.model,
                "pattern": job.sync.pattern,
                "phases": [[{"src": f.src, "dst": f.dst, "bytes": f.bytes} for f in phase]
                           for phase in job.sync.phases]}

    def stage_doc(stage: Stage) -> dict:
        survivors = stage.jobs[:len(stage.jobs) - len(stage.joined)]
        doc = {"iterations": stage.iterations, "jobs": list(survivors)}
        if stage.joined:
            doc["join"] = list(stage.joined)
        return doc

    def cojob_doc(cojob: Cojob) -> dict:
        doc = {"cojob": cojob.cojob_id, "arrival_s": cojob.arrival_s}
        if cojob.priority is not None:
            doc["priority"] = cojob.priority
        return doc | {"jobs": [job_doc(j) for j in cojob.jobs], "stages": [stage_doc(s) for s in cojob.stages]}

    return {"format": FORMAT, "version": VERSION, "bytes_scale": workload.bytes_scale,
            "source": workload.source, "cojobs": [cojob_doc(c) for c in workload.cojobs]}


def _object(value, at: str, allowed: set[str], required: tuple[str, ...] = ()) -> dict:
    if not isinstance(value, dict):
        raise ConfigError(at, f"must be a JSON object, got {type(value).__name__}", "see docs/workload-format.md")
    unknown = sorted(set(value) - allowed)
    if unknown:
        raise ConfigError(_child(at, unknown[0]), "unknown key", f"use only {sorted(allowed)}")
    for key in required:
        if key not in value:
            raise ConfigError(_child(at, key), "is missing", "see docs/workload-format.md")
    return value


def _list(value, at: str) -> list:
    if not isinstance(value, list):
        raise ConfigError(at, f"must be a JSON list, got {type(value).__name__}", "see docs/workload-format.md")
    return value


def _job_from_dict(doc, at: str, n_hosts: int, bytes_scale: float, scale_field: str) -> Job:
    doc = _object(doc, at, _JOB_KEYS, ("job", "hosts", "compute_s"))
    _ID.check(f"{at}.job", doc["job"])
    hosts = tuple(_list(doc["hosts"], f"{at}.hosts"))
    model = validate.text(f"{at}.model", doc.get("model", ""))
    if "phases" in doc:
        for key in ("model_bytes", "ps_hosts", "ps_shards"):
            if key in doc:
                raise ConfigError(f"{at}.{key}", "applies to a pattern, but the flows are given as phases",
                                  "give either phases, or a pattern with its model bytes")
        phases = []
        for p, phase in enumerate(_list(doc["phases"], f"{at}.phases")):
            flows = []
            for f, flow in enumerate(_list(phase, f"{at}.phases[{p}]")):
                flow = _object(flow, f"{at}.phases[{p}][{f}]", _FLOW_KEYS, ("src", "dst", "bytes"))
                flows.append(Flow(flow["src"], flow["dst"], flow["bytes"]))
            phases.append(tuple(flows))
        sync = Sync(phases=tuple(phases), pattern=validate.text(f"{at}.pattern", doc.get("pattern", "explicit")))
    elif "pattern" in doc:
        if "model_bytes" in doc:
            model_bytes = doc["model_bytes"]
        elif model:
            model_bytes = validate.scaled_bytes(scale_field, get_model(model, f"{at}.model").gradient_bytes,
                                                bytes_scale)
        else:
            raise ConfigError(f"{at}.model_bytes", "is missing",
                              "give model_bytes, or a known model name under model")
        for k, host in enumerate(hosts):
            _check_host(host, n_hosts, f"{at}.hosts[{k}]")
        ps_hosts = doc.get("ps_hosts")
        if ps_hosts is not None:
            for k, host in enumerate(_list(ps_hosts, f"{at}.ps_hosts")):
                _check_host(host, n_hosts, f"{at}.ps_hosts[{k}]")
        sync = build_sync(doc["pattern"], hosts, model_bytes, where=at, ps_hosts=ps_hosts,
                          ps_shards=doc.get("ps_shards", 1))
    else:
        raise ConfigError(f"{at}.pattern", "neither phases nor a pattern is given",
                          f"give phases (flows per phase) or a pattern out of {list(PATTERNS)}")
    return Job(job_id=doc["job"], hosts=hosts, compute_s=doc["compute_s"], sync=sync, model=model)


def _ids(value, at: str) -> tuple[int, ...]:
    ids = tuple(_list(value, at))
    for k, j in enumerate(ids):
        _ID.check(f"{at}[{k}]", j)
    return ids


def _stages_from_dict(docs, at: str, job_ids: list) -> tuple[Stage, ...]:
    docs = [_object(doc, f"{at}[{s}]", _STAGE_KEYS, ("iterations",)) for s, doc in enumerate(_list(docs, at))]
    joins = [_ids(doc.get("join", []), f"{at}[{s}].join") for s, doc in enumerate(docs)]
    joining = {j for join in joins for j in join}
    stages: list[Stage] = []
    for s, (doc, join) in enumerate(zip(docs, joins)):
        sat = f"{at}[{s}]"
        if "jobs" in doc and "eta" in doc:
            raise ConfigError(f"{sat}.eta", "both jobs and eta are given", "give the survivors or eta, not both")
        if "jobs" in doc:
            survivors = _ids(doc["jobs"], f"{sat}.jobs")
        elif s == 0:
            if "eta" in doc:
                raise ConfigError(f"{sat}.eta", "stage 0 has no previous stage to reduce",
                                  "list the starting jobs under jobs, or omit it for all")
            survivors = tuple(j for j in job_ids if j not in joining)
        elif "eta" in doc:
            eta = validate.number(f"{sat}.eta", doc["eta"], low=1.0, low_open=True, fix="e.g. 2")
            previous = stages[-1].jobs
            survivors = previous[:kept(len(previous), eta)]
        else:
            raise ConfigError(f"{sat}.jobs", "is missing",
                              "list the jobs that continue (best first), or give eta to keep the first floor(n/eta)")
        stages.append(Stage(iterations=doc["iterations"], jobs=survivors + join, joined=join))
    return tuple(stages)


def workload_from_dict(doc, n_hosts: int, where: str = "workload") -> Workload:
    """Build and validate the :class:`Workload` a document states (see the module docstring)."""
    doc = _object(doc, where, _TOP_KEYS, ("cojobs",))
    version = doc.get("version", VERSION)
    if doc.get("format", FORMAT) != FORMAT or type(version) is not int or version != VERSION:  # true == 1
        raise ConfigError(_child(where, "format"), f"is {doc.get('format')!r} version {doc.get('version')!r}",
                          f"this reader takes format {FORMAT!r} version {VERSION}")
    bytes_scale = _SCALE.check(_child(where, "bytes_scale"), doc.get("bytes_scale", 1.0))
    cojobs = []
    for g, cdoc in enumerate(_list(doc["cojobs"], _child(where, "cojobs"))):
        at = _child(where, f"cojobs[{g}]")
        cdoc = _object(cdoc, at, _COJOB_KEYS, ("cojob", "jobs", "stages"))
        jobs = tuple(_job_from_dict(j, f"{at}.jobs[{i}]", n_hosts, bytes_scale, _child(where, "bytes_scale"))
                     for i, j in enumerate(_list(cdoc["jobs"], f"{at}.jobs")))
        stages = _stages_from_dict(cdoc["stages"], f"{at}.stages", [j.job_id for j in jobs])
        cojobs.append(Cojob(cojob_id=cdoc["cojob"], arrival_s=cdoc.get("arrival_s", 0.0), jobs=jobs, stages=stages,
                            priority=cdoc.get("priority")))
    source = doc.get("source", {})
    workload = Workload(cojobs=tuple(cojobs), n_hosts=n_hosts, bytes_scale=float(bytes_scale),
                        source=source if isinstance(source, dict) else {"note": source})
    validate_workload(workload, n_hosts, where)
    return workload


# -- files -----------------------------------------------------------------------------------

def read_workload(path: str | os.PathLike, n_hosts: int) -> Workload:
    """Read and validate a workload file for a topology of ``n_hosts`` hosts.

    Errors name the file and the JSON path, e.g. ``w.json:cojobs[0].stages[1].jobs``.
    """
    path = Path(path)
    text = validate.read_text(path, "workload.path", "workload file")
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ConfigError(f"{path.name}:{exc.lineno}", f"is not valid JSON: {exc.msg}",
                          "fix the JSON syntax at that line") from None
    except RecursionError:
        raise ConfigError(path.name, "nests lists or objects too deeply", "see docs/workload-format.md") from None
    workload = workload_from_dict(doc, n_hosts, where=f"{path.name}:")
    workload.source.setdefault("file", str(path))
    return workload


def write_text_atomic(path: str | os.PathLike, text: str) -> Path:
    """Write ``text`` to ``path`` atomically: a temporary file in the same folder, then os.replace.

    A reader never sees a half-written file, and an interrupted write leaves the old one.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w") as out:
            out.write(text)
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise
    return path


def write_workload(workload: Workload, path: str | os.PathLike) -> Path:
    """Write ``workload`` as a workload file (atomically); :func:`read_workload` gives it back equal."""
    return write_text_atomic(path, json.dumps(workload_to_dict(workload), indent=1) + "\n")
