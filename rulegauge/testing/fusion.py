"""The fusion-method conformance suite: what every registered method must keep.

:func:`check_fusion_method` runs a method (by name, or an instance not registered yet) on
seeded synthetic arm ranks, spread and coarse (exact ties everywhere), over configs of every
arm, uneven weights and depths, and an arm subset, for every combination of its choice
parameters (numbers at their defaults), and reports:

* **the entry probes** every run makes (:mod:`rulegauge.fusion.contract`): a chunk ranked first
  by every arm scores the declared ceiling, swapping two arms' weights changes the fused order
  (unless the method declares ``takes_weights = False``), and the scores keep the contract of
  :func:`~rulegauge.fusion.method.fused_scores` (shape, finite, at most the ceiling);

* **kernel = reference**: the scoring kernel's order (:mod:`rulegauge.fusion.kernel`: keys,
  then the exact order) equals :func:`rulegauge.fusion.fuse.fuse`'s, question by question;
* **ceiling**: no fused score exceeds the declared :meth:`~rulegauge.fusion.method.FusionMethod.ceiling`
  (relative tolerance 1e-12, float rounding of a sum); a method without a ceiling says ``None``;
* **ranx parity**, where the method declares a ranx equivalent
  (:meth:`~rulegauge.fusion.method.FusionMethod.ranx_equivalent`): its fused scores equal
  ``ranx.fuse``'s question by question (1e-12), when ranx is installed (else ``skipped``).
"""

from __future__ import annotations

import itertools
import math
import warnings
from dataclasses import dataclass

import numpy as np
import pandas as pd

from rulegauge.fusion.contract import Probes, config_problems
from rulegauge.fusion.fuse import RankMatrix, fuse
from rulegauge.fusion.kernel import config_scores, exact_rows, planes_of
from rulegauge.fusion.method import FUSION_METHODS, FusionMethod
from rulegauge.fusion.records import FusionConfig
from rulegauge.testing.synthetic import config, synthetic_ranks

SEEDS = (3,)
REL_TOL = 1e-12


@dataclass(frozen=True)
class FusionCheck:
    name: str
    problems: tuple[str, ...]
    skipped: tuple[str, ...] = ()  # checks not run, with why (ranx not installed)


def _method(name_or_method: str | FusionMethod) -> FusionMethod:
    return FUSION_METHODS.get(name_or_method) if isinstance(name_or_method, str) else name_or_method


def method_configs(method: FusionMethod) -> list[FusionConfig]:
    """The configs the suite scores: every choice combination x three arm layouts (uneven weights
    unless the method declares ``takes_weights = False``)."""
    choices = [[(p.name, c) for c in p.choices] for p in method.params if p.choices]
    out = []
    for combo in itertools.product(*choices) if choices else [()]:
        opts = tuple(sorted(combo))
        weighted = getattr(method, "takes_weights", True)  # one that takes none is given none
        out += [config(method.name, opts),
                config(method.name, opts, weights=(0.5, 2.0, 1.0) if weighted else None, depths=(8, 24, 15)),
                config(method.name, opts, arms=("a", "c"), weights=(3.0, 1.0) if weighted else None)]
    return out


def kernel_lists(m: RankMatrix, c: FusionConfig) -> list[list[str]]:
    """Every question's whole fused list through the kernel (keys, then the exact order)."""
    planes, col = planes_of(m)
    s = config_scores(planes, c)
    nq, u = planes.shape
    cand = exact_rows(planes, c, np.arange(nq), s.key, np.tile(np.arange(u), (nq, 1)), s.tol, ties=s.ties,
                      fused=s.score)
    ids = np.full((nq, u), "", object)
    ids[m.question_index, col] = m.chunk_ids
    keys = np.take_along_axis(s.key, cand, 1)
    return [[str(x) for x in ids[q][cand[q]][keys[q] > 0]] for q in range(nq)]


def reference_lists(m: RankMatrix, c: FusionConfig) -> list[list[str]]:
    f = fuse(m, c)
    out: list[list[str]] = [[] for _ in m.question_ids]
    for q, row in zip(f.question_index, f.rows, strict=True):
        out[q].append(str(m.chunk_ids[row]))
    return out


def _ranx_fused(ranks: pd.DataFrame, c: FusionConfig, norm: str | None, method: str,
                params: dict[str, object]) -> dict[str, dict[str, float]]:
    from ranx import Run
    from ranx import fuse as rfuse

    qids = sorted(ranks["question_id"].unique())
    runs = []
    for arm, d in zip(c.arms, c.depths, strict=True):
        sub = ranks[(ranks["arm"] == arm) & (ranks["rank"] <= d)]
        per = {str(q): dict(zip(g["chunk_id"], g["score"], strict=True)) for q, g in sub.groupby("question_id")}
        runs.append(Run({str(q): per.get(str(q), {}) for q in qids}))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # numba's own deprecation notes
        run = rfuse(runs, norm=norm, method=method, params=params)
    return {q: dict(v) for q, v in run.run.items() if len(v)}


def _ranx_problems(method: FusionMethod, seed: int) -> list[str]:
    data = synthetic_ranks(seed)
    out = []
    for c in method_configs(method):
        eq = method.ranx_equivalent(c)
        if eq is None:
            continue
        want = _ranx_fused(data.ranks, c, *eq)
        f = fuse(data.matrix, c)
        got: dict[str, dict[str, float]] = {}
        for q, ch, s in zip(data.matrix.question_ids[f.question_index], data.matrix.chunk_ids[f.rows], f.score,
                            strict=True):
            got.setdefault(str(q), {})[str(ch)] = float(s)
        bad = [(q, d) for q in want for d, s in want[q].items()
               if not math.isclose(got.get(q, {}).get(d, math.nan), s, rel_tol=REL_TOL, abs_tol=REL_TOL)]
        if bad or set(got) != set(want):
            out.append(f"{c.config_id}: fused scores differ from ranx {eq[1]} (norm {eq[0]}) at "
                       f"{len(bad)} (question, chunk) pairs, e.g. {bad[:1]}")
    return out


def check_fusion_method(name_or_method: str | FusionMethod, seeds: tuple[int, ...] = SEEDS) -> FusionCheck:
    """Every check of the module docstring on one method; ``problems`` empty when it conforms."""
    method = _method(name_or_method)
    problems: list[str] = []
    probes = Probes()
    for c in method_configs(method):  # what every run probes where the method enters it
        try:
            problems += config_problems(method, c, probes)
        except Exception as exc:  # a broken score on the probe, or the plug-in's own error
            problems.append(f"{c.config_id} (entry probe): {type(exc).__name__}: {exc}")
    for seed, coarse in itertools.product(seeds, (False, True)):
        m = synthetic_ranks(seed, coarse=coarse).matrix
        for c in method_configs(method):
            where = f"{c.config_id} (seed {seed}{', ties' if coarse else ''})"
            try:
                if kernel_lists(m, c) != reference_lists(m, c):
                    problems.append(f"{where}: the kernel's order differs from fuse's")
                ceiling = method.ceiling(c)
                top = float(np.max(fuse(m, c).score, initial=-math.inf))
            except Exception as exc:  # a plug-in's bug is a problem to report, not a crash of the suite
                problems.append(f"{where}: {type(exc).__name__}: {exc}")
                continue
            if ceiling is not None and top > ceiling * (1 + REL_TOL) + REL_TOL:
                problems.append(f"{where}: a fused score {top!r} exceeds the declared ceiling {ceiling!r}")
    skipped: tuple[str, ...] = ()
    if any(method.ranx_equivalent(c) is not None for c in method_configs(method)):
        try:
            import ranx  # noqa: F401 - only whether it is there
        except ImportError:
            skipped = ("ranx parity: ranx is not installed (the dev extra)",)
        else:
            for seed in seeds:
                problems += _ranx_problems(method, seed)
    return FusionCheck(method.name, tuple(problems), skipped)

