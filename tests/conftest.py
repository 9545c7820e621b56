"""Shared fixtures."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="session")
def PacketBackend():
    """The ns-3 packet backend class, with ns-3 and the project's C++ loaded once."""
    from ns3_hpsched.backends.packet import PacketBackend, load

    load()
    return PacketBackend
