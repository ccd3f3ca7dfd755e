"""Atomic file writes: a killed process never leaves a half-written file."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import BinaryIO

# The process umask, read once: mkstemp creates files 0600, but what we write (tables,
# strategies, logs) is meant to have the permissions of an ordinary new file.
_UMASK = os.umask(0o022)
os.umask(_UMASK)


def atomic_write(path: Path, write: Callable[[BinaryIO], object]) -> None:
    """Call ``write(fh)`` on a temporary file in ``path``'s folder, fsync it, rename it over
    ``path`` and fsync the folder. On any error the temporary file is removed and ``path``
    is left as it was."""
    path = Path(path)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent or ".")
    try:
        with os.fdopen(fd, "wb") as fh:
            write(fh)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, 0o666 & ~_UMASK)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise
    try:
        dfd = os.open(path.parent or ".", os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(dfd)
    finally:
        os.close(dfd)


def atomic_write_bytes(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` atomically (see :func:`atomic_write`)."""
    atomic_write(path, lambda fh: fh.write(data))
