"""The fusion contract, probed where a method enters a run: its ceiling reached, its weights counted.

A fusion method declares its ceiling (:meth:`~rulegauge.fusion.method.FusionMethod.ceiling`: the
largest fused score a chunk can get, or None) and whether per-arm weights count
(:attr:`~rulegauge.fusion.method.FusionMethod.takes_weights`). Before a run writes anything,
:func:`check_configs` probes every config of the grid (built-in and plug-in methods alike) on
planes of its own, one question and two candidates, through the same door the run's scores
take (:func:`~rulegauge.fusion.method.fused_scores`: shape, finite, at most the ceiling):

* **the ceiling is reached** (:func:`ceiling_problem`): a chunk ranked first by every arm of the
  config (arm score 1.0; a second chunk ranked second with score 0.0, so every normalisation
  puts the first at its top) scores the declared ceiling, to
  :data:`~rulegauge.fusion.method.CEILING_TOL` of it. A ceiling above every reachable score (10x:
  ``top_score_ratio`` 0.825 -> 0.082) or below the scores is refused;
* **weights count** (:func:`weights_problem`): two chunks, each ranked first by one of two arms
  of the config (scores 1.0 and 0.5; any further arm ranks neither), change places when those
  two arms' weights, 3 and 1, are swapped. A method declaring ``takes_weights = False`` is not
  probed; instead a config giving it a weight other than 1 is refused.

Each probe is one ``fuse`` of a (1, 2) plane (each distinct probe once per call), so a grid of
thousands of configs is probed in well under a second; at run time ``fused_scores`` keeps every
score an arm voted for at or below the ceiling. The problems of every config are collected and
raised together (:class:`~rulegauge.fusion.method.FusionContractError`, exit 2), each naming the
method, its package and the config. The conformance suite :mod:`rulegauge.testing.fusion` runs
the same probes.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable

import numpy as np

from rulegauge.core.component import component
from rulegauge.fusion.method import (
    CEILING_TOL,
    FUSION_METHODS,
    FusionContractError,
    FusionMethod,
    contract_head,
    declared_ceiling,
    fused_scores,
)
from rulegauge.fusion.planes import Planes
from rulegauge.fusion.records import FusionConfig

PROBE_WEIGHTS = (3.0, 1.0)
"""The weights the weight probe gives the config's first two arms, then swaps."""


class Probes:
    """The probes' planes per arm layout, built once and shared by the configs probed on them
    (as a run's configs share its planes: :meth:`~rulegauge.fusion.planes.Planes.memo`)."""

    def __init__(self) -> None:
        self._planes: dict[tuple[str, tuple[str, ...]], Planes] = {}

    def top(self, arms: tuple[str, ...]) -> Planes:
        """Every arm ranks chunk x first (score 1.0) and chunk y second (score 0.0)."""
        key = ("top", arms)
        if key not in self._planes:
            self._planes[key] = probe_planes(arms, [(1, 2)] * len(arms), [(1.0, 0.0)] * len(arms))
        return self._planes[key]

    def crossed(self, arms: tuple[str, ...]) -> Planes:
        """The first arm ranks x first, the second y (scores 1.0 and 0.5); the others neither."""
        key = ("crossed", arms)
        if key not in self._planes:
            self._planes[key] = probe_planes(arms, [(1, 2), (2, 1)], [(1.0, 0.5), (0.5, 1.0)])
        return self._planes[key]


def probe_planes(arms: tuple[str, ...], ranks: list[tuple[int, int]], scores: list[tuple[float, float]]) -> Planes:
    """Planes of one question (``entry-probe``) and two candidates: arm ``a`` ranks them ``ranks[a]``
    with ``scores[a]`` (rank 0: not ranked, score 0.0); arms past the lists rank neither."""
    n = len(arms)
    r = np.zeros((n, 1, 2), np.int32)
    s = np.zeros((n, 1, 2), np.float64)
    for a, (pair, vals) in enumerate(zip(ranks, scores, strict=False)):
        r[a, 0] = pair
        s[a, 0] = vals
    return Planes(arms, r, s, tuple(int(x) for x in r.max(axis=(1, 2))), ("entry-probe",))


def _deep(config: FusionConfig) -> FusionConfig:
    """``config`` with every depth at least 2 (the probes' second chunk votes)."""
    return dataclasses.replace(config, depths=tuple(max(2, int(d)) for d in config.depths))


def ceiling_problem(method: FusionMethod, config: FusionConfig, probes: Probes | None = None) -> str | None:
    """Why a chunk ranked first by every arm of ``config`` does not score its declared ceiling
    (module docstring); None when it does or the method declares none."""
    ceiling = declared_ceiling(method, config)
    if ceiling is None or not config.arms:
        return None
    probe = _deep(config)
    top = float(fused_scores(method, (probes or Probes()).top(probe.arms), probe)[0, 0])
    if abs(top - ceiling) <= abs(ceiling) * CEILING_TOL:
        return None
    return (f"a chunk ranked first by every arm scores {top!r}, not the declared ceiling {ceiling!r}: "
            "the ceiling is the largest score a chunk can get, and that chunk gets it")


def weights_problem(method: FusionMethod, config: FusionConfig, probes: Probes | None = None) -> str | None:
    """Why swapping two arms' weights leaves the fused order of the weight probe as it was (module
    docstring); None when it changes, or the config has fewer than two arms."""
    if len(config.arms) < 2:
        return None
    probe = _deep(config)
    planes = (probes or Probes()).crossed(probe.arms)
    order = []
    for first, second in (PROBE_WEIGHTS, PROBE_WEIGHTS[::-1]):
        weights = (first, second, *(1.0,) * (len(probe.arms) - 2))
        s = fused_scores(method, planes, dataclasses.replace(probe, weights=weights))[0]
        order.append(int(np.sign(s[0] - s[1])))
    if order[0] != order[1]:
        return None
    a, b = probe.arms[:2]
    return (f"its fused order does not change with the weights: chunk x (first by {a}) and chunk y (first by "
            f"{b}) keep their order when weights {a}={PROBE_WEIGHTS[0]:g}, {b}={PROBE_WEIGHTS[1]:g} are swapped; "
            "a method that takes no weights declares takes_weights = False")


def weights_refused(method: FusionMethod, config: FusionConfig) -> str | None:
    """Why ``config`` may not give weights (its method declares ``takes_weights = False``)."""
    if getattr(method, "takes_weights", True):
        return None
    given = [f"{a}={w:g}" for a, w in zip(config.arms, config.weights, strict=True) if w != 1.0]
    if not given:
        return None
    return (f"config {config.name}: {component('fusion method', 'rulegauge.fusion', config.method)} takes no weights "
            f"(it declares takes_weights = False); remove the weights {', '.join(given)}")


def config_problems(method: FusionMethod, config: FusionConfig, probes: Probes | None = None) -> list[str]:
    """Every broken probe of one config (module docstring), each message whole."""
    refused = weights_refused(method, config)
    if refused:
        return [refused]
    probes = probes or Probes()
    found = [ceiling_problem(method, config, probes)]
    if getattr(method, "takes_weights", True):
        found.append(weights_problem(method, config, probes))
    return [f"{contract_head(config)}: {p}" for p in found if p]


def _probe_key(config: FusionConfig) -> tuple[object, ...]:
    """What a probe of ``config`` depends on: all but its names (arm names included)."""
    return (config.method, repr(config.k), config.options, config.weights,
            tuple(max(2, int(d)) for d in config.depths))


SHOWN = 3
"""Problems named per method; the rest are counted."""


def check_configs(configs: Iterable[FusionConfig]) -> None:
    """Probe every config's method (module docstring); raise every problem together (the first
    :data:`SHOWN` of each method, then how many more)."""
    found: dict[str, list[str]] = {}
    seen: set[tuple[object, ...]] = set()
    probes = Probes()
    for c in configs:
        key = _probe_key(c)
        if key in seen:
            continue
        seen.add(key)
        try:
            problems = config_problems(FUSION_METHODS.get(c.method), c, probes)
        except FusionContractError as exc:  # a probe's scores broke the contract (NaN, shape, above)
            problems = [str(exc)]
        found.setdefault(c.method, []).extend(problems)
    lines = []
    for method, problems in found.items():
        lines += problems[:SHOWN]
        if len(problems) > SHOWN:
            lines.append(f"... and {len(problems) - SHOWN} more configs of fusion method {method!r}")
    if lines:
        raise FusionContractError("\n".join(lines))
