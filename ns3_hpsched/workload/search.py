"""Hyperparameter searches: successive halving, Hyperband brackets, cojob arrivals.

No model is trained: which configurations survive a stage is decided by a *synthetic*
score. Every job draws a latent quality q ~ N(0, 1) when it starts; after each stage it
reports the loss ``q + 0.5 * z / sqrt(k)`` (z ~ N(0, 1), k = stages it has run), so
rankings are noisy early and sharpen as training goes on. The best (lowest-loss)
``max(1, floor(n / eta))`` of the n jobs of a stage continue -- the rule of the Hyperband
paper (Li et al., JMLR 2018, Algorithm 1: n_i = floor(n * eta^-i)). Every random draw
comes from the numpy Generator passed in, never from a global RNG, so a seed fixes the
whole search.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from .. import validate
from ..errors import ConfigError
from ..validate import MAX_SECONDS
from .spec import Stage

__all__ = ["kept", "stage_iterations", "Bracket", "hyperband_brackets", "successive_halving",
           "arrival_times"]

#: Standard deviation of the score noise of a job's first stage (see the module docstring).
SCORE_NOISE = 0.5


def kept(n: int, eta: float) -> int:
    """How many of ``n`` jobs continue after a stage: ``max(1, floor(n / eta))``."""
    return max(1, int(n // eta))


def stage_iterations(iterations: int | Sequence[int], eta: float, stages: int,
                     field: str = "workload.iterations") -> tuple[int, ...]:
    """Iterations of every stage: an explicit list, or ``r0 * eta**k`` from a first stage's ``r0``.

    Growing stages by eta keeps each stage's total work about equal, as successive
    halving intends. Non-integer products are rounded to the nearest integer.
    """
    if isinstance(iterations, int) and not isinstance(iterations, bool):
        values = [_grown(iterations, eta, k) for k in range(stages)]
    elif isinstance(iterations, (list, tuple)):
        values = list(iterations)
        if len(values) != stages:
            raise ConfigError(field, f"lists {len(values)} stages but stages = {stages}",
                              "give one iteration count per stage, or a single first-stage count")
    else:
        raise ConfigError(field, f"must be an integer or a list of integers, got {iterations!r}",
                          "e.g. 2 (then 2*eta, 2*eta^2, ...) or [2, 4, 8]")
    explicit = isinstance(iterations, (list, tuple))
    for k, value in enumerate(values):
        validate.integer(f"{field}[{k}]" if explicit else field, value, low=1,
                         fix=f"stage {k} must run an integer number of iterations >= 1")
    return tuple(values)


def _grown(first: int, eta: float, k: int) -> int | float:
    """``first * eta**k`` rounded, or the float itself when it is not finite (refused by the caller)."""
    try:
        value = first * eta ** k
    except OverflowError:
        return float("inf")
    return round(value) if math.isfinite(value) else value


@dataclass(frozen=True)
class Bracket:
    """One Hyperband bracket: round i runs ``configs[i]`` configurations for ``resources[i]``."""

    s: int
    configs: tuple[int, ...]
    resources: tuple[float, ...]


def hyperband_brackets(max_resource: int, eta: int = 3) -> list[Bracket]:
    """The brackets of Hyperband (Li et al., JMLR 2018, Algorithm 1), most aggressive first.

    With s_max = floor(log_eta R) and B = (s_max + 1) R, bracket s starts
    n = ceil(B / R * eta^s / (s + 1)) configurations at r = R * eta^-s resource and runs
    successive halving: round i keeps floor(n * eta^-i) of them at r * eta^i.
    """
    validate.integer("workload.eta", eta, low=2, fix="Hyperband needs an integer eta >= 2, e.g. 3")
    validate.integer("workload.max_resource", max_resource, low=1,
                     fix="e.g. 81 (iterations of the longest stage, in units)")
    s_max = 0
    while eta ** (s_max + 1) <= max_resource:
        s_max += 1
    brackets = []
    for s in range(s_max, -1, -1):
        n = -(-(s_max + 1) * eta ** s // (s + 1))
        configs = tuple(n // eta ** i for i in range(s + 1))
        resources = tuple(max_resource * float(eta) ** (i - s) for i in range(s + 1))
        brackets.append(Bracket(s, configs, resources))
    return brackets


def successive_halving(configs: int, iterations: Sequence[int], eta: float, rng: np.random.Generator,
                       *, first_job: int = 0, join: int = 0) -> tuple[Stage, ...]:
    """Stages of one successive-halving search with explicit, score-chosen survivors.

    Parameters
    ----------
    configs:
        Configurations starting stage 0 (jobs ``first_job ..``).
    iterations:
        Iterations of each stage; its length is the number of stages.
    eta:
        Reduction factor: after a stage of n jobs the best ``max(1, floor(n/eta))`` continue.
    rng:
        Source of the synthetic scores.
    first_job:
        Id of the first job; ids count up through the joiners.
    join:
        New configurations joining at every stage boundary (as in Beamer); they run the
        stage they join like the survivors do.

    Returns
    -------
    The stages; each lists its survivors best-first, then its joiners by id.
    """
    quality: dict[int, float] = {}
    stages_run: dict[int, int] = {}
    next_job = first_job

    def start(count: int) -> list[int]:
        nonlocal next_job
        jobs = list(range(next_job, next_job + count))
        next_job += count
        for j in jobs:
            quality[j] = float(rng.standard_normal())
            stages_run[j] = 0
        return jobs

    running = start(configs)
    stages = [Stage(iterations=iterations[0], jobs=tuple(running))]
    for k in range(1, len(iterations)):
        loss = {}
        for j in running:
            stages_run[j] += 1
            loss[j] = quality[j] + SCORE_NOISE * float(rng.standard_normal()) / np.sqrt(stages_run[j])
        survivors = sorted(running, key=lambda j: (loss[j], j))[:kept(len(running), eta)]
        joined = start(join)
        running = survivors + joined
        stages.append(Stage(iterations=iterations[k], jobs=tuple(running), joined=tuple(joined)))
    return tuple(stages)


def arrival_times(count: int, rng: np.random.Generator, *, times: Sequence[float] | None = None,
                  rate: float | None = None) -> tuple[float, ...]:
    """Arrival times of ``count`` cojobs, in seconds.

    ``times`` gives them explicitly; ``rate`` (cojobs per second) makes a Poisson process
    whose first cojob arrives at 0 and whose gaps are exponential with mean 1/rate;
    neither means every cojob arrives at 0.
    """
    if times is not None and rate is not None:
        raise ConfigError("workload.arrivals", "both arrivals and arrival_rate are given",
                          "give explicit times or a Poisson rate, not both")
    if times is not None:
        times = validate.sequence("workload.arrivals", times, "a list of arrival times (seconds)")
        if len(times) != count:
            raise ConfigError("workload.arrivals", f"lists {len(times)} times for {count} cojobs",
                              "give one arrival time per cojob")
        return tuple(validate.number(f"workload.arrivals[{g}]", t, low=0.0, high=MAX_SECONDS,
                                     fix="finite seconds >= 0, e.g. [0.0, 0.5]") for g, t in enumerate(times))
    if rate is not None:
        validate.number("workload.arrival_rate", rate, low=0.0, low_open=True, fix="cojobs per second, e.g. 2.0")
        gaps = rng.exponential(1.0 / rate, size=max(count - 1, 0))
        return (0.0, *(float(t) for t in np.cumsum(gaps)))[:count]
    return (0.0,) * count
