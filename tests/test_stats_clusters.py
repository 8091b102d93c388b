"""Significance clusters on hand-built p-value matrices."""
from __future__ import annotations

import numpy as np
import pytest

from metaeval.errors import ParameterError
from metaeval.stats.significance.clusters import rank_ranges, significance_clusters

NAN = np.nan


def test_nothing_significant_is_one_cluster():
    p = np.full((3, 3), 0.5)
    assert significance_clusters([0.3, 0.9, 0.1], p, alpha=0.05).tolist() == [1, 1, 1]


def test_everything_significant_is_a_strict_order():
    p = np.full((3, 3), 0.01)
    assert significance_clusters([0.3, 0.9, 0.1], p, alpha=0.05).tolist() == [2, 1, 3]


def _mt_metrics_eval_ranks(statistics, pvalues, alpha):
    """A plain-python transcription of the documented rule (mt-metrics-eval's AssignRanks, with p < alpha)."""
    order = sorted(range(len(statistics)), key=lambda i: -statistics[i])
    ranks, rank, start = [0] * len(statistics), 1, 0
    for position, i in enumerate(order):
        if position and any(pvalues[order[j]][i] < alpha for j in range(start, position)):
            rank, start = rank + 1, position
        ranks[i] = rank
    return ranks


# The worked example of the module docstring (sorted: A 0.9, B 0.8, C 0.7, D 0.6).
WORKED = np.array([
    # A     B     C     D
    [NAN, 0.30, 0.01, 0.02],  # A beats C and D
    [0.9, NAN, 0.20, 0.30],   # B beats nobody
    [0.9, 0.9, NAN, 0.40],    # C does not beat D
    [0.9, 0.9, 0.9, NAN],
])


def test_regression_a_metric_beaten_only_by_a_better_cluster_does_not_open_a_new_cluster():
    # Issue 10, item 3: the old rule (any metric of the current or a better cluster) gave [1, 1, 2, 3]:
    # D is beaten by A, but A is not in the current cluster {C}, and C does not beat D.
    ranks = significance_clusters([0.9, 0.8, 0.7, 0.6], WORKED, alpha=0.05)
    assert ranks.tolist() == [1, 1, 2, 2]
    assert rank_ranges(ranks) == ("1-2", "1-2", "3-4", "3-4")


def test_only_the_current_cluster_counts():
    # sorted: A, B, C. B beaten by A -> cluster 2 = {B}. C is beaten by A but not by B -> stays in cluster 2
    p = np.array([[NAN, 0.01, 0.01], [0.9, NAN, 0.5], [0.9, 0.9, NAN]])
    assert significance_clusters([3.0, 2.0, 1.0], p, alpha=0.05).tolist() == [1, 2, 2]
    # B beats C: cluster 3
    p[1, 2] = 0.01
    assert significance_clusters([3.0, 2.0, 1.0], p, alpha=0.05).tolist() == [1, 2, 3]


def test_a_new_cluster_forgets_the_members_of_the_previous_one():
    # sorted A, B, C, D: A beats B (B opens cluster 2 = {B}); B does not beat C (C joins cluster 2);
    # C beats D -> cluster 3, although A and B do not beat D.
    p = np.full((4, 4), 0.9)
    p[0, 1] = p[0, 2] = 0.01
    p[2, 3] = 0.01
    assert significance_clusters([4.0, 3.0, 2.0, 1.0], p, alpha=0.05).tolist() == [1, 2, 2, 3]


@pytest.mark.parametrize("seed", range(20))
def test_matches_a_plain_transcription_of_the_rule(seed):
    rng = np.random.default_rng(seed)
    size = int(rng.integers(2, 9))
    stats = rng.permutation(size) / size  # distinct correlations
    p = rng.choice([0.001, 0.04, 0.2, 0.9], size=(size, size))
    np.fill_diagonal(p, NAN)
    assert significance_clusters(stats, p, alpha=0.05).tolist() == _mt_metrics_eval_ranks(stats, p, 0.05)


def test_rank_ranges():
    assert rank_ranges([1, 1, 1]) == ("1-3",) * 3
    assert rank_ranges([3, 1, 2]) == ("3", "1", "2")
    assert rank_ranges([1, 2, 1, 3, 2]) == ("1-2", "3-4", "1-2", "5", "3-4")
    with pytest.raises(ParameterError) as info:
        rank_ranges([[1]])
    assert str(info.value) == "`ranks` must be a 1-dimensional array; got shape (1, 1)."


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
