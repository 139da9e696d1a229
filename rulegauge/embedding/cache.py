"""On-disk embedding cache: a second run over the same texts embeds nothing.

Layout: ``<cache>/embeddings/<model_id>/shard-<hash>.npz``. Each shard is one batch
the model embedded: ``keys`` (``"<role>:<sha256 of the UTF-8 text>"``) and
``vectors`` (float32, one row per key). The key therefore combines the model id
(the folder), the role (``query`` or ``passage``: e5 embeds them differently) and
the text hash.

A shard is written to a temporary file in the same folder and renamed into place,
so an interrupted run leaves whole shards only: the batches finished before the
interruption are reused and only the rest is embedded. A shard whose vectors do not
match its keys or the model's dimension raises (delete the shard to re-embed).

:func:`embed` returns one row per input text in input order; a text that occurs
twice is embedded once. Texts to embed are batched longest first (ties in input order):
a batch is padded to its longest text, so grouping texts of similar length wastes
little work on padding (on the SRD chunks about 1.3x the passages/s of input-order
batches; ``by_length=False`` restores input order, for the benchmark's reference).
:class:`CacheStats` counts hits and misses (distinct keys) and model calls, cumulatively over the cache's lifetime.

Reference: the idea is standard memoisation; the atomic-rename commit is POSIX
``rename(2)`` semantics.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from rulegauge.core.atomic import atomic_path
from rulegauge.core.errors import RulegaugeError
from rulegauge.core.registry import Registry
from rulegauge.embedding.models import EmbeddingModel

NORM_TOLERANCE = 1e-3
"""Rows a model returns must have L2 norm within this of 1 (cosine = inner product)."""

Encoder = Callable[[EmbeddingModel, list[str], int], np.ndarray]
Batch = list[tuple[str, str]]
"""One planned batch: (key, text) pairs, embedded together in one model call."""
BatchRunner = Callable[[EmbeddingModel, str, list[Batch], int], Iterable[tuple[list[str], np.ndarray]]]
"""Embeds planned batches somewhere (``rulegauge.embedding.fanout``) and yields, in any order,
each batch's keys with its vectors; :func:`in_process` is the local one."""

ROLES: Registry[Encoder] = Registry("embedding role")
ROLES.add("query", lambda model, texts, batch: model.encode_queries(texts, batch_size=batch))
ROLES.add("passage", lambda model, texts, batch: model.encode_passages(texts, batch_size=batch))

_SAFE_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")


def text_key(role: str, text: str) -> str:
    """Cache key of ``text`` embedded in ``role``: ``"<role>:<sha256 hex>"``."""
    return f"{role}:{hashlib.sha256(text.encode('utf-8')).hexdigest()}"


@dataclass(frozen=True)
class CacheStats:
    """Distinct keys served from disk (``hits``) or embedded (``misses``), model calls
    and shards written since the cache object was created."""

    hits: int = 0
    misses: int = 0
    model_calls: int = 0
    shards_written: int = 0


class EmbeddingCache:
    """The shards of one model under ``<cache_dir>/embeddings/<model_id>/``."""

    def __init__(self, cache_dir: str | Path, model_id: str) -> None:
        if not _SAFE_ID.fullmatch(model_id):
            raise RulegaugeError(f"model id {model_id!r} is not usable as a folder name")
        self.model_id = model_id
        self.folder = Path(cache_dir) / "embeddings" / model_id
        self._rows: dict[str, np.ndarray] | None = None
        self.stats = CacheStats()

    def _load(self) -> dict[str, np.ndarray]:
        if self._rows is None:
            rows: dict[str, np.ndarray] = {}
            for path in sorted(self.folder.glob("shard-*.npz")):
                keys, vectors = _read_shard(path)
                rows.update(zip(keys, vectors, strict=True))
            self._rows = rows
        return self._rows

    def lookup(self, keys: Sequence[str]) -> dict[str, np.ndarray]:
        """The cached vector of every key in ``keys`` that is on disk."""
        rows = self._load()
        return {k: rows[k] for k in keys if k in rows}

    def store(self, keys: Sequence[str], vectors: np.ndarray) -> Path:
        """Write one shard atomically and remember its rows."""
        vectors = np.ascontiguousarray(vectors, dtype=np.float32)
        if vectors.ndim != 2 or len(keys) != len(vectors):
            raise RulegaugeError(f"store: {len(keys)} keys but vectors of shape {vectors.shape}")
        self.folder.mkdir(parents=True, exist_ok=True)
        name = hashlib.sha256("\n".join(keys).encode()).hexdigest()[:24]
        path = self.folder / f"shard-{name}.npz"
        with atomic_path(path) as tmp, open(tmp, "wb") as f:
            np.savez(f, keys=np.asarray(keys, dtype=str), vectors=vectors)
        self._load().update(zip(keys, vectors, strict=True))
        return path

    def _count(self, hits: int = 0, misses: int = 0, calls: int = 0, shards: int = 0) -> None:
        s = self.stats
        self.stats = CacheStats(s.hits + hits, s.misses + misses, s.model_calls + calls,
                                s.shards_written + shards)


def _read_shard(path: Path) -> tuple[list[str], np.ndarray]:
    try:
        with np.load(path, allow_pickle=False) as z:
            keys, vectors = [str(k) for k in z["keys"]], np.asarray(z["vectors"], np.float32)
    except (OSError, ValueError, KeyError) as exc:
        raise RulegaugeError(f"{path}: unreadable embedding shard ({exc}); delete it") from exc
    if vectors.ndim != 2 or len(keys) != len(vectors):
        raise RulegaugeError(f"{path}: {len(keys)} keys but vectors of shape {vectors.shape}; "
                           "delete it")
    return keys, vectors


def embed(model: EmbeddingModel, texts: Sequence[str], role: str,
          cache: EmbeddingCache | None = None, batch_size: int = 32,
          progress: Callable[[str, int], Any] | None = None,
          *, by_length: bool = True, runner: BatchRunner | None = None) -> np.ndarray:
    """Embed ``texts`` in ``role`` (``query`` or ``passage``), reusing ``cache``.

    Returns a float32 ``(len(texts), model.dimension)`` array in input order. Texts
    not in the cache are embedded in batches of ``batch_size`` (longest first unless
    ``by_length`` is false), each batch stored as
    one shard as soon as it is done. ``progress(description, total)`` (``total`` =
    texts to embed) returns a context manager yielding ``advance(n)``, as
    ``rulegauge.cli.progress`` does, or directly ``advance(n)`` or None; ``advance`` is
    called after every batch. ``runner`` (default :func:`in_process`) embeds the planned
    batches, e.g. on a Ray cluster: the batches, hence the vectors, are the same.
    """
    ROLES.get(role)  # an unknown role fails here, listing the choices
    if isinstance(texts, str):
        raise TypeError("texts must be a sequence of strings, not one string")
    bad = [i for i, t in enumerate(texts) if not isinstance(t, str)]
    if bad:
        raise TypeError(f"texts at positions {bad[:10]} are not strings")
    if batch_size < 1:
        raise ValueError(f"batch_size must be >= 1, got {batch_size}")
    keys = [text_key(role, t) for t in texts]
    unique = dict.fromkeys(keys)
    found = cache.lookup(list(unique)) if cache is not None else {}
    if cache is not None and any(v.shape != (model.dimension,) for v in found.values()):
        raise RulegaugeError(f"{cache.folder}: cached vectors do not have the model's "
                           f"dimension {model.dimension}; delete the folder")
    todo = {k: t for k, t in zip(keys, texts, strict=True) if k not in found}
    pending = list(todo.items())
    if by_length:  # stable: equal lengths keep input order
        pending.sort(key=lambda kv: -len(kv[1]))
    with _stage(progress, f"embedding {role} texts ({model.model_id})", len(pending)) as advance:
        batches = [pending[start : start + batch_size]
                   for start in range(0, len(pending), batch_size)]
        for batch_keys, raw in (runner or in_process)(model, role, batches, batch_size):
            vectors = _checked(model, raw, len(batch_keys))
            if cache is not None:
                cache.store(batch_keys, vectors)
                cache._count(calls=1, shards=1)
            found.update(zip(batch_keys, vectors, strict=True))
            advance(len(batch_keys))
    if cache is not None:
        cache._count(hits=len(unique) - len(todo), misses=len(todo))
    if not keys:
        return np.zeros((0, model.dimension), np.float32)
    return np.stack([found[k] for k in keys]).astype(np.float32, copy=False)


def in_process(model: EmbeddingModel, role: str, batches: list[Batch],
               batch_size: int) -> Iterator[tuple[list[str], np.ndarray]]:
    """Embed each planned batch in this process, in order (the ``local`` engine)."""
    encode = ROLES.get(role)
    for batch in batches:
        yield [k for k, _ in batch], encode(model, [t for _, t in batch], batch_size)


@contextmanager
def _stage(progress: Callable[[str, int], Any] | None, description: str,
           total: int) -> Iterator[Callable[[int], object]]:
    """Adapt both progress conventions (context manager or plain ``advance``)."""
    stage = progress(description, total) if progress is not None and total else None
    if stage is None:
        yield lambda n: None
    elif hasattr(stage, "__enter__"):
        with stage as advance:
            yield advance
    else:
        yield stage


def _checked(model: EmbeddingModel, vectors: np.ndarray, n: int) -> np.ndarray:
    """Fail loudly on a wrong shape, non-finite values or unnormalised rows."""
    v = np.asarray(vectors, dtype=np.float32)
    if v.shape != (n, model.dimension):
        raise RulegaugeError(f"{model.model_id} returned shape {v.shape}, "
                           f"expected {(n, model.dimension)}")
    if not np.isfinite(v).all():
        raise RulegaugeError(f"{model.model_id} returned non-finite values")
    norms = np.linalg.norm(v.astype(np.float64), axis=1)
    if n and np.abs(norms - 1.0).max() > NORM_TOLERANCE:
        raise RulegaugeError(f"{model.model_id} returned rows that are not L2-normalised "
                           f"(norms {norms.min():.4f}..{norms.max():.4f})")
    return v
