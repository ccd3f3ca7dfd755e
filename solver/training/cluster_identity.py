"""A cluster worker's identity checks and its copy of the driver's card abstraction: the
digests it compares with the driver's before it joins, and the abstraction's files, kept
in the machine's cache by content hash."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from abstraction.cluster import ClusterError

__all__ = ["abstraction_files", "cluster_cache", "problem_digest", "write_abstraction"]


def _update(h: Any, value: Any) -> None:
    """Feed ``value`` (arrays, numbers, strings and the named tuples and dataclasses of
    the kernels' bundles, recursively) into hash ``h``; anything else by its type name."""
    if isinstance(value, np.ndarray):
        a = np.ascontiguousarray(value)
        h.update(f"{a.dtype.str}{a.shape}".encode())
        h.update(a.view(np.uint8).reshape(-1) if a.size else b"")
    elif isinstance(value, (bool, int, float, str, np.integer, np.floating)):
        h.update(repr(value).encode())
    elif isinstance(value, (tuple, list)):
        h.update(b"(")
        for v in value:
            _update(h, v)
        h.update(b")")
    elif value is None:
        h.update(b"None")
    else:
        h.update(type(value).__name__.encode())


def problem_digest(problem: Any) -> dict[str, str]:
    """Digests of what a worker's walk depends on: ``game`` (the definition's text),
    ``tree`` (the betting tree as the kernel reads it, its table size and layout) and
    ``cards`` (the dealing bundle, bucket tables included, or the listed chance layer)."""
    out: dict[str, str] = {}
    game = hashlib.sha256(problem.game.to_text().encode())
    out["game"] = "sha256:" + game.hexdigest()
    tree = hashlib.sha256()
    _update(tree, tuple(problem.ktree))
    _update(tree, (problem.offset, int(problem.size), problem.tree.betting_spec))
    out["tree"] = "sha256:" + tree.hexdigest()
    cards = hashlib.sha256()
    if problem.cards is not None:
        _update(cards, tuple(problem.cards))
    else:
        _update(cards, tuple(problem.chance.kernel))
        _update(cards, tuple(int(b) for b in problem.chance.n_buckets))
    out["cards"] = "sha256:" + cards.hexdigest()
    return out


def abstraction_files(directory: Path) -> list[str]:
    """The files of a built abstraction directory a worker needs: meta.json last."""
    meta = json.loads((directory / "meta.json").read_text())
    names: list[str] = []
    for street in meta.get("streets", []):
        for name in street.get("files", {}).values():
            if name not in names:
                names.append(str(name))
    return [*names, "meta.json"]


def cluster_cache(content_hash: str) -> Path:
    """Where a worker's machine keeps the card abstraction of ``content_hash``:
    ``<cache root>/cluster/<the hash's first 32 hex digits>``."""
    from abstraction.table_cache import cache_root

    return cache_root() / "cluster" / content_hash.split(":", 1)[-1][:32]


def write_abstraction(target: Path, files: Mapping[str, bytes]) -> None:
    """Write an abstraction's files into ``target`` atomically (a partial folder renamed)."""
    partial = target.with_name(target.name + f".partial-{os.getpid()}")
    shutil.rmtree(partial, ignore_errors=True)
    partial.mkdir(parents=True)
    for name, data in files.items():
        if "/" in name or name.startswith("."):
            raise ClusterError(f"abstraction file name {name!r} is not a plain file name")
        with open(partial / name, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
    if (target / "meta.json").is_file():  # another worker of this machine was first
        shutil.rmtree(partial, ignore_errors=True)
        return
    shutil.rmtree(target, ignore_errors=True)  # an incomplete copy
    try:
        os.replace(partial, target)
    except OSError:
        shutil.rmtree(partial, ignore_errors=True)
        if not (target / "meta.json").is_file():
            raise
