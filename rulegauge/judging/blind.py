"""Blind judging: pooled pages in a seeded random order, with no config, arm or rank shown.

A judge who sees "found by the service config, rank 1" anchors on it; a judge who
meets the pages in the systems' order learns it too. So the judging page is blind by
default (as Quepid's judges are blind to the system and judge in random order): the
order of the questions, and of the pages within each question, is a random permutation
drawn from ``numpy.random.default_rng(seed)`` (a local generator: the same seed, the same
order, on every machine), and the page's JSON carries no ``found_by`` at all, so neither
the page nor its data names a config, an arm or a rank. A question's pages stay
together (a judge reads the question once), in random order within it.

The unblinded view (``rulegauge judge --unblinded``) is the pool's own order (question by
question, best rank first) with each page's finders shown. Every judgment records the
view (``view``: ``blind`` or ``unblinded``) and, when blind, the seed (``order_seed``) in
the judgments file (:mod:`rulegauge.goldset.judgments`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from rulegauge.goldset.judgments import MAX_SEED
from rulegauge.judging.poolfile import PoolPage

DEFAULT_SEED = 0


@dataclass(frozen=True)
class View:
    """How the judging page shows a pool: ``blind`` (default) with its order's ``seed``, or
    unblinded (pool order, finders shown; ``seed`` None)."""

    blind: bool = True
    seed: int | None = DEFAULT_SEED

    def __post_init__(self) -> None:
        if self.blind and (self.seed is None or not 0 <= self.seed <= MAX_SEED):
            raise ValueError(f"a blind view needs a seed 0..{MAX_SEED}, got {self.seed!r}")

    @property
    def name(self) -> str:
        return "blind" if self.blind else "unblinded"

    @property
    def order_seed(self) -> int | None:
        return self.seed if self.blind else None


UNBLINDED = View(blind=False, seed=None)
BLIND = View()
"""The default view: blind, seed :data:`DEFAULT_SEED`."""


def blind_order(pages: Sequence[PoolPage], seed: int) -> list[PoolPage]:
    """``pages`` with their questions in a random order and each question's pages in a
    random order within it (module docstring); a permutation of ``pages``."""
    rng = np.random.default_rng(seed)
    by_question: dict[str, list[PoolPage]] = {}
    for p in pages:
        by_question.setdefault(p.question_id, []).append(p)
    questions = list(by_question)
    out: list[PoolPage] = []
    for qi in rng.permutation(len(questions)):
        group = by_question[questions[int(qi)]]
        out.extend(group[int(i)] for i in rng.permutation(len(group)))
    return out


def ordered(pages: Sequence[PoolPage], view: View) -> list[PoolPage]:
    """The order the page serves ``pages`` in under ``view``."""
    return blind_order(pages, view.seed) if view.blind and view.seed is not None else list(pages)
