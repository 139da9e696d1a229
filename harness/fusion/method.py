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
class Planes:
    """The run's arms as dense (arms, questions, candidates) planes (module docstring).

    ``ranks`` are the stored ranks (0 = unranked), not yet cut to a config's depths;
    :meth:`arm` gives one arm of a config cut to its depth."""

    arms: tuple[str, ...]
    ranks: np.ndarray  # (A, Q, U) int32; 0 = unranked or padding
    scores: np.ndarray  # (A, Q, U) float64; 0.0 where unranked
    max_rank: tuple[int, ...]  # per arm, the largest stored rank

    @property
    def shape(self) -> tuple[int, int]:
        return (int(self.ranks.shape[1]), int(self.ranks.shape[2]))

    def arm(self, config: FusionConfig, j: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(ranks, scores, votes) of the config's ``j``-th arm, cut to its depth: a rank
        beyond the depth is 0 and its score 0.0."""
        a = self.arms.index(config.arms[j])
        r = self.ranks[a]
        votes = (r > 0) & (r <= int(config.depths[j]))
        return np.where(votes, r, 0), np.where(votes, self.scores[a], 0.0), votes

    def votes(self, config: FusionConfig) -> np.ndarray:
        """(Q, U) bool: some arm of the config voted for the candidate."""
        out = np.zeros(self.shape, bool)
        for j, arm in enumerate(config.arms):
            r = self.ranks[self.arms.index(arm)]
            out |= (r > 0) & (r <= int(config.depths[j]))
        return out


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

    def term_codes(self, planes: Planes, config: FusionConfig) -> np.ndarray:
        """(A, Q, U) int64 codes of each arm's term: two candidates of one question whose
        multisets of codes are equal have equal exact scores (rank-based methods). Default:
        (weight class, rank) of a voting arm, 0 for an arm that did not vote."""
        nq, u = planes.shape
        span = 2 * u + 3
        wclass = {w: i + 1 for i, w in enumerate(sorted(set(config.weights)))}
        out = np.zeros((len(config.arms), nq, u), np.int64)
        for j, w in enumerate(config.weights):
            r, _, votes = planes.arm(config, j)
            out[j] = np.where(votes, wclass[w] * span + r, 0)
        return out

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
