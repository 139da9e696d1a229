"""The one multiplicity rule: Holm and Benjamini-Hochberg, NaN handling, the family record."""

from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.stats

from rulegauge.core.errors import RulegaugeError
from rulegauge.metrics.multiplicity import adjust, benjamini_hochberg, family_of, flagged


def test_bh_by_hand_and_equal_to_scipy() -> None:
    p = [0.01, 0.04, 0.03, 0.20]
    # sorted 0.01, 0.03, 0.04, 0.20 -> m*p/i = 0.04, 0.06, 0.0533, 0.20; step-up minima
    expected = [0.04, 4 * 0.04 / 3, 4 * 0.04 / 3, 0.20]
    assert benjamini_hochberg(p).tolist() == pytest.approx(expected)
    rng = np.random.default_rng(3)
    q = rng.random(40) ** 3
    assert benjamini_hochberg(q) == pytest.approx(scipy.stats.false_discovery_control(q, method="bh"))


def test_nan_stays_nan_and_does_not_count() -> None:
    out = adjust([0.01, math.nan, 0.02], "holm")
    assert math.isnan(out[1]) and out[0] == pytest.approx(0.02) and out[2] == pytest.approx(0.02)
    assert math.isnan(adjust([math.nan], "bh")[0]) and adjust([], "bh").size == 0
    with pytest.raises(RulegaugeError, match=r"\[0, 1\]"):
        adjust([1.5], "bh")
    with pytest.raises(RulegaugeError, match="p-value adjustment"):
        adjust([0.1], "bonferroni-ish")


def test_family_flags_by_one_rule_and_says_so() -> None:
    labels = [("a", "recall@5"), ("b", "recall@5"), ("c", "recall@5")]
    adjusted, fam = family_of(labels, [0.01, 0.02, math.nan], "holm", 0.05, "every config against x")
    assert adjusted[:2].tolist() == pytest.approx([0.02, 0.02])
    assert fam.size == 2 and fam.untested == (("c", "recall@5"),)
    assert fam.flagged == (("a", "recall@5"), ("b", "recall@5"))
    line = fam.line()
    assert line.startswith("p (holm) family: holm over 2 test(s) [every config against x] at alpha 0.05")
    assert "flagged (p_adj < 0.05): 2" in line
    _, strict = family_of(labels[:2], [0.03, 0.04], "holm", 0.05)
    _, lenient = family_of(labels[:2], [0.03, 0.04], "bh", 0.05)
    assert strict.flagged == () and lenient.flagged == tuple(labels[:2])  # BH flags more
    assert not flagged(math.nan, 0.05) and flagged(0.049, 0.05) and not flagged(0.05, 0.05)
