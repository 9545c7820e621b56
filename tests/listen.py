"""Hearing a backend's flow completions flow by flow, in tests."""

from __future__ import annotations

from collections.abc import Callable


def each_flow(fn: Callable[[int, float], object]):
    """An ``on_flows_done`` that calls ``fn(flow_id, finish_s)`` for each flow of a batch, in order."""
    def flows_done(flow_ids, finish_s) -> None:
        for flow_id, time_s in zip(flow_ids.tolist(), finish_s.tolist()):
            fn(flow_id, time_s)
    return flows_done


def finish_times(backend) -> dict[int, float]:
    """Listen to ``backend``: the dict returned fills with each finished flow's finish time."""
    done: dict[int, float] = {}
    backend.on_flows_done = each_flow(done.setdefault)
    return done
