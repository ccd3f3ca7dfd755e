"""Files of raw arrays behind a small msgpack header: written piece by piece, read by mapping.

Strategy files (:mod:`solver.strategy_io`, format 3) and training checkpoints
(:mod:`solver.training.checkpoint`, version 2) share this layout::

    offset 0   magic (8 bytes, one per kind of file)
           8   uint32 version, uint32 flags (0), uint64 header length
          24   sha256 of every byte from offset 56 to the end of the file
          56   header (msgpack map) with "format", "version", "arrays" and "end"
               arrays, each at a multiple of 64 (zero bytes between)

``arrays`` maps each name to ``{"dtype", "shape", "offset", "nbytes"}``; ``end`` is the
file's size. The writer (:func:`write_arrays`) takes each array as a sequence of
contiguous pieces and hashes them as they go out, so a table several times the size of
the free memory is written with one piece in memory at a time (a training run's
checkpoint: its tables converted to another layout piece by piece, not copied whole).
The reader (:func:`read_arrays`) checks the preamble, the checksum and that every array
lies inside the file, and :func:`array_view` reads an array in place from a mapped file.
"""

from __future__ import annotations

import hashlib
import io
import struct
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, BinaryIO

import msgpack  # type: ignore[import-untyped]
import numpy as np

__all__ = [
    "ALIGN",
    "CHECKPOINT_MAGIC",
    "KINDS",
    "PREAMBLE",
    "STRATEGY_MAGIC",
    "ArrayEntry",
    "ArrayFileRules",
    "ArraySpec",
    "array_view",
    "encode_arrays",
    "read_arrays",
    "write_arrays",
]

PREAMBLE = struct.Struct("<8sIIQ32s")
ALIGN = 64
#: The magic of each kind of file in this layout, and what a refusal calls it when it
#: is given where another kind was expected.
STRATEGY_MAGIC = b"PKBSTRAT"
CHECKPOINT_MAGIC = b"PKBCHKPT"
KINDS = {
    STRATEGY_MAGIC: "a strategy file (pokerbot play, match and eval read it)",
    CHECKPOINT_MAGIC: "a training checkpoint (pokerbot train --resume continues it)",
}
#: Bytes hashed and written at a time when an array is given whole.
PIECE_BYTES = 1 << 24


@dataclass(frozen=True)
class ArraySpec:
    """One array to write: its ``name``, little-endian ``dtype``, ``shape``, and
    ``pieces``, a function returning the array's contiguous pieces in order (their
    elements together are the array, C order)."""

    name: str
    dtype: np.dtype
    shape: tuple[int, ...]
    pieces: Callable[[], Iterable[np.ndarray]]

    @property
    def nbytes(self) -> int:
        """The array's size in bytes."""
        return int(np.prod(self.shape, dtype=object)) * self.dtype.itemsize if self.shape else self.dtype.itemsize

    @classmethod
    def of(cls, name: str, array: np.ndarray) -> ArraySpec:
        """An array held whole (written in slices of :data:`PIECE_BYTES`)."""
        a = np.ascontiguousarray(array)
        a = a.astype(a.dtype.newbyteorder("<"), copy=False)
        flat = a.reshape(-1)
        step = max(1, PIECE_BYTES // max(1, a.dtype.itemsize))
        return cls(name, a.dtype, tuple(int(x) for x in a.shape),
                   lambda: (flat[i : i + step] for i in range(0, flat.shape[0], step)))  # fmt: skip


@dataclass(frozen=True)
class ArrayEntry:
    """Where an array lies in a file: dtype string, shape, byte offset and size."""

    dtype: str
    shape: list[int]
    offset: int
    nbytes: int


@dataclass(frozen=True)
class ArrayFileRules:
    """What a reader accepts, and how it words a refusal.

    ``what``: the kind of file in "not a ..." (e.g. "pokerbot strategy file");
    ``format``: the header's ``format``; ``versions``: versions read in this layout;
    ``known``: every version the reader knows (named in the refusal of another; older
    ones may be read in another layout); ``latest``: the version written now;
    ``dtypes``: accepted dtype strings; caps on the file, the header and the array count.
    """

    magic: bytes
    what: str
    format: str
    versions: tuple[int, ...]
    known: tuple[int, ...]
    latest: int
    dtypes: frozenset[str]
    max_file_bytes: int
    max_header_bytes: int
    max_arrays: int
    max_dims: int = 4


def _align(n: int) -> int:
    return (n + ALIGN - 1) // ALIGN * ALIGN


def _header_bytes(header: dict[str, Any], specs: Sequence[ArraySpec]) -> tuple[bytes, dict[str, int]]:
    """The packed header with every array's offset and the end filled in (in place in
    ``header``), and each array's offset."""
    header["arrays"] = {
        s.name: {"dtype": s.dtype.str, "shape": list(s.shape), "offset": 0, "nbytes": s.nbytes} for s in specs
    }
    header["end"] = 0
    # Offsets depend on the header's length, which depends on the offsets' widths:
    # repeat until the length stands still (it only grows with the offsets, so it ends).
    head_len = len(msgpack.packb(header, use_bin_type=True))
    while True:
        pos = _align(PREAMBLE.size + head_len)
        for s in specs:
            header["arrays"][s.name]["offset"] = pos
            pos = _align(pos + s.nbytes)
        header["end"] = pos
        head = msgpack.packb(header, use_bin_type=True)
        if len(head) == head_len:
            return head, {s.name: header["arrays"][s.name]["offset"] for s in specs}
        head_len = len(head)


def write_arrays(fh: BinaryIO, magic: bytes, version: int, header: dict[str, Any], specs: Sequence[ArraySpec]) -> int:
    """Write a file of ``specs``'s arrays behind ``header`` (its ``arrays`` and ``end``
    are filled in here) to ``fh``, a seekable file positioned at its start; return its
    size. The arrays' pieces are hashed as they are written, then the preamble with the
    checksum goes in front."""
    head, offsets = _header_bytes(header, specs)
    digest = hashlib.sha256()
    fh.write(bytes(PREAMBLE.size))
    pos = PREAMBLE.size

    def put(data: bytes | memoryview) -> None:
        nonlocal pos
        fh.write(data)
        digest.update(data)
        pos += len(data)

    put(head)
    for s in specs:
        put(bytes(offsets[s.name] - pos))
        start = pos
        for piece in s.pieces():
            p = np.ascontiguousarray(piece, dtype=s.dtype)
            put(memoryview(p).cast("B"))
        if pos - start != s.nbytes:
            raise ValueError(f"array {s.name!r}: its pieces hold {pos - start} bytes, not {s.nbytes}")
    end = header["end"]
    put(bytes(end - pos))
    fh.seek(0)
    fh.write(PREAMBLE.pack(magic, version, 0, len(head), digest.digest()))
    fh.seek(end)
    return end


def encode_arrays(magic: bytes, version: int, header: dict[str, Any], specs: Sequence[ArraySpec]) -> bytes:
    """The bytes :func:`write_arrays` would write."""
    buf = io.BytesIO()
    write_arrays(buf, magic, version, header, specs)
    return buf.getvalue()


def _unpack_header(raw: memoryview, fail: Callable[[str], Exception]) -> dict[str, Any]:
    """The header map, read with size limits (never pickle)."""
    try:
        doc = msgpack.unpackb(raw, raw=False, strict_map_key=True, max_bin_len=0, max_str_len=1 << 22,
                              max_array_len=1 << 20, max_map_len=1 << 12, max_ext_len=0)  # fmt: skip
    except (ValueError, TypeError, msgpack.UnpackException) as exc:
        raise fail(f"the header is not valid msgpack ({exc})") from None
    if not isinstance(doc, dict):
        raise fail("the header is not a map")
    return doc


def read_arrays(
    buf: Any, file_bytes: int, rules: ArrayFileRules, fail: Callable[[str], Exception]
) -> tuple[int, dict[str, Any], dict[str, ArrayEntry]]:
    """Check the preamble, checksum and header of a file in ``buf`` (bytes or a map of
    the file) against ``rules``; return its version, header and arrays. A refusal is
    ``fail(reason)`` raised, one line."""
    if file_bytes < PREAMBLE.size:
        raise fail(f"truncated: {file_bytes} bytes, less than the {PREAMBLE.size}-byte preamble")
    magic, version, flags, head_len, digest = PREAMBLE.unpack_from(buf, 0)
    if magic != rules.magic:
        raise fail(f"not a {rules.what}" + (f": it is {KINDS[magic]}" if magic in KINDS else ""))
    if version not in rules.versions:
        newer = " (written by a newer pokerbot)" if version > rules.latest else ""
        raise fail(f"format version {version} is not supported{newer}; this reader knows "
                   f"{', '.join(str(v) for v in rules.known)}")  # fmt: skip
    if flags != 0:
        raise fail(f"unknown flags {flags:#x}")
    if head_len > rules.max_header_bytes or PREAMBLE.size + head_len > file_bytes:
        raise fail(f"header length {head_len} does not fit the file ({file_bytes} bytes)")
    doc = _unpack_header(memoryview(buf)[PREAMBLE.size : PREAMBLE.size + head_len], fail)
    end = doc.get("end")
    if not isinstance(end, int) or isinstance(end, bool) or end > rules.max_file_bytes:
        raise fail(f"declared size {end!r} is beyond the cap {rules.max_file_bytes}")
    if end > file_bytes:
        raise fail(f"truncated: {file_bytes} bytes, the header declares {end}")
    if end < file_bytes:
        raise fail(f"{file_bytes - end} bytes after the declared end {end}")
    if hashlib.sha256(memoryview(buf)[PREAMBLE.size : end]).digest() != digest:
        raise fail("checksum mismatch (the file is damaged)")
    if doc.get("format") != rules.format or doc.get("version") != version:
        raise fail(f"header format {doc.get('format')!r} version {doc.get('version')!r} "
                   f"does not match the preamble's {rules.format!r} {version}")  # fmt: skip
    arrays = doc.get("arrays")
    if not isinstance(arrays, dict):
        raise fail("missing field 'arrays'" if arrays is None else f"field 'arrays' has type {type(arrays).__name__}")
    if len(arrays) > rules.max_arrays:
        raise fail(f"{len(arrays)} arrays is more than the cap {rules.max_arrays}")
    out: dict[str, ArrayEntry] = {}
    data_start = PREAMBLE.size + head_len
    for name, a in arrays.items():
        if not isinstance(a, dict):
            raise fail(f"array {name!r} is not described by a map")
        dt, shape, off, nb = a.get("dtype"), a.get("shape"), a.get("offset"), a.get("nbytes")
        if dt not in rules.dtypes:
            raise fail(f"array {name!r} has dtype {dt!r}")
        if (not isinstance(shape, list) or len(shape) > rules.max_dims
                or not all(isinstance(x, int) and not isinstance(x, bool) and x >= 0 for x in shape)):
            raise fail(f"array {name!r} has shape {shape!r}")
        if not isinstance(off, int) or not isinstance(nb, int) or off % ALIGN or off < data_start:
            raise fail(f"array {name!r} has offset {off!r}")
        count = int(np.prod(shape, dtype=object)) if shape else 1
        if count * np.dtype(dt).itemsize != nb or off + nb > end:
            raise fail(f"array {name!r} declares {nb} bytes at {off}, beyond the file's {end} "
                       f"or not {shape} x {np.dtype(dt).itemsize}")  # fmt: skip
        out[name] = ArrayEntry(dt, shape, off, nb)
    return version, doc, out


def array_view(buf: Any, entry: ArrayEntry) -> np.ndarray:
    """The array ``entry`` describes, read in place from ``buf`` (read-only where ``buf``
    is)."""
    count = entry.nbytes // np.dtype(entry.dtype).itemsize
    return np.frombuffer(buf, dtype=entry.dtype, count=count, offset=entry.offset).reshape(entry.shape)
