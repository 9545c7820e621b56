"""Shared fixtures, and hypothesis' profile for CI (fixed examples: a red CI is reproducible)."""

from __future__ import annotations

import os

import pytest
from hypothesis import settings

settings.register_profile("ci", derandomize=True, print_blob=True)
if os.environ.get("CI"):
    settings.load_profile("ci")


@pytest.fixture(scope="session")
def PacketBackend():
    """The ns-3 packet backend class, with ns-3 and the project's C++ loaded once."""
    from ns3_hpsched.backends.packet import PacketBackend, load

    load()
    return PacketBackend
