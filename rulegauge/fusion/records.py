"""Fusion config records: one named config (:class:`FusionConfig`), a parsed config
file (:class:`RunConfig`) and the canonical config id (:func:`config_id`).

Config ids are built from the parameters, so the same parameters always give the
same id: ``rrf_k60_bm25+dense+boost``, ``rrf_k60_bm25+dense_w-dense0.5_d-dense20``
(RRF: method, k, arms, weights, depths), and for the other methods the method,
its choice parameters' tags, then weights and depths, then the arms:
``hybrid_minmax_arith_w-dense0.7_bm25+dense``, ``borda_bm25+dense+boost``.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from dataclasses import dataclass, field
from typing import Any

from rulegauge.core.errors import ConfigError


@dataclass(frozen=True)
class FusionConfig:
    """One fusion config. ``weights`` and ``depths`` align with ``arms``; ``k`` is
    RRF's constant (NaN for methods without one); ``options`` holds the method's
    other parameters as sorted ``(name, value)`` pairs (e.g. ``norm``, ``mean``)."""

    config_id: str
    name: str
    kind: str  # "grid" or "arm"
    method: str
    k: float
    arms: tuple[str, ...]
    weights: tuple[float, ...]
    depths: tuple[int, ...]
    options: tuple[tuple[str, Any], ...] = ()

    def params(self) -> dict[str, Any]:
        out: dict[str, Any] = {"method": self.method, "k": self.k, "arms": list(self.arms),
                               "weights": list(self.weights), "depths": list(self.depths)}
        out.update(dict(self.options))
        return out


@dataclass(frozen=True)
class RunConfig:
    """A parsed config file: arm parameters and the expanded fusion configs."""

    path: str
    sha256: str
    arm_params: dict[str, dict[str, Any]] = field(hash=False)
    configs: tuple[FusionConfig, ...]
    raw: dict[str, Any] = field(hash=False, compare=False)
    notes: tuple[str, ...] = field(default=(), compare=False)

    @property
    def arm_names(self) -> tuple[str, ...]:
        """Every arm used by any config, in first-use order."""
        seen: dict[str, None] = {}
        for c in self.configs:
            for a in c.arms:
                seen.setdefault(a, None)
        return tuple(seen)

    def depth_for(self, arm: str) -> int:
        """The deepest cutoff any config asks of ``arm``: how deep the arm searches."""
        return max(d for c in self.configs for a, d in zip(c.arms, c.depths, strict=True) if a == arm)

    def with_arm_params(self, overrides: dict[str, dict[str, Any]]) -> RunConfig:
        """A copy with arm parameters overridden (recorded in the hash, so a resumed
        run with other parameters is refused)."""
        params = {a: dict(p) for a, p in self.arm_params.items()}
        for a, p in overrides.items():
            params.setdefault(a, {}).update(p)
        digest = hashlib.sha256((self.sha256 + json.dumps(overrides, sort_keys=True, default=str))
                                .encode()).hexdigest()
        return dataclasses.replace(self, arm_params=params, sha256=digest)

    def get(self, config_id: str) -> FusionConfig:
        for c in self.configs:
            if c.config_id == config_id:
                return c
        raise ConfigError(f"unknown config {config_id!r}; choose one of: "
                          + ", ".join(c.config_id for c in self.configs))


def _fmt(x: float) -> str:
    return f"{x:g}"


def config_id(method: str, k: float, arms: tuple[str, ...], weights: tuple[float, ...],
              depths: tuple[int, ...], default_depth: int, tags: tuple[str, ...] = ()) -> str:
    """The canonical id (module docstring); ``tags`` are the method's parameter tags
    (RRF: none, its ``k`` is written as ``k60``)."""
    w = [f"{a}{_fmt(x)}" for a, x in zip(arms, weights, strict=True) if x != 1.0]
    d = [f"{a}{n}" for a, n in zip(arms, depths, strict=True) if n != default_depth]
    extra = (["w-" + "-".join(w)] if w else []) + (["d-" + "-".join(d)] if d else [])
    if method == "rrf":
        return "_".join([method, f"k{_fmt(k)}", "+".join(arms), *extra])
    return "_".join([method, *tags, *extra, "+".join(arms)])


BASE_PARAMS = ("method", "k", "arms", "weights", "depths")


def config_from_params(config_id: str, name: str, kind: str, params: dict[str, Any]) -> FusionConfig:
    """A config rebuilt from the ``params`` JSON of a run's ``configs`` table: the method's
    own parameters (``norm``, ``mean``) are every key beyond :data:`BASE_PARAMS`."""
    k = params.get("k")
    return FusionConfig(config_id, name, kind, str(params.get("method", "rrf")),
                        float("nan") if k is None else float(k), tuple(str(a) for a in params["arms"]),
                        tuple(float(w) for w in params["weights"]), tuple(int(d) for d in params["depths"]),
                        tuple(sorted((key, v) for key, v in params.items() if key not in BASE_PARAMS)))
