"""The fusion-method interface and its registry (:data:`FUSION_METHODS`).

A fusion method is an object that declares its keyword parameters (like
ir_measures' measures: ``Param`` records with a type, choices and a default),
computes fused scores of a config from the arms' ranks and scores, decides the
fused order exactly and names its ceiling (``None``: the method has none).

Scores are computed on dense planes (:class:`rulegauge.fusion.planes.Planes`, importable
from here too): ``ranks[a, q, u]`` is the rank arm ``a`` gave candidate ``u`` of
question ``q`` (0 = not ranked), ``scores[a, q, u]`` the arm's own score there (0.0
where not ranked). Candidates of a question are laid out in chunk-id order, so
"column ascending" is "chunk id ascending".

Exactness, per method (``rank_based``):

* rank-based methods (RRF, Borda, ISR) have rational scores; the order is decided
  on those rationals (:mod:`rulegauge.fusion.exact`), ties by chunk id;
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

from rulegauge.core import plugins
from rulegauge.core.component import component
from rulegauge.core.errors import RulegaugeError
from rulegauge.core.registry import Registry, shown
from rulegauge.fusion.planes import Planes

if TYPE_CHECKING:
    from rulegauge.fusion.records import FusionConfig


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


class FusionMethod:
    """Base of every fusion method. Subclasses set the class attributes and
    implement :meth:`fuse`; rank-based ones also :meth:`exact_score`."""

    name: str = ""
    description: str = ""
    source: str = ""
    params: tuple[Param, ...] = ()
    rank_based: bool = True
    takes_k: bool = False  # the RRF constant k (kept as FusionConfig.k)
    takes_weights: bool = True  # per-arm weights change the fused order (False: a weight is refused)
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
        (rank-based methods; :mod:`rulegauge.fusion.order`). Default: the sorted multiset of
        (weight class, rank) of the voting arms."""
        span = int(ranks.max(initial=0)) + 1
        wclass = {w: i + 1 for i, w in enumerate(sorted(set(config.weights)))}
        return np.sort(np.stack([np.where(ranks[j] > 0, wclass[w] * span + ranks[j], 0).astype(np.int64)
                                 for j, w in enumerate(config.weights)]), axis=0)

    codes_need_lengths = False  # tie_codes reads the arms' list lengths (Borda)

    def exact_score(self, ranks: Sequence[int], config: FusionConfig, context: Any) -> Any:
        """Exact (rational) score of one candidate from its per-arm ranks (rank-based
        methods only); ``context`` is what :meth:`exact_context` gave for its question."""
        raise NotImplementedError

    def exact_context(self, planes: Planes, config: FusionConfig, q: int) -> Any:
        """Per-question facts :meth:`exact_score` needs (e.g. list lengths)."""
        return None

    def ranx_equivalent(self, config: FusionConfig) -> tuple[str | None, str, dict[str, Any]] | None:
        """``(norm, method, params)`` of ``ranx.fuse`` computing the same fused scores for
        ``config`` (the conformance suite's parity check, :mod:`rulegauge.testing.fusion`), or
        None where ranx has no such method (the default)."""
        return None

    def option(self, config: FusionConfig, name: str) -> Any:
        """A parameter's value in ``config`` (its default when the config omits it)."""
        for p in self.params:
            if p.name == name:
                return dict(config.options).get(name, p.default)
        raise KeyError(f"{self.name} has no parameter {name!r}")


def _fusion_method(obj: Any) -> str | None:
    """A :class:`FusionMethod` instance, or subclass (what an entry point names), that
    implements :meth:`~FusionMethod.fuse`; else why not (``core/registry`` ``accepts``)."""
    cls = obj if isinstance(obj, type) else type(obj)
    if not issubclass(cls, FusionMethod):
        return f"{shown(obj)} is not a FusionMethod (docs/fusion.md)"
    if cls.fuse is FusionMethod.fuse:
        return f"{shown(obj)} does not implement fuse (docs/fusion.md)"
    return None


FUSION_METHODS: Registry[FusionMethod] = Registry("fusion method", group="rulegauge.fusion", door=plugins.DOOR,
                                                  accepts=_fusion_method)
__all__ = ["FUSION_METHODS", "FusionContractError", "FusionMethod", "Param", "Planes", "config_ceiling",
           "contract_head", "declared_ceiling", "fused_scores", "method_of", "register", "weights_of"]


class FusionContractError(RulegaugeError):
    """A fusion method's scores break the contract (:func:`fused_scores`); names method, config, question."""


CEILING_TOL = 1e-12
"""Relative slack of the ceiling checks: float sums of one value in another order differ in
the last bits (a method's ``fuse`` and its ``ceiling``), never by 1e-12 of the value."""


def contract_head(config: FusionConfig) -> str:
    """``fusion method 'NAME' (rulegauge.fusion, from PACKAGE) broke the fusion contract ...``"""
    return (f"{component('fusion method', 'rulegauge.fusion', config.method)} broke the fusion contract "
            f"(docs/plugins.md): config {config.name}")


def declared_ceiling(method: FusionMethod, config: FusionConfig) -> float | None:
    """``method.ceiling(config)`` (guarded as ``fuse`` is), checked: None or a finite real number."""
    declare = getattr(method, "ceiling", None)  # a stand-in with fuse alone (tests) declares none
    with plugins.guarded("rulegauge.fusion", config.method, f"declaring the ceiling of config {config.name}"):
        c = declare(config) if declare is not None else None
    if c is None:
        return None
    if isinstance(c, bool) or not isinstance(c, int | float | np.integer | np.floating) or not np.isfinite(c):
        raise FusionContractError(f"{contract_head(config)}: ceiling returned {shown(c)}, not None or a "
                                  "finite real number")
    return float(c)


def fused_scores(method: FusionMethod, planes: Planes, config: FusionConfig) -> np.ndarray:
    """``method.fuse(planes, config)``, checked where the scores enter a run: a (Q, U) array of
    real numbers (``planes.shape``, read as float64), finite wherever an arm of the config
    voted (values elsewhere are ignored, so anything goes there), and never above the declared
    ceiling there (:data:`CEILING_TOL`). A plug-in's exception is a
    :class:`~rulegauge.core.plugins.PluginFailed`, a broken result a :class:`FusionContractError`
    naming the method, its package, the config and the first question (exit 2, never stored)."""
    with plugins.guarded("rulegauge.fusion", config.method, f"fusing config {config.name}"):
        out = method.fuse(planes, config)
    head = contract_head(config)
    want = f"a {planes.shape} array of real numbers (questions, candidates)"
    if not isinstance(out, np.ndarray) or out.dtype.kind not in "iuf":
        raise FusionContractError(f"{head}: fuse returned {shown(out)}, not {want}")
    if out.shape != planes.shape:
        raise FusionContractError(f"{head}: fuse returned shape {out.shape}, not {want}")
    out = out.astype(np.float64, copy=False)
    finite = bool(np.isfinite(out).all())
    if not finite:
        bad = ~np.isfinite(out) & planes.votes(config)
        if bad.any():
            q, u = (int(i[0]) for i in np.nonzero(bad))
            raise FusionContractError(f"{head}, question {planes.question(q)}: fused score {float(out[q, u])!r} "
                                      f"for a candidate an arm voted for (column {u}); scores must be finite")
    ceiling = declared_ceiling(method, config)
    if ceiling is not None and out.size:
        limit = ceiling + abs(ceiling) * CEILING_TOL
        top = float(out.max()) if finite else float(np.where(np.isfinite(out), out, -np.inf).max())
        if top > limit:  # rare: only then find where (a cell no arm voted for may hold anything)
            above = (out > limit) & np.isfinite(out) & planes.votes(config)
            if above.any():
                q, u = (int(i[0]) for i in np.nonzero(above))
                raise FusionContractError(f"{head}, question {planes.question(q)}: fused score {float(out[q, u])!r} "
                                          f"exceeds the declared ceiling {ceiling!r} (column {u})")
    return out


def register(cls: type[FusionMethod]) -> type[FusionMethod]:
    """Class decorator: register one instance of a method under its ``name``."""
    FUSION_METHODS.add(cls.name, cls())
    return cls


def method_of(config: FusionConfig) -> FusionMethod:
    return FUSION_METHODS.get(config.method)


def weights_of(config: FusionConfig) -> np.ndarray:
    return np.asarray(config.weights, np.float64)


def config_ceiling(config: FusionConfig) -> float:
    """The ceiling of ``config`` under its method (RRF: sum over the config's arms of
    w_a / (k + 1), every arm votes rank 1); NaN for a method without a ceiling."""
    c = declared_ceiling(FUSION_METHODS.get(config.method), config)
    return float("nan") if c is None else c
