"""The benchmarks' stand-in embedding model (bench_dense, bench_scale): what a dense arm gets
from a model, without a model: a unit vector per text, seeded by the role and the text's SHA-256
(the same text always gives the same vector, so caches and rankings repeat across runs)."""

from __future__ import annotations

import hashlib
from typing import Any

import numpy as np


class SeededModel:
    """A stand-in model ``name`` of ``dim`` dimensions (``model_id`` ``name-dim``)."""

    def __init__(self, name: str, dim: int, note: str) -> None:
        self.name, self.dimension, self.note = name, dim, note
        self.model_id = f"{name}-{dim}"

    def _vectors(self, role: str, texts: Any) -> np.ndarray:
        out = np.empty((len(texts), self.dimension), np.float32)
        for i, t in enumerate(texts):
            seed = int.from_bytes(hashlib.sha256(f"{role}:{t}".encode()).digest()[:8], "little")
            v = np.random.default_rng(seed).standard_normal(self.dimension)
            out[i] = v / np.linalg.norm(v)
        return out

    def encode_queries(self, texts: Any, batch_size: int = 32) -> np.ndarray:
        return self._vectors("query", texts)

    def encode_passages(self, texts: Any, batch_size: int = 32) -> np.ndarray:
        return self._vectors("passage", texts)

    def describe(self) -> dict[str, Any]:
        return {"model": self.name, "note": self.note}
