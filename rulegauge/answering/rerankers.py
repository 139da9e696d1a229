"""Re-rankers of the answering read: score the candidate pool, registered by name.

A re-ranker returns one score per candidate (higher is better); the read orders
the pool by that score through :func:`rulegauge.core.ordering.order` (score descending,
chunk id ascending) and keeps the top ``final``.

Registered
----------
* ``fused``: the fused RRF score itself, i.e. the pool keeps its fused order.
* ``lexical``: shared distinct tokens between question and passage (heading +
  text, :func:`rulegauge.core.text.tokenize`) as the integer part, plus
  ``fused_score / (2 * best fused score in the pool)`` (< 1) as the fractional
  part, so passages with equal overlap keep their fused order. A question with no
  token in common with any passage (e.g. asked in another language) therefore
  keeps the fused order.

No cross-encoder is registered: none ships its weights inside a PyPI package
(flashrank and sentence-transformers download them at run time, which the
rulegauge forbids).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Protocol, runtime_checkable

import numpy as np

from rulegauge.core.registry import Registry
from rulegauge.core.text import tokenize


@dataclass(frozen=True)
class Candidate:
    """One pool passage as the re-ranker and the floors see it."""

    chunk_id: str
    doc_id: str
    doc_kind: str
    game: str
    page: int
    heading: str
    text: str
    fused_rank: int
    fused_score: float
    carried_by: str


@runtime_checkable
class Reranker(Protocol):
    name: ClassVar[str]

    def score(self, question: str, pool: Sequence[Candidate]) -> np.ndarray:
        """One float64 score per candidate, aligned with ``pool``."""
        ...

    def describe(self) -> dict[str, Any]: ...


RERANKERS: Registry[type] = Registry("reranker")


@RERANKERS.register("fused")
class FusedReranker:
    """Keeps the fused order: the score is the fused RRF score."""

    name: ClassVar[str] = "fused"

    def score(self, question: str, pool: Sequence[Candidate]) -> np.ndarray:
        return np.array([c.fused_score for c in pool], dtype=np.float64)

    def describe(self) -> dict[str, Any]:
        return {"name": self.name}


@RERANKERS.register("lexical")
class LexicalReranker:
    """Token overlap with the question, fused order within equal overlap."""

    name: ClassVar[str] = "lexical"

    def score(self, question: str, pool: Sequence[Candidate]) -> np.ndarray:
        q = set(tokenize(question))
        fused = np.array([c.fused_score for c in pool], dtype=np.float64)
        best = float(fused.max()) if len(fused) else 0.0
        frac = fused / (2.0 * best) if best > 0 else np.zeros_like(fused)
        overlap = np.array([len(q.intersection(tokenize(f"{c.heading}\n{c.text}"))) for c in pool],
                           dtype=np.float64)
        return overlap + frac

    def describe(self) -> dict[str, Any]:
        return {"name": self.name, "tokenizer": "rulegauge.core.text.tokenize"}


def make_reranker(name: str) -> Reranker:
    """Instantiate the re-ranker registered as ``name`` (unknown names list the choices)."""
    reranker: Reranker = RERANKERS.get(name)()
    return reranker
