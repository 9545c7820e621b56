"""Policies by name, and by import path for users' own policies.

``make_policy("aalo", n_queues=8)`` builds a built-in policy; ``make_policy("mypkg.mymod:MyPolicy")``
imports a user's :class:`~ns3_hpsched.sched.base.Policy` subclass. Errors name the
scenario field (``scheduler.name`` or ``scheduler.params.<name>``) and how to fix it.
"""

from __future__ import annotations

import importlib
import inspect

from ..errors import ConfigError
from .aalo import Aalo
from .base import Policy
from .beamer import BeamerR
from .fair import Fair
from .fifo_lm import FifoLM
from .grouper import GrouperR
from ..validate import did_you_mean, known_keys
from .params import field
from .pinned import Pinned
from .sincronia import Sincronia
from .varys import Varys

__all__ = ["POLICIES", "make_policy", "policy_class"]

#: The compared policies by their scenario-file name.
POLICIES: dict[str, type[Policy]] = {cls.name: cls for cls in
                                     (Fair, FifoLM, Varys, Aalo, Sincronia, GrouperR, BeamerR)}
#: Every policy a scenario may name: the compared ones, plus ``pinned`` (classes given by
#: the workload, for explicit flow lists such as HPCC's).
NAMED_POLICIES: dict[str, type[Policy]] = {**POLICIES, Pinned.name: Pinned}


def policy_class(name: str) -> type[Policy]:
    """The policy class named ``name``: a key of :data:`POLICIES` or ``"package.module:Class"``."""
    if not isinstance(name, str) or not name:
        raise ConfigError("scheduler.name", f"must be a policy name, got {name!r}",
                          f"use one of {sorted(POLICIES)} or 'package.module:Class'")
    if ":" not in name:
        if name not in NAMED_POLICIES:
            raise ConfigError("scheduler.name", f"unknown policy {name!r}",
                              f"{did_you_mean(name, NAMED_POLICIES)}use one of {sorted(POLICIES)} "
                              "or 'package.module:Class'")
        return NAMED_POLICIES[name]
    module_name, _, attr = name.partition(":")
    try:
        obj = getattr(importlib.import_module(module_name), attr)
    except (ImportError, AttributeError, ValueError) as exc:
        raise ConfigError("scheduler.name", f"cannot import {name!r}: {exc}",
                          "give 'package.module:Class' with the module importable (on PYTHONPATH)") from None
    if not (inspect.isclass(obj) and issubclass(obj, Policy)):
        raise ConfigError("scheduler.name", f"{name!r} is not a Policy subclass",
                          "subclass ns3_hpsched.sched.Policy and implement decide(view)")
    if inspect.isabstract(obj):
        missing = sorted(obj.__abstractmethods__)
        raise ConfigError("scheduler.name", f"{name!r} does not implement {', '.join(m + '()' for m in missing)}",
                          "implement decide(view) returning a Decision (see ns3_hpsched.sched.Policy)")
    return obj


def make_policy(name: str, **params) -> Policy:
    """Build the policy ``name`` (see :func:`policy_class`) with ``params``.

    Raises
    ------
    ConfigError
        For an unknown name, a bad import path, a parameter the policy does not take or
        leaves out, or a parameter value the policy rejects.
    """
    cls = policy_class(name)
    signature = inspect.signature(cls).parameters.values()
    accepted = [p.name for p in signature if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)]
    if not any(p.kind == p.VAR_KEYWORD for p in signature):
        if params and not accepted:
            raise ConfigError(field(next(iter(params))), f"{name} takes no parameters", "remove scheduler.params")
        known_keys("scheduler.params", params, accepted, f"policy {name!r}")
    for p in signature:
        if p.name in accepted and p.default is p.empty and p.name not in params:
            raise ConfigError(field(p.name), f"{name} needs this parameter", f"set scheduler.params.{p.name}")
    return cls(**params)
