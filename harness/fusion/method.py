"""The fusion-method interface and its registry (:data:`FUSION_METHODS`).

A fusion method is an object that declares its keyword parameters (like
ir_measures' measures: ``Param`` records with a type, choices and a default),
computes fused scores of a config from the arms' ranks and scores, decides the
fused order exactly and names its ceiling (``None``: the method has none).

Scores are computed on dense planes (:class:`Planes`): ``ranks[a, q, u]`` is the
rank arm ``a`` gave candidate ``u`` of question ``q`` (0 = not ranked, or ranked
beyond the config's depth for that arm), ``scores[a, q, u]`` the arm's own score
there (0.0 where not ranked). Candidates of a question are laid out in chunk-id
order, so "column ascending" is "chunk id ascending".

Exactness, per method (``rank_based``):

* rank-based methods (RRF, Borda, ISR) have rational scores; the order is decided
  on those rationals (:mod:`harness.fusion.exact`), ties by chunk id;
* score-based methods (CombSUM, CombMNZ, hybrid, relative-score) combine float
  scores; their order is the float64 fused score descending, as computed by the
  method's fixed sequence of numpy operations (the same in every process), exactly
  equal floats tied by chunk id ascending.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING, Any

import numpy as np

from harness.core.registry import Registry

if TYPE_CHECKING:
    from harness.fusion.records import FusionConfig


@dataclass(frozen=True)
class Param:
    """One keyword parameter of a fusion method.

    ``choices`` (strings) make it a choice; otherwise it is a number > 0.
    ``tags`` maps each choice to the short form used in config ids."""

    name: str
    description: str
    choices: tuple[str, ...] = ()
    default: Any = None
    tags: tuple[tuple[str, str], ...] = ()

    def tag(self, value: Any) -> str:
        """Short form of a value in config ids (``min-max`` -> ``minmax``; ``k`` 60 -> ``k60``)."""
        if self.choices:
            return dict(self.tags).get(str(value), str(value).replace("-", ""))
        return f"{self.name}{float(value):g}"


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

    @property
    def shape(self) -> tuple[int, int]:
        return (int(self.ranks.shape[1]), int(self.ranks.shape[2]))

    @cached_property
    def lists(self) -> tuple[ArmList, ...]:
        """Every arm's lists in rank order (:class:`ArmList`), built once."""
        return tuple(ArmList.of(self.ranks[a], self.scores[a]) for a in range(len(self.arms)))

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

    def cut_at(self, config: FusionConfig, rows: np.ndarray, cols: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(ranks (A, R, C), lengths (A, R, 1)): the cut ranks of candidate columns ``cols``
        (R, C; or (1, U) for every column) of questions ``rows`` (R,) by the config's arms,
        and each arm's list length (within its depth) in those questions."""
        idx = [self.arms.index(a) for a in config.arms]
        depths = np.asarray(config.depths, np.int64)
        r = np.stack([self.ranks[a][rows[:, None], cols] for a in idx])
        ranks = np.where((r > 0) & (r <= depths[:, None, None]), r, 0)
        lengths = np.stack([((self.lists[a].ranks[rows] > 0) & (self.lists[a].ranks[rows] <= d))
                            .sum(axis=1, keepdims=True) for a, d in zip(idx, config.depths, strict=True)])
        return ranks, lengths

    def row_ranks(self, config: FusionConfig, q: int) -> np.ndarray:
        """(U, A) ranks of question ``q``'s candidates by the config's arms, cut to their depths."""
        r = self.ranks[[self.arms.index(a) for a in config.arms], q, :]
        return np.where((r > 0) & (r <= np.asarray(config.depths, np.int64)[:, None]), r, 0).T


class FusionMethod:
    """Base of every fusion method. Subclasses set the class attributes and
    implement :meth:`fuse`; rank-based ones also :meth:`exact_score`."""

    name: str = ""
    description: str = ""
    source: str = ""
    params: tuple[Param, ...] = ()
    rank_based: bool = True
    takes_k: bool = False  # the RRF constant k (kept as FusionConfig.k)
    axis: str = ""  # what the fused score is, for bands and reports

    def fuse(self, planes: Planes, config: FusionConfig) -> np.ndarray:
        """(Q, U) float64 fused scores; values where nothing voted are ignored."""
        raise NotImplementedError

    def ceiling(self, config: FusionConfig) -> float | None:
        """The largest fused score a chunk can get, or None when there is none."""
        return None

    def score_axis(self, config: FusionConfig) -> str:
        """What the fused score means, for bands and reports."""
        c = self.ceiling(config)
        what = self.axis or f"{self.name} score"
        return (f"{what}; ceiling {c:.6g}" if c is not None
                else f"{what}; no ceiling (score_ratio is empty, bands on the raw score)")

    def float_exact(self, config: FusionConfig) -> bool:
        """True when the float scores of ``config`` are exact (equal floats are equal
        rationals and distinct floats are ordered right); rank-based methods only."""
        return False

    def tie_codes(self, ranks: np.ndarray, lengths: np.ndarray, config: FusionConfig) -> np.ndarray:
        """(K, R, C) int64 codes of candidates from their cut ranks (``ranks``: (A, R, C), 0 =
        the arm did not vote) and each arm's list length in their question (``lengths``:
        (A, R, 1)): two candidates of one question with equal codes have equal exact scores
        (rank-based methods; :mod:`harness.fusion.order`). Default: the sorted multiset of
        (weight class, rank) of the voting arms."""
        span = int(ranks.max(initial=0)) + 1
        wclass = {w: i + 1 for i, w in enumerate(sorted(set(config.weights)))}
        return np.sort(np.stack([np.where(ranks[j] > 0, wclass[w] * span + ranks[j], 0).astype(np.int64)
                                 for j, w in enumerate(config.weights)]), axis=0)

    def exact_score(self, ranks: Sequence[int], config: FusionConfig, context: Any) -> Any:
        """Exact (rational) score of one candidate from its per-arm ranks (rank-based
        methods only); ``context`` is what :meth:`exact_context` gave for its question."""
        raise NotImplementedError

    def exact_context(self, planes: Planes, config: FusionConfig, q: int) -> Any:
        """Per-question facts :meth:`exact_score` needs (e.g. list lengths)."""
        return None

    def option(self, config: FusionConfig, name: str) -> Any:
        """A parameter's value in ``config`` (its default when the config omits it)."""
        for p in self.params:
            if p.name == name:
                return dict(config.options).get(name, p.default)
        raise KeyError(f"{self.name} has no parameter {name!r}")


FUSION_METHODS: Registry[FusionMethod] = Registry("fusion method")


def register(cls: type[FusionMethod]) -> type[FusionMethod]:
    """Class decorator: register one instance of a method under its ``name``."""
    FUSION_METHODS.add(cls.name, cls())
    return cls


def method_of(config: FusionConfig) -> FusionMethod:
    return FUSION_METHODS.get(config.method)


def weights_of(config: FusionConfig) -> np.ndarray:
    return np.asarray(config.weights, np.float64)
