"""Errors raised for bad input, before any simulation starts."""

from __future__ import annotations

__all__ = ["ConfigError"]


class ConfigError(ValueError):
    """Bad user input: names the offending field (and line), and says how to fix it.

    Parameters
    ----------
    field:
        Dotted path of the offending field, e.g. ``"topology.k"`` or ``"flows.txt:7"``.
    problem:
        What is wrong, e.g. ``"must be even, got 5"``.
    fix:
        What the user should do instead.
    """

    def __init__(self, field: str, problem: str, fix: str = "") -> None:
        self.field = field
        self.problem = problem
        self.fix = fix
        message = f"{field}: {problem}"
        if fix:
            message += f" (fix: {fix})"
        super().__init__(message)
