"""Scores and weights at the extremes (#33 item 5): huge but finite arm scores never overflow
a normalisation, no fused score is ever NaN, and scaling every weight of a config by one
factor from 1e-300 to 1e300 changes no fused order, for every registered fusion method and
every choice of its parameters."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pandas as pd
import pytest

from rulegauge.core import plugins
from rulegauge.fusion.fuse import RankMatrix, fuse
from rulegauge.fusion.grid_check import MAX_WEIGHT, MIN_WEIGHT, Checker
from rulegauge.fusion.method import FUSION_METHODS
from rulegauge.fusion.normalise import NORMS, TAME_ABOVE, tame
from rulegauge.fusion.records import FusionConfig

ARMS = ("a", "b", "c")
BASE_WEIGHTS = (1.0, 0.5, 2.0)
FACTORS = (1e-300, 1e-10, 1e10, 1e300)


def _methods() -> list[tuple[str, tuple[tuple[str, str], ...]]]:
    """Every registered method with every combination of its choice parameters."""
    plugins.load("rulegauge.fusion")
    out = []
    for name in FUSION_METHODS.names():
        method = FUSION_METHODS.get(name)
        choices = [[(p.name, c) for c in p.choices] for p in method.params if p.choices]
        for combo in itertools.product(*choices):
            out.append((name, tuple(sorted(combo))))
    return out


def _config(method: str, opts: tuple[tuple[str, str], ...], factor: float) -> FusionConfig:
    weights = tuple(w * factor for w in BASE_WEIGHTS)
    return FusionConfig("c", "c", "grid", method, 60.0 if method == "rrf" else math.nan, ARMS, weights,
                        (30, 30, 30), opts)


def _ranks(seed: int, scale: float = 1.0, shift: float = 0.0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    rows = []
    for qi in range(8):
        for arm in ARMS:
            n = int(rng.integers(2, 25))
            docs = rng.choice(60, n, replace=False)
            scores = np.sort(rng.random(n))[::-1] * scale + shift
            rows += [(f"q{qi}", arm, f"d{d:03d}", r, float(s))
                     for r, (d, s) in enumerate(zip(docs, scores, strict=True), start=1)]
    return pd.DataFrame(rows, columns=["question_id", "arm", "chunk_id", "rank", "score"])


def _lists(df: pd.DataFrame, cfg: FusionConfig) -> tuple[list[tuple[str, str]], np.ndarray]:
    m = RankMatrix.from_arm_ranks(df, sorted(df.question_id.unique()), ARMS)
    f = fuse(m, cfg)
    order = [(str(q), str(c)) for q, c in zip(m.question_ids[f.question_index], m.chunk_ids[f.rows], strict=True)]
    return order, f.score


@pytest.mark.faults
@pytest.mark.parametrize(("method", "opts"), _methods(), ids=lambda x: str(x))
def test_scaling_every_weight_changes_no_order_and_no_score_is_nan(method, opts) -> None:
    df = _ranks(seed=11)
    reference, _ = _lists(df, _config(method, opts, 1.0))
    for factor in FACTORS:
        order, scores = _lists(df, _config(method, opts, factor))
        assert not np.isnan(scores).any(), (method, opts, factor)
        assert np.isfinite(scores).all(), (method, opts, factor)
        assert order == reference, (method, opts, factor)


@pytest.mark.faults
@pytest.mark.parametrize(("method", "opts"), _methods(), ids=lambda x: str(x))
def test_huge_finite_arm_scores_fuse_as_their_scaled_down_copies(method, opts) -> None:
    """Arm scores times 2^1000 (~1e301, exact) give the order of the originals; scores spread
    over +-1e308 give no NaN and no infinite fused score."""
    cfg = _config(method, opts, 1.0)
    reference, _ = _lists(_ranks(seed=12), cfg)
    order, scores = _lists(_ranks(seed=12, scale=2.0**1000), cfg)
    assert order == reference
    assert np.isfinite(scores).all()
    _, wide = _lists(_ranks(seed=13, scale=1.7e308 * 2, shift=-1.7e308), cfg)
    assert np.isfinite(wide).all() and not np.isnan(wide).any()


@pytest.mark.parametrize("norm", sorted(NORMS.names()))
def test_a_normalisation_of_huge_scores_equals_that_of_the_scaled_copy_bit_for_bit(norm) -> None:
    rng = np.random.default_rng(3)
    scores = rng.random((5, 9))
    votes = rng.random((5, 9)) > 0.3
    fn = NORMS.get(norm)
    small = fn(scores, votes)
    huge = fn(np.ldexp(scores, 1000), votes)
    assert np.array_equal(small, huge)
    extreme = fn(np.where(rng.random((5, 9)) > 0.5, 1.7e308, -1.7e308), votes)
    assert np.isfinite(extreme).all()


def test_tame_leaves_ordinary_rows_untouched_bit_for_bit() -> None:
    scores = np.array([[3.0, 1e-12, 7.5], [2.0**600, 1.0, 0.0]])
    votes = np.ones_like(scores, dtype=bool)
    out = tame(scores, votes)
    assert np.array_equal(out[0], scores[0])
    assert np.abs(out[1]).max() < 1 <= TAME_ABOVE
    assert out[1][0] / out[1][1] == scores[1][0] / scores[1][1]  # a power of two: ratios kept exactly


@pytest.mark.faults
@pytest.mark.parametrize("weight", [MAX_WEIGHT * 10, MIN_WEIGHT / 10, 1e308])
def test_a_weight_beyond_the_stated_range_is_refused_with_the_range(weight) -> None:
    ck = Checker("grid.toml")
    assert ck.weight(weight, "grid.weights[0].a") is None
    assert any("within [1e-300, 1e+300]" in str(p) and "grid.weights[0].a" in str(p) for p in ck.problems)
