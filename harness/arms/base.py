"""The arm interface: a search arm ranks corpus chunks for each question.

Arms register by name in :data:`ARMS`; a run instantiates each arm once with its
parameters from the config file, calls :meth:`Arm.prepare` with the corpus and
:meth:`Arm.search` with every question, and stores the hits in ``arm_ranks``.
Hits are ordered score descending, then chunk id ascending
(:func:`harness.core.ordering.order`), ranks start at 1, and at most ``depth`` hits are
returned. An arm that has nothing for a question returns an empty tuple.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar, Protocol, runtime_checkable

import numpy as np

from harness.core.ordering import order
from harness.core.registry import Registry
from harness.corpus.records import Corpus
from harness.goldset.records import Question


@dataclass(frozen=True)
class Hit:
    chunk_id: str
    rank: int
    score: float


@dataclass(frozen=True)
class ArmResult:
    question_id: str
    arm: str
    hits: tuple[Hit, ...]


@dataclass(frozen=True)
class ArmContext:
    """What an arm may need besides the corpus: a cache folder and a progress hook."""

    cache_dir: Path
    progress: Any = None  # callable(description, total) -> context manager yielding advance(n)


@runtime_checkable
class Arm(Protocol):
    name: ClassVar[str]

    def prepare(self, corpus: Corpus, context: ArmContext) -> None: ...

    def search(self, questions: Sequence[Question], depth: int) -> list[ArmResult]: ...

    def describe(self) -> dict[str, Any]:
        """Parameters, package and model versions, for the manifest."""
        ...


ARMS: Registry[type] = Registry("arm")


def hits_from_scores(chunk_ids: Sequence[str], scores: np.ndarray, depth: int,
                     keep: np.ndarray | None = None) -> tuple[Hit, ...]:
    """Rank ``chunk_ids`` by ``scores`` (desc, then id asc) and keep the top ``depth``.

    ``keep`` is an optional boolean mask of eligible chunks (others never appear).
    """
    ids = np.asarray(chunk_ids, dtype=object)
    sc = np.asarray(scores, dtype=np.float64)
    if keep is not None:
        ids, sc = ids[keep], sc[keep]
    idx = order(sc, ids)[:depth]
    return tuple(Hit(str(ids[i]), r + 1, float(sc[i])) for r, i in enumerate(idx))
