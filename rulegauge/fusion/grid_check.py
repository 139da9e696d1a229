"""Typed reading of a fusion grid file: values checked, every problem collected."""

from __future__ import annotations

import math
from typing import Any

from rulegauge.core.errors import Problem
from rulegauge.core.limits import count_problem
from rulegauge.core.names import name_problem

# per-arm weights: every method's weighted sums of scores up to ~1e3 stay normal floats within
# this range (1e300 x 3 arms x 200 Borda points < 1.8e308; 1e-300 / (60 + depth) > 2.2e-308)
MIN_WEIGHT = 1e-300
MAX_WEIGHT = 1e300


class Checker:
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
        elif not MIN_WEIGHT <= value <= MAX_WEIGHT:  # beyond, weighted sums over- or underflow
            self.add(at, f"weight must lie within [{MIN_WEIGHT:g}, {MAX_WEIGHT:g}], got {value!r}")
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


    def choice(self, value: Any, choices: tuple[str, ...], at: str) -> str | None:
        if not isinstance(value, str) or value not in choices:
            self.add(at, f"must be one of {', '.join(choices)}, got {value!r}")
            return None
        return value
