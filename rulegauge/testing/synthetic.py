"""Seeded synthetic inputs of the conformance suites: arm ranks over pages, questions, gold.

:func:`synthetic_ranks` draws three arms ``a b c`` ranking random subsets of chunks of 30
pages for 24 questions, with 1-3 relevant pages each (graded 1-3 when ``graded``), explicit
judgments beyond them (mostly grade 0) and arm scores either spread (``coarse=False``) or
coarse (few distinct values: exact ties in every normalisation). With ``foreign`` > 0,
each arm's list of each question also holds that many foreign hits (ids that match no chunk,
:mod:`rulegauge.corpus.foreign`) at random ranks, drawn from a few ids shared by the arms
(the same foreign id from two arms is one hit) that sort before, among and after the chunk
ids. One local generator per call (``numpy.random.default_rng(seed)``): the same seed gives
the same inputs in every process.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from rulegauge.fusion.fuse import RankMatrix
from rulegauge.fusion.records import FusionConfig
from rulegauge.goldset.records import PageJudgment, PageRef, Question
from rulegauge.metrics.gold import Gold, make_gold

ARMS = ("a", "b", "c")
FOREIGN_IDS = ("0-elsewhere#1", "d#p0003.c999x", "other-game#p0002.c001", "zz-stale#12")
"""Foreign ids of :func:`synthetic_ranks`: before, among and after the chunk ids ``d#p...``."""


@dataclass(frozen=True)
class Synthetic:
    questions: tuple[Question, ...]
    ranks: pd.DataFrame  # question_id, arm, chunk_id, rank, score (and foreign, with foreign hits)
    matrix: RankMatrix
    gold: Gold


def synthetic_ranks(seed: int, *, coarse: bool = False, graded: bool = False, n_q: int = 16,
                    n_pages: int = 30, chunks_per_page: int = 2, foreign: int = 0) -> Synthetic:
    """Seeded arm ranks, questions and gold (module docstring)."""
    rng = np.random.default_rng(seed)
    chunk_pages = {f"d#p{p:04d}.c{c:03d}": ("d", p) for p in range(1, n_pages + 1) for c in range(chunks_per_page)}
    chunk_ids = sorted(chunk_pages)
    rows, questions = [], []
    for i in range(n_q):
        qid = f"q{i:03d}"
        rel = sorted(int(p) for p in rng.choice(np.arange(1, n_pages + 1), size=int(rng.integers(1, 4)),
                                                replace=False))
        grades = [int(rng.integers(1, 4)) if graded else None for _ in rel]
        free = [p for p in range(1, n_pages + 1) if p not in rel]
        judged = rng.choice(free, size=6, replace=False)
        jgrades = rng.choice([0, 0, 0, 1, 2, 3], size=6)
        reqs = tuple((PageRef("d", p, g),) for p, g in zip(rel, grades, strict=True))
        questions.append(Question(qid, "x", "en", reqs,
                                  game="G", judged=tuple(PageJudgment("d", int(p), int(g), "human", "synthetic")
                                                         for p, g in zip(judged, jgrades, strict=True))))
        for arm in ARMS:
            depth = int(rng.integers(1, len(chunk_ids)))
            listed = [(str(c), False) for c in rng.permutation(chunk_ids)[:depth]]
            for fid in rng.choice(FOREIGN_IDS, size=min(foreign, len(FOREIGN_IDS)), replace=False):
                listed.insert(int(rng.integers(0, len(listed) + 1)), (str(fid), True))
            for r, (cid, outside) in enumerate(listed, start=1):
                # spread scores fall with the rank (as an arm's do: ranx re-ranks by score); coarse ones tie
                score = float(round(8.0 / r)) if coarse else 10.0 / r + float(rng.random()) * 5.0 / (r * (r + 1))
                rows.append((qid, arm, cid, r, score, outside))
    ranks = pd.DataFrame(rows, columns=["question_id", "arm", "chunk_id", "rank", "score", "foreign"])
    if not foreign:
        ranks = ranks.drop(columns=["foreign"])
    matrix = RankMatrix.from_arm_ranks(ranks, [q.question_id for q in questions], list(ARMS))
    return Synthetic(tuple(questions), ranks, matrix, make_gold(questions, matrix, chunk_pages))


def config(method: str, options: tuple[tuple[str, object], ...] = (), arms: tuple[str, ...] = ARMS,
           weights: tuple[float, ...] | None = None, depths: tuple[int, ...] | None = None,
           k: float | None = None) -> FusionConfig:
    """A config over the synthetic arms (RRF's k 60 unless given; NaN for other methods)."""
    weights = weights or (1.0,) * len(arms)
    depths = depths or (40,) * len(arms)
    kk = k if k is not None else (60.0 if method == "rrf" else math.nan)
    cid = f"{method}-{'+'.join(arms)}-{'-'.join(f'{w:g}' for w in weights)}-{'-'.join(map(str, depths))}" \
          + "".join(f"-{n}{v}" for n, v in options)
    return FusionConfig(cid, cid, "grid", method, kk, tuple(arms), tuple(weights), tuple(depths), tuple(options))
