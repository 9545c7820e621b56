"""Validation of policy parameters: every error names ``scheduler.params.<name>`` and a fix.

Policies validate in ``__init__`` so a bad scenario fails before any simulation starts.
"""

from __future__ import annotations

import math
from collections.abc import Collection

from ..errors import ConfigError

__all__ = ["field", "check_int", "check_number", "check_choice", "check_bool"]


def field(name: str) -> str:
    """The scenario field of policy parameter ``name``."""
    return f"scheduler.params.{name}"


def check_int(name: str, value: object, *, minimum: int) -> int:
    """Return ``value`` if it is an integer ``>= minimum``, else raise :class:`ConfigError`."""
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise ConfigError(field(name), f"must be an integer >= {minimum}, got {value!r}",
                          f"give an integer of at least {minimum}")
    return value


def check_number(name: str, value: object, *, minimum: float, strict: bool = False,
                 allow_inf: bool = False) -> float:
    """Return ``value`` as a float if it is a number above ``minimum``.

    ``strict`` excludes ``minimum`` itself; ``allow_inf`` admits ``+inf`` (e.g. FIFO-LM's
    ``theta_bytes = inf`` meaning "never heavy"). NaN is always rejected.
    """
    bound = f"> {minimum}" if strict else f">= {minimum}"
    ok = (not isinstance(value, bool) and isinstance(value, (int, float)) and not math.isnan(value)
          and (value > minimum if strict else value >= minimum) and (allow_inf or math.isfinite(value)))
    if not ok:
        kind = "a number" if allow_inf else "a finite number"
        raise ConfigError(field(name), f"must be {kind} {bound}, got {value!r}",
                          f"give {kind} {bound}")
    return float(value)


def check_choice(name: str, value: object, choices: Collection[str]) -> str:
    """Return ``value`` if it is one of ``choices``, else raise :class:`ConfigError`."""
    if value not in choices:
        raise ConfigError(field(name), f"unknown value {value!r}", f"use one of {sorted(choices)}")
    return value


def check_bool(name: str, value: object) -> bool:
    """Return ``value`` if it is a bool, else raise :class:`ConfigError`."""
    if not isinstance(value, bool):
        raise ConfigError(field(name), f"must be true or false, got {value!r}", "give a boolean")
    return value
