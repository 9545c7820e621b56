"""The processes that execute a sweep's runs: a fresh one per run, or a long-lived worker.

A run never executes in the sweep's own process: ns-3's ``Simulator`` is a process-wide
singleton, and a fatal ns-3 error or a segfault takes its interpreter down. Two kinds:

- :func:`run_fresh` starts ``python -m ns3_hpsched.sweep ATTEMPT`` for one run (packet
  runs: a fresh simulator, and a crash takes only its own run down).
- :class:`Worker` is a long-lived ``python -m ns3_hpsched.workers`` that executes runs
  one after another (fluid runs, which keep no process-wide state), so the ~1 s of Python
  start-up and imports is paid once per worker instead of once per run. It receives each
  attempt folder, with the run's lock, over a Unix socket; sends the run's output to the
  attempt's log; and answers with an exit code. If it dies during a run (abort, segfault,
  kill), the socket closes and the process's exit status is the run's, as for a fresh one.

Both give a run's *exit code*: 0 if it finished, 1 if it raised (the traceback is in its
log), a negative signal number if it was killed, ``None`` if it was cancelled. Both hold
the run's lock (:func:`ns3_hpsched.store.claim_run`) while the run goes on, so a run left
going by a sweep killed with SIGKILL keeps its lock until it has filed its folder.
"""

from __future__ import annotations

import os
import select
import signal
import socket
import subprocess
import sys
import threading
import traceback
import warnings
from collections.abc import Callable
from contextlib import contextmanager
from pathlib import Path

__all__ = ["LOG_FILE", "child_env", "run_fresh", "Worker", "WorkerPool"]

#: A run's output (stdout and stderr) in its attempt folder.
LOG_FILE = "stderr.log"
#: Seconds between two checks of a run's process for cancellation.
POLL_S = 0.2
#: Seconds a worker is given to exit once told to, before it is killed.
CLOSE_TIMEOUT_S = 10.0


def child_env() -> dict[str, str]:
    """Environment of a run process: ours, with our ``sys.path`` so the same code imports."""
    env = dict(os.environ)
    paths = [p or os.getcwd() for p in sys.path]
    if env.get("PYTHONPATH"):
        paths.append(env["PYTHONPATH"])
    env["PYTHONPATH"] = os.pathsep.join(paths)
    return env


def _start(args: list[str], log, stdout, keep_fd: int) -> subprocess.Popen:
    """Start ``python args...`` in its own session (a Ctrl-C reaches only the sweep)."""
    return subprocess.Popen([sys.executable, *args], stdin=subprocess.DEVNULL, stdout=stdout,
                            stderr=log, env=child_env(), start_new_session=True, pass_fds=(keep_fd,))


def _kill(process: subprocess.Popen) -> None:
    """Kill ``process`` (and anything it started in its session) and reap it."""
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    process.wait()


def run_fresh(attempt: Path, lock_fd: int, cancel: threading.Event) -> int | None:
    """Execute the run in ``attempt`` in a new process; its exit code, or None if cancelled."""
    with open(attempt / LOG_FILE, "wb") as log:
        process = _start(["-m", "ns3_hpsched.sweep", str(attempt)], log, log, lock_fd)
    while True:
        try:
            return process.wait(timeout=POLL_S)
        except subprocess.TimeoutExpired:
            if cancel.is_set():
                _kill(process)
                return None


class Worker:
    """A long-lived process executing runs one at a time (see the module docstring).

    Parameters
    ----------
    log:
        Where the worker's own start-up errors go (the log of the first run it is for).
    """

    def __init__(self, log: Path) -> None:
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        with open(log, "ab") as err:
            self.process = _start(["-m", "ns3_hpsched.workers", str(theirs.fileno())], err,
                                  subprocess.DEVNULL, theirs.fileno())
        theirs.close()
        self._socket = ours

    @property
    def alive(self) -> bool:
        """Whether the worker can take another run."""
        return self.process.poll() is None

    def run(self, attempt: Path, lock_fd: int, cancel: threading.Event) -> int | None:
        """Execute the run in ``attempt``; its exit code, or None if cancelled (worker killed)."""
        try:
            socket.send_fds(self._socket, [str(attempt).encode()], [lock_fd])
        except OSError:  # it died since its last run
            return self.process.wait()
        while not select.select([self._socket], [], [], POLL_S)[0]:
            if cancel.is_set():
                self.kill()
                return None
        reply = self._socket.recv(16)
        return int(reply) if reply else self.process.wait()

    def kill(self) -> None:
        """End the worker at once."""
        self._socket.close()
        _kill(self.process)

    def close(self) -> None:
        """Let the worker finish and exit (its socket closes), killing it if it does not."""
        self._socket.close()
        try:
            self.process.wait(timeout=CLOSE_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            _kill(self.process)


class WorkerPool:
    """One :class:`Worker` per thread that uses the pool, started when it is first needed.

    A worker that died (its run crashed) or was killed (cancelled) is replaced on the
    thread's next run. :meth:`close` ends them all.
    """

    def __init__(self) -> None:
        self._mine = threading.local()
        self._all: list[Worker] = []
        self._lock = threading.Lock()

    def run(self, attempt: Path, lock_fd: int, cancel: threading.Event) -> int | None:
        """Execute the run in ``attempt`` on this thread's worker (see :meth:`Worker.run`)."""
        worker = getattr(self._mine, "worker", None)
        if worker is None or not worker.alive:
            worker = self._mine.worker = Worker(attempt / LOG_FILE)
            with self._lock:
                self._all.append(worker)
        return worker.run(attempt, lock_fd, cancel)

    def close(self) -> None:
        """End every worker of the pool (each finishes nothing more: they are idle by then)."""
        with self._lock:
            workers, self._all = self._all, []
        for worker in workers:
            worker.close()


@contextmanager
def _output_to(log: Path):
    """Send this process's stdout and stderr (file descriptors 1 and 2) to ``log`` meanwhile."""
    sys.stdout.flush()
    sys.stderr.flush()
    saved = [os.dup(1), os.dup(2)]
    with open(log, "ab") as out:
        os.dup2(out.fileno(), 1)
        os.dup2(out.fileno(), 2)
    try:
        yield
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        for fd, old in zip((1, 2), saved):
            os.dup2(old, fd)
            os.close(old)


def _execute(attempt: Path, body: Callable[[Path], None]) -> int:
    """Run ``body(attempt)`` as a fresh process would: output to its log, 1 if it raises.

    Warnings are shown afresh for each run (``catch_warnings`` resets which were shown)
    and any filter a run sets ends with it.
    """
    with _output_to(attempt / LOG_FILE), warnings.catch_warnings():
        try:
            body(attempt)
        except Exception:  # noqa: BLE001 - a failed run is reported, the worker goes on
            traceback.print_exc()
            return 1
    return 0


def serve(fd: int) -> None:
    """Body of a worker: execute each attempt received on socket ``fd`` until it closes.

    The run's lock arrives with its attempt and is closed before the answer, so the sweep
    lets go of the lock only once this process no longer holds it.
    """
    from .sweep import run_attempt

    with socket.socket(fileno=fd) as sock:
        while True:
            message, fds, _, _ = socket.recv_fds(sock, 4096, 1)
            if not message:
                return
            try:
                code = _execute(Path(message.decode()), run_attempt)
            finally:
                for held in fds:
                    os.close(held)
            sock.send(b"%d" % code)


if __name__ == "__main__":
    serve(int(sys.argv[1]))
