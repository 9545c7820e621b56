"""Generated hostile inputs for the validation layer, and the judge of each outcome.

Shared by ``tests/test_fuzz.py`` (which fails on any bad outcome) and
``benchmarks/fuzz_report.py`` (which counts the outcomes by kind, in issue 13's form).

A case is a mutation of a valid input -- a scenario table, a ``--set`` override, a workload
JSON file, an HPCC topology or flow file, an FB trace -- with a verdict known in advance
where it can be: ``bad=True`` when the mutation is invalid whatever the field (NaN, an
integer past int64, a boolean for a number, a string for a number, an unknown key, a
broken line), ``bad=None`` when validity depends on the field's range (then both a clean
error and acceptance are right). Only validation runs (``load_scenario`` building
topology, transport, workload and policy); nothing is simulated.

Outcomes: ``clean error`` (a one-line ConfigError naming a field), ``valid accepted``, or
``bad: ...`` -- a traceback (any other exception), a hang (past :data:`CASE_SECONDS`), an
unclear message (no field, or several lines), an invalid input accepted, or a file written.
"""

from __future__ import annotations

import copy
import json
import math
import os
import signal
import tomllib
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from hypothesis import strategies as st

from ns3_hpsched.cli import hpcc_scenario, parse_overrides
from ns3_hpsched.errors import ConfigError
from ns3_hpsched.interchange.hpcc import FlowFileTail
from ns3_hpsched.scenario import SCENARIO_DIR, load_scenario, scenario_from_dict

#: Seconds one case may take before it counts as a hang.
CASE_SECONDS = 5.0
#: Kinds of input, in report order.
KINDS = ("scenario", "--set", "workload JSON", "HPCC topology", "HPCC flows", "FB trace")
#: Fields where +inf is a documented value ("never").
INF_FIELDS = {"theta_bytes"}
#: Fields that take one value or a list of them (``iterations = 3`` or one per stage; a model or a mix).
SCALAR_OR_LIST = {"iterations", "model"}


@dataclass
class Case:
    """One generated input: what it is, the files it needs, how to load it, and whether it
    is surely invalid."""

    kind: str
    label: str
    load: Callable[[Path], Any]
    bad: bool | None
    files: dict[str, bytes] = field(default_factory=dict)


class Hang(Exception):
    """Raised by the per-case alarm."""


# -- values ----------------------------------------------------------------------------------------

HUGE = [2**63, 2**63 - 1, -2**63 - 1, 2**64, 10**9, 10**12, 10**30, 2**53 + 1]
SPECIAL = [0, -1, 1, 2, 3, 0.0, -0.0, 0.5, -1.5, 1e-300, 1e9, 1e300, -1e300,
           math.inf, -math.inf, math.nan, True, False, "", "x", "4", "fat_tree", "1e9",
           [], [1, 2], {}, {"a": 1}, [{"src": 0}]]


def values() -> st.SearchStrategy:
    """Values a hostile user types: small and huge integers, special floats, booleans,
    strings, lists and tables."""
    return st.one_of(st.sampled_from(SPECIAL), st.sampled_from(HUGE), st.integers(-5, 300),
                     st.floats(allow_nan=True, allow_infinity=True), st.text(max_size=6),
                     st.lists(st.integers(-2, 20), max_size=3))


def verdict(key: str, old: Any, new: Any, known: bool = True) -> bool | None:
    """True if ``new`` is invalid whatever the field's range, given the value ``old`` it replaces."""
    if not known:
        return True
    if isinstance(new, float) and (math.isnan(new) or (math.isinf(new) and key not in INF_FIELDS)):
        return True
    if isinstance(new, int) and not isinstance(new, bool) and abs(new) > 2**63 - 1:
        return True
    if old is _MISSING:
        return None
    number = (int, float)
    if isinstance(old, bool) != isinstance(new, bool):
        return True
    if isinstance(old, number) and not isinstance(new, number):
        return True
    if isinstance(old, str) and not isinstance(new, str):
        return True
    if isinstance(old, list) and key in SCALAR_OR_LIST and not isinstance(new, (list, dict)):
        return None
    if isinstance(old, (list, dict)) and type(new) is not type(old):
        return True
    return None


_MISSING = object()


# -- running a case --------------------------------------------------------------------------------

def _alarm(signum, frame):
    raise Hang()


def judge(case: Case, folder: Path) -> str:
    """Write ``case``'s files into ``folder``, load it (with an alarm) and return its outcome."""
    for name, data in case.files.items():
        (folder / name).write_bytes(data)
    before = sorted(p.name for p in folder.iterdir())
    cwd_before = sorted(os.listdir("."))
    previous = signal.signal(signal.SIGALRM, _alarm)
    signal.setitimer(signal.ITIMER_REAL, CASE_SECONDS)
    try:
        with warnings.catch_warnings():  # a flow file's ignored tail warns by design (HPCC semantics)
            warnings.simplefilter("ignore", FlowFileTail)
            case.load(folder)
        outcome = "bad: invalid input accepted" if case.bad else "valid accepted"
    except ConfigError as exc:
        clear = exc.field and "\n" not in str(exc) and exc.problem
        outcome = "clean error" if clear else f"bad: unclear message {str(exc)!r}"
    except Hang:
        outcome = "bad: hang"
    except MemoryError:
        outcome = "bad: out of memory"
    except Exception as exc:  # noqa: BLE001 -- any other exception is a traceback to the user
        outcome = f"bad: traceback {type(exc).__name__}: {exc}"
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
    if sorted(p.name for p in folder.iterdir()) != before or sorted(os.listdir(".")) != cwd_before:
        outcome = "bad: a file was written"
    return outcome


# -- scenario tables and --set overrides -------------------------------------------------------------

def _base(name: str) -> dict:
    raw = tomllib.loads((SCENARIO_DIR / f"{name}.toml").read_text())
    raw.setdefault("name", name)
    return raw


#: Valid starting points: a flow list on packets, a search on packets and one on fluid.
BASES = {"default": _base("default"), "small-search": _base("small-search"),
         "fluid-search": {**_base("small-search"), "backend": "fluid", "scheduler": {"name": "aalo"}}}


def known_keys(raw: dict, table: str) -> list[str]:
    """The keys ``table`` of scenario ``raw`` takes, from each package's name map."""
    from ns3_hpsched.scenario import FluidSpec, Scenario, SchedulerSpec
    from ns3_hpsched.sched import policy_class
    from ns3_hpsched.topology import topology_keys
    from ns3_hpsched.transports import BACKEND_OPTIONS, transport_options
    from ns3_hpsched.workload.build import WORKLOAD_KINDS

    import inspect

    if table == "":
        return [k for k in Scenario.model_fields if k != "base_dir"]
    if table == "topology":
        return ["kind", *topology_keys(raw["topology"]["kind"])]
    if table == "transport":
        return ["kind", *BACKEND_OPTIONS, *transport_options(raw.get("transport", {}).get("kind", "dctcp"))]
    if table == "scheduler.params":
        return list(inspect.signature(policy_class(raw["scheduler"]["name"])).parameters)
    if table == "workload":
        return ["kind", *WORKLOAD_KINDS[raw["workload"]["kind"]][0]]
    return list({"fluid": FluidSpec, "scheduler": SchedulerSpec}[table].model_fields)


TABLES = ("", "topology", "transport", "fluid", "scheduler", "scheduler.params", "workload")


@st.composite
def table_edit(draw) -> tuple[str, dict, str, Any, Any, bool]:
    """(base name, mutated raw scenario, dotted key, old value, new value, key known)."""
    base = draw(st.sampled_from(sorted(BASES)))
    raw = copy.deepcopy(BASES[base])
    table = draw(st.sampled_from(TABLES))
    node = raw
    for part in filter(None, table.split(".")):
        node = node.setdefault(part, {})
    keys = known_keys(raw, table)
    key = draw(st.sampled_from(keys + [k for k in node if k not in keys] or ["colour"]))
    known = True
    if draw(st.integers(0, 9)) == 0:
        key = draw(st.sampled_from([key + "x", key[:-1], key.upper()]))
        known = key in keys
    old = node.get(key, _MISSING)
    new = draw(values())
    node[key] = new
    return base, raw, f"{table}.{key}" if table else key, old, new, known


@st.composite
def scenario_cases(draw) -> Case:
    """A scenario table with one key set to a generated value (or a misspelt key)."""
    base, raw, dotted, old, new, known = draw(table_edit())
    raw["base_dir"] = str(SCENARIO_DIR)
    return Case("scenario", f"{base}: {dotted} = {new!r}", lambda folder: scenario_from_dict(raw),
                verdict(dotted.rpartition(".")[2], old, new, known))


def toml_literal(value: Any) -> str:
    """``value`` written as a TOML value (as a user types it after ``--set KEY=``)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return "nan" if math.isnan(value) else ("inf" if value > 0 else "-inf") if math.isinf(value) else repr(value)
    if isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, list):
        return "[" + ", ".join(toml_literal(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k} = {toml_literal(v)}" for k, v in value.items()) + "}"
    return str(value)


@st.composite
def set_cases(draw) -> Case:
    """``--set KEY=VALUE`` on a shipped scenario: a typed TOML value, or free text."""
    from ns3_hpsched.scenario import parse_value

    base, raw, dotted, old, new, known = draw(table_edit())
    text = draw(st.one_of(st.just(toml_literal(new)), st.text(max_size=8)))
    bad = verdict(dotted.rpartition(".")[2], old, parse_value(text.strip()), known)
    if base == "fluid-search":
        base, text_pairs = "small-search", ["backend=fluid", "scheduler.name=aalo", f"{dotted}={text}"]
    else:
        text_pairs = [f"{dotted}={text}"]
    return Case("--set", " ".join(text_pairs), lambda folder: load_scenario(base, parse_overrides(text_pairs)), bad)


# -- workload JSON ------------------------------------------------------------------------------------

_HOSTS = 16
_FILE_SCENARIO = ('backend = "fluid"\n[topology]\nkind = "big_switch"\nn = {n}\n[scheduler]\nname = "fair"\n'
                  '[workload]\n{workload}\n')


def _json_base() -> dict:
    from ns3_hpsched.workload import generate_search
    from ns3_hpsched.workload.files import workload_to_dict

    doc = workload_to_dict(generate_search(n_hosts=_HOSTS, seed=1, cojobs=1, configurations=2, stages=2,
                                           workers=2, bytes_scale=1e-4))
    doc["cojobs"].append({"cojob": 7, "arrival_s": 0.5, "priority": 1, "jobs": [
        {"job": 9, "hosts": [3, 4, 5], "compute_s": 0.01, "pattern": "ps", "model_bytes": 3000, "ps_shards": 2},
        {"job": 10, "hosts": [6, 7], "compute_s": 0.0, "model": "vgg16", "pattern": "ring_chained"}],
        "stages": [{"iterations": 2}, {"iterations": 3, "eta": 2}]})
    return doc


JSON_BASE = _json_base()


def _paths(node: Any, prefix: tuple = ()) -> list[tuple]:
    """Every path (keys and indexes) into a JSON document, except under ``source``."""
    out = [prefix]
    items = node.items() if isinstance(node, dict) else enumerate(node) if isinstance(node, list) else ()
    for key, child in items:
        if key != "source":
            out += _paths(child, (*prefix, key))
    return out


JSON_PATHS = _paths(JSON_BASE)[1:]


def _file_case(kind: str, label: str, name: str, data: bytes, workload: str, bad: bool | None,
               n_hosts: int = _HOSTS) -> Case:
    scenario = _FILE_SCENARIO.format(n=n_hosts, workload=workload).encode()
    return Case(kind, label, lambda folder: load_scenario(folder / "s.toml"), bad, {name: data, "s.toml": scenario})


@st.composite
def json_cases(draw) -> Case:
    """A workload file with one value replaced, a key deleted or misspelt, or bytes broken."""
    doc = copy.deepcopy(JSON_BASE)
    path = draw(st.sampled_from(JSON_PATHS))
    parent = doc
    for key in path[:-1]:
        parent = parent[key]
    last, action = path[-1], draw(st.sampled_from(["replace"] * 6 + ["delete", "misspell", "latin1", "garbage"]))
    old = parent[last]
    if action == "replace":
        parent[last] = new = draw(values())
        bad = verdict(str(last), old, new)
    elif action == "delete" and isinstance(parent, dict):
        del parent[last]
        required = ("cojobs", "stages", "hosts", "src", "dst", "bytes", "job", "cojob", "iterations", "compute_s")
        cojob_jobs = len(path) == 3 and last == "jobs"  # a stage without jobs runs all of them
        bad = True if last in required or cojob_jobs else None
    elif action == "misspell" and isinstance(parent, dict):
        parent[f"{last}x"] = parent.pop(last)
        bad = True
    else:
        bad = None
    data = json.dumps(doc).encode()
    if action == "latin1":
        data, bad = data.replace(b'"ring"', b'"r\xe9ng"', 1), (b'"ring"' in data) or None
    elif action == "garbage":
        data, bad = data[:draw(st.integers(0, len(data) - 1))], True
    label = f"{action} {'.'.join(map(str, path))}" + (f" = {new!r}" if action == "replace" else "")
    return _file_case("workload JSON", label, "w.json", data, 'kind = "file"\npath = "w.json"', bad)


# -- line formats: HPCC topology and flows, FB trace -----------------------------------------------

TOKENS = ["0", "1", "2", "3", "-1", "7", "65535", "65536", "1e300", "nan", "inf", "-inf", "-48.0", "0.0", "1.5",
          "x", "10Gbps", "1e999Gbps", "0Gbps", "0.001ms", "-1ms", "nanms", "2:1.5", "9:1", "2:-1", "3:0.0",
          "2:1e300", "99999999999999999999", "\u00b2", "1_0", "0x10", "١"]


def tokens() -> st.SearchStrategy:
    return st.one_of(st.sampled_from(TOKENS), st.text(st.characters(blacklist_categories=("Z", "C")),
                                                      min_size=1, max_size=5))


def _int(token: str, low: int | None = None, high: int | None = None) -> bool:
    try:
        value = int(token)
    except ValueError:
        return False
    return (low is None or value >= low) and (high is None or value <= high)


def _real(token: str, low: float = 0.0, high: float = 2**53, strict: bool = False) -> bool:
    try:
        value = float(token)
    except ValueError:
        return False
    return (value > low if strict else value >= low) and value <= high


@st.composite
def line_edit(draw, lines: list[list[str]]) -> tuple[list[list[str]], int, int, str | None, str]:
    """A copy of ``lines`` with one token replaced (or one structural change): returns
    (lines, line index, token index, new token or None, action)."""
    lines = copy.deepcopy(lines)
    i = draw(st.integers(0, len(lines) - 1))
    j = draw(st.integers(0, len(lines[i]) - 1))
    action = draw(st.sampled_from(["replace"] * 8 + ["add token", "drop token", "drop line", "dup line"]))
    token = None
    if action == "replace":
        token = lines[i][j] = draw(tokens())
    elif action == "add token":
        lines[i].append(draw(tokens()))
    elif action == "drop token":
        del lines[i][j]
    elif action == "drop line":
        del lines[i]
    else:
        lines.insert(i, list(lines[i]))
    return lines, i, j, token, action


def _text(lines: list[list[str]]) -> bytes:
    return "".join(" ".join(line) + "\n" for line in lines).encode()


HPCC_TOPOLOGY = [["5", "2", "4"], ["3", "4"], ["0", "3", "10Gbps", "0.001ms", "0"], ["1", "3", "10Gbps", "1us", "0"],
                 ["2", "4", "25Gbps", "0.002ms", "0"], ["3", "4", "40Gbps", "0.001ms", "0"]]
HPCC_FLOWS = [["2"], ["0", "1", "3", "100", "1000", "0.0"], ["2", "0", "1", "200", "5000", "0.001"]]


def _quantity_ok(token: str, units: dict, positive: bool) -> bool:
    from ns3_hpsched.interchange.hpcc import _quantity

    try:
        value = _quantity(token, units, "f", "q", "e")
    except ConfigError:
        return False
    return math.isfinite(value) and (value > 0 if positive else value >= 0)


def _topology_token_ok(i: int, j: int, token: str) -> bool:
    from ns3_hpsched.interchange.hpcc import _DELAY_UNITS, _RATE_UNITS

    if i < 2 or j < 2:
        return _int(token)
    if j == 2:
        return _quantity_ok(token, _RATE_UNITS, positive=True)
    if j == 3:
        return _quantity_ok(token, _DELAY_UNITS, positive=False)
    return _real(token) and float(token) == 0


def _flow_token_ok(i: int, j: int, token: str) -> bool:
    if i == 0:  # a count up to the lines given: HPCC reads that many and ignores the rest
        return _int(token, 0, int(HPCC_FLOWS[0][0]))
    if j < 2:
        return _int(token)
    if j == 5:
        return _real(token, high=2**63 / 1e9)
    return _int(token, *{2: (0, None), 3: (0, 65535), 4: (1, 2**53)}[j])


def _hpcc_case(kind: str, draw, base: list[list[str]], token_ok: Callable[[int, int, str], bool]) -> Case:
    lines, i, j, token, action = draw(line_edit(base))
    bad = None if action == "replace" and token_ok(i, j, token) else True
    if kind == "HPCC flows" and action == "dup line" and i >= 1:
        bad = None  # one flow line more than the count: HPCC reads the count and ignores the tail
    ours = {"HPCC topology": "topology.txt", "HPCC flows": "flow.txt"}[kind]
    files = {"topology.txt": _text(HPCC_TOPOLOGY), "flow.txt": _text(HPCC_FLOWS)} | {ours: _text(lines)}
    if draw(st.integers(0, 19)) == 0:
        files[ours], bad = b"# caf\xe9\n" + files[ours], True

    def load(folder: Path):
        return hpcc_scenario(folder / "topology.txt", folder / "flow.txt", {})
    return Case(kind, f"{ours} line {i + 1}: {action} {token!r}", load, bad, files)


@st.composite
def hpcc_topology_cases(draw) -> Case:
    """HPCC ``topology.txt`` with one token replaced or one line or token added or dropped."""
    return _hpcc_case("HPCC topology", draw, HPCC_TOPOLOGY, _topology_token_ok)


@st.composite
def hpcc_flow_cases(draw) -> Case:
    """HPCC ``flow.txt`` with one token replaced or one line or token added or dropped."""
    return _hpcc_case("HPCC flows", draw, HPCC_FLOWS, _flow_token_ok)


FB_TRACE = [["4", "2"], ["1", "0", "1", "0", "2", "2:1.5", "3:2"], ["2", "10", "2", "1", "2", "1", "3:0.5"]]
#: Token roles on the coflow lines of :data:`FB_TRACE`.
_FB_ROLES = {1: ["id", "arrival", "count", "port", "count", "reducer", "reducer"],
             2: ["id", "arrival", "count", "port", "port", "count", "reducer"]}


def _trace_token_ok(i: int, j: int, token: str) -> bool:
    if i == 0:
        return _int(token, 4) if j == 0 else _int(token) and int(token) == int(FB_TRACE[0][1])
    role = _FB_ROLES[i][j]
    if role == "reducer":
        port, sep, mb = token.partition(":")
        return bool(sep) and _int(port, 0, 3) and _real(mb, high=2**33, strict=True)
    same = _int(token) and int(token) == int(FB_TRACE[i][j])  # Python reads any Unicode digits
    return {"id": _int(token), "arrival": _int(token, 0), "count": same,
            "port": _int(token, 0, 3)}[role]


@st.composite
def fb_trace_cases(draw) -> Case:
    """An FB coflow-benchmark trace with one token replaced or one line or token added or dropped."""
    lines, i, j, token, action = draw(line_edit(FB_TRACE))
    # Fields shift when a token is dropped (the line may still read as another valid coflow).
    bad = None if action == "drop token" or (action == "replace" and _trace_token_ok(i, j, token)) else True
    return _file_case("FB trace", f"trace line {i + 1}: {action} {token!r}", "trace.txt", _text(lines),
                      'kind = "fb_trace"\npath = "trace.txt"', bad, n_hosts=4)


#: The case strategy of each kind.
STRATEGIES = {"scenario": scenario_cases, "--set": set_cases, "workload JSON": json_cases,
              "HPCC topology": hpcc_topology_cases, "HPCC flows": hpcc_flow_cases, "FB trace": fb_trace_cases}
