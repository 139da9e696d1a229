"""The ``fused`` table's rows from the scoring kernel's own work, as Arrow columns.

Per config, :func:`top_rows` takes the config's order keys over the dense candidates
(:class:`rulegauge.pipeline.sweep.ConfigScores`, the planes the metrics are scored on),
selects the top ``depth`` candidates of every question (``kernel.top_columns`` on the keys,
then :func:`rulegauge.fusion.kernel.exact_rows`: the exact fused order, ties by chunk id;
``depth`` 0 = the whole list) and gives integer columns: question, matrix row, fused
rank, page rank, arms voted, each run arm's rank with a validity mask, fused score,
relevant (and ``foreign``: the chunk is a foreign hit, :mod:`rulegauge.corpus.foreign`, read
by matrix row). The selection holds a margin beyond ``depth``; a question whose ``depth``-th
key does not clear the best key left out by more than the float tolerance (a tie across
the cut) is ordered in full, so the rows are the first ``depth`` of the exact list
whatever the ties. A page's rank is its position among distinct pages, counted at its
best-ranked chunk (later chunks of a page carry the same page rank).

:class:`RowContext` holds what every config shares (id strings once, as dictionaries
indexed by integer codes); :meth:`RowContext.part` builds the Arrow columns of a run of
configs' rows at once (no per-config frames): the writer streams such parts
(:meth:`rulegauge.store.rundir.RunWriter.write_parts`). Row order: configs as given,
then question (gold order), then fused rank. The rows equal the full path (every
chunk of :func:`rulegauge.fusion.fuse.fuse`, cut to ``depth``), tested column by column.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
import pyarrow as pa

from rulegauge.fusion.fuse import RankMatrix
from rulegauge.fusion.method import config_ceiling
from rulegauge.fusion.records import FusionConfig
from rulegauge.metrics.gold import Gold
from rulegauge.pipeline.sweep import ConfigScores


@dataclass(frozen=True)
class ConfigRows:
    """One config's fused rows (:func:`top_rows`), integer columns in table order."""

    config: FusionConfig
    question: np.ndarray  # int32 question index
    row: np.ndarray  # int64 rank-matrix row (chunk of the question)
    fused_rank: np.ndarray  # int32
    page_rank: np.ndarray  # int32
    arms_voted: np.ndarray  # int32
    arm_ranks: tuple[np.ndarray, ...]  # per run arm, int32 (0 where not valid)
    arm_valid: tuple[np.ndarray, ...]  # per run arm, bool: the config's arm ranked it within its depth
    score: np.ndarray  # float64 fused score
    relevant: np.ndarray  # bool

    def __len__(self) -> int:
        return len(self.question)


def select_top(o: ConfigScores, depth: int) -> tuple[np.ndarray, np.ndarray]:
    """(Q, D) candidate columns of every question in exact fused order (the first ``depth``,
    or the whole list for 0) and (Q, D) True where the position holds a listed chunk."""
    s = o.scores
    u = s.shape[1]
    d = u if depth <= 0 else min(depth, u)
    top = o.top(u if depth <= 0 else depth + max(8, depth // 2))  # shared with the metrics' page lists
    cs = np.take_along_axis(s, top, 1)
    cand = top[:, :d].copy()
    if top.shape[1] < u:
        boundary = cs.min(axis=1)  # every candidate left out has a key <= this
        tie = np.flatnonzero((boundary > 0) & (cs[:, d - 1] - boundary <= o.tol))
        if len(tie):  # a tie across the cut: those questions in full
            cand[tie] = o.exact(tie, s[tie], np.tile(np.arange(u), (len(tie), 1)))[:, :d]
            cs = np.take_along_axis(s, cand, 1)
    return cand, cs[:, :d] > 0


def page_ranks(pages: np.ndarray) -> np.ndarray:
    """(G, D) rank of each position's page among the distinct pages of its row (-1 =
    padding, rank 0), counted at the page's first position."""
    g, w = pages.shape
    if w == 0:
        return np.zeros((g, 0), np.int32)
    if w <= 32:  # short lists (a stored depth): compare every pair of positions, no sort
        same = pages[:, :, None] == pages[:, None, :]  # (G, D, D)
        first_at = np.argmax(same, axis=2)  # the first position holding each position's page
        first = (first_at == np.arange(w)[None, :]) & (pages >= 0)
        rank = np.cumsum(first, axis=1, dtype=np.int32)
        return np.where(pages >= 0, np.take_along_axis(rank, first_at, 1), 0).astype(np.int32)
    big = int(pages.max(initial=0)) + 1
    o = np.argsort(np.where(pages >= 0, pages, big) * w + np.arange(w)[None, :], axis=1)
    sp = np.take_along_axis(pages, o, 1)
    start = np.ones((g, w), bool)
    start[:, 1:] = sp[:, 1:] != sp[:, :-1]
    first = np.zeros((g, w), bool)
    np.put_along_axis(first, o, start, 1)
    rank = np.cumsum(first & (pages >= 0), axis=1)
    group_first = np.maximum.accumulate(np.where(start, np.arange(w)[None, :], 0), axis=1)
    out = np.empty((g, w), rank.dtype)
    np.put_along_axis(out, o, np.take_along_axis(rank, np.take_along_axis(o, group_first, 1), 1), 1)
    return np.where(pages >= 0, out, 0).astype(np.int32)


def top_rows(o: ConfigScores, depth: int, run_arms: Sequence[str], starts: np.ndarray) -> ConfigRows:
    """One config's fused rows to ``depth`` (0 = all); ``starts``: first matrix row of
    each question (:meth:`RowContext.starts`)."""
    c, planes, cands = o.config, o.dense.planes, o.candidates
    cand, listed = select_top(o, depth)
    pages = np.where(listed, np.take_along_axis(cands.page, cand, 1), -1)
    prank = page_ranks(pages)
    q, pos = np.nonzero(listed)
    col = cand[q, pos]
    flat = q * planes.shape[1] + col  # one index into every (Q, U) plane

    def at(plane: np.ndarray) -> np.ndarray:
        out: np.ndarray = np.ravel(plane).take(flat)
        return out

    ranks = np.stack([at(planes.ranks[planes.arms.index(a)]) for a in c.arms]) if c.arms else np.zeros((0, len(q)))
    ok = (ranks > 0) & (ranks <= np.asarray(c.depths, np.int64)[:, None])
    voted = ok.sum(axis=0, dtype=np.int32)
    ranks = np.where(ok, ranks, 0).astype(np.int32)
    per_arm = {arm: (ranks[j], ok[j]) for j, arm in enumerate(c.arms)}
    none = (np.zeros(len(q), np.int32), np.zeros(len(q), bool))
    arms = [per_arm.get(a, none) for a in run_arms]
    return ConfigRows(c, q.astype(np.int32), starts[q] + col, (pos + 1).astype(np.int32), prank[q, pos],
                      voted, tuple(a[0] for a in arms), tuple(a[1] for a in arms),
                      at(o.fused).astype(np.float64), at(cands.rel))


def _dictionary(codes: np.ndarray, values: pa.Array) -> pa.Array:
    return pa.DictionaryArray.from_arrays(pa.array(codes, pa.int32()), values).cast(pa.string())


def _floats(x: np.ndarray) -> pa.Array:
    return pa.array(x, pa.float64(), from_pandas=True)  # NaN is null, as pandas writes it


@dataclass(frozen=True)
class RowContext:
    """What the rows of every config share: id strings once (question, chunk, document)
    and the integer codes of each rank-matrix row into them."""

    run_arms: tuple[str, ...]
    question_ids: pa.Array
    chunk_ids: pa.Array
    chunk_code: np.ndarray  # matrix row -> index into chunk_ids
    doc_ids: pa.Array
    doc_code: np.ndarray  # matrix row -> index into doc_ids
    pageno: np.ndarray  # matrix row -> page number
    starts: np.ndarray  # question index -> its first matrix row
    foreign: np.ndarray | None = None  # matrix row -> a foreign hit; None: the run has none

    @classmethod
    def build(cls, matrix: RankMatrix, gold: Gold, run_arms: Sequence[str]) -> RowContext:
        chunk = np.empty(int(matrix.chunk_rank.max(initial=-1)) + 1, object)
        chunk[matrix.chunk_rank] = matrix.chunk_ids
        doc_code, docs = pd.factorize(np.asarray(gold.chunk_doc).astype(str), sort=False)
        counts = np.bincount(matrix.question_index, minlength=len(matrix.question_ids))
        return cls(tuple(run_arms), pa.array([str(x) for x in matrix.question_ids], pa.string()),
                   pa.array([str(x) for x in chunk], pa.string()), matrix.chunk_rank.astype(np.int32),
                   pa.array([str(x) for x in docs], pa.string()), doc_code.astype(np.int32),
                   np.asarray(gold.chunk_pageno).astype(np.int32), np.r_[0, np.cumsum(counts)[:-1]].astype(np.int64),
                   gold.chunk_foreign)

    def rows(self, o: ConfigScores, depth: int) -> ConfigRows:
        return top_rows(o, depth, self.run_arms, self.starts)

    def part(self, parts: Sequence[ConfigRows]) -> pa.Table:
        """The ``fused`` table rows of ``parts`` (in order) as Arrow columns, without ``run_id``."""
        def cat(get: Callable[[ConfigRows], np.ndarray]) -> np.ndarray:
            return np.concatenate([get(p) for p in parts]) if parts else np.zeros(0)

        n = [len(p) for p in parts]
        row = cat(lambda p: p.row).astype(np.int64)
        score = cat(lambda p: p.score).astype(np.float64)
        ceiling = np.repeat(np.array([config_ceiling(p.config) for p in parts], np.float64), n)
        ratio = np.concatenate([p.score / config_ceiling(p.config) for p in parts]) if parts else np.zeros(0)
        cols: dict[str, pa.Array] = {
            "question_id": _dictionary(cat(lambda p: p.question), self.question_ids),
            "config_id": _dictionary(np.repeat(np.arange(len(parts)), n),
                                     pa.array([p.config.config_id for p in parts], pa.string())),
            "chunk_id": _dictionary(self.chunk_code[row], self.chunk_ids),
            "doc_id": _dictionary(self.doc_code[row], self.doc_ids),
            "page": pa.array(self.pageno[row], pa.int32()),
            "fused_rank": pa.array(cat(lambda p: p.fused_rank), pa.int32()),
            "fused_score": _floats(score),
            "ceiling": _floats(ceiling),
            "score_ratio": _floats(ratio),
            "n_arms": pa.array(np.repeat(np.array([len(p.config.arms) for p in parts], np.int32), n), pa.int32()),
            "arms_voted": pa.array(cat(lambda p: p.arms_voted), pa.int32()),
            "relevant": pa.array(cat(lambda p: p.relevant).astype(bool), pa.bool_()),
            "page_rank": pa.array(cat(lambda p: p.page_rank), pa.int32()),
            "foreign": pa.array(self.foreign[row] if self.foreign is not None else np.zeros(len(row), bool),
                                pa.bool_()),
        }
        for j, arm in enumerate(self.run_arms):
            valid = np.concatenate([p.arm_valid[j] for p in parts]) if parts else np.zeros(0, bool)
            ranks = np.concatenate([p.arm_ranks[j] for p in parts]) if parts else np.zeros(0, np.int32)
            cols[f"rank_{arm}"] = pa.array(ranks.astype(np.int32), pa.int32(), mask=~valid.astype(bool))
        return pa.table(cols)
