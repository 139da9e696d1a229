"""The rank matrix: every (question, chunk) any arm ranked, with each arm's rank and score."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd


@dataclass(frozen=True)
class RankMatrix:
    """Every (question, chunk) any arm ranked, with each arm's rank (0 = unranked).

    Rows are sorted by question index, then chunk id. ``foreign``: True where the row's id
    matches no chunk of the corpus (a foreign hit, :mod:`rulegauge.corpus.foreign`: an id an
    arm read from outside, kept at its rank); None when no row is one.
    """

    question_ids: np.ndarray  # question index -> id
    question_index: np.ndarray  # row -> question index
    chunk_ids: np.ndarray  # row -> chunk id (object)
    chunk_rank: np.ndarray  # row -> rank of the chunk id in ascending id order
    arms: tuple[str, ...]
    ranks: np.ndarray  # (rows, arms) int32
    scores: np.ndarray | None = None  # (rows, arms) float64 arm scores (NaN = unranked); None: not given
    foreign: np.ndarray | None = None  # row -> bool: a foreign hit; None: none

    @classmethod
    def from_arm_ranks(cls, arm_ranks: pd.DataFrame, question_ids: list[str],
                       arms: list[str] | tuple[str, ...]) -> RankMatrix:
        """Pivot an ``arm_ranks`` table (question_id, arm, chunk_id, rank) into a matrix
        (hash-factorised codes, no per-row Python; a chunk ranked twice by one arm keeps its best rank,
        and the score of that rank). The arms' scores are kept when the table has a ``score`` column,
        the foreign hits when it has a ``foreign`` column with any (tables of older runs have none)."""
        df = arm_ranks[arm_ranks["arm"].isin(list(arms))]
        qcode = pd.Categorical(df["question_id"], categories=list(question_ids)).codes.astype(np.int64)
        if (qcode < 0).any():
            unknown = sorted(set(df["question_id"][qcode < 0].astype(str)))
            raise ValueError(f"arm_ranks holds unknown question ids: {unknown[:5]}")
        codes, uniques = pd.factorize(df["chunk_id"].astype(str), sort=False)
        flagged = df["foreign"].to_numpy(dtype=bool) if "foreign" in df.columns else np.zeros(0, bool)
        # fixed-width strings sort fastest, but take the longest id's width for every id: a run with
        # foreign hits (reply ids up to corpus/foreign.MAX_FOREIGN_ID characters) sorts objects instead,
        # in the same code-point order
        uniq = np.asarray(uniques, dtype=object if flagged.any() else str)
        by_id = np.argsort(uniq, kind="stable")
        rank_of = np.empty(len(uniq), np.int64)
        rank_of[by_id] = np.arange(len(uniq))
        ccode = rank_of[codes]  # chunk code in ascending id order
        acode = pd.Categorical(df["arm"], categories=list(arms)).codes.astype(np.int64)
        key = qcode * max(len(uniq), 1) + ccode
        ukey, row = np.unique(key, return_inverse=True)
        big = np.iinfo(np.int32).max
        ranks = np.full((len(ukey), len(arms)), big, np.int32)
        np.minimum.at(ranks, (row, acode), df["rank"].to_numpy(np.int32))
        scores = None
        if "score" in df.columns:  # the score stored with the best rank of each (row, arm)
            scores = np.full((len(ukey), len(arms)), np.nan)
            by_rank = np.lexsort((-df["rank"].to_numpy(np.int64), row))  # per cell, the best rank last
            scores[row[by_rank], acode[by_rank]] = df["score"].to_numpy(np.float64)[by_rank]
        ranks[ranks == big] = 0
        foreign = None
        if flagged.any():  # an id is foreign in every arm that has it (it matches no chunk)
            foreign = np.zeros(len(ukey), bool)
            foreign[row[flagged]] = True
        chunk_code = ukey % max(len(uniq), 1)
        return cls(
            question_ids=np.asarray(question_ids, dtype=object),
            question_index=(ukey // max(len(uniq), 1)).astype(np.int64),
            chunk_ids=uniq[by_id].astype(object)[chunk_code],
            chunk_rank=chunk_code.astype(np.int64),
            arms=tuple(arms),
            ranks=ranks,
            scores=scores,
            foreign=foreign,
        )

    def arm_columns(self, arms: tuple[str, ...]) -> np.ndarray:
        idx = [self.arms.index(a) for a in arms]
        return self.ranks[:, idx]
