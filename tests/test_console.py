"""Warnings on the terminal: one line each for the user's, Python's display for the rest."""

from __future__ import annotations

import io
import warnings

import pandas as pd
import pytest

from ns3_hpsched.console import format_warning, show_warnings_as_lines


@pytest.fixture
def passed_on():
    """The warnings the hook passes on to the display in place before it (recorded here)."""
    return []


@pytest.fixture
def shown(passed_on):
    """A stream the hook writes to, inside a warnings context that is restored afterwards."""
    stream = io.StringIO()
    with warnings.catch_warnings():
        warnings.simplefilter("always")
        warnings.showwarning = lambda message, category, filename, lineno, *rest: passed_on.append(
            f"{filename}:{lineno}: {category.__name__}: {message}")
        show_warnings_as_lines(stream)
        yield stream


def test_a_skipped_figure_is_one_line(shown):
    """FigureSkipped reaches the user as 'warning: <reason>', without file, line or class."""
    from ns3_hpsched.plots import fig_packet_vs_fluid

    assert fig_packet_vs_fluid({"stages": pd.DataFrame({"backend": ["fluid"]})}) is None
    assert shown.getvalue() == "warning: packet vs fluid: the store does not hold runs of both backends\n"


def test_a_transport_warning_is_one_line_naming_the_field(shown):
    """RDMA's PFC-threshold warning (XOFF above the fair share of the buffer) is one line naming the field."""
    from ns3_hpsched.topology import fat_tree
    from ns3_hpsched.transports import make_transport

    make_transport("rdma", pfc_xoff_bytes=200_000).pfc_thresholds(fat_tree(4, rate_bps=10e9))
    lines = shown.getvalue().splitlines()
    assert len(lines) == 1 and lines[0].startswith("warning: transport.pfc_xoff_bytes: 4 ports x (XOFF 200000 B")
    assert "rdma.py" not in lines[0]


def test_a_library_deprecation_keeps_python_display(shown, passed_on):
    """A DeprecationWarning from outside the package goes to the previous display, source location and all."""
    warnings.warn_explicit("old call", DeprecationWarning, "/elsewhere/lib.py", 7)
    assert shown.getvalue() == ""
    assert passed_on == ["/elsewhere/lib.py:7: DeprecationWarning: old call"]


def test_installing_twice_does_not_stack(shown):
    """A second install replaces the hook: each warning is still shown once."""
    show_warnings_as_lines(shown)
    warnings.warn("twice?", UserWarning)
    assert shown.getvalue() == "warning: twice?\n"


def test_multi_line_messages_are_folded():
    """A message with newlines is shown on one line."""
    assert format_warning("a\n  b") == "warning: a b\n"
