"""Interchange with the HPCC simulator (alibaba-edu/High-Precision-Congestion-Control).

* ``topology.txt``: first line ``<nodes> <switches> <links>``, second line the switch
  node ids, then one link per line ``<a> <b> <rate> <delay> <error_rate>`` with rates such
  as ``100Gbps`` and delays such as ``0.001ms``. Read into :class:`HpccTopology`.
* ``flow.txt``: first line the number of flows N, then ``<src> <dst> <pg> <dport> <size>
  <start_s>`` per flow, ``pg`` being the priority class (0 highest). Read into flow
  records (dicts) by :func:`read_flows`. As HPCC does, only the first N flow lines are
  read; what follows them (HPCC's own ``mix/flow.txt`` lists more lines and a text note)
  is ignored, with a :class:`FlowFileTail` warning.
* ``fct.txt``: written by :func:`write_fct`, one line per flow,
  ``<sip> <dip> <sport> <dport> <size> <start_ns> <fct_ns> <standalone_fct_ns>``, the IPs
  as 8 hex digits as HPCC prints them. The addresses are *ours*, not HPCC's: host i is
  10.0.0.(i+1) (:func:`ns3_hpsched.topology.ecmp.host_ip`), so host 0 is ``0a000001``.

:func:`~ns3_hpsched.topology.ideal.standalone_fct_s` is the ideal completion time in
the ``standalone_fct_ns`` column (and the flows table's ``standalone_fct_s``).
"""

from __future__ import annotations

import os
import re
import warnings
from pathlib import Path

import pandas as pd

from .. import validate
from ..errors import ConfigError
from ..topology import Topology
from ..topology.ecmp import host_ip
from ..topology.ideal import FRAMING_BYTES, IP_TCP_HEADER_BYTES, standalone_fct_s
from ..workload.files import write_text_atomic

__all__ = ["HpccTopology", "read_topology", "read_flows", "write_fct", "standalone_fct_s",
           "FlowFileTail", "IP_TCP_HEADER_BYTES", "FRAMING_BYTES"]


class FlowFileTail(UserWarning):
    """A ``flow.txt`` holds lines after the flows its count announces (they are ignored)."""

_RATE_UNITS = {"bps": 1.0, "kbps": 1e3, "mbps": 1e6, "gbps": 1e9, "tbps": 1e12}
_DELAY_UNITS = {"s": 1.0, "ms": 1e-3, "us": 1e-6, "ns": 1e-9}
_PG = validate.Number(integer=True, low=0, fix="a priority class, 0 highest")
_PORT = validate.Number(integer=True, low=0, high=65535, fix="a TCP/UDP port")
_SIZE = validate.Number(integer=True, low=1, high=validate.MAX_BYTES, fix="the flow's bytes")
_START = validate.Number(low=0.0, high=validate.MAX_SECONDS, fix="the start time in seconds (finite, >= 0)")
_QUANTITY = re.compile(r"^([0-9]*\.?[0-9]+(?:[eE][-+]?[0-9]+)?)([a-zA-Z]+)$")


def _quantity(text: str, units: dict[str, float], where: str, what: str, example: str) -> float:
    match = _QUANTITY.match(text)
    if not match or match.group(2).lower() not in units:
        raise ConfigError(where, f"cannot read {what} {text!r}", f"write it like {example!r}")
    return float(match.group(1)) * units[match.group(2).lower()]


class HpccTopology(Topology):
    """A topology read from an HPCC ``topology.txt``, renumbered hosts first.

    HPCC numbers nodes freely and marks the switches on its second line; we number the
    hosts first (in increasing HPCC id), then the switches (in increasing HPCC id).

    Attributes
    ----------
    node_of_hpcc:
        HPCC node id -> our node number.
    hpcc_of_node:
        Our node number -> HPCC node id.
    """

    def __init__(self, n_nodes: int, switch_ids: list[int], links: list[tuple[int, int, float, float]],
                 **link) -> None:
        switches = set(switch_ids)
        self._hpcc_switches = sorted(switches)
        self._hpcc_hosts = [i for i in range(n_nodes) if i not in switches]
        self._hpcc_links = links
        self.hpcc_of_node: tuple[int, ...] = tuple(self._hpcc_hosts + self._hpcc_switches)
        self.node_of_hpcc: dict[int, int] = {h: n for n, h in enumerate(self.hpcc_of_node)}
        link.setdefault("rate_bps", max(rate for _, _, rate, _ in links))
        super().__init__(**link)

    def build(self) -> None:
        names = {h: self.add_host(f"h{h}") for h in self._hpcc_hosts}
        names |= {s: self.add_switch(f"s{s}") for s in self._hpcc_switches}
        for a, b, rate, delay in self._hpcc_links:
            self.add_link(names[a], names[b], rate_bps=rate, delay_s=delay)


def read_topology(path: str | os.PathLike, **link) -> HpccTopology:
    """Read an HPCC ``topology.txt``; errors name the file and line.

    ``link`` passes topology options HPCC's file does not state (``mtu_bytes``,
    ``buffer_bytes``, ``ecmp_seed``). A non-zero error rate is refused: random loss is
    not modelled.
    """
    path = Path(path)
    rows = _rows(path, "topology.path")
    try:
        (_, head), (n2, switch_line) = rows[0], rows[1]
        n_nodes, n_switches, n_links = (int(t) for t in head)
        switch_ids = [int(t) for t in switch_line]
    except (IndexError, ValueError):
        raise ConfigError(f"{path.name}:1", "expected '<nodes> <switches> <links>' then the switch ids",
                          "start the file with the HPCC topology header") from None
    validate.integer(f"{path.name}:1", n_nodes, low=2, fix="the header's first number counts the nodes")
    validate.size(f"{path.name}:1", n_nodes + max(n_links, 0), "nodes and links", validate.NODE_BYTES)
    if len(switch_ids) != n_switches or len(set(switch_ids)) != n_switches:
        raise ConfigError(f"{path.name}:{n2}", f"lists {len(switch_ids)} switch ids, header says {n_switches}",
                          "list every switch id once")
    if any(not 0 <= s < n_nodes for s in switch_ids):
        raise ConfigError(f"{path.name}:{n2}", f"switch ids must be in 0..{n_nodes - 1}", "fix the switch ids")
    links = []
    for n, tokens in rows[2:]:
        where = f"{path.name}:{n}"
        if len(tokens) != 5:
            raise ConfigError(where, f"expected '<a> <b> <rate> <delay> <error_rate>', got {len(tokens)} fields",
                              "e.g. '0 4 100Gbps 0.001ms 0'")
        try:
            a, b, error_rate = int(tokens[0]), int(tokens[1]), float(tokens[4])
        except ValueError:
            raise ConfigError(where, "node ids must be integers and the error rate a number",
                              "e.g. '0 4 100Gbps 0.001ms 0'") from None
        for node in (a, b):
            if not 0 <= node < n_nodes:
                raise ConfigError(where, f"node {node} is out of range", f"use node ids 0..{n_nodes - 1}")
        if error_rate != 0:
            raise ConfigError(where, f"error rate {error_rate} is not 0", "random loss is not modelled; use 0")
        links.append((a, b, _quantity(tokens[2], _RATE_UNITS, where, "rate", "100Gbps"),
                      _quantity(tokens[3], _DELAY_UNITS, where, "delay", "0.001ms")))
    if len(links) != n_links:
        raise ConfigError(f"{path.name}:1", f"header announces {n_links} links, the file has {len(links)}",
                          "fix the header or the links")
    try:
        return HpccTopology(n_nodes, switch_ids, links, **link)
    except ConfigError as exc:
        raise ConfigError(f"{path.name}:{exc.field}", exc.problem, exc.fix) from None


def _rows(path: Path, field: str) -> list[tuple[int, list[str]]]:
    """Non-empty lines of a file as (line number, whitespace-split fields)."""
    text = validate.read_text(path, field, "HPCC file")
    return [(n, line.split()) for n, line in enumerate(text.splitlines(), start=1) if line.strip()]


def read_flows(path: str | os.PathLike, topology: Topology) -> list[dict]:
    """Read an HPCC ``flow.txt`` against ``topology``; errors name the file and line.

    Returns one record per flow, in file order: ``{"src", "dst", "bytes", "start_s",
    "priority", "dport"}`` with hosts in *our* numbering, ``priority`` = HPCC's ``pg`` and
    HPCC's ``dport`` (the input of
    :func:`ns3_hpsched.workload.flowlist.flow_list_workload`; the dport comes back in the
    flows table and ``fct.txt``, so they join to the flow file on it).

    Node ids are HPCC ids when ``topology`` is an :class:`HpccTopology` (mapped to our
    numbers), else our host numbers. Each must be a host; ``src != dst``; ``pg >= 0``;
    ``size >= 1`` bytes; ``start_s >= 0``. The first line's count N is honoured as HPCC
    honours it: the next N lines are the flows, fewer is an error, and any lines after them
    are ignored with a :class:`FlowFileTail` warning.
    """
    path = Path(path)
    rows = _rows(path, "workload.path")
    node_of = getattr(topology, "node_of_hpcc", None)
    if not rows or len(rows[0][1]) != 1 or not (rows[0][1][0].isascii() and rows[0][1][0].isdigit()):
        raise ConfigError(f"{path.name}:1", "the first line must be the number of flows",
                          "start the file with the flow count")
    count, body = int(rows[0][1][0]), rows[1:]
    if len(body) > count:
        warnings.warn(f"{path.name}:{body[count][0]}: the first line announces {count} flows; "
                      f"the {len(body) - count} lines from here on are ignored, as HPCC ignores them",
                      FlowFileTail, stacklevel=2)
        body = body[:count]
    flows = []
    for n, tokens in body:
        where = f"{path.name}:{n}"
        try:
            if len(tokens) != 6:
                raise ValueError
            src, dst, pg, dport, size = (int(t) for t in tokens[:5])
            start_s = float(tokens[5])
        except ValueError:
            raise ConfigError(where, f"malformed flow line {' '.join(tokens)!r}",
                              "write '<src> <dst> <pg> <dport> <size> <start_s>', e.g. '0 1 3 100 1000000 2.0'") from None
        ours = []
        for name, node in (("src", src), ("dst", dst)):
            mapped = node if node_of is None else node_of.get(node, -1)
            if not 0 <= mapped < topology.n_hosts:
                raise ConfigError(where, f"{name} {node} is not a host of the topology",
                                  "use host ids of topology.txt (switches cannot send)")
            ours.append(mapped)
        if src == dst:
            raise ConfigError(where, f"src == dst == {src}", "a flow needs two different hosts")
        for column, value, rule in (("pg", pg, _PG), ("dport", dport, _PORT), ("size", size, _SIZE),
                                    ("start_s", start_s, _START)):
            try:
                rule.check(where, value)
            except ConfigError as exc:
                raise ConfigError(where, f"{column} {exc.problem}", exc.fix) from None
        flows.append({"src": ours[0], "dst": ours[1], "bytes": size, "start_s": start_s, "priority": pg,
                      "dport": dport})
    if len(flows) != count:
        raise ConfigError(f"{path.name}:1", f"announces {count} flows, the file has {len(flows)}",
                          "fix the count on the first line")
    return flows


def write_fct(flows: pd.DataFrame, path: str | os.PathLike, extra: tuple[str, ...] = ()) -> Path:
    """Write ``flows`` as an HPCC ``fct.txt`` (atomically), one line per row.

    ``flows`` needs the columns ``src``, ``dst`` (our host numbers), ``sport``, ``dport``,
    ``bytes``, ``start_s``, ``fct_s``, ``standalone_fct_s``. Times are written in integer
    nanoseconds (rounded to nearest). ``extra`` names integer columns appended after
    HPCC's eight (e.g. ``("coflow_id", "job", "stage")``); HPCC's own scripts read only
    the first eight.
    """
    columns = ["src", "dst", "sport", "dport", "bytes", "start_s", "fct_s", "standalone_fct_s", *extra]
    missing = [c for c in columns if c not in flows.columns]
    if missing:
        raise ConfigError("fct.flows", f"missing columns {missing}", f"give a DataFrame with {columns}")
    ns = {c: (flows[c].to_numpy(dtype=float) * 1e9).round().astype("int64") for c in
          ("start_s", "fct_s", "standalone_fct_s")}
    lines = []
    for i, row in enumerate(flows[columns].itertuples(index=False)):
        fields = [f"{host_ip(int(row.src)):08x}", f"{host_ip(int(row.dst)):08x}", str(int(row.sport)),
                  str(int(row.dport)), str(int(row.bytes)), str(ns["start_s"][i]), str(ns["fct_s"][i]),
                  str(ns["standalone_fct_s"][i]), *(str(int(getattr(row, c))) for c in extra)]
        lines.append(" ".join(fields))
    return write_text_atomic(path, "".join(line + "\n" for line in lines))
