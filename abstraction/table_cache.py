"""Bucket tables of a card-abstraction model, built once and cached by the model's hash.

A strategy file carries its card abstraction as a model (centroids and pair maps,
:meth:`abstraction.card_abstraction.CardAbstraction.model`): every bucket is computed from
the cards, which on the full deck costs milliseconds per hand (features, then the nearest
centroid). Tables are a cache of that function (one bucket per canonical hand), and this
module keeps them where any later run finds them:

    <root>/tables/<model hash, hex>/            a complete table directory (meta.json last)
    <root>/tables/<model hash, hex>.partial/    a build in progress, or stopped: resumable
    <root>/tables/<model hash, hex>.lock        held while building (flock)

``<root>`` is ``$POKERBOT_CACHE`` if set, else ``$XDG_CACHE_HOME/pokerbot``, else
``~/.cache/pokerbot`` (:func:`cache_root`). A build (:func:`cached_tables` with
``build=True``) runs the same stages as ``pokerbot abstract`` without clustering
(:func:`abstraction.build.build_model_tables`) into the ``.partial``
directory, so a stopped build continues at the stage it was in; when it is complete the
directory is renamed to its final name (the rename is what marks it complete) and its
stage cache of intermediate features (about ten times the tables on the full deck) is
deleted. A directory is used only if :meth:`CardAbstraction.attach_tables` accepts it:
its model hash, computed from its files, is the model's, and every table has its shape.

:func:`needs_tables` says whether a model is worth the build: some clustered street has
more canonical hands than computing them as they are asked for is worth (the full deck's
turn and river; short decks and Leduc compute every table in a second or less).
"""

from __future__ import annotations

import fcntl
import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from .build import CACHE_DIR, ProgressFn, build_model_tables
from .card_abstraction import CardAbstraction
from .plan import plan_tables

__all__ = [
    "CACHE_ENV",
    "COMPUTE_MAX_HANDS",
    "attach_cached_tables",
    "cache_root",
    "cached_tables",
    "needs_tables",
    "tables_dir",
]

#: Environment variable naming the cache root.
CACHE_ENV = "POKERBOT_CACHE"
#: A clustered street with more canonical hands than this makes a model need tables
#: (full hold'em: flop 1,286,792, turn 13,960,050, river 123,156,254).
COMPUTE_MAX_HANDS = 2_000_000
_TABLES = "tables"
_PARTIAL = ".partial"
_DISK_MARGIN = 256 << 20  # free space left over after the predicted build
_GB = 1e9


def cache_root() -> Path:
    """The cache root: ``$POKERBOT_CACHE``, else ``$XDG_CACHE_HOME/pokerbot`` (an absolute
    path, as the XDG spec asks), else ``~/.cache/pokerbot``. Nothing is created."""
    env = os.environ.get(CACHE_ENV)
    if env:
        return Path(env).expanduser()
    xdg = os.environ.get("XDG_CACHE_HOME")
    if xdg and os.path.isabs(xdg):
        return Path(xdg) / "pokerbot"
    return Path.home() / ".cache" / "pokerbot"


def tables_dir(ab: CardAbstraction) -> Path:
    """Where the complete tables of ``ab``'s model live (or would): ``<root>/tables/<hex>``."""
    algo, _, digest = ab.model_hash.partition(":")
    return cache_root() / _TABLES / (digest or algo)


def needs_tables(ab: CardAbstraction) -> bool:
    """True if some clustered street of ``ab`` has more than :data:`COMPUTE_MAX_HANDS`
    canonical hands: range queries, best responses and matches would compute buckets for
    far too long without tables (lossless streets are their own index and never count)."""
    meta, _ = ab.model()
    return any(st["kind"] != "lossless" and int(st["table_hands"]) > COMPUTE_MAX_HANDS for st in meta["streets"])


def _accepts(ab: CardAbstraction, d: Path, verify: bool) -> bool:
    """True if ``d`` holds complete tables of ``ab``'s model (``ab`` itself is not touched)."""
    if not d.is_dir():
        return False
    probe = CardAbstraction.from_model(*ab.model())
    return probe.attach_tables(d, verify=verify)


def _bytes_under(d: Path) -> int:
    total = 0
    for root, _, files in os.walk(d):
        for name in files:
            try:
                total += os.lstat(os.path.join(root, name)).st_size
            except OSError:
                pass
    return total


def _fsync_dir(d: Path) -> None:
    fd = os.open(d, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


@contextmanager
def _locked(path: Path, progress: ProgressFn | None) -> Iterator[None]:
    """Hold an exclusive lock on ``path`` (created if needed): one builder per model."""
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            if progress is not None:
                progress("waiting for another build of these tables", 0, 1)
            fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # releases the lock


def cached_tables(
    ab: CardAbstraction,
    *,
    build: bool,
    progress: ProgressFn | None = None,
    memory_limit_gib: float | None = None,
    verify: bool = False,
) -> Path | None:
    """The cached table directory of ``ab``'s model, built first if asked and missing.

    Returns the directory (:func:`tables_dir`) if it holds tables that
    :meth:`CardAbstraction.attach_tables` accepts (``verify``: also re-hash every file
    against its content hash). Otherwise returns None, unless ``build``: then builds them
    (``progress(stage, done, total)`` per stage, as ``pokerbot abstract`` reports;
    resuming a stopped build), keeps only what lookups need, and returns the directory.
    A directory that is there but not accepted (damaged) is rebuilt. ``ab`` is not
    changed (see :func:`attach_cached_tables`).

    Raises ``ValueError`` (one line) if a build is needed and the cache cannot be written,
    the disk has less free space than the build is predicted to take
    (:func:`abstraction.plan.plan_tables`), or memory does not suffice.
    """
    final = tables_dir(ab)
    if _accepts(ab, final, verify):
        shutil.rmtree(final / CACHE_DIR, ignore_errors=True)  # left by a build stopped just after its rename
        return final
    if not build:
        return None
    parent = final.parent
    try:
        parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ValueError(f"bucket table cache {parent} cannot be created ({exc.strerror or exc}); "
                         f"set {CACHE_ENV} to a writable directory") from None
    if not os.access(parent, os.W_OK | os.X_OK):
        raise ValueError(f"bucket table cache {parent} is not writable; set {CACHE_ENV} to a writable directory")
    with _locked(parent / (final.name + ".lock"), progress):
        if _accepts(ab, final, verify):  # another process built them meanwhile
            return final
        if final.exists():
            try:
                shutil.rmtree(final)  # damaged: its name says it is ours, and it is not used
            except OSError as exc:
                raise ValueError(f"{final}: damaged tables cannot be removed ({exc.strerror or exc})") from None
        partial = parent / (final.name + _PARTIAL)
        plan = plan_tables(ab)
        have = _bytes_under(partial) if partial.exists() else 0
        need = max(plan.disk_bytes - have, 0)
        free = shutil.disk_usage(parent).free
        if need + _DISK_MARGIN > free:
            raise ValueError(
                f"building the bucket tables needs about {need / _GB:.1f} GB free under {parent}, "
                f"{free / _GB:.1f} GB is free; free some space or set {CACHE_ENV} to another disk"
            )
        try:
            build_model_tables(ab, partial, progress=progress, memory_limit_gib=memory_limit_gib)
            os.rename(partial, final)
            _fsync_dir(parent)
        except OSError as exc:  # a full disk, a vanished directory: the cache's fault, not the caller's file
            raise ValueError(f"building bucket tables in {partial} failed ({exc.strerror or exc})") from None
        shutil.rmtree(final / CACHE_DIR, ignore_errors=True)  # intermediate features: lookups need none
    if not _accepts(ab, final, verify):
        raise ValueError(f"{final}: the tables just built are not accepted for this model")
    return final


def attach_cached_tables(
    ab: CardAbstraction,
    *,
    build: bool,
    progress: ProgressFn | None = None,
    memory_limit_gib: float | None = None,
) -> bool:
    """Attach the cached tables of ``ab``'s model (:func:`cached_tables`; built first if
    ``build``). Returns True if they are now in use; otherwise ``ab.tables_note`` says
    that none are cached and lookups compute from the model. Raises as
    :func:`cached_tables` when a build fails."""
    d = cached_tables(ab, build=build, progress=progress, memory_limit_gib=memory_limit_gib)
    if d is None:
        ab.tables_note = f"no cached tables for this model in {tables_dir(ab).parent}"
        return False
    return ab.attach_tables(d)
