"""RDMA transport: RoCEv2-style queue pairs with DCQCN, go-back-N, PFC.

On the packet backend, per-packet work is C++ (``backends/packet/cpp/rdma_flows.h``,
``rdma_band.h``, ``pfc.h``); this module holds the parameters, their documented defaults
and their validation, and hands them to the C++ side. Its fluid model has no start-up: a
queue pair is already connected and DCQCN starts at line rate, so the first byte leaves
at once; at a port other flows saturate, its last packet waits behind one frame
(:meth:`RdmaTransport.standing_queue_bytes`). Select it with ``[transport] kind = "rdma"``; every field of
:class:`RdmaTransport` is a knob of that table.

Sources of the defaults:

* DCQCN: Zhu et al., "Congestion Control for Large-Scale RDMA Deployments", SIGCOMM 2015,
  section 3 and its parameter table: g = 1/256, alpha timer 55 us, rate-increase timer
  55 us, byte counter 10 MB, F = 5 fast-recovery steps, CNPs at most one per flow per 50 us.
* Rates and ECN thresholds: the HPCC simulator's configuration (Li et al., "HPCC: High
  Precision Congestion Control", SIGCOMM 2019; github.com/alibaba-edu/High-Precision-
  Congestion-Control, ``simulation/mix/config.txt``): RATE_AI 50 Mb/s, RATE_HAI 100 Mb/s,
  MIN_RATE 100 Mb/s, and KMIN_MAP / KMAX_MAP / PMAX_MAP of 100 / 400 KB / 0.2 at 25 Gb/s,
  200 / 800 KB at 50 Gb/s, 400 / 1600 KB at 100 Gb/s: Kmin = 4 KB and Kmax = 16 KB per
  Gb/s of the port, which this module scales to every port's rate.
* PFC: IEEE 802.1Qbb; XOFF leaves the headroom of the frames already committed when a
  PAUSE is decided (two link delays of data, the upstream device queue and the frame on
  the wire, the PAUSE frame itself); XON = XOFF - 2 MTU (the HPCC simulator resumes 3 KB
  below its threshold with 1 KB packets).
"""

from __future__ import annotations

import math
import warnings
from dataclasses import asdict, dataclass, field

import numpy as np

from ..errors import ConfigError
from ..topology import Topology
from ..validate import MAX_RATE_BPS, MAX_SECONDS, Flag, Number
from .base import UINT32_MAX, Transport

__all__ = ["RdmaTransport", "RDMA_OPTIONS", "KMIN_BYTES_PER_GBPS", "KMAX_BYTES_PER_GBPS", "PAUSE_FRAME_BYTES"]

#: DCQCN marking thresholds per Gb/s of port rate (HPCC simulator config, see module doc).
KMIN_BYTES_PER_GBPS = 4_000
KMAX_BYTES_PER_GBPS = 16_000
#: IEEE 802.1Qbb PAUSE frame: a minimum-size Ethernet frame.
PAUSE_FRAME_BYTES = 64
#: RDMA header (BTH + ICRC), UDP and IPv4 bytes in every data packet.
RDMA_UDP_IP_HEADER_BYTES = 16 + 8 + 20
#: Frames that may still arrive after a PAUSE is decided, besides those on the wire: the
#: one being serialised upstream, the one in its device queue, and one of slack.
_COMMITTED_FRAMES = 3

_SECONDS = Number(low=0.0, low_open=True, high=MAX_SECONDS, fix="seconds; see RdmaTransport's documented defaults")
_RATE = Number(low=0.0, low_open=True, high=MAX_RATE_BPS, fix="bits per second; see RdmaTransport's defaults")
_COUNT = Number(integer=True, low=1, high=UINT32_MAX, fix="see RdmaTransport's documented defaults")
_BYTES = Number(integer=True, low=1, high=UINT32_MAX, optional=True,
                fix="give bytes, or leave unset for the rate-scaled default")
#: Options of ``[transport] kind = "rdma"``: RdmaTransport's fields and their rules.
RDMA_OPTIONS: dict[str, Number | Flag] = {
    "ack_interval_packets": _COUNT, "rto_s": _SECONDS, "nack_interval_s": _SECONDS, "dcqcn": Flag(),
    "kmin_bytes": _BYTES, "kmax_bytes": _BYTES,
    "pmax": Number(low=0.0, low_open=True, high=1.0, fix="a marking probability, e.g. 0.2"),
    "g": Number(low=0.0, low_open=True, high=1.0, high_open=True, fix="DCQCN uses 1/256"),
    "alpha_timer_s": _SECONDS, "rate_timer_s": _SECONDS,
    "byte_counter_bytes": Number(integer=True, low=1, fix="bytes, e.g. 10000000"),
    "fast_recovery_steps": _COUNT, "rate_ai_bps": _RATE, "rate_hai_bps": _RATE, "min_rate_bps": _RATE,
    "cnp_interval_s": _SECONDS, "pfc": Flag(),
    "pfc_xoff_bytes": _BYTES,
    "pfc_xon_bytes": Number(integer=True, low=0, high=UINT32_MAX, optional=True, fix="leave unset for XOFF - 2 MTU"),
}


@dataclass
class RdmaTransport(Transport):
    """RoCEv2-style RDMA: rate-paced queue pairs, DCQCN, go-back-N, lossless PFC classes.

    Parameters
    ----------
    name:
        ``"rdma"``, its one kind.
    ack_interval_packets:
        The receiver ACKs every this many in-order packets and always the last one.
        RoCE NICs coalesce ACKs (the HPCC simulator ACKs every 4 KB chunk of 1 KB
        packets); rate-based DCQCN needs ACKs only for completion and recovery.
    rto_s:
        Go back to the oldest unacknowledged byte after this long without an ACK (a lost
        tail, or a lost NACK).
    nack_interval_s:
        A gap that persists this long is NACKed again (its retransmission was lost).
    dcqcn:
        DCQCN on (ECN marking at every port, CNPs, rate control) or off (line rate).
    kmin_bytes, kmax_bytes, pmax:
        RED-style marking of a band's instantaneous queue; ``None`` scales 4 / 16 KB per
        Gb/s with each port's rate (HPCC simulator). ``pmax`` is the probability at Kmax.
    g:
        DCQCN alpha gain (1/256).
    alpha_timer_s, rate_timer_s:
        Alpha decay period and rate-increase timer (55 us each).
    byte_counter_bytes:
        Bytes sent between two byte-counter rate increases (10 MB).
    fast_recovery_steps:
        F: increase events spent in fast recovery before additive increase (5).
    rate_ai_bps, rate_hai_bps, min_rate_bps:
        Additive and hyper increase steps and the lowest rate (50, 100, 100 Mb/s).
    cnp_interval_s:
        At most one CNP per flow per this interval (50 us).
    pfc:
        Lossless classes by PFC (on by default for RDMA).
    pfc_xoff_bytes, pfc_xon_bytes:
        Per-ingress-port, per-class thresholds to send PAUSE / RESUME. ``None``: XOFF is
        the switch buffer split evenly over its ports minus the headroom, XON two MTUs
        lower. With these defaults ``degree * (XOFF + headroom) <= buffer``, so no egress
        band can overflow; thresholds given by hand that break this bound get a warning.

    Notes
    -----
    ACK, NACK and CNP travel in class 0 (the highest), not ECN-capable, so feedback is
    never queued behind lower-class data; a PAUSE of class 0 stops them too. Data travels
    in the flow's class with ECT(0). Each priority band of a port has its own buffer of
    ``topology.buffer_bytes`` (as for TCP; a shared switch buffer is not modelled).
    """

    name: str = "rdma"
    ack_interval_packets: int = 8
    rto_s: float = 1e-3
    nack_interval_s: float = 500e-6
    dcqcn: bool = True
    kmin_bytes: int | None = None
    kmax_bytes: int | None = None
    pmax: float = 0.2
    g: float = 1 / 256
    alpha_timer_s: float = 55e-6
    rate_timer_s: float = 55e-6
    byte_counter_bytes: int = 10_000_000
    fast_recovery_steps: int = 5
    rate_ai_bps: float = 50e6
    rate_hai_bps: float = 100e6
    min_rate_bps: float = 100e6
    cnp_interval_s: float = 50e-6
    pfc: bool = True
    pfc_xoff_bytes: int | None = None
    pfc_xon_bytes: int | None = None
    _thresholds: tuple[int, int] = field(default=(0, 0), init=False, repr=False, compare=False)
    _mtu: int = field(default=9000, init=False, repr=False, compare=False)

    KINDS = ("rdma",)
    OPTIONS = RDMA_OPTIONS

    def __post_init__(self) -> None:
        self.check_options()
        if self.kmin_bytes is not None and self.kmax_bytes is not None and self.kmin_bytes >= self.kmax_bytes:
            raise ConfigError("transport.kmin_bytes", f"must be below kmax_bytes ({self.kmax_bytes}), "
                              f"got {self.kmin_bytes}", "e.g. 4 KB and 16 KB per Gb/s")
        if (self.pfc_xoff_bytes is not None and self.pfc_xon_bytes is not None
                and self.pfc_xon_bytes >= self.pfc_xoff_bytes):
            raise ConfigError("transport.pfc_xon_bytes", f"must be below pfc_xoff_bytes ({self.pfc_xoff_bytes}), "
                              f"got {self.pfc_xon_bytes}", "leave unset for XOFF - 2 MTU")

    # -- thresholds ---------------------------------------------------------------------

    def ecn_thresholds(self, rate_bps: float) -> tuple[int, int]:
        """``(Kmin, Kmax)`` bytes of a port of ``rate_bps``."""
        gbps = rate_bps / 1e9
        kmin = self.kmin_bytes or math.ceil(KMIN_BYTES_PER_GBPS * gbps)
        kmax = self.kmax_bytes or math.ceil(KMAX_BYTES_PER_GBPS * gbps)
        if kmin >= kmax:
            raise ConfigError("transport.kmin_bytes", f"Kmin {kmin} B is not below Kmax {kmax} B at "
                              f"{rate_bps:.3g} bit/s", "give both kmin_bytes and kmax_bytes")
        return kmin, kmax

    def pfc_headroom_bytes(self, topology: Topology) -> int:
        """Bytes that may still reach an ingress after it decides to PAUSE (worst link)."""
        in_flight = 2 * topology.port_delay_s * topology.port_capacity_bps / 8
        frame = topology.mtu_bytes + 2
        return int(math.ceil(in_flight.max())) + PAUSE_FRAME_BYTES + _COMMITTED_FRAMES * frame

    def pfc_thresholds(self, topology: Topology) -> tuple[int, int]:
        """``(XOFF, XON)`` bytes per ingress port and class (see the class doc)."""
        mtu = topology.mtu_bytes
        degree = int(np.bincount(topology.port_src, minlength=topology.n_nodes)[topology.n_hosts:].max())
        headroom = self.pfc_headroom_bytes(topology)
        fair = topology.buffer_bytes // degree - headroom
        xoff = self.pfc_xoff_bytes or max(fair, 2 * mtu)
        xon = self.pfc_xon_bytes if self.pfc_xon_bytes is not None else max(xoff - 2 * mtu, 0)
        if xon >= xoff:
            raise ConfigError("transport.pfc_xon_bytes", f"XON {xon} B must be below XOFF {xoff} B",
                              "lower pfc_xon_bytes")
        if self.pfc and degree * (xoff + headroom) > topology.buffer_bytes:
            warnings.warn(f"transport.pfc_xoff_bytes: {degree} ports x (XOFF {xoff} B + headroom {headroom} B) "
                          f"exceed the {topology.buffer_bytes} B band buffer; an incast through every port "
                          "can overflow it (drops are counted in the ports table)", stacklevel=2)
        return xoff, xon

    # -- packet backend -----------------------------------------------------------------

    def configure(self, ns, topology: Topology) -> None:
        """Check the thresholds against the topology (no ns-3 defaults are needed)."""
        for rate in np.unique(topology.port_capacity_bps):
            self.ecn_thresholds(float(rate))
        self._thresholds = self.pfc_thresholds(topology) if self.pfc else (0, 0)
        self._mtu = topology.mtu_bytes

    def queue_disc(self, rate_bps: float, topology: Topology) -> tuple[str, dict[str, str]]:
        kmin, kmax = self.ecn_thresholds(rate_bps)
        return "hpsched::RdmaBandQueueDisc", {
            "MaxSize": f"{topology.buffer_bytes}B", "KminBytes": str(kmin), "KmaxBytes": str(kmax),
            "Pmax": repr(float(self.pmax)), "UseEcn": "true" if self.dcqcn else "false",
        }

    def create_flows(self, cpp, fabric, session):
        cfg = cpp.RdmaConfig()
        cfg.mtu = self._mtu
        cfg.nBands = int(fabric.GetQueueDisc(0).GetNQueueDiscClasses())
        cfg.ackInterval = self.ack_interval_packets
        cfg.rtoS = float(self.rto_s)
        cfg.nackIntervalS = float(self.nack_interval_s)
        cfg.dcqcn = self.dcqcn
        cfg.g = float(self.g)
        cfg.alphaTimerS = float(self.alpha_timer_s)
        cfg.rateTimerS = float(self.rate_timer_s)
        cfg.byteCounter = self.byte_counter_bytes
        cfg.fastRecoverySteps = self.fast_recovery_steps
        cfg.rateAiBps = float(self.rate_ai_bps)
        cfg.rateHaiBps = float(self.rate_hai_bps)
        cfg.minRateBps = float(self.min_rate_bps)
        cfg.cnpIntervalS = float(self.cnp_interval_s)
        cfg.pfc = self.pfc
        cfg.xoffBytes, cfg.xonBytes = self._thresholds
        return cpp.RdmaFlows(fabric, session, cfg)

    def port_stats(self, flows, n_ports: int) -> dict[str, np.ndarray]:
        """``pfc_pauses`` (PAUSE frames received by the port, all classes) and
        ``pfc_paused_s`` (seconds its classes were paused, summed over classes)."""
        pauses, paused_s = np.zeros(n_ports, dtype=np.uint64), np.zeros(n_ports)
        flows.PortStats(pauses, paused_s)
        return {"pfc_pauses": pauses.astype(np.int64), "pfc_paused_s": paused_s}

    def describe(self) -> dict:
        settings = {k: v for k, v in asdict(self).items() if not k.startswith("_")}
        xoff, xon = self._thresholds
        return {**settings, "pfc_xoff_bytes_used": xoff, "pfc_xon_bytes_used": xon,
                "ecn_k_default": "Kmin 4 KB, Kmax 16 KB per Gb/s of the port (HPCC simulator)",
                "control_class": 0, "encapsulation": "UDP (proto 17) + 16 B RDMA header"}

    # -- fluid backend ------------------------------------------------------------------

    def startup_s(self, path_offsets: np.ndarray, path_ports: np.ndarray, size_bytes: np.ndarray,
                  port_delay_s: np.ndarray, port_capacity_bps: np.ndarray, mtu_bytes: int) -> np.ndarray:
        """None: the queue pair is connected and sends at line rate from the first byte."""
        return np.zeros(len(path_offsets) - 1)

    def standing_queue_bytes(self, port_capacity_bps: np.ndarray, mtu_bytes: int) -> np.ndarray:
        """One frame (an MTU) at every port.

        Queue pairs are paced, not window-clocked: a packet reaching a port that other
        paced senders saturate waits behind the frame being sent and, as their rates sum to
        the capacity, about one more arriving with it, not behind a burst. DCQCN's Kmin
        (400 kB at 100 Gb/s) bounds the queue it lets build, not the queue it keeps: on the
        packet backend the queues that do build come from line-rate starts meeting at a
        port and from PFC, are short-lived, and are not modelled (docs/flow-crosscheck.md).
        """
        return np.full(len(port_capacity_bps), float(mtu_bytes))
