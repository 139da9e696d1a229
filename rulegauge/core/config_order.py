"""The display order of config ids: method, arm subset, then numeric parameters.

Config ids (:func:`rulegauge.fusion.records.config_id`) sorted as text put ``rrf_k100``
before ``rrf_k10`` and ``rrf_k6`` between ``rrf_k58`` and ``rrf_k70``. :func:`config_sort_key`
orders fused configs by method, then arm subset, then their parameters with every number
compared as a number (``k6 < k10 < k60 < k100``, ``w-dense0.25 < w-dense0.5``); the
single-arm configs (``arm-<name>``) come after every fused config. The full id is the last
key, so the order is total and the same in every process (no floats: numbers are Decimals).
Every listing of configs (run summary, compare, gate, baselines, export, answerers) uses it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from decimal import Decimal

_NUMBER = re.compile(r"(\d+(?:\.\d+)?)")
_EXTRA = ("w-", "d-")  # per-arm weight and depth segments of an id

NaturalKey = tuple[tuple[str, Decimal], ...]
SortKey = tuple[int, NaturalKey, NaturalKey, NaturalKey, str]


def natural_key(text: str) -> NaturalKey:
    """``text`` as (letters, number) pairs: ``"k60_w-dense0.5"`` -> ``(("k", 60), ("_w-dense", 0.5))``;
    digits compare by value, so ``k6 < k10 < k100``."""
    parts = _NUMBER.split(text)
    # split alternates text and numbers: parts[0] text, parts[1] number, ...
    return tuple((parts[i], Decimal(parts[i + 1]) if i + 1 < len(parts) else Decimal(-1))
                 for i in range(0, len(parts), 2))


def _split(config_id: str) -> tuple[str, str, str]:
    """(method, arm subset, parameters) of a canonical id; anything else is all parameters."""
    tokens = config_id.split("_")
    extras = [i for i, t in enumerate(tokens) if t.startswith(_EXTRA)]
    if tokens[0] == "rrf" and len(tokens) >= 3:
        end = extras[0] if extras else len(tokens)
        return "rrf", "_".join(tokens[2:end]), "_".join([tokens[1], *tokens[end:]])
    if len(tokens) >= 2:
        start = extras[-1] + 1 if extras else len(tokens) - 1
        return tokens[0], "_".join(tokens[start:]), "_".join(tokens[1:start])
    return "", "", config_id


def config_sort_key(config_id: str) -> SortKey:
    """The sort key of a config id (module docstring): fused configs before single-arm
    ones, then method, arm subset and parameters, numbers by value; the id breaks ties."""
    if config_id.startswith("arm-"):
        return 1, (), natural_key(config_id[4:]), (), config_id
    method, arms, params = _split(config_id)
    return 0, natural_key(method), natural_key(arms), natural_key(params), config_id


def sort_configs(config_ids: Iterable[str]) -> list[str]:
    """``config_ids`` in :func:`config_sort_key` order."""
    return sorted(config_ids, key=config_sort_key)
