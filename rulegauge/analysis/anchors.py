"""A config's score anchors, read from a run's ``configs`` row: RRF's arms/(k+1) anchors,
or another fusion method's ceiling (or none) and what its score axis means."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, replace

import numpy as np
import pandas as pd

from rulegauge.fusion.method import FUSION_METHODS
from rulegauge.fusion.records import BASE_PARAMS, FusionConfig, config_from_params


@dataclass(frozen=True)
class Anchors:
    """Arithmetic anchors of one config; ``vote_tops[m-1]`` is the highest score
    ``m`` voting arms can give (the ``m`` largest weights' #1 votes)."""

    k: float
    arms: tuple[str, ...]
    weights: tuple[float, ...]
    vote_tops: tuple[float, ...]  # RRF only; () for every other fusion method
    method: str = "rrf"
    axis: str = ""  # what the score axis means (the method's ``score_axis``)
    top: float = math.nan  # the ceiling of a method other than RRF (NaN: it has none)

    @property
    def one_arm_top(self) -> float:
        return self.vote_tops[0] if self.vote_tops else math.nan

    @property
    def two_arm_top(self) -> float:
        """NaN for a one-arm config (no second vote exists) and for methods other than RRF."""
        return self.vote_tops[1] if len(self.vote_tops) > 1 else math.nan

    @property
    def ceiling(self) -> float:
        return self.vote_tops[-1] if self.vote_tops else self.top

    @property
    def has_ceiling(self) -> bool:
        return not math.isnan(self.ceiling)


def anchors(k: float, arms: tuple[str, ...], weights: tuple[float, ...]) -> Anchors:
    """Anchors of a config from its weights and ``k``; e.g. three weight-1 arms at
    k=60 give ``(1/61, 2/61, 3/61)``."""
    if len(arms) != len(weights) or not arms:
        raise ValueError(f"arms {arms} and weights {weights} must be non-empty and equal in length")
    cumulative = np.cumsum(sorted((float(w) for w in weights), reverse=True))
    tops = tuple(float(c) / (float(k) + 1.0) for c in cumulative)
    return Anchors(float(k), tuple(arms), tuple(float(w) for w in weights), tops)


def config_anchors(row: pd.Series) -> Anchors:
    """RRF: the arms/(k+1) anchors; any other method: its ceiling (or none) and score axis."""
    cfg = config_of(row)
    method = FUSION_METHODS.get(cfg.method)
    if cfg.method != "rrf":
        if not cfg.arms or len(cfg.arms) != len(cfg.weights):
            raise ValueError(f"arms {cfg.arms} and weights {cfg.weights} must be non-empty and equal in length")
        top = method.ceiling(cfg)
        return Anchors(cfg.k, cfg.arms, cfg.weights, (), cfg.method, method.score_axis(cfg),
                       math.nan if top is None else top)
    a = anchors(float(row["k"]), tuple(str(x) for x in row["arms"]), tuple(float(w) for w in row["weights"]))
    return replace(a, axis=method.score_axis(cfg))


def config_of(row: pd.Series) -> FusionConfig:
    params = json.loads(str(row["params"])) if "params" in row and isinstance(row["params"], str) else {}
    params = {"method": str(row.get("method", "rrf")), "k": row.get("k"), "arms": list(row["arms"]),
              "weights": list(row["weights"]),
              "depths": list(row["depths"]) if "depths" in row else [2**31 - 1] * len(row["arms"])} | {
        key: v for key, v in params.items() if key not in BASE_PARAMS}
    k = params["k"]
    params["k"] = None if k is None or (isinstance(k, float) and math.isnan(k)) else float(k)
    return config_from_params(str(row["config_id"]), str(row.get("name", row["config_id"])),
                              str(row.get("kind", "grid")), params)
