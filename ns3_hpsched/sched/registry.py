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
        try:
            return NAMED_POLICIES[name]
        except KeyError:
            raise ConfigError("scheduler.name", f"unknown policy {name!r}",
                              f"use one of {sorted(POLICIES)} or 'package.module:Class'") from None
    module_name, _, attr = name.partition(":")
    try:
        obj = getattr(importlib.import_module(module_name), attr)
    except (ImportError, AttributeError, ValueError) as exc:
        raise ConfigError("scheduler.name", f"cannot import {name!r}: {exc}",
                          "give 'package.module:Class' with the module importable (on PYTHONPATH)") from None
    if not (inspect.isclass(obj) and issubclass(obj, Policy)):
        raise ConfigError("scheduler.name", f"{name!r} is not a Policy subclass",
                          "subclass ns3_hpsched.sched.Policy and implement decide(view)")
    return obj


def make_policy(name: str, **params) -> Policy:
    """Build the policy ``name`` (see :func:`policy_class`) with ``params``.

    Raises
    ------
    ConfigError
        For an unknown name, a bad import path, a parameter the policy does not take, or
        a parameter value the policy rejects.
    """
    cls = policy_class(name)
    signature = inspect.signature(cls).parameters.values()
    accepted = [p.name for p in signature if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)]
    open_ended = any(p.kind == p.VAR_KEYWORD for p in signature)
    for key in params:
        if key not in accepted and not open_ended:
            raise ConfigError(field(key), f"{name} takes no parameter {key!r}",
                              f"use one of {accepted}" if accepted else f"{name} takes no parameters")
    return cls(**params)
