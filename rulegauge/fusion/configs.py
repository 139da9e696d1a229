"""Fusion config files: a grid of methods, k values, normalisations, arm subsets,
weights and depths, expanded into named configs with stable ids.

File format (TOML)::

    metrics = ["recall@5", "nDCG@10"]  # optional: what `rulegauge run` computes (docs/metrics.md)

    [defaults]
    k = 60          # RRF k
    depth = 100     # per-arm depth cutoff (ranks beyond it do not vote)

    [arms.bm25]     # arm parameters, passed to the arm's constructor
    k1 = 1.5

    [grid]
    method = ["rrf", "combmnz", "hybrid"]   # or one name; default "rrf"
    k = [20, 60]                            # only for methods taking k (rrf)
    norm = ["min-max", "z-score", "l2"]     # only for methods taking norm, values they accept
    mean = ["arithmetic", "geometric"]      # only for hybrid
    arms = [["bm25", "dense", "boost"], ["bm25", "dense"]]
    weights = [{}, {boost = 0.5}]      # per-arm overrides; unspecified arms weigh 1
    depths = [{}, {dense = 20}]        # per-arm overrides of defaults.depth

    [[configs]]                        # optional explicit configs
    name = "prod"
    method = "rrf"                     # and the method's parameters: k, norm, mean
    k = 60
    arms = ["bm25", "dense", "boost"]

For each method the grid is the Cartesian product of the parameter lists the
method takes (a parameter value the method does not accept, e.g. ``l2`` for
CombSUM, is left out for it; a list none of whose values applies to a method that
takes the parameter is an error) x arms x weights x depths. The methods and their
parameters come from :data:`rulegauge.fusion.method.FUSION_METHODS` (docs/fusion.md).
A weight or depth for an arm that an arm set does not fuse does not apply to that
set, so the product may repeat a config: it is kept once, with a note naming it (as
is an explicit ``[[configs]]`` entry equal to a grid config, which keeps its name).
Each arm of the run is also scored alone as config ``arm-<name>`` (RRF, k from
defaults, weight 1).

Strict where it matters: every section and key must be one of the above (an
unknown one is an error naming the allowed ones, so ``weight =`` for ``weights``
is caught); k and weights are finite numbers > 0, depths integers >= 1 (``2.5``
is refused, not truncated); arm parameters must be parameters of the arm's
constructor, of its type (:func:`rulegauge.core.params.check_params`).

Config ids are canonical strings built from the parameters
(:func:`rulegauge.fusion.records.config_id`), e.g. ``rrf_k60_bm25+dense+boost``,
``rrf_k60_bm25+dense_w-dense0.5_d-dense20`` or ``hybrid_minmax_arith_w-dense0.7_bm25+dense``.
"""

from __future__ import annotations

import hashlib
import json
import logging
import tomllib
from collections.abc import Collection, Mapping
from pathlib import Path
from typing import Any

from rulegauge.core import plugins
from rulegauge.core.errors import ConfigError, Problem, ValidationError
from rulegauge.fusion.grid_check import Checker
from rulegauge.fusion.grid_expand import Spec, config_specs, grid_specs
from rulegauge.fusion.records import FusionConfig, RunConfig, config_id

__all__ = ["DEFAULT_CONFIG", "FusionConfig", "RunConfig", "config_id", "expand", "load_config"]

DEFAULT_CONFIG = Path(__file__).resolve().parents[1] / "data" / "default-grid.toml"
def load_config(path: Path | None = None, known_arms: Collection[str] | None = None,
                known_methods: Collection[str] | None = None,
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


def expand(raw: dict[str, Any], where: str = "<config>", sha256: str = "",
           known_arms: Collection[str] | None = None, known_methods: Collection[str] | None = None,
           arm_classes: Mapping[str, Any] | None = None) -> RunConfig:
    """Expand a parsed config mapping into a :class:`RunConfig`.

    Every key is checked (unknown keys and sections are errors naming the allowed
    ones), k and weights must be finite numbers > 0 and depths integers >= 1.
    Grid combinations that give the same config (weights or depths for an arm the
    arm set does not fuse are dropped) are kept once, with a note; so is an
    explicit ``[[configs]]`` entry equal to a grid config (it keeps its name). With
    ``arm_classes`` (kind -> class) arm parameters are checked against the
    class's constructor (:func:`rulegauge.core.params.check_params`).
    """
    from rulegauge.core.params import check_params

    ck = Checker(where)
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

    specs: list[Spec] = []
    if raw.get("grid") is not None:
        specs += grid_specs(ck, raw["grid"], dk, known_methods)
    specs += config_specs(ck, raw.get("configs", []), dk, known_methods)
    if not specs and not ck.problems:
        ck.problems.append(Problem(where, "no configs: give a [grid] or [[configs]]"))

    configs: dict[str, FusionConfig] = {}
    origin: dict[str, str] = {}
    merged: dict[str, int] = {}
    notes: list[str] = []
    used_arms: dict[str, None] = {}
    for sp in specs:
        label = f"config {sp.name or '+'.join(sp.arms)}"
        for a in sp.arms:
            used_arms.setdefault(a, None)
            kind = arm_params.get(a, {}).get("kind", a)
            if known_arms is not None and kind not in known_arms:
                broken = plugins.describe_unknown("rulegauge.arms", str(kind))
                ck.add(label, f"unknown arm {kind!r}; choose one of: {', '.join(known_arms)}"
                       " (or name a kind with [arms.NAME] kind = ...)" + (f"; {broken}" if broken else ""))
        ws = tuple(sp.weights.get(a, 1.0) for a in sp.arms)
        ds = tuple(sp.depths.get(a, dd) for a in sp.arms)
        cid = config_id(sp.method, sp.k, sp.arms, ws, ds, dd, sp.tags)
        cfg = FusionConfig(cid, sp.name or cid, "grid", sp.method, sp.k, sp.arms, ws, ds, sp.options)
        source = sp.source
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
