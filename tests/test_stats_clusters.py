"""Significance clusters on hand-built p-value matrices."""
from __future__ import annotations

import numpy as np
import pytest

from metaeval.errors import ParameterError
from metaeval.stats.clusters import significance_clusters

NAN = np.nan


def test_nothing_significant_is_one_cluster():
    p = np.full((3, 3), 0.5)
    assert significance_clusters([0.3, 0.9, 0.1], p, alpha=0.05).tolist() == [1, 1, 1]


def test_everything_significant_is_a_strict_order():
    p = np.full((3, 3), 0.01)
    assert significance_clusters([0.3, 0.9, 0.1], p, alpha=0.05).tolist() == [2, 1, 3]


def test_a_metric_beaten_by_a_better_cluster_opens_a_new_cluster():
    # sorted: A (0.9), B (0.8), C (0.7), D (0.6)
    # B ~ A; C beaten by A only -> new cluster; D ~ C but beaten by A (a better cluster) -> new cluster
    p = np.array([
        # A     B     C     D
        [NAN, 0.30, 0.01, 0.02],  # A beats C, D
        [0.9, NAN, 0.20, 0.30],   # B beats nobody
        [0.9, 0.9, NAN, 0.40],
        [0.9, 0.9, 0.9, NAN],
    ])
    ranks = significance_clusters([0.9, 0.8, 0.7, 0.6], p, alpha=0.05)
    assert ranks.tolist() == [1, 1, 2, 3]


def test_only_the_current_and_better_clusters_count():
    # sorted: A, B, C. B beaten by A -> cluster 2. C is not beaten by B, but by A -> cluster 3
    p = np.array([[NAN, 0.01, 0.01], [0.9, NAN, 0.5], [0.9, 0.9, NAN]])
    assert significance_clusters([3.0, 2.0, 1.0], p, alpha=0.05).tolist() == [1, 2, 3]
    # C not beaten by anyone: joins B's cluster
    p[0, 2] = 0.5
    assert significance_clusters([3.0, 2.0, 1.0], p, alpha=0.05).tolist() == [1, 2, 2]


def test_alpha_is_strict_and_nan_is_not_significant():
    p = np.array([[NAN, 0.05], [NAN, NAN]])
    assert significance_clusters([1.0, 0.0], p, alpha=0.05).tolist() == [1, 1]
    assert significance_clusters([1.0, 0.0], p, alpha=0.051).tolist() == [1, 2]


def test_input_order_is_kept_and_undefined_statistics_rank_last():
    p = np.full((3, 3), 0.01)
    assert significance_clusters([NAN, 0.2, 0.5], p, alpha=0.05).tolist() == [3, 2, 1]


def test_validation():
    with pytest.raises(ParameterError) as info:
        significance_clusters([1.0, 2.0], np.zeros((3, 3)), alpha=0.05)
    assert str(info.value) == "`pvalues` must have shape (2, 2); got (3, 3)."
    with pytest.raises(ParameterError) as info:
        significance_clusters([1.0, 2.0], np.zeros((2, 2)), alpha=5)
    assert str(info.value) == "`alpha` must be a number in (0, 1); got 5."
