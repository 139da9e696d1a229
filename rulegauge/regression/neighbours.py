"""A grid config's neighbours: the configs that differ from it in exactly one parameter, whose
paired differences give the power calculations their SD (:mod:`rulegauge.regression.power`,
:mod:`rulegauge.regression.power_models`)."""

from __future__ import annotations

import json

import pandas as pd

from rulegauge.core.config_order import sort_configs


def _flat(params: str) -> dict[str, object]:
    """A config's parameters as one flat mapping: scalars as they are, the arm subset as
    a sorted tuple, per-arm weights and depths as ``w:<arm>`` / ``d:<arm>``."""
    raw = json.loads(params)
    out: dict[str, object] = {}
    arms = [str(a) for a in raw.get("arms", [])]
    out["arms"] = tuple(sorted(arms))
    for key in ("weights", "depths"):
        for arm, v in zip(arms, raw.get(key) or [], strict=False):
            out[f"{key[0]}:{arm}"] = v
    for k, v in raw.items():
        if k not in ("arms", "weights", "depths"):
            out[k] = json.dumps(v, sort_keys=True) if isinstance(v, list | dict) else v
    return out


def neighbours(configs: pd.DataFrame, config_id: str) -> tuple[str, ...]:
    """The grid configs that differ from ``config_id`` in exactly one parameter (per-arm
    weights and depths of arms in only one of them do not count); along a numeric
    parameter only the nearest value below and above. In config order."""
    grid = configs[configs["kind"] == "grid"]
    flat = {str(c): _flat(str(p)) for c, p in zip(grid["config_id"], grid["params"], strict=True)}
    if config_id not in flat:
        return ()
    me = flat[config_id]
    by_key: dict[str, list[tuple[object, str]]] = {}
    for cid, other in flat.items():
        if cid == config_id:
            continue
        shared = set(me["arms"]) & set(other["arms"])  # type: ignore[call-overload]
        keys = {k for k in me.keys() | other.keys()
                if not (k[:2] in ("w:", "d:") and k[2:] not in shared)}
        diff = [k for k in keys if me.get(k) != other.get(k)]
        if len(diff) == 1:
            by_key.setdefault(diff[0], []).append((other.get(diff[0]), cid))
    out: list[str] = []
    for key, found in by_key.items():
        mine = me.get(key)
        numeric = [(v, c) for v, c in found if isinstance(v, int | float)]
        if isinstance(mine, int | float) and len(numeric) == len(found):
            below = [(v, c) for v, c in numeric if v < mine]
            above = [(v, c) for v, c in numeric if v > mine]
            out += [max(below)[1]] if below else []
            out += [min(above)[1]] if above else []
        else:
            out += [c for _, c in found]
    return tuple(sort_configs(out))
