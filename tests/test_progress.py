"""A run's progress bar: only on a terminal, only after a delay, throttled, then removed."""

from __future__ import annotations

import io
import sys

import pytest

from ns3_hpsched import progress as prog
from ns3_hpsched.progress import RunProgress, run_progress


class Terminal(io.StringIO):
    """A text stream that says it is a terminal."""

    def isatty(self):
        return True


class Clock:
    """A wall clock the test moves by hand."""

    def __init__(self):
        self.now = 100.0

    def __call__(self):
        return self.now


def test_piped_output_gets_no_hook_and_no_output():
    """Off a terminal the hook is None (the driver then skips it) and nothing is written."""
    stream = io.StringIO()
    with run_progress(1000, stream) as hook:
        assert hook is None
    assert stream.getvalue() == ""


def test_a_short_run_prints_nothing():
    """Completions within the delay draw no bar."""
    stream, clock = Terminal(), Clock()
    with run_progress(10, stream, delay_s=3.0, clock=clock) as hook:
        for done in range(1, 11):
            clock.now += 0.2
            hook(done * 0.1, done)
        assert hook.bar is None and hook.redraws == 0
    assert stream.getvalue() == ""


def test_a_long_run_shows_flows_simulated_time_and_eta_then_clears():
    """After the delay the bar shows flows done of the total, simulated time and an ETA; it is removed at the end."""
    stream, clock = Terminal(), Clock()
    with run_progress(10, stream, delay_s=3.0, interval_s=0.5, clock=clock) as hook:
        clock.now += 3.0
        hook(0.25, 3)
        clock.now += 1.0
        hook(0.5, 6)
        shown = stream.getvalue()
        assert "simulating" in shown and "6/10" in shown and "simulated 0.5 s" in shown
        assert "<" in shown.split("6/10", 1)[1]  # tqdm's [elapsed<remaining] after the count
    assert hook.bar is None
    last = stream.getvalue().rsplit("\r", 2)[-2]
    assert last.strip() == "", "the bar's line is blanked at the end, for the run's summary"


def test_redraws_are_throttled_whatever_the_flow_rate():
    """A million completions within one second redraw the bar at most a few times (interval 0.5 s)."""
    stream, clock = Terminal(), Clock()
    hook = RunProgress(1_000_000, stream, delay_s=0.0, interval_s=0.5, clock=clock)
    for done in range(1, 1_000_001):
        clock.now += 1e-6
        hook(done * 1e-6, done)
    hook.close()
    assert hook.redraws == 2  # at t = 0 and t = 0.5 s


def test_simulate_draws_the_bar_on_a_terminal(monkeypatch, tmp_path):
    """runner.simulate hands the driver the bar when stderr is a terminal; the bar reaches every flow."""
    from ns3_hpsched.runner import simulate
    from ns3_hpsched.scenario import load_scenario
    from .test_sweep import SCENARIO

    path = tmp_path / "tiny.toml"
    path.write_text(SCENARIO)
    scenario = load_scenario(str(path), {})
    terminal = Terminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    monkeypatch.setattr(prog, "DELAY_S", 0.0)
    monkeypatch.setattr(prog, "INTERVAL_S", 0.0)
    records, _, _ = simulate(scenario)
    total = scenario.built_workload.n_flows()
    assert len(records.flows) == total
    assert f"{total}/{total}" in terminal.getvalue()
