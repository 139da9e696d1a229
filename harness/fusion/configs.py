"""Fusion config files: a grid of k values, arm subsets, weights and depths,
expanded into named configs with stable ids.

File format (TOML)::

    metrics = ["recall@5", "nDCG@10"]  # optional: what `harness run` computes (docs/metrics.md)

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

The grid is the Cartesian product k x arms x weights x depths. A weight or depth
for an arm that an arm set does not fuse does not apply to that set, so the
product may repeat a config: it is kept once, with a note naming it (as is an
explicit ``[[configs]]`` entry equal to a grid config, which keeps its name).
Each arm of the run is also scored alone as config ``arm-<name>`` (k from
defaults, weight 1).

Strict where it matters: every section and key must be one of the above (an
unknown one is an error naming the allowed ones, so ``weight =`` for ``weights``
is caught); k and weights are finite numbers > 0, depths integers >= 1 (``2.5``
is refused, not truncated); arm parameters must be parameters of the arm's
constructor, of its type (:func:`harness.core.params.check_params`).

Config ids are canonical strings built from the parameters, e.g.
``rrf_k60_bm25+dense+boost`` or ``rrf_k60_bm25+dense_w-dense0.5_d-dense20``:
the same parameters always give the same id.
"""

from __future__ import annotations

import dataclasses
import hashlib
import itertools
import json
import logging
import math
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness.core.errors import ConfigError, Problem, ValidationError
from harness.core.limits import count_problem
from harness.core.names import name_problem

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
                known_methods: list[str] | None = None,
                arm_classes: Mapping[str, Any] | None = None) -> RunConfig:
    """Parse and expand a config file; every problem is reported at once."""
    p = Path(path) if path is not None else DEFAULT_CONFIG
    try:
        data = p.read_bytes()
    except OSError as exc:
        raise ConfigError(f"{p}: cannot read config file ({exc.strerror or exc})") from None
    try:
        raw = tomllib.loads(data.decode("utf-8"))
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise ConfigError(f"{p}:{line}: not valid UTF-8 (byte {exc.start})") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{p}: not valid TOML ({exc})") from None
    return expand(raw, str(p), hashlib.sha256(data).hexdigest(), known_arms, known_methods,
                  arm_classes)


SECTIONS = ("defaults", "arms", "grid", "configs", "metrics")  # metrics: read by the run
DEFAULTS_KEYS = ("k", "depth")
GRID_KEYS = ("method", "k", "arms", "weights", "depths")
CONFIG_KEYS = ("name", "method", "k", "arms", "weights", "depths")


class _Checker:
    """Collects problems while reading typed values out of the parsed TOML."""

    def __init__(self, where: str) -> None:
        self.where = where
        self.problems: list[Problem] = []

    def add(self, at: str, message: str) -> None:
        self.problems.append(Problem(f"{self.where}: {at}", message))

    def keys(self, table: Any, allowed: tuple[str, ...], at: str) -> dict[str, Any]:
        if not isinstance(table, dict):
            self.add(at, f"must be a table, got {table!r}")
            return {}
        for key in table:
            if key not in allowed:
                self.add(at, f"unknown key {key!r}; allowed: {', '.join(allowed)}")
        return table

    def k(self, value: Any, at: str) -> float | None:
        if isinstance(value, bool) or not isinstance(value, int | float):
            self.add(at, f"k must be a number > 0, got {value!r}")
        elif not math.isfinite(value) or value <= 0:
            self.add(at, f"k must be > 0 and finite, got {value!r}")
        else:
            return float(value)
        return None

    def depth(self, value: Any, at: str) -> int | None:
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            self.add(at, f"depth must be an integer >= 1, got {value!r}")
            return None
        problem = count_problem("depth", value)
        if problem:  # an arm searches this deep for every question
            self.add(at, problem)
            return None
        return value

    def weight(self, value: Any, at: str) -> float | None:
        if isinstance(value, bool) or not isinstance(value, int | float):
            self.add(at, f"weight must be a number > 0, got {value!r}")
        elif not math.isfinite(value) or value <= 0:
            self.add(at, f"weight must be > 0 and finite, got {value!r}")
        else:
            return float(value)
        return None

    def per_arm(self, value: Any, at: str, read: Any) -> dict[str, Any]:
        """An ``{arm = value}`` table read with ``read``; bad entries are dropped."""
        if not isinstance(value, dict):
            self.add(at, f"must be a table like {{dense = 0.5}}, got {value!r}")
            return {}
        out = {}
        for arm, x in value.items():
            got = read(x, f"{at}.{arm}")
            if got is not None:
                out[str(arm)] = got
        return out

    def arms(self, value: Any, at: str) -> tuple[str, ...]:
        if (not isinstance(value, list) or not value
                or not all(isinstance(a, str) and a for a in value)):
            self.add(at, f"arms must be a non-empty list of arm names, got {value!r}")
            return ()
        if len(set(value)) != len(value):
            self.add(at, f"arms must be distinct: {value}")
        for a in value:  # an arm name becomes a file name (.partial/arm_ranks-<arm>.parquet)
            problem = name_problem("arm name", a)
            if problem:
                self.add(at, problem)
        return tuple(value)

    def listed(self, value: Any, at: str) -> list[Any]:
        if not isinstance(value, list) or not value:
            self.add(at, f"must be a non-empty list, got {value!r}")
            return []
        return value


_Spec = tuple[str | None, str, float, tuple[str, ...], dict[str, float], dict[str, int], str]


def expand(raw: dict[str, Any], where: str = "<config>", sha256: str = "",
           known_arms: list[str] | None = None, known_methods: list[str] | None = None,
           arm_classes: Mapping[str, Any] | None = None) -> RunConfig:
    """Expand a parsed config mapping into a :class:`RunConfig`.

    Every key is checked (unknown keys and sections are errors naming the allowed
    ones), k and weights must be finite numbers > 0 and depths integers >= 1.
    Grid combinations that give the same config (weights or depths for an arm the
    arm set does not fuse are dropped) are kept once, with a note; so is an
    explicit ``[[configs]]`` entry equal to a grid config (it keeps its name). With
    ``arm_classes`` (kind -> class) arm parameters are checked against the
    class's constructor (:func:`harness.core.params.check_params`).
    """
    from harness.core.params import check_params

    ck = _Checker(where)
    ck.keys(raw, SECTIONS, "top level")
    defaults = ck.keys(raw.get("defaults", {}), DEFAULTS_KEYS, "[defaults]")
    dk = ck.k(defaults.get("k", 60), "defaults.k") or 60.0
    dd = ck.depth(defaults.get("depth", 100), "defaults.depth") or 100
    arms_raw = raw.get("arms", {})
    arm_params: dict[str, dict[str, Any]] = {}
    if not isinstance(arms_raw, dict):
        ck.add("[arms]", "must hold one table per arm, e.g. [arms.bm25]")
    else:
        for a, v in arms_raw.items():
            if not isinstance(v, dict):
                ck.add(f"[arms.{a}]", f"must be a table of parameters, got {v!r}")
                continue
            arm_params[str(a)] = dict(v)
            kind = str(v.get("kind", a))
            if arm_classes is not None and kind in arm_classes:
                for msg in check_params(arm_classes[kind], v, f"arm {a}", skip=("kind",)):
                    ck.add(f"[arms.{a}]", msg)

    specs: list[_Spec] = []
    grid = raw.get("grid")
    if grid is not None:
        grid = ck.keys(grid, GRID_KEYS, "[grid]")
        method = grid.get("method", "rrf")
        if not isinstance(method, str):
            ck.add("grid.method", f"must be a string, got {method!r}")
        ks = [ck.k(x, f"grid.k[{i}]") for i, x in enumerate(ck.listed(grid.get("k", [dk]),
                                                                     "grid.k"))]
        arm_sets = [ck.arms(x, f"grid.arms[{i}]")
                    for i, x in enumerate(ck.listed(grid.get("arms"), "grid.arms"))]
        weights = [ck.per_arm(x, f"grid.weights[{i}]", ck.weight)
                   for i, x in enumerate(ck.listed(grid.get("weights", [{}]), "grid.weights"))]
        depths = [ck.per_arm(x, f"grid.depths[{i}]", ck.depth)
                  for i, x in enumerate(ck.listed(grid.get("depths", [{}]), "grid.depths"))]
        in_any = {a for s in arm_sets for a in s}
        for label, tables in (("weights", weights), ("depths", depths)):
            for i, t in enumerate(tables):
                for a in t:
                    if a not in in_any:
                        ck.add(f"grid.{label}[{i}]", f"arm {a!r} is in no arm set of the grid "
                               f"(arm sets use: {', '.join(sorted(in_any))})")
        for kk, arms, w, d in itertools.product(ks, arm_sets, weights, depths):
            if not arms:
                continue
            kk = dk if kk is None else kk  # a bad k is reported; still check the rest
            # a weight or depth for an arm this set does not fuse does not apply to it
            specs.append((None, str(method), kk, arms, {a: x for a, x in w.items() if a in arms},
                          {a: x for a, x in d.items() if a in arms}, "grid"))
    configs_raw = raw.get("configs", [])
    if not isinstance(configs_raw, list):
        ck.add("[[configs]]", "must be an array of tables ([[configs]])")
        configs_raw = []
    for i, c in enumerate(configs_raw):
        at = f"configs[{i}]"
        c = ck.keys(c, CONFIG_KEYS, at)
        name = c.get("name")
        if name is not None and (not isinstance(name, str) or not name.strip()):
            ck.add(f"{at}.name", f"must be a non-empty string, got {name!r}")
            name = None
        method = c.get("method", "rrf")
        if not isinstance(method, str):
            ck.add(f"{at}.method", f"must be a string, got {method!r}")
        kk = ck.k(c.get("k", dk), f"{at}.k")
        arms = ck.arms(c.get("arms"), f"{at}.arms")
        w = ck.per_arm(c.get("weights", {}), f"{at}.weights", ck.weight)
        d = ck.per_arm(c.get("depths", {}), f"{at}.depths", ck.depth)
        for a in [*w, *d]:
            if arms and a not in arms:
                ck.add(at, f"weight/depth given for arm {a!r} that the config does not fuse "
                       f"({'+'.join(arms)})")
        if arms:
            specs.append((name, str(method), dk if kk is None else kk, arms, w, d, "configs"))
    if not specs and not ck.problems:
        ck.problems.append(Problem(where, "no configs: give a [grid] or [[configs]]"))

    configs: dict[str, FusionConfig] = {}
    origin: dict[str, str] = {}
    merged: dict[str, int] = {}
    notes: list[str] = []
    used_arms: dict[str, None] = {}
    for name, method, kk, arms, w, d, source in specs:
        label = f"config {name or '+'.join(arms)}"
        if known_methods is not None and method not in known_methods:
            ck.add(label, f"unknown fusion method {method!r}; choose one of: "
                   + ", ".join(known_methods))
        for a in arms:
            used_arms.setdefault(a, None)
            kind = arm_params.get(a, {}).get("kind", a)
            if known_arms is not None and kind not in known_arms:
                ck.add(label, f"unknown arm {kind!r}; choose one of: {', '.join(known_arms)}"
                       " (or name a kind with [arms.NAME] kind = ...)")
        ws = tuple(w.get(a, 1.0) for a in arms)
        ds = tuple(d.get(a, dd) for a in arms)
        cid = config_id(method, kk, arms, ws, ds, dd)
        cfg = FusionConfig(cid, name or cid, "grid", method, kk, arms, ws, ds)
        if cid not in configs:
            configs[cid], origin[cid] = cfg, source
        elif source == "grid" and origin[cid] == "grid":
            merged[cid] = merged.get(cid, 1) + 1
        elif {source, origin[cid]} == {"grid", "configs"}:
            if source == "configs":
                configs[cid], origin[cid] = cfg, source
            notes.append(f"{where}: config {configs[cid].name!r} has the same parameters as "
                         f"the grid's {cid}; kept once")
        else:
            ck.add(label, f"duplicate config {cid!r} (same parameters twice)")
    for cid, n in merged.items():
        notes.append(f"{where}: {n} grid combinations give the same config {cid} (weights or "
                     "depths for arms it does not fuse do not apply); kept once")
    out = list(configs.values())
    for a in used_arms:
        out.append(FusionConfig(f"arm-{a}", f"arm-{a}", "arm", "rrf", dk, (a,), (1.0,), (dd,)))
    if ck.problems:
        raise ValidationError(ck.problems, f"{where}: invalid fusion config")
    for note in notes:
        logging.getLogger(__name__).warning("%s", note)
    if not sha256:
        sha256 = hashlib.sha256(json.dumps(raw, sort_keys=True, default=str).encode()).hexdigest()
    return RunConfig(where, sha256, arm_params, tuple(out), raw, tuple(notes))
