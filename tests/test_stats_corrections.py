"""Tests of metaeval.stats.significance.corrections."""
from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from metaeval.errors import ParameterError
from metaeval.stats.significance.corrections import CORRECTION_METHODS, adjust_pvalues, significance_floor

P4 = [0.01, 0.04, 0.03, 0.005]
P5 = [0.01, 0.02, 0.03, 0.04, 0.05]


def test_messages():
    with pytest.raises(ParameterError) as e:
        adjust_pvalues(P4, method="fdr")
    assert str(e.value) == ("`method` must be one of 'none', 'bonferroni', 'sidak', 'holm', 'holm-sidak', 'benjamini-hochberg';"
                            " got 'fdr'.")
    with pytest.raises(ParameterError) as e:
        adjust_pvalues([0.5, 1.5], method="holm")
    assert str(e.value) == "`pvalues` must be in [0, 1] (or NaN); got 1.5."
    with pytest.raises(ParameterError) as e:
        adjust_pvalues([-0.1], method="none")
    assert str(e.value) == "`pvalues` must be in [0, 1] (or NaN); got -0.1."


@pytest.mark.parametrize(
    "p, method, expected",
    [
        # by hand; the same values as R's p.adjust / statsmodels' multipletests
        (P4, "none", P4),
        (P4, "bonferroni", [0.04, 0.16, 0.12, 0.02]),
        (P4, "holm", [0.03, 0.06, 0.06, 0.02]),  # 4*.005, 3*.01, 2*.03, max(1*.04, .06)
        (P4, "benjamini-hochberg", [0.02, 0.04, 0.04, 0.02]),  # min over j >= i of 4 p_(j) / j
        (P5, "bonferroni", [0.05, 0.10, 0.15, 0.20, 0.25]),
        (P5, "holm", [0.05, 0.08, 0.09, 0.09, 0.09]),
        (P5, "benjamini-hochberg", [0.05] * 5),
        ([0.3, 0.6, 0.9], "bonferroni", [0.9, 1.0, 1.0]),
        ([0.3, 0.6, 0.9], "holm", [0.9, 1.0, 1.0]),
        ([0.01, 0.01, 0.5], "holm", [0.03, 0.03, 0.5]),  # ties share one value
        ([0.01, 0.01, 0.5], "benjamini-hochberg", [0.015, 0.015, 0.5]),
    ],
)
def test_hand_cases(p, method, expected):
    np.testing.assert_allclose(adjust_pvalues(p, method=method), expected, rtol=1e-12)


def test_benjamini_hochberg_against_scipy():
    rng = np.random.default_rng(0)
    for m in (1, 2, 7, 50):
        p = rng.uniform(size=m) ** 3
        np.testing.assert_allclose(adjust_pvalues(p, method="benjamini-hochberg"), stats.false_discovery_control(p))


def test_properties():
    rng = np.random.default_rng(1)
    p = rng.uniform(size=20) ** 2
    bonf, holm, bh = (adjust_pvalues(p, method=m) for m in ("bonferroni", "holm", "benjamini-hochberg"))
    assert np.all(p <= bh) and np.all(bh <= holm + 1e-15) and np.all(holm <= bonf)
    order = np.argsort(p)
    assert np.all(np.diff(holm[order]) >= 0) and np.all(np.diff(bh[order]) >= 0)


def test_nan_entries_are_ignored_any_shape():
    rng = np.random.default_rng(2)
    matrix = rng.uniform(size=(4, 4)) / 10
    np.fill_diagonal(matrix, np.nan)
    before = matrix.copy()
    for method in CORRECTION_METHODS:
        out = adjust_pvalues(matrix, method=method)
        assert out.shape == (4, 4)
        assert np.isnan(np.diag(out)).all()
        off = ~np.eye(4, dtype=bool)
        np.testing.assert_allclose(out[off], adjust_pvalues(matrix[off], method=method))
    np.testing.assert_array_equal(matrix, before)  # the input is not modified
    assert np.isnan(adjust_pvalues([np.nan, np.nan], method="holm")).all()
    assert adjust_pvalues([], method="holm").shape == (0,)
    assert adjust_pvalues(0.02, method="bonferroni") == 0.02


@pytest.mark.parametrize("k,m,correction,alpha,smallest,needed", [
    (1000, 33, "holm", 0.01, 33 / 1001, 3300),            # the example: 0.033 > 0.01
    (1000, 33 * 34, "holm", 0.05, 1.0, 22440),            # SummEval, Holm over the whole matrix
    (22440, 33 * 34, "holm", 0.05, 1122 / 22441, 22440),  # just enough
    (200, 33, "bonferroni", 0.05, 33 / 201, 660),         # the report's --quick preset over each row
    (10, 33, "benjamini-hochberg", 0.05, 1 / 11, 20),     # BH: 1 / (k + 1), whatever the family
    (19, 5, "none", 0.05, 1 / 20, 20),                    # 1/20 is not < 0.05
])
def test_significance_floor(k, m, correction, alpha, smallest, needed):
    floor = significance_floor(n_resamples=k, family_size=m, correction=correction, alpha=alpha)
    assert floor.smallest == pytest.approx(smallest, rel=1e-12) and floor.needed_resamples == needed
    assert floor.reachable == (k >= needed) and (floor.message == "") == floor.reachable
    # the floor is what adjust_pvalues gives when every p-value is the smallest Monte Carlo p-value
    adjusted = adjust_pvalues(np.full(m, 1 / (k + 1)), method=correction)
    assert adjusted.min() == pytest.approx(floor.smallest, rel=1e-12)


def test_significance_floor_message():
    floor = significance_floor(n_resamples=1000, family_size=33, correction="holm", alpha=0.01)
    assert floor.message == ("no comparison can be significant: the smallest attainable p-value after holm over"
                             " each row (33 comparisons) with 1000 resamples is 0.033 > alpha 0.01; use at"
                             " least 3300 resamples.")
    with pytest.raises(ParameterError) as info:
        significance_floor(n_resamples=0, family_size=3, correction="holm", alpha=0.05)
    assert str(info.value) == "`n_resamples` must be an integer >= 1; got 0."
