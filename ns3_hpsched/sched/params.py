"""Validation of policy parameters: every error names ``scheduler.params.<name>`` and a fix.

Policies validate in ``__init__`` so a bad scenario fails before any simulation starts.
These are :mod:`ns3_hpsched.validate`'s checks with the field prefixed.
"""

from __future__ import annotations

from collections.abc import Collection

from .. import validate

__all__ = ["field", "check_int", "check_number", "check_choice", "check_bool"]


def field(name: str) -> str:
    """The scenario field of policy parameter ``name``."""
    return f"scheduler.params.{name}"


def check_int(name: str, value: object, *, minimum: int, maximum: int | None = None) -> int:
    """Return ``value`` if it is an integer in ``minimum..maximum`` (and int64), else raise."""
    return validate.integer(field(name), value, low=minimum, high=maximum)


def check_number(name: str, value: object, *, minimum: float, strict: bool = False,
                 allow_inf: bool = False) -> float:
    """Return ``value`` as a float if it is a number above ``minimum``.

    ``strict`` excludes ``minimum`` itself; ``allow_inf`` admits ``+inf`` (e.g. FIFO-LM's
    ``theta_bytes = inf`` meaning "never heavy"). NaN is always rejected.
    """
    return validate.number(field(name), value, low=minimum, low_open=strict, allow_inf=allow_inf)


def check_choice(name: str, value: object, choices: Collection[str]) -> str:
    """Return ``value`` if it is one of ``choices``, else raise :class:`ConfigError`."""
    return validate.choice(field(name), value, choices)


def check_bool(name: str, value: object) -> bool:
    """Return ``value`` if it is a bool, else raise :class:`ConfigError`."""
    return validate.boolean(field(name), value)
