"""What the operating system says about memory: the probes that the card abstraction's
build, the training memory check and the train command's metrics share.

Linux figures come from ``/proc``; elsewhere from :mod:`resource` and :func:`os.sysconf`
where they exist. Every figure is in GiB (2**30 bytes).
"""

from __future__ import annotations

import os
import sys

__all__ = ["GIB", "available_memory_gib", "peak_memory_gib", "rss_gib"]

GIB = float(2**30)


def available_memory_gib() -> float:
    """Memory the machine can give now (``MemAvailable``), in GiB; infinity where the
    system does not say."""
    try:
        with open("/proc/meminfo") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024 / GIB
    except OSError:
        pass
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE") / GIB
    except (ValueError, OSError, AttributeError):
        return float("inf")


def peak_memory_gib() -> float:
    """Peak resident memory of this process so far (``ru_maxrss``), in GiB."""
    import resource  # Unix only

    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    # kilobytes on Linux, bytes on macOS
    return rss / (GIB if sys.platform == "darwin" else GIB / 1024)


def rss_gib() -> float:
    """Resident memory of this process now, in GiB (``/proc/self/statm``); the peak so
    far where ``/proc`` is missing."""
    try:
        with open("/proc/self/statm") as f:
            pages = int(f.read().split()[1])
        return pages * os.sysconf("SC_PAGE_SIZE") / GIB
    except (OSError, ValueError, IndexError):
        return peak_memory_gib()
