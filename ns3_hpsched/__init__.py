"""ns3-hpsched: network scheduling for hyperparameter search, at packet and flow level.

The package is layered so that only ``ns3_hpsched.backends.packet`` imports ns-3:
topologies, workloads, transports, schedulers and the driver are pure Python and testable
in milliseconds; the packet backend (ns-3) and the fluid backend run the same driver and
the same transports.
"""

__version__ = "0.1.0"

from . import jit_cache

jit_cache.drop_stale()  # before any compiled function loads from numba's cache (see jit_cache)
