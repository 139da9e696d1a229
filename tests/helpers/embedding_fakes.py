"""Tiny, model-free embedding models for the fast embedding-cache and dense-arm tests.

Importing this module registers ``fake-bow`` (hashed bag of words: texts sharing
words are close) and ``fake-constant`` (every text gets the same vector: all ties)
in :data:`rulegauge.embedding.models.EMBEDDING_MODELS`. ``INSTANCES`` holds the last model each
spec loaded, so tests can count model calls.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from rulegauge.core.text import tokenize
from rulegauge.embedding.models import EMBEDDING_MODELS, ModelSpec

INSTANCES: dict[str, FakeModel] = {}


class FakeModel:
    """Counts calls and texts; ``encode_*`` return L2-normalised float32 rows."""

    def __init__(self, model_id: str = "fake-bow", dimension: int = 64,
                 constant: bool = False, backend: str = "torch-fp32") -> None:
        self.model_id = model_id
        self.backend = backend
        self.dimension = dimension
        self.constant = constant
        self.calls = 0
        self.texts: list[str] = []

    def _vector(self, text: str) -> np.ndarray:
        v = np.zeros(self.dimension, np.float64)
        words = [] if self.constant else tokenize(text)
        for w in words:
            v[int(hashlib.sha256(w.encode()).hexdigest(), 16) % self.dimension] += 1.0
        if not v.any():
            v[0] = 1.0
        return (v / np.linalg.norm(v)).astype(np.float32)

    def _encode(self, texts: Sequence[str]) -> np.ndarray:
        self.calls += 1
        self.texts += list(texts)
        return np.stack([self._vector(t) for t in texts]) if texts else np.zeros(
            (0, self.dimension), np.float32)

    def encode_queries(self, texts: Sequence[str], batch_size: int = 32) -> np.ndarray:
        return self._encode(texts)

    def encode_passages(self, texts: Sequence[str], batch_size: int = 32) -> np.ndarray:
        return self._encode(texts)

    def describe(self) -> dict[str, Any]:
        return {"name": self.model_id, "model_id": self.model_id, "dimension": self.dimension,
                "backend": self.backend}


def _loader(name: str, constant: bool):
    def load(cache: Path, backend: str) -> FakeModel:
        INSTANCES[name] = FakeModel(name, constant=constant, backend=backend)
        return INSTANCES[name]

    return load


for _name, _constant in (("fake-bow", False), ("fake-constant", True)):
    if _name not in EMBEDDING_MODELS:
        EMBEDDING_MODELS.add(_name, ModelSpec(_name, "test fake", _loader(_name, _constant)))


def shared_model_cache(tmp_path: Path) -> Path:
    """A cache root whose ``models/`` is the real model cache (so slow tests convert
    e5 once per machine) while embeddings stay in ``tmp_path``."""
    from rulegauge.embedding.models import cache_root

    real = cache_root() / "models"
    real.mkdir(parents=True, exist_ok=True)
    (tmp_path / "models").symlink_to(real, target_is_directory=True)
    return tmp_path
