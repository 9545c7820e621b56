"""Warnings on the terminal as one line each: ``warning: transport.pfc_xoff_bytes: ...``.

Python shows a warning as ``path/to/rdma.py:189: UserWarning: message`` followed by the
source line that raised it: noise for someone running ``invoke simulate``, who needs the
message (which, like a :class:`~ns3_hpsched.errors.ConfigError`, names the field). The
command-line entry points call :func:`show_warnings_as_lines` once; library use (tests,
notebooks) keeps Python's default display.

Only user-facing warnings are shortened: :class:`UserWarning` and its subclasses (ours, e.g.
:class:`~ns3_hpsched.plots.FigureSkipped`), and any warning raised from this package's
files. Deprecation warnings of other libraries keep their source location, which is what
whoever fixes them needs.
"""

from __future__ import annotations

import sys
import warnings
from pathlib import Path
from typing import TextIO

__all__ = ["format_warning", "is_user_facing", "show_warnings_as_lines"]

_PACKAGE = Path(__file__).resolve().parent


def is_user_facing(category: type[Warning], filename: str) -> bool:
    """Whether a warning is for the user (shown as one line) rather than for a developer."""
    try:
        ours = Path(filename).resolve().is_relative_to(_PACKAGE)
    except (OSError, ValueError):
        ours = False
    return ours or issubclass(category, UserWarning)


def format_warning(message: Warning | str) -> str:
    """The one line shown for a warning: ``warning: <message>`` (newlines folded)."""
    return "warning: " + " ".join(str(message).split()) + "\n"


def show_warnings_as_lines(stream: TextIO | None = None) -> None:
    """Show user-facing warnings as one line each on ``stream`` (default: stderr at the time).

    Installs a :func:`warnings.showwarning` hook; others go to the display that was in place.
    Calling it again replaces the hook rather than stacking another.
    """
    fallback = getattr(warnings.showwarning, "fallback", warnings.showwarning)

    def show(message, category, filename, lineno, file=None, line=None):
        if not is_user_facing(category, filename):
            fallback(message, category, filename, lineno, file, line)
            return
        out = file or stream or sys.stderr
        out.write(format_warning(message))
        out.flush()

    show.fallback = fallback
    warnings.showwarning = show
