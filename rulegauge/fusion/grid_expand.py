"""The ``[grid]`` and ``[[configs]]`` sections -> config specs, per fusion method.

A method takes the parameters it declares (:class:`rulegauge.fusion.method.Param`):
``k`` for RRF, ``norm`` / ``mean`` for the score-based methods. A grid list applies
to the methods that take the parameter, and of its values only those a method
accepts (``l2`` is a hybrid normalisation, not a CombSUM one). See
:mod:`rulegauge.fusion.configs` for the file format.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Collection
from dataclasses import dataclass
from typing import Any

from rulegauge.core import plugins
from rulegauge.fusion.grid_check import Checker
from rulegauge.fusion.method import FUSION_METHODS, FusionMethod

NO_K = math.nan  # one NaN object: configs of methods without k compare equal
METHOD_PARAMS = ("norm", "mean")  # choice parameters of some method (beside k)
GRID_KEYS = ("method", "k", *METHOD_PARAMS, "arms", "weights", "depths")
CONFIG_KEYS = ("name", "method", "k", *METHOD_PARAMS, "arms", "weights", "depths")


@dataclass(frozen=True)
class Spec:
    """One config before ids: its method, k, options and per-arm overrides."""

    name: str | None
    method: str
    k: float
    options: tuple[tuple[str, Any], ...]
    tags: tuple[str, ...]
    arms: tuple[str, ...]
    weights: dict[str, float]
    depths: dict[str, int]
    source: str


def _method(ck: Checker, name: Any, at: str, known: Collection[str] | None) -> FusionMethod | None:
    if not isinstance(name, str):
        ck.add(at, f"must be a method name (string), got {name!r}")
        return None
    if name not in FUSION_METHODS or (known is not None and name not in known):  # `in` loads only that method
        choices = known if known is not None else FUSION_METHODS.names()
        broken = plugins.describe_unknown("rulegauge.fusion", name)  # a plug-in that failed to load says why
        ck.add(at, f"unknown fusion method {name!r}; choose one of: " + ", ".join(choices)
               + (f"; {broken}" if broken else ""))
        return None
    return FUSION_METHODS.get(name)


def _choices(ck: Checker, m: FusionMethod, table: dict[str, Any], at: str, *,
             listed: bool) -> list[tuple[tuple[str, Any], ...]]:
    """Every combination of the method's choice parameters the table asks for."""
    axes: list[list[tuple[str, Any]]] = []
    for p in m.params:
        if not p.choices:
            continue
        given = table.get(p.name)
        if given is None:
            axes.append([(p.name, p.default)])
            continue
        values = given if (listed and isinstance(given, list)) else [given]
        ok = [v for v in values if isinstance(v, str) and v in p.choices]
        if not ok:
            ck.add(f"{at}.{p.name}", f"none of {values!r} is a {p.name} of {m.name} "
                   f"(choose from: {', '.join(p.choices)})")
            continue
        axes.append([(p.name, v) for v in dict.fromkeys(ok)])
    return [tuple(sorted(combo)) for combo in itertools.product(*axes)]


def _tags(m: FusionMethod, options: tuple[tuple[str, Any], ...]) -> tuple[str, ...]:
    opts = dict(options)
    return tuple(p.tag(opts[p.name]) for p in m.params if p.choices)


def grid_specs(ck: Checker, grid: Any, dk: float, known: Collection[str] | None) -> list[Spec]:
    grid = ck.keys(grid, GRID_KEYS, "[grid]")
    raw_methods = grid.get("method", "rrf")
    names = raw_methods if isinstance(raw_methods, list) and raw_methods else [raw_methods]
    methods = [m for i, x in enumerate(names)
               if (m := _method(ck, x, f"grid.method[{i}]" if isinstance(raw_methods, list) else "grid.method",
                                known)) is not None]
    ks = [ck.k(x, f"grid.k[{i}]") for i, x in enumerate(ck.listed(grid.get("k", [dk]), "grid.k"))]
    arm_sets = [ck.arms(x, f"grid.arms[{i}]") for i, x in enumerate(ck.listed(grid.get("arms"), "grid.arms"))]
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
    if methods:
        for key in ("k", *METHOD_PARAMS):
            takers = [m.name for m in methods if (m.takes_k if key == "k" else any(p.name == key for p in m.params))]
            if key in grid and not takers:
                ck.add(f"grid.{key}", f"no method of the grid takes {key!r} "
                       f"(methods: {', '.join(m.name for m in methods)})")
    out: list[Spec] = []
    for m in methods:
        mks = [dk if kk is None else kk for kk in ks] if m.takes_k else [NO_K]
        for kk, opts, arms, w, d in itertools.product(mks, _choices(ck, m, grid, "grid", listed=True),
                                                      arm_sets, weights, depths):
            if not arms:
                continue
            # a weight or depth for an arm this set does not fuse does not apply to it
            out.append(Spec(None, m.name, kk, opts, _tags(m, opts), arms,
                            {a: x for a, x in w.items() if a in arms},
                            {a: x for a, x in d.items() if a in arms}, "grid"))
    return out


def config_specs(ck: Checker, configs_raw: Any, dk: float, known: Collection[str] | None) -> list[Spec]:
    if not isinstance(configs_raw, list):
        ck.add("[[configs]]", "must be an array of tables ([[configs]])")
        return []
    out: list[Spec] = []
    for i, c in enumerate(configs_raw):
        at = f"configs[{i}]"
        c = ck.keys(c, CONFIG_KEYS, at)
        name = c.get("name")
        if name is not None and (not isinstance(name, str) or not name.strip()):
            ck.add(f"{at}.name", f"must be a non-empty string, got {name!r}")
            name = None
        m = _method(ck, c.get("method", "rrf"), f"{at}.method", known)
        kk = ck.k(c.get("k", dk), f"{at}.k")
        arms = ck.arms(c.get("arms"), f"{at}.arms")
        w = ck.per_arm(c.get("weights", {}), f"{at}.weights", ck.weight)
        d = ck.per_arm(c.get("depths", {}), f"{at}.depths", ck.depth)
        for a in [*w, *d]:
            if arms and a not in arms:
                ck.add(at, f"weight/depth given for arm {a!r} that the config does not fuse "
                       f"({'+'.join(arms)})")
        if m is None or not arms:
            continue
        takes = {p.name for p in m.params if p.choices} | ({"k"} if m.takes_k else set())
        for key in ("k", *METHOD_PARAMS):
            if key in c and key not in takes:
                ck.add(f"{at}.{key}", f"method {m.name} does not take {key!r}")
        for opts in _choices(ck, m, c, at, listed=False):
            out.append(Spec(name, m.name, (dk if kk is None else kk) if m.takes_k else NO_K, opts,
                            _tags(m, opts), arms, w, d, "configs"))
    return out
