"""The power models' results, computed once per input and kept: the gate's power table at no cost.

The permutation test's power by resampling (:mod:`rulegauge.regression.power_resample`)
and under whole-question loss (:mod:`rulegauge.regression.power_models`) cost about a CPU
second per metric; a gate prints both for every gated metric. Their inputs are the pool
of paired differences (the baseline's grid around the gated config), ``n``, the level
per test, the gate's ``n_resamples`` and ``seed``, and the draws: the same for every
candidate gated against one baseline with one policy. :func:`cached_resampled` and
:func:`cached_loss` key the result by the SHA-256 of exactly those inputs (the arrays'
bytes, the numbers' ``repr``, the model's name and :data:`VERSION`) and keep it as JSON
under ``<cache root>/power/`` (:func:`rulegauge.core.cachedir.cache_root`:
``$RULEGAUGE_CACHE`` or ``~/.cache/rulegauge``), written atomically
(:func:`rulegauge.core.atomic.write_text`); floats round-trip exactly through JSON, so a
cached result equals a computed one.

At most :data:`KEEP` entries are kept (the oldest removed on a write). Edge cases: a file
that does not parse, or whose shape or inputs do not match, is
recomputed and replaced (never trusted); a cache folder that cannot be written leaves
the result computed and uncached (the gate never fails for its cache). ``VERSION`` changes
whenever a model's computation does, so no stale entry is ever read.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
from threadpoolctl import threadpool_limits  # type: ignore[import-untyped]

from rulegauge.core.atomic import write_text
from rulegauge.core.cachedir import cache_root
from rulegauge.regression.power_resample import DRAWS, ResampledPower, resampled_power

VERSION = "1"
FOLDER = "power"
KEEP = 2000  # entries kept (a few kB each); the oldest beyond it are removed on a write


def _key(model: str, arrays: tuple[np.ndarray, ...], **numbers: Any) -> str:
    h = hashlib.sha256(f"rulegauge power {model} v{VERSION}\n".encode())
    for a in arrays:
        c = np.ascontiguousarray(a, dtype=np.float64)
        h.update(f"{c.size}:".encode())
        h.update(c.tobytes())
    h.update(json.dumps({k: repr(v) for k, v in sorted(numbers.items())}).encode())
    return h.hexdigest()


def _floats(raw: Any, size: int) -> tuple[float, ...] | None:
    """``raw`` as ``size`` sorted floats (inf allowed, written as the string), else None."""
    if not isinstance(raw, list) or len(raw) != size:
        return None
    out = []
    for x in raw:
        if x == "inf":
            out.append(math.inf)
        elif isinstance(x, int | float) and not isinstance(x, bool) and math.isfinite(x):
            out.append(float(x))
        else:
            return None
    return tuple(out) if out == sorted(out) else None


def _cached(key: str, size: int, compute: Callable[[], tuple[float, ...]],
            cache_dir: Path | None) -> tuple[tuple[float, ...], bool]:
    """(the sorted values of ``key``, whether they came from the cache)."""
    path = cache_root(cache_dir) / FOLDER / f"{key}.json"
    try:
        record = json.loads(path.read_text(encoding="utf-8"))
        got = _floats(record.get("values"), size) if record.get("key") == key else None
        if got is not None:
            return got, True
    except (OSError, ValueError, AttributeError):
        pass  # absent, unreadable or not ours: computed again below
    values = compute()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        write_text(path, json.dumps({"key": key, "values": [
            "inf" if math.isinf(v) else v for v in values]}))
        _prune(path.parent)
    except OSError:
        pass  # a read-only cache: the result stands, uncached
    return values, False


def _prune(folder: Path) -> None:
    """Keep the :data:`KEEP` newest entries of ``folder`` (a bound on the cache's size)."""
    entries = list(folder.glob("*.json"))
    if len(entries) <= KEEP:
        return
    for old in sorted(entries, key=lambda p: p.stat().st_mtime)[:len(entries) - KEEP]:
        old.unlink(missing_ok=True)


def cached_resampled(pool: np.ndarray, n: int, alpha_test: float, *, n_resamples: int,
                     draws: int = DRAWS, seed: int = 0, cache_dir: Path | None = None
                     ) -> ResampledPower:
    """:func:`rulegauge.regression.power_resample.resampled_power`, kept (module docstring)."""
    values = np.asarray(pool, dtype=np.float64)
    key = _key("resampled", (values,), n=n, alpha=alpha_test, resamples=n_resamples,
               draws=draws, seed=seed)
    found: list[ResampledPower] = []

    def compute() -> tuple[float, ...]:
        with threadpool_limits(1, user_api="blas"):  # as power_models: threads cost more here
            found.append(resampled_power(values, n, alpha_test, n_resamples=n_resamples,
                                         draws=draws, seed=seed))
        return found[0].thresholds

    thresholds, _ = _cached(key, draws, compute, cache_dir)
    if found:
        return found[0]
    exact = 2.0 ** n <= n_resamples
    return ResampledPower(thresholds, n, alpha_test, n_resamples, draws, seed, exact,
                          int(values.size))


def cached_loss(pool: Any, n: int, alpha_test: float, *, n_resamples: int, draws: int = DRAWS,
                seed: int = 0, cache_dir: Path | None = None) -> Any:
    """:func:`rulegauge.regression.power_models.loss_power` of a
    :class:`~rulegauge.regression.power_models.QuestionPool`, kept (module docstring)."""
    from rulegauge.regression.power_models import LossPower, loss_power

    key = _key("loss", (pool.values, pool.centred), floor=pool.floor, n=n, alpha=alpha_test,
               resamples=n_resamples, draws=draws, seed=seed)
    found: list[LossPower] = []

    def compute() -> tuple[float, ...]:
        found.append(loss_power(pool, n, alpha_test, n_resamples=n_resamples, draws=draws,
                                seed=seed))
        return found[0].first

    first, _ = _cached(key, draws, compute, cache_dir)
    if found:
        return found[0]
    return LossPower(first, n, alpha_test, n_resamples, draws, seed, pool.mean_loss)


def cached_number(model: str, compute: Callable[[], float], *, cache_dir: Path | None = None,
                  **numbers: Any) -> float:
    """One number of a model (the t-test's MDE, its sample size: a few hundred noncentral-t
    integrals each), kept under the key of ``model`` and ``numbers``; NaN is never kept."""
    key = _key(model, (), **numbers)
    path = cache_root(cache_dir) / FOLDER / f"{key}.json"
    try:
        record = json.loads(path.read_text(encoding="utf-8"))
        got = _floats(record.get("values"), 1) if record.get("key") == key else None
        if got is not None:
            return got[0]
    except (OSError, ValueError, AttributeError):
        pass  # absent, unreadable or not ours: computed below
    value = compute()
    if not math.isnan(value):
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            write_text(path, json.dumps({"key": key, "values": ["inf" if math.isinf(value) else value]}))
            _prune(path.parent)
        except OSError:
            pass  # a read-only cache: the value stands, uncached
    return value
