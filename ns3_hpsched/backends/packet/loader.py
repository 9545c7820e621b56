"""Load ns-3 (cppyy bindings) and compile the backend's C++ classes, once per process.

``from ns import ns`` takes 7-25 s and prints "Failed to materialize symbols ...
g_timeInitHelper" on stderr: cling's copy of a static helper whose work the core library
has already done (time conversions are correct). The import and the compilation run with
file descriptor 2 captured; the capture is shown only if loading fails.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path
from types import SimpleNamespace

__all__ = ["CPP_DIR", "HEADERS", "load", "quiet_stderr"]

#: Directory of the C++ sources compiled at run time.
CPP_DIR = Path(__file__).with_name("cpp")
#: Headers compiled in this order (each has an include guard, so re-including is harmless).
HEADERS = ("hash.h", "dscp_filter.h", "ecmp_routing.h", "fabric.h", "session.h",
           "tcp_flows.h", "queue_monitor.h", "rdma_header.h", "rdma_band.h", "pfc.h", "rdma_flows.h")

_loaded: SimpleNamespace | None = None


@contextlib.contextmanager
def quiet_stderr():
    """Capture the process's stderr (fd 2, which C++ writes to); re-emit it on error."""
    with tempfile.TemporaryFile(mode="w+b") as sink:
        saved = os.dup(2)
        os.dup2(sink.fileno(), 2)
        try:
            yield
        except BaseException:
            os.dup2(saved, 2)
            sink.seek(0)
            os.write(2, sink.read())
            raise
        finally:
            os.dup2(saved, 2)
            os.close(saved)


def load() -> SimpleNamespace:
    """Return ``SimpleNamespace(ns=ns3 module, cpp=cppyy.gbl.hpsched)``, loading on first call."""
    global _loaded
    if _loaded is None:
        with quiet_stderr():
            from ns import ns
            import cppyy

            cppyy.add_include_path(str(CPP_DIR))
            for header in HEADERS:
                if not cppyy.include(header):
                    raise ImportError(f"cppyy could not compile {CPP_DIR / header}")
            cpp = cppyy.gbl.hpsched
            cpp.DscpPacketFilter.GetTypeId()  # register TypeIds before any attribute names them
            cpp.EcmpRouting.GetTypeId()
            cpp.RdmaBandQueueDisc.GetTypeId()
        _loaded = SimpleNamespace(ns=ns, cpp=cpp)
    return _loaded
