"""A progress bar for one run: flows finished of the workload's total, simulated time, ETA.

A packet run can take minutes and prints nothing until it ends. :func:`run_progress` gives
the driver's ``progress(now_s, flows_done)`` hook (:func:`ns3_hpsched.driver.play`) a tqdm
bar on stderr -- only when stderr is a terminal, so piped or logged output (sweep workers,
CI) stays clean, and only once the run has lasted :data:`DELAY_S`, so short runs print
nothing. The hook is called after every flow completion; :class:`RunProgress` looks at
the clock there and touches the bar at most every :data:`INTERVAL_S`, so a run of a
million flows pays a clock read per flow and nothing else.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TextIO

from tqdm import tqdm

__all__ = ["DELAY_S", "INTERVAL_S", "RunProgress", "run_progress"]

#: A run shows its bar only after this many seconds of wall time.
DELAY_S = 3.0
#: The bar is redrawn at most this often (seconds of wall time).
INTERVAL_S = 0.5


class RunProgress:
    """The driver's progress hook: ``progress(now_s, flows_done)``, throttled to a tqdm bar.

    Parameters
    ----------
    total_flows:
        Flows the workload starts (:meth:`~ns3_hpsched.workload.spec.Workload.n_flows`), the
        bar's 100 %.
    stream:
        Where the bar is drawn.
    delay_s, interval_s:
        No bar before ``delay_s`` seconds; at most one redraw per ``interval_s``.
    clock:
        Wall clock in seconds (injectable for tests).
    """

    def __init__(self, total_flows: int, stream: TextIO, *, delay_s: float | None = None,
                 interval_s: float | None = None, clock: Callable[[], float] = time.monotonic):
        self.total_flows = total_flows
        self.stream = stream
        self.interval_s = INTERVAL_S if interval_s is None else interval_s
        self.clock = clock
        self.bar: tqdm | None = None
        self.redraws = 0
        self._next = clock() + (DELAY_S if delay_s is None else delay_s)

    def __call__(self, now_s: float, flows_done: int) -> None:
        """Record that ``flows_done`` flows have finished at simulated time ``now_s``."""
        wall = self.clock()
        if wall < self._next:
            return
        self._next = wall + self.interval_s
        if self.bar is None:
            self.bar = tqdm(total=self.total_flows, initial=flows_done, file=self.stream, unit="flow",
                            desc="simulating", dynamic_ncols=True, leave=False, mininterval=0, miniters=1)
        self.bar.set_postfix_str(f"simulated {now_s:.4g} s", refresh=False)
        if flows_done > self.bar.n:
            self.bar.update(flows_done - self.bar.n)
        else:
            self.bar.refresh()
        self.redraws += 1

    def close(self) -> None:
        """Remove the bar (if one was drawn), leaving the terminal for the run's summary."""
        if self.bar is not None:
            self.bar.close()
            self.bar = None


@contextmanager
def run_progress(total_flows: int, stream: TextIO | None = None, **kwargs) -> Iterator[RunProgress | None]:
    """The progress hook for a run of ``total_flows`` flows, or ``None`` off a terminal.

    ``stream`` defaults to stderr; ``kwargs`` go to :class:`RunProgress`. With ``None`` the
    driver skips the hook entirely, so a piped run costs nothing at all.
    """
    stream = sys.stderr if stream is None else stream
    if not getattr(stream, "isatty", lambda: False)():
        yield None
        return
    progress = RunProgress(total_flows, stream, **kwargs)
    try:
        yield progress
    finally:
        progress.close()
