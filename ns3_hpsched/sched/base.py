"""The policy interface every scheduler implements."""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import ClassVar

from ..workload.spec import Workload
from .view import Decision, View

__all__ = ["Policy"]


class Policy(ABC):
    """A scheduling policy: a pure function from a :class:`View` to a :class:`Decision`.

    Subclasses set :attr:`name`, validate their parameters in ``__init__`` (raising
    :class:`~ns3_hpsched.errors.ConfigError` naming the parameter) and implement
    :meth:`decide`. The driver calls :meth:`setup` once with the whole workload before the
    run (e.g. FIFO-LM derives its default threshold from the coflow sizes), then
    :meth:`decide` on every trigger of SCHEDULERS.md.
    """

    name: ClassVar[str] = "policy"
    #: Whether the order changes only when flows are released. Then completions (a
    #: coflow's last flow, a stage's end), stage starts and thresholds cannot change who
    #: has precedence over whom, and the driver decides on releases only (fair: one class;
    #: pinned: the workload's classes). A policy that reads progress or time leaves it
    #: ``False``.
    release_only: ClassVar[bool] = False

    def setup(self, workload: Workload) -> None:
        """Learn what the policy needs from the workload before the run (default: nothing)."""

    def one_class(self, workload: Workload) -> bool:
        """Whether, on ``workload``, every flow is in the top class whatever the view.

        Then no decision can move a flow, and the driver plays a workload of lone coflows
        open loop (:mod:`ns3_hpsched.driver.openloop`: every flow handed to the backend at
        once, the policy never asked). Default ``False``; fair says ``True``.
        """
        return False

    @abstractmethod
    def decide(self, view: View) -> Decision:
        """Return the priority order (and optional watches / rates) for ``view``."""

    def describe(self) -> dict:
        """Name and parameters, recorded in ``run.json``."""
        return {"name": self.name}
