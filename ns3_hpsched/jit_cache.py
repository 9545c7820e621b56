"""numba's on-disk cache, kept in step with the package's sources.

numba throws a cached compiled function away only when that function's own source file
changes, not when a function it calls from another file does (a documented limitation of
numba's cache). The package's kernels call across modules -- the fluid event loop calls
the group table, water-filling, the coflow meter and the transports' delivery model -- so
after an edit or a ``git pull`` that touches only a callee, a cached caller would run the
callee's old code. :func:`drop_stale` prevents that: a digest of every source file of the
package is kept beside the cache, and when it no longer matches, every cached compiled
function of the package is deleted (numba compiles them again on first use, about 80 s).

Only numba's own cache files in the package's ``__pycache__`` folders (``*.nbi``,
``*.nbc``) are ever deleted. A cache numba keeps elsewhere (``NUMBA_CACHE_DIR``, or a
user cache folder when the package's folders are read-only) is out of reach: the check
is then skipped, and so is any error writing the digest.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

__all__ = ["drop_stale"]

PACKAGE = Path(__file__).resolve().parent
DIGEST_FILE = "numba-sources.sha256"


def sources_digest(package: Path = PACKAGE) -> str:
    """SHA-256 over the package's ``.py`` files, in path order (their names and contents)."""
    digest = hashlib.sha256()
    for path in sorted(package.rglob("*.py")):
        digest.update(str(path.relative_to(package)).encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


def drop_stale(package: Path = PACKAGE) -> bool:
    """Delete the package's cached numba functions if its sources changed since they were
    cached; return whether anything was deleted."""
    if os.environ.get("NUMBA_CACHE_DIR"):
        return False
    stamp = package / "__pycache__" / DIGEST_FILE
    digest = sources_digest(package)
    try:
        if stamp.read_text() == digest:
            return False
    except OSError:
        pass
    stale = [p for pattern in ("*.nbi", "*.nbc") for p in package.rglob(f"__pycache__/{pattern}")]
    try:
        for path in stale:
            path.unlink(missing_ok=True)
        stamp.parent.mkdir(exist_ok=True)
        tmp = stamp.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(digest)
        tmp.replace(stamp)
    except OSError:
        pass
    return bool(stale)
