"""Dense planes of a run's arms, the space every fusion method scores on.

:class:`Planes` holds every arm's ranks and scores as (arms, questions, candidates)
arrays, a question's candidates in chunk-id order (built by
:func:`rulegauge.fusion.kernel.planes_of`). A method's per-list work (normalisations,
Borda points) is cheaper on each arm's own lists (:class:`ArmList`: (questions, longest
list + 1), rank order) than on the candidate planes, and :meth:`Planes.spread` puts
list values back on the planes with one gather. Work that configs of a grid share (one
arm normalised at one depth, while the configs differ in weights or in other arms) is
kept in a small LRU bounded in bytes (:meth:`Planes.memo`), shared by the scoring threads.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from rulegauge.fusion.records import FusionConfig

MEMO_BYTES = 64 << 20
"""Bytes of per-list results :meth:`Planes.memo` keeps (least recently used dropped first)."""


class Memo:
    """A thread-safe LRU of arrays bounded in bytes; one computation per key at a time
    (a second thread asking for a key being computed waits for it)."""

    def __init__(self, budget: int) -> None:
        self.budget = budget
        self.items: OrderedDict[Hashable, np.ndarray] = OrderedDict()
        self.size = 0
        self.lock = threading.Lock()
        self.pending: dict[Hashable, threading.Lock] = {}

    def get(self, key: Hashable, make: Callable[[], np.ndarray]) -> np.ndarray:
        with self.lock:
            if key in self.items:
                self.items.move_to_end(key)
                return self.items[key]
            gate = self.pending.setdefault(key, threading.Lock())
        with gate:
            with self.lock:
                if key in self.items:
                    return self.items[key]
            value = make()
            value.setflags(write=False)
            with self.lock:
                self.pending.pop(key, None)
                if value.nbytes <= self.budget:
                    self.items[key] = value
                    self.size += value.nbytes
                    while self.size > self.budget:
                        self.size -= self.items.popitem(last=False)[1].nbytes
            return value


@dataclass(frozen=True)
class ArmList:
    """One arm's lists in rank order: row ``q`` of ``ranks``/``scores`` (Q, L + 1) holds
    the arm's ranked candidates of question ``q`` by rank (ties by column) from column 1,
    column 0 and the padding are 0. ``slot`` (Q, U) is each candidate's flat index into
    those arrays (an unranked candidate's points to its row's column 0)."""

    ranks: np.ndarray  # (Q, L + 1) int32
    scores: np.ndarray  # (Q, L + 1) float64
    slot: np.ndarray  # (Q, U) intp

    @classmethod
    def of(cls, ranks: np.ndarray, scores: np.ndarray) -> ArmList:
        nq, u = ranks.shape
        ranked = ranks > 0
        n = ranked.sum(axis=1)
        width = int(n.max(initial=0))
        key = np.where(ranked, ranks, int(ranks.max(initial=0)) + 1).astype(np.int64) * u + np.arange(u)
        o = np.argsort(key, axis=1)[:, :width]
        inside = np.arange(width)[None, :] < n[:, None]
        lr = np.zeros((nq, width + 1), np.int32)
        ls = np.zeros((nq, width + 1), np.float64)
        lr[:, 1:] = np.where(inside, np.take_along_axis(ranks, o, 1), 0)
        ls[:, 1:] = np.where(inside, np.take_along_axis(scores, o, 1), 0.0)
        base = (np.arange(nq) * (width + 1))[:, None]
        slot = np.broadcast_to(base, (nq, u)).copy()
        qi, pos = np.nonzero(inside)
        slot[qi, o[qi, pos]] = base[qi, 0] + pos + 1
        return cls(lr, ls, slot.astype(np.intp))


@dataclass(frozen=True)
class Planes:
    """The run's arms as dense (arms, questions, candidates) planes (module docstring).

    ``ranks`` are the stored ranks (0 = unranked), not yet cut to a config's depths;
    :meth:`arm` gives one arm of a config cut to its depth. The per-list work of a
    method (normalisations, Borda points) is cheaper on the arm's own lists
    (:meth:`listed`: (Q, L + 1) in rank order, L the longest list) than on the (Q, U)
    planes; :meth:`spread` puts list values back on the planes."""

    arms: tuple[str, ...]
    ranks: np.ndarray  # (A, Q, U) int32; 0 = unranked or padding
    scores: np.ndarray  # (A, Q, U) float64; 0.0 where unranked
    max_rank: tuple[int, ...]  # per arm, the largest stored rank
    question_ids: tuple[str, ...] = ()  # of the rows, to name a question in errors (may be empty)

    def question(self, q: int) -> str:
        """Row ``q``'s question id (``#q`` where the planes carry none)."""
        return self.question_ids[q] if q < len(self.question_ids) else f"#{q}"

    @property
    def shape(self) -> tuple[int, int]:
        return (int(self.ranks.shape[1]), int(self.ranks.shape[2]))

    @cached_property
    def lists(self) -> tuple[ArmList, ...]:
        """Every arm's lists in rank order (:class:`ArmList`), built once."""
        return tuple(ArmList.of(self.ranks[a], self.scores[a]) for a in range(len(self.arms)))

    @cached_property
    def _memo(self) -> Memo:
        return Memo(MEMO_BYTES)

    def memo(self, key: Hashable, make: Callable[[], np.ndarray]) -> np.ndarray:
        """``make()`` (read-only), kept for the next config asking for ``key`` (module
        docstring). ``key`` must name everything the result depends on."""
        return self._memo.get(key, make)

    @cached_property
    def _below(self) -> np.ndarray:
        """(A, Q, U) uint32 ``rank - 1`` (unranked: the largest uint32), so a depth cut is one compare."""
        return (self.ranks.astype(np.int64) - 1).astype(np.uint32)

    def arm(self, config: FusionConfig, j: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(ranks, scores, votes) of the config's ``j``-th arm, cut to its depth: a rank
        beyond the depth is 0 and its score 0.0."""
        a = self.arms.index(config.arms[j])
        r = self.ranks[a]
        votes = (r > 0) & (r <= int(config.depths[j]))
        return np.where(votes, r, 0), np.where(votes, self.scores[a], 0.0), votes

    def voted(self, config: FusionConfig, j: int) -> np.ndarray:
        """(Q, U) bool: the config's ``j``-th arm ranks the candidate within its depth."""
        out: np.ndarray = self._below[self.arms.index(config.arms[j])] < min(int(config.depths[j]), 2**32 - 1)
        return out

    def votes(self, config: FusionConfig) -> np.ndarray:
        """(Q, U) bool: some arm of the config voted for the candidate."""
        out = self.voted(config, 0) if config.arms else np.zeros(self.shape, bool)
        for j in range(1, len(config.arms)):
            out |= self.voted(config, j)
        return out

    def listed(self, config: FusionConfig, j: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(ranks, scores, votes) of the config's ``j``-th arm on its lists ((Q, L + 1), rank
        order, column 0 = not ranked), cut to its depth as :meth:`arm` cuts the planes."""
        lst = self.lists[self.arms.index(config.arms[j])]
        votes = (lst.ranks > 0) & (lst.ranks <= int(config.depths[j]))
        return np.where(votes, lst.ranks, 0), np.where(votes, lst.scores, 0.0), votes

    def spread(self, config: FusionConfig, j: int, values: np.ndarray) -> np.ndarray:
        """(Q, U) plane of list values (Q, L + 1) of the config's ``j``-th arm: a candidate
        gets the value at its place in the arm's list, an unranked one the value in column 0
        (give 0 there, and beyond the depth, for "the arm did not vote")."""
        return np.take(values, self.lists[self.arms.index(config.arms[j])].slot)

    def cut_at(self, config: FusionConfig, rows: np.ndarray, cols: np.ndarray, *,
               lengths: bool = True) -> tuple[np.ndarray, np.ndarray]:
        """(ranks (A, R, C), lengths (A, R, 1)): the cut ranks of candidate columns ``cols``
        (R, C; or (1, U) for every column) of questions ``rows`` (R,) by the config's arms,
        and each arm's list length (within its depth) in those questions (zeros when
        ``lengths`` is False: not needed)."""
        idx = [self.arms.index(a) for a in config.arms]
        depths = np.asarray(config.depths, np.int64)
        r = np.stack([self.ranks[a][rows[:, None], cols] for a in idx])
        ranks = np.where((r > 0) & (r <= depths[:, None, None]), r, 0)
        if not lengths:
            return ranks, np.zeros((len(idx), len(rows), 1), np.int64)
        n = np.stack([((self.lists[a].ranks[rows] > 0) & (self.lists[a].ranks[rows] <= d))
                      .sum(axis=1, keepdims=True) for a, d in zip(idx, config.depths, strict=True)])
        return ranks, n

    def row_ranks(self, config: FusionConfig, q: int) -> np.ndarray:
        """(U, A) ranks of question ``q``'s candidates by the config's arms, cut to their depths."""
        r = self.ranks[[self.arms.index(a) for a in config.arms], q, :]
        return np.where((r > 0) & (r <= np.asarray(config.depths, np.int64)[:, None]), r, 0).T
