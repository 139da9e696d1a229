"""Fusion config files: a grid of k values, arm subsets, weights and depths,
expanded into named configs with stable ids.

File format (TOML)::

    [defaults]
    k = 60          # RRF k
    depth = 100     # per-arm depth cutoff (ranks beyond it do not vote)

    [arms.bm25]     # arm parameters, passed to the arm's constructor
    k1 = 1.5

    [grid]
    method = "rrf"
    k = [20, 60]
    arms = [["bm25", "dense", "boost"], ["bm25", "dense"]]
    weights = [{}, {boost = 0.5}]      # per-arm overrides; unspecified arms weigh 1
    depths = [{}, {dense = 20}]        # per-arm overrides of defaults.depth

    [[configs]]                        # optional explicit configs
    name = "prod"
    k = 60
    arms = ["bm25", "dense", "boost"]

The grid is the Cartesian product k x arms x weights x depths. Each arm of the
run is also scored alone as config ``arm-<name>`` (k from defaults, weight 1).

Config ids are canonical strings built from the parameters, e.g.
``rrf_k60_bm25+dense+boost`` or ``rrf_k60_bm25+dense_w-dense0.5_d-dense20``:
the same parameters always give the same id.
"""

from __future__ import annotations

import dataclasses
import hashlib
import itertools
import json
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness.core.errors import ConfigError, Problem, ValidationError

DEFAULT_CONFIG = Path(__file__).resolve().parents[1] / "data" / "default-grid.toml"


@dataclass(frozen=True)
class FusionConfig:
    """One fusion config. ``weights`` and ``depths`` align with ``arms``."""

    config_id: str
    name: str
    kind: str  # "grid" or "arm"
    method: str
    k: float
    arms: tuple[str, ...]
    weights: tuple[float, ...]
    depths: tuple[int, ...]

    @property
    def ceiling(self) -> float:
        """sum over the config's arms of w_a / (k + 1): every arm votes rank 1."""
        return sum(w / (self.k + 1) for w in self.weights)

    def params(self) -> dict[str, Any]:
        return {"method": self.method, "k": self.k, "arms": list(self.arms),
                "weights": list(self.weights), "depths": list(self.depths)}


@dataclass(frozen=True)
class RunConfig:
    """A parsed config file: arm parameters and the expanded fusion configs."""

    path: str
    sha256: str
    arm_params: dict[str, dict[str, Any]] = field(hash=False)
    configs: tuple[FusionConfig, ...]
    raw: dict[str, Any] = field(hash=False, compare=False)

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
              depths: tuple[int, ...], default_depth: int) -> str:
    parts = [method, f"k{_fmt(k)}", "+".join(arms)]
    w = [f"{a}{_fmt(x)}" for a, x in zip(arms, weights, strict=True) if x != 1.0]
    d = [f"{a}{n}" for a, n in zip(arms, depths, strict=True) if n != default_depth]
    if w:
        parts.append("w-" + "-".join(w))
    if d:
        parts.append("d-" + "-".join(d))
    return "_".join(parts)


def load_config(path: Path | None = None, known_arms: list[str] | None = None,
                known_methods: list[str] | None = None) -> RunConfig:
    """Parse and expand a config file; every problem is reported at once."""
    p = Path(path) if path is not None else DEFAULT_CONFIG
    try:
        data = p.read_bytes()
    except OSError as exc:
        raise ConfigError(f"{p}: cannot read config file ({exc.strerror})") from exc
    try:
        raw = tomllib.loads(data.decode("utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{p}: not valid TOML ({exc})") from exc
    return expand(raw, str(p), hashlib.sha256(data).hexdigest(), known_arms, known_methods)


def expand(raw: dict[str, Any], where: str = "<config>", sha256: str = "",
           known_arms: list[str] | None = None, known_methods: list[str] | None = None) -> RunConfig:
    """Expand a parsed config mapping into a :class:`RunConfig`."""
    problems: list[Problem] = []
    defaults = raw.get("defaults", {})
    dk = float(defaults.get("k", 60))
    dd = int(defaults.get("depth", 100))
    if dk <= 0:
        problems.append(Problem(f"{where}: defaults.k", f"k must be > 0, got {dk}"))
    if dd < 1:
        problems.append(Problem(f"{where}: defaults.depth", f"depth must be >= 1, got {dd}"))
    arm_params = {str(a): dict(v) for a, v in raw.get("arms", {}).items()}

    specs: list[tuple[str | None, str, float, tuple[str, ...], dict[str, Any], dict[str, Any]]] = []
    grid = raw.get("grid")
    if grid is not None:
        method = str(grid.get("method", "rrf"))
        ks = grid.get("k", [dk])
        arm_sets = grid.get("arms", [])
        weights = grid.get("weights", [{}])
        depths = grid.get("depths", [{}])
        for kk, arms, w, d in itertools.product(ks, arm_sets, weights, depths):
            specs.append((None, method, float(kk), tuple(arms), dict(w), dict(d)))
    for i, c in enumerate(raw.get("configs", [])):
        specs.append((c.get("name"), str(c.get("method", "rrf")), float(c.get("k", dk)),
                      tuple(c.get("arms", ())), dict(c.get("weights", {})), dict(c.get("depths", {}))))
        if not c.get("arms"):
            problems.append(Problem(f"{where}: configs[{i}]", "arms is empty"))
    if not specs:
        problems.append(Problem(where, "no configs: give a [grid] or [[configs]]"))

    configs: list[FusionConfig] = []
    used_arms: dict[str, None] = {}
    for name, method, kk, arms, w, d in specs:
        label = f"{where}: config {name or '+'.join(arms)}"
        if known_methods is not None and method not in known_methods:
            problems.append(Problem(label, f"unknown fusion method {method!r}; choose one of: "
                                    + ", ".join(known_methods)))
        if kk <= 0:
            problems.append(Problem(label, f"k must be > 0, got {kk}"))
        if len(set(arms)) != len(arms) or not arms:
            problems.append(Problem(label, f"arms must be a non-empty list of distinct names: {list(arms)}"))
        for a in list(w) + list(d):
            if a not in arms:
                problems.append(Problem(label, f"weight/depth given for arm {a!r} that the config does not fuse"))
        for a in arms:
            used_arms.setdefault(a, None)
            kind = arm_params.get(a, {}).get("kind", a)
            if known_arms is not None and kind not in known_arms:
                problems.append(Problem(label, f"unknown arm {kind!r}; choose one of: {', '.join(known_arms)}"
                                        " (or name a kind with [arms.NAME] kind = ...)"))
        ws = tuple(float(w.get(a, 1.0)) for a in arms)
        ds = tuple(int(d.get(a, dd)) for a in arms)
        if any(x <= 0 for x in ws):
            problems.append(Problem(label, f"weights must be > 0: {list(ws)}"))
        if any(x < 1 for x in ds):
            problems.append(Problem(label, f"depths must be >= 1: {list(ds)}"))
        cid = config_id(method, kk, arms, ws, ds, dd)
        configs.append(FusionConfig(cid, name or cid, "grid", method, kk, arms, ws, ds))
    for a in used_arms:
        configs.append(FusionConfig(f"arm-{a}", f"arm-{a}", "arm", "rrf", dk, (a,), (1.0,), (dd,)))
    ids = [c.config_id for c in configs]
    for cid in sorted({i for i in ids if ids.count(i) > 1}):
        problems.append(Problem(where, f"duplicate config {cid!r} (same parameters twice)"))
    if problems:
        raise ValidationError(problems, f"{where}: invalid fusion config")
    if not sha256:
        sha256 = hashlib.sha256(json.dumps(raw, sort_keys=True, default=str).encode()).hexdigest()
    return RunConfig(where, sha256, arm_params, tuple(configs), raw)
