"""Tests of metaeval.stats.correlations.fisher."""
from __future__ import annotations

import math
from statistics import NormalDist

import numpy as np
import pytest

from metaeval.errors import ParameterError
from metaeval.stats.correlations.fisher import fisher_interval


def _by_hand(r, n, b, c, confidence_level=0.95):
    z = NormalDist().inv_cdf(1 - (1 - confidence_level) / 2)
    half = z * c / math.sqrt(n - b)
    return math.tanh(math.atanh(r) - half), math.tanh(math.atanh(r) + half)


def test_messages():
    with pytest.raises(ParameterError) as e:
        fisher_interval(0.5, 10, coefficient="accuracy")
    assert str(e.value) == (
        "`coefficient` must be one of 'pearson', 'spearman', 'kendall-a', 'kendall-b', 'kendall-c'; got 'accuracy'."
    )
    with pytest.raises(ParameterError) as e:
        fisher_interval(0.5, 10, coefficient="foo")
    assert str(e.value).startswith("`coefficient` must be one of 'pearson', 'spearman', 'kendall-a', ")
    with pytest.raises(ParameterError) as e:
        fisher_interval(0.5, 10, coefficient="pearson", confidence_level=1.5)
    assert str(e.value) == "`confidence_level` must be a number in (0, 1); got 1.5."
    with pytest.raises(ParameterError) as e:
        fisher_interval([0.5, -1.25], 10, coefficient="pearson")
    assert str(e.value) == "`r` must be in [-1, 1]; got -1.25."


def test_pearson_pinned_values():
    # arctanh(0.5) = 0.549306, 1.959964 / sqrt(17) = 0.475361, tanh(0.073945) = 0.073811
    low, high = fisher_interval(0.5, 20, coefficient="pearson")
    assert (low, high) == pytest.approx((0.073811, 0.771761), abs=1e-6)
    assert (low, high) == pytest.approx(_by_hand(0.5, 20, 3, 1.0), abs=1e-12)


@pytest.mark.parametrize("r", [-0.7, 0.0, 0.3, 0.95])
@pytest.mark.parametrize("n", [5, 16, 100])
@pytest.mark.parametrize("confidence_level", [0.9, 0.95, 0.99])
def test_against_hand_computation(r, n, confidence_level):
    cases = {
        "pearson": (3, 1.0),
        "spearman": (3, math.sqrt(1 + r * r / 2)),
        "kendall": (4, math.sqrt(0.437)),
        "kendall-a": (4, math.sqrt(0.437)),
        "kendall-c": (4, math.sqrt(0.437)),
    }
    for coefficient, (b, c) in cases.items():
        got = fisher_interval(r, n, coefficient=coefficient, confidence_level=confidence_level)
        assert got == pytest.approx(_by_hand(r, n, b, c, confidence_level), abs=1e-12), coefficient


def test_too_few_pairs_and_nan_give_nan():
    assert np.isnan(fisher_interval(0.5, 3, coefficient="pearson")).all()
    assert not np.isnan(fisher_interval(0.5, 4, coefficient="pearson")).any()
    assert np.isnan(fisher_interval(0.5, 4, coefficient="kendall-b")).all()
    assert np.isnan(fisher_interval(np.nan, 50, coefficient="spearman")).all()


def test_degenerate_and_vectorized():
    assert fisher_interval(1.0, 10, coefficient="pearson") == (1.0, 1.0)
    assert fisher_interval(-1.0, 10, coefficient="pearson") == (-1.0, -1.0)
    r = np.array([[0.1, 0.5], [0.9, -0.2]])
    n = np.array([10, 30])
    low, high = fisher_interval(r, n, coefficient="spearman")
    assert low.shape == high.shape == (2, 2)
    for i in range(2):
        for j in range(2):
            one = fisher_interval(r[i, j], n[j], coefficient="spearman")
            assert (low[i, j], high[i, j]) == pytest.approx(one, abs=1e-15)
    assert np.all(low < r) and np.all(r < high)
