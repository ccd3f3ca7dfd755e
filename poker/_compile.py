"""Whether a numba kernel will compile before it runs: the first run's cost, told the user.

Kernels are ``@njit(cache=True)``: the first process to call one compiles it (seconds to
minutes) and writes numba's on-disk cache beside the module; later processes load it in
milliseconds. Plans add a measured compile time, and progress bars show
:data:`COMPILING`, only where :func:`cold` says a kernel is not cached.
"""

from __future__ import annotations

from typing import Any

__all__ = ["COMPILING", "cold"]

#: What a progress bar shows while a cold kernel compiles.
COMPILING = "compiling (first run only)"


def _cached(dispatcher: Any) -> bool:
    if dispatcher.overloads:  # compiled or loaded in this process already
        return True
    cache = getattr(dispatcher, "_cache", None)
    cache_file = getattr(cache, "_cache_file", None)
    if cache_file is None:  # not a caching dispatcher: it compiles in every process
        return False
    try:
        magic = dispatcher.targetctx.codegen().magic_tuple()
        # numba's index is keyed by (signature, this CPU's target); a stale source stamp
        # reads as an empty index
        index = cache_file._load_index()
    except Exception:  # numba's cache layout is internal: unknown reads as cold
        return False
    return any(key[1] == magic for key in index)


def cold(*dispatchers: Any) -> bool:
    """True if any of ``dispatchers`` (``@njit`` functions) has no compiled code in this
    process and none in numba's on-disk cache for this CPU: calling it compiles first."""
    return not all(_cached(d) for d in dispatchers)
