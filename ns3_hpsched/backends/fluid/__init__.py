"""The fluid (flow-level) backend: the same topology, paths and priorities as the packet
backend, with rates from the project's allocator instead of packets."""

from .backend import Allocation, FluidBackend

__all__ = ["FluidBackend", "Allocation"]
