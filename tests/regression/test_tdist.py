"""rulegauge.regression.tdist against scipy (a development dependency): the noncentral t's
upper tail and Student's t quantile over the degrees of freedom and noncentralities the
power solvers meet: the tail to 1e-9 relative (tails below 1e-11 absolute: scipy's own nct,
Boost's series, loses digits there at large df, e.g. 1.08e-12 for P(T > 4) at df 200,000
and nc -3, below the normal limit 1.28e-12), the quantile to 1e-12."""

import math

import pytest
import scipy.stats

from rulegauge.regression.tdist import bisect, nct_sf, norm_isf, t_isf

DFS = (1, 2, 3, 5, 10, 29, 50, 120, 499, 5_000, 200_000)


@pytest.mark.parametrize("df", DFS)
def test_nct_sf_equals_scipy(df):
    for c in (0.0, 0.5, 1.96, 2.5, 4.0):
        for nc in (-3.0, -0.5, 0.0, 0.8, 2.8, 6.0, 15.0):
            want = float(scipy.stats.nct.sf(c, df, nc)) if nc else float(scipy.stats.t.sf(c, df))
            assert nct_sf(c, df, nc) == pytest.approx(want, rel=1e-9, abs=1e-11), (c, df, nc)


@pytest.mark.parametrize("df", DFS)
def test_t_isf_equals_scipy(df):
    for q in (0.0005, 0.005, 0.025, 0.05, 0.2, 0.7):
        assert t_isf(q, df) == pytest.approx(float(scipy.stats.t.isf(q, df)), rel=1e-12), (q, df)


def test_normal_quantile_and_bisection():
    assert norm_isf(0.025) == pytest.approx(float(scipy.stats.norm.isf(0.025)), rel=1e-14)
    assert bisect(lambda x: x * x - 2.0, 0.0, 2.0) == pytest.approx(math.sqrt(2.0), rel=1e-12)
    assert t_isf(0.5, 7) == 0.0
