"""How the fluid backend's compiled functions are compiled: :func:`kernel`.

numba counts the references to every array a compiled function is handed: entering a
function increments, and leaving it decrements, the count of each array among its
arguments, an atomic operation each. The fluid loop's state is a tuple of some fifty
arrays (:class:`~.core.Core`), and its helpers run once per flow or group, so with
counting on they spent most of their time counting: 250 ns per call of a two-hop
helper taking the group table, 6 ns without (``benchmarks/bench_fluid.py`` has the
whole-run effect).

A kernel allocates nothing, and every array it is handed is owned by the backend and
outlives the call, so counting them is useless: kernels are compiled with numba's
reference counting (NRT) switched off. Allocating in a kernel fails when it is
compiled, not when it runs; functions that allocate (a result array) use plain
``numba.njit(cache=True)``, and kernels call nothing that allocates.

The few kernels taking the whole state and called once per flow are also inlined
(``@kernel(inline="always")``): handing the tuple itself over costs about 100 ns a
call, even uncounted.
"""

from __future__ import annotations

import numba

__all__ = ["kernel"]


def kernel(fn=None, /, **options):
    """Compile ``fn`` (cached, NRT off); ``@kernel(error_model="numpy")`` passes numba options."""
    jit = numba.njit(cache=True, _nrt=False, **options)
    return jit if fn is None else jit(fn)
