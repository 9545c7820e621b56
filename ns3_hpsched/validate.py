"""The one set of input checks: numbers, booleans, choices, keys, sizes and files.

Every table of a scenario, every option of a transport or policy and every field of a
workload or trace file is checked with these functions, so a bad value gets the same
kind of message wherever it is given: the dotted field, what is wrong, and the fix
(with a "did you mean" for a misspelt key or value). All raise
:class:`~ns3_hpsched.errors.ConfigError`.

Rules shared by every number: a boolean is not a number; NaN is never accepted; infinity
only where a field says so; an integer must fit in a signed 64-bit integer (results are
stored as int64). Sizes (nodes and links, GPU slots, jobs, flows) are bounded by
the machine's memory (:func:`size`, :func:`memory_bytes`), so a huge value is refused
before anything is allocated.
"""

from __future__ import annotations

import difflib
import math
import numbers
import os
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .errors import ConfigError

__all__ = ["INT64_MAX", "MAX_BYTES", "MAX_SECONDS", "MAX_RATE_BPS", "MEMORY_ENV", "NODE_BYTES", "ITEM_BYTES",
           "Number", "Flag", "number",
           "integer", "boolean", "text", "scaled_bytes", "choice", "known_keys", "table", "sequence", "did_you_mean",
           "memory_bytes", "size", "read_text"]

#: Largest integer a results table can hold (int64).
INT64_MAX = 2**63 - 1
#: Largest byte count of a flow or coflow: 2**53, the largest integer float64 holds exactly
#: (the fluid backend and the policies do their byte arithmetic in float64).
MAX_BYTES = 2**53
#: Longest time (seconds): ns-3 counts time in int64 nanoseconds (about 292 years).
MAX_SECONDS = INT64_MAX / 1e9
#: Fastest link (bits per second): ns-3's DataRate is a 64-bit count of bits per second.
MAX_RATE_BPS = float(INT64_MAX)
#: Environment variable: the memory (GiB) the size limits assume, instead of this machine's.
MEMORY_ENV = "NS3_HPSCHED_MEMORY_GIB"
#: Memory budgeted per node or link of a topology: ns-3 realises each with devices and a
#: K-band queue disc per port; a k=16 fat-tree (4,416 nodes and links, 8 bands) took 247 MB
#: once ns-3 was loaded (``benchmarks/bench_packet.py`` build), about 56 KiB each.
NODE_BYTES = 64 * 1024
#: Memory budgeted per flow, job or GPU slot: a fluid run of 167,686 FB-trace flows peaked
#: at 0.96 KB per flow (workload, driver records and tables).
ITEM_BYTES = 1024


@dataclass(frozen=True)
class Number:
    """The rule of a numeric field: integer or real, an interval, whether unset is allowed.

    Parameters
    ----------
    integer:
        Only integers (``int``, never ``bool`` or ``float``); else any finite real.
    low, high:
        Bounds (None: unbounded; integers are always within int64).
    low_open, high_open:
        Exclude the bound itself.
    allow_inf:
        Accept ``+inf`` (e.g. a threshold meaning "never").
    optional:
        Accept ``None`` (unset: the documented default applies).
    fix:
        The hint given with an error, e.g. ``"e.g. 10e9 for 10 Gbps"``.
    what:
        The kind of value in words, when more specific (``"an even integer"``).
    """

    integer: bool = False
    low: float | None = None
    high: float | None = None
    low_open: bool = False
    high_open: bool = False
    allow_inf: bool = False
    optional: bool = False
    fix: str = ""
    what: str = ""

    def describe(self) -> str:
        """What a valid value is, in words (``"an integer in 1..64"``, ``"a number > 0"``)."""
        kind = self.what or ("an integer" if self.integer else ("a number" if self.allow_inf else "a finite number"))
        if self.low is not None and self.high is not None and not (self.low_open or self.high_open):
            return f"{kind} in {_fmt(self.low)}..{_fmt(self.high)}"
        parts = []
        if self.low is not None:
            parts.append(f"{'>' if self.low_open else '>='} {_fmt(self.low)}")
        if self.high is not None:
            parts.append(f"{'<' if self.high_open else '<='} {_fmt(self.high)}")
        return " ".join([kind, " and ".join(parts)]).strip()

    def check(self, field: str, value: Any) -> int | float | None:
        """Return ``value`` (a float for real fields) if it satisfies the rule, else raise."""
        if value is None and self.optional:
            return None
        if not _is_number(value) or (self.integer and not isinstance(value, numbers.Integral)):
            self.fail(field, value, "a boolean is not a number" if isinstance(value, bool) else None)
        if isinstance(value, numbers.Integral) and not -INT64_MAX - 1 <= value <= INT64_MAX:
            self.fail(field, value, "an integer must fit in 64 bits" + ("" if self.integer else "; write 1e30 for a real"
                                                                         " number"))
        if self.integer:
            value = int(value)
        else:
            try:
                value = float(value)
            except OverflowError:
                self.fail(field, value, "it is too large for a float")
            if math.isnan(value) or (math.isinf(value) and not (self.allow_inf and value > 0)):
                self.fail(field, value)
        if not self._in_range(value):
            self.fail(field, value)
        return value

    def _in_range(self, value: float) -> bool:
        if self.low is not None and (value <= self.low if self.low_open else value < self.low):
            return False
        return self.high is None or (value < self.high if self.high_open else value <= self.high)

    def fail(self, field: str, value: Any, why: str | None = None) -> None:
        """Raise the error of this rule for ``value`` (also for checks the caller adds)."""
        problem = f"must be {self.describe()}" + (" or unset" if self.optional else "") + f", got {_show(value)}"
        raise ConfigError(field, problem + (f" ({why})" if why else ""), self.fix or f"give {self.describe()}")


@dataclass(frozen=True)
class Flag:
    """The rule of a boolean field: ``true`` or ``false`` only (never 0/1 or a string)."""

    fix: str = "write true or false"

    def check(self, field: str, value: Any) -> bool:
        """Return ``value`` if it is a boolean, else raise."""
        return boolean(field, value, self.fix)


def _is_number(value: Any) -> bool:
    """A real number (numpy's too, as sweeps pass them), never a boolean."""
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


def _fmt(bound: float) -> str:
    if isinstance(bound, int) and abs(bound) >= 2**31:
        exponent = int(math.log2(abs(bound) + 1))
        return f"{'-' if bound < 0 else ''}2^{exponent}" + ("-1" if abs(bound) + 1 == 2**exponent else "")
    return f"{bound:g}" if isinstance(bound, float) else str(bound)


def _show(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def number(field: str, value: Any, *, low: float | None = None, high: float | None = None,
           low_open: bool = False, high_open: bool = False, allow_inf: bool = False,
           optional: bool = False, fix: str = "") -> float | None:
    """``value`` as a float if it is a real number within the bounds (see :class:`Number`)."""
    return Number(False, low, high, low_open, high_open, allow_inf, optional, fix).check(field, value)


def integer(field: str, value: Any, *, low: int | None = None, high: int | None = None,
            optional: bool = False, fix: str = "") -> int | None:
    """``value`` if it is an integer within ``low..high`` and int64 (see :class:`Number`)."""
    return Number(True, low, high, optional=optional, fix=fix).check(field, value)


def boolean(field: str, value: Any, fix: str = "write true or false") -> bool:
    """``value`` if it is ``True`` or ``False``, else raise."""
    if not isinstance(value, bool):
        raise ConfigError(field, f"must be true or false, got {_show(value)}", fix)
    return value


def text(field: str, value: Any) -> str:
    """``value`` if it is a string, else raise."""
    if not isinstance(value, str):
        raise ConfigError(field, f"must be a string, got {_show(value)}", 'write it in quotes, e.g. "resnet50"')
    return value


def scaled_bytes(field: str, nbytes: float, scale: float) -> int:
    """``nbytes * scale`` rounded to an integer of at least 1, if it is at most :data:`MAX_BYTES`;
    else raise naming ``field`` (the scale, usually)."""
    value = nbytes * scale
    if not value <= MAX_BYTES:
        raise ConfigError(field, f"makes a transfer of {value:.3g} bytes, more than 2^53 ({MAX_BYTES:,})",
                          "use a smaller scale: byte counts must stay exact in float64")
    return max(1, round(value))


def did_you_mean(word: Any, options: Collection[str]) -> str:
    """``"did you mean 'x'? "`` for the closest of ``options`` to ``word``, or ``""``."""
    if not isinstance(word, str):
        return ""
    close = difflib.get_close_matches(word, [str(o) for o in options], n=1)
    return f"did you mean {close[0]!r}? " if close else ""


def choice(field: str, value: Any, choices: Collection[str], what: str = "value") -> str:
    """``value`` if it is one of ``choices``, else raise naming them (with a did-you-mean)."""
    if not isinstance(value, str) or value not in choices:
        raise ConfigError(field, f"unknown {what} {_show(value)}",
                          f"{did_you_mean(value, choices)}use one of {sorted(choices)}")
    return value


def table(field: str, value: Any) -> dict:
    """``value`` if it is a table (a dict), else raise."""
    if not isinstance(value, Mapping):
        raise ConfigError(field, f"must be a table, got {_show(value)}", f"write it as a [{field}] table or {{...}}")
    return dict(value)


def sequence(field: str, value: Any, what: str = "a list") -> list:
    """``value`` as a list if it is a list or tuple, else raise."""
    if not isinstance(value, (list, tuple)):
        raise ConfigError(field, f"must be {what}, got {_show(value)}", "write it as [ ... ]")
    return list(value)


def known_keys(field: str, keys: Collection[Any], allowed: Collection[str], what: str = "") -> None:
    """Raise for the first key of ``keys`` not in ``allowed``: its dotted field, the valid keys,
    and the closest one."""
    for key in keys:
        if key not in allowed:
            where = f"{field}.{key}" if field else str(key)
            raise ConfigError(where, f"unknown key{' for ' + what if what else ''}",
                              f"{did_you_mean(key, allowed)}use one of {sorted(allowed)}")


def memory_bytes() -> int:
    """The memory the size limits assume: ``$NS3_HPSCHED_MEMORY_GIB``, else this machine's."""
    given = os.environ.get(MEMORY_ENV)
    if given is not None:
        try:
            return int(float(given) * 2**30)
        except (ValueError, OverflowError):
            raise ConfigError(MEMORY_ENV, f"must be a number of GiB, got {given!r}", "e.g. 64, or unset it") from None
    try:
        return os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):  # not POSIX: assume 8 GiB
        return 8 << 30


def size(field: str, count: int, what: str, item_bytes: int = ITEM_BYTES) -> int:
    """Return ``count`` if that many items of ``item_bytes`` fit in :func:`memory_bytes`, else
    raise with the limit and how to raise it (checked before anything is allocated)."""
    memory = memory_bytes()
    limit = memory // item_bytes
    if count > limit:
        source = f"${MEMORY_ENV}" if MEMORY_ENV in os.environ else "this machine's"
        raise ConfigError(field, f"asks for {count:.3g} {what}; at {item_bytes // 1024} KiB each, {source} "
                          f"{memory / 2**30:.1f} GiB hold {limit:,}",
                          f"use a smaller value, or set {MEMORY_ENV} to the memory of a larger machine")
    return count


def read_text(path: str | os.PathLike, field: str, what: str = "file") -> str:
    """The text of ``path`` read as UTF-8; an error naming ``field`` (or the file and line)
    if it is missing, not a regular file, unreadable, or not UTF-8."""
    path = Path(path)
    if not path.exists():
        raise ConfigError(field, f"{what} {str(path)!r} does not exist", "check the path")
    if not path.is_file():
        raise ConfigError(field, f"{str(path)!r} is not a file" + (" but a folder" if path.is_dir() else ""),
                          f"give the path of the {what} itself")
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise ConfigError(field, f"cannot read {str(path)!r}: {exc.strerror}", "check its permissions") from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise ConfigError(f"{path.name}:{line}", f"is not UTF-8 text (byte 0x{data[exc.start]:02x})",
                          "save the file as UTF-8") from None
