"""Corpus metrics at the system level (stats/corpus.py, stats/significance/corpus_tests.py).

Oracles: a corpus metric whose statistics are (score, 1) and whose aggregate is their ratio *is* the mean
metric, so every system-level interval and test must equal the matrix path with the same draws; and a
plain loop that materializes every bootstrap resample and re-sums the statistics.
"""
from __future__ import annotations

import warnings

import numpy as np
import pytest

from metaeval.errors import ParameterError
from metaeval.stats.resampling.bootstrap import bootstrap_interval
from metaeval.stats.corpus import CorpusScores, corpus_system_means
from metaeval.stats.correlations.levels import level_correlation
from metaeval.stats.significance.corpus_tests import corpus_pairwise_tests
from metaeval.stats.significance.pairs import pairwise_tests
from metaeval.stats.significance.pvalues import analytic_pvalue, permutation_pvalue
from metaeval.stats.resampling.draws import bootstrap_draws


def ratio(sums):
    return sums[..., 0] / sums[..., 1]


def _data(seed=0, n=9, m=40):
    rng = np.random.default_rng(seed)
    z = rng.normal(size=(n, 1)) + rng.normal(size=(n, m))
    x = z + rng.normal(size=(n, m))
    y = z + rng.normal(scale=2.0, size=(n, m))
    counts = rng.integers(0, 20, size=(n, m, 2)).astype(float)
    counts[..., 1] += 20.0
    return x, y, z, counts


def as_corpus(x):
    """The mean metric ``x`` as a corpus metric: statistics (score, 1), aggregate = their ratio."""
    return CorpusScores(np.stack([x, np.ones_like(x)], axis=-1), ratio)


@pytest.fixture(autouse=True)
def _quiet():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


@pytest.mark.parametrize("coefficient", ["pearson", "kendall-b", "spearman", "acc-eq"])
@pytest.mark.parametrize("method", ["systems", "inputs", "both"])
def test_a_mean_metric_written_as_corpus_statistics_gives_the_matrix_interval(coefficient, method):
    x, _, z, _ = _data()
    kw = dict(level="system", coefficient=coefficient, method=method, n_resamples=300, rng=3)
    corpus, matrix = bootstrap_interval(as_corpus(x), z, **kw), bootstrap_interval(x, z, **kw)
    assert corpus.statistic == pytest.approx(matrix.statistic, abs=1e-12)
    np.testing.assert_allclose(corpus.samples, matrix.samples, atol=1e-12)
    assert corpus.ci == pytest.approx(matrix.ci, abs=1e-12)


def test_bca_jackknife_of_a_corpus_metric_equals_the_matrix_one():
    x, _, z, _ = _data(1)
    kw = dict(level="system", coefficient="pearson", method="both", n_resamples=300, rng=0, interval="bca")
    assert bootstrap_interval(as_corpus(x), z, **kw).ci == pytest.approx(bootstrap_interval(x, z, **kw).ci, abs=1e-12)


@pytest.mark.parametrize("method", ["inputs", "both"])
def test_resampled_corpus_scores_resum_the_statistics_of_the_drawn_inputs(method):
    _, _, z, counts = _data(2)
    out = bootstrap_interval(CorpusScores(counts, ratio), z, level="system", coefficient="kendall-b", method=method,
                             n_resamples=50, rng=7)
    draws = bootstrap_draws(*z.shape, method=method, n_resamples=50, rng=7)
    rows, cols = draws.row_indices(), draws.col_indices()
    expected = []
    for b in range(50):
        drawn = counts[rows[b]][:, cols[b]]  # the resampled test set, copies included
        corpus = drawn[..., 0].sum(axis=1) / drawn[..., 1].sum(axis=1)
        expected.append(float(level_correlation(corpus[:, None], z[rows[b]][:, cols[b]].mean(axis=1)[:, None],
                                                level="system", coefficient="kendall-b",
                                                row_units=rows[b] if method == "both" else None).statistic))
    np.testing.assert_allclose(out.samples, np.array(expected), atol=1e-12)


def test_corpus_score_is_not_the_mean_of_sentence_scores():
    _, _, z, counts = _data(3)
    xbar, zbar, dropped = corpus_system_means(CorpusScores(counts, ratio), z)
    np.testing.assert_allclose(xbar, counts[..., 0].sum(1) / counts[..., 1].sum(1))
    assert not np.allclose(xbar, ratio(counts).mean(axis=1))
    np.testing.assert_allclose(zbar, z.mean(axis=1))
    assert dropped == 0


def test_inputs_without_statistics_or_human_scores_are_left_out_for_every_system():
    _, _, z, counts = _data(4)
    counts[2, 5] = np.nan  # one system lacks statistics on input 5
    z = z.copy()
    z[0, 7] = np.nan  # one system lacks a human score on input 7
    xbar, zbar, dropped = corpus_system_means(CorpusScores(counts, ratio), z)
    keep = np.ones(z.shape[1], dtype=bool)
    keep[[5, 7]] = False
    np.testing.assert_allclose(xbar, counts[:, keep, 0].sum(1) / counts[:, keep, 1].sum(1))
    np.testing.assert_allclose(zbar, z[:, keep].mean(axis=1))
    assert dropped == 2
    full = corpus_system_means(CorpusScores(counts, ratio), z, full_test_set=True)
    keep_x = np.ones(z.shape[1], dtype=bool)
    keep_x[5] = False
    np.testing.assert_allclose(full[0], counts[:, keep_x, 0].sum(1) / counts[:, keep_x, 1].sum(1))
    keep_z = np.ones(z.shape[1], dtype=bool)
    keep_z[7] = False
    np.testing.assert_allclose(full[1], z[:, keep_z].mean(axis=1))
    interval = bootstrap_interval(CorpusScores(counts, ratio), z, level="system", coefficient="pearson", n_resamples=20,
                                  rng=0, full_test_set=True)
    assert np.isfinite(interval.ci).all()


def test_pvalues_of_a_corpus_metric_are_those_of_its_system_scores():
    from scipy import stats

    _, _, z, counts = _data(5)
    corpus = CorpusScores(counts, ratio)
    xbar = ratio(counts.sum(axis=1))
    assert analytic_pvalue(corpus, z, level="system", coefficient="pearson") == pytest.approx(
        stats.pearsonr(xbar, z.mean(axis=1)).pvalue, abs=1e-12)
    perm = permutation_pvalue(corpus, z, level="system", coefficient="pearson", n_resamples=200,
                              rng=np.random.default_rng(0))
    again = permutation_pvalue(xbar[:, None], z.mean(axis=1)[:, None], level="system", coefficient="pearson",
                               n_resamples=200, rng=np.random.default_rng(0))
    assert perm.pvalue == again.pvalue


@pytest.mark.parametrize("test,method", [("bootstrap", "inputs"), ("bootstrap", "both"), ("bootstrap", "systems"),
                                         ("williams", "both")])
def test_pairwise_tests_with_a_corpus_metric_equal_the_matrix_tests(test, method):
    x, y, z, _ = _data(6)
    kw = dict(test=test, method=method, level="system", coefficient="pearson", n_resamples=200, rng=1,
              correction="holm")
    corpus = corpus_pairwise_tests([as_corpus(x), y], z, **{k: v for k, v in kw.items() if k != 'level'})
    matrix = pairwise_tests(np.stack([x, y]), z, **kw)
    np.testing.assert_allclose(corpus.statistics, matrix.statistics, atol=1e-12)
    np.testing.assert_allclose(corpus.pvalues, matrix.pvalues, atol=1e-12)
    np.testing.assert_allclose(corpus.adjusted_pvalues, matrix.adjusted_pvalues, atol=1e-12)


def test_perm_systems_swaps_system_scores_standardized_over_systems():
    x, y, z, counts = _data(7)
    corpus = CorpusScores(counts, ratio)
    out = corpus_pairwise_tests([corpus, y], z, test="permutation", method="systems", coefficient="kendall-b",
                                n_resamples=200, rng=2)
    means = np.stack([ratio(counts.sum(axis=1)), y.mean(axis=1)])[:, :, None]
    again = pairwise_tests(means, z.mean(axis=1)[:, None], test="permutation", method="systems", level="system",
                           coefficient="kendall-b", n_resamples=200, rng=2)
    np.testing.assert_array_equal(out.pvalues, again.pvalues)


def test_corpus_metrics_are_refused_where_they_have_no_scores():
    x, y, z, counts = _data(8)
    corpus = CorpusScores(counts, ratio)
    with pytest.raises(ParameterError, match=r"^`method` must be 'systems' for a permutation test with a corpus "
                                             r"metric .*; got 'both'\.$"):
        corpus_pairwise_tests([corpus, y], z, test="permutation", method="both", n_resamples=10, rng=0)
    with pytest.raises(ParameterError, match=r"^`level` must be 'system' for a corpus metric .*; got 'summary'\.$"):
        bootstrap_interval(corpus, z, level="summary", n_resamples=10, rng=0)
    with pytest.raises(ParameterError, match=r"^`level` must be 'system' for a corpus metric .*; got 'global'\.$"):
        level_correlation(corpus, z, level="global", coefficient="pearson")
    with pytest.raises(ParameterError, match=r"^`z` must have shape \(9, 40\) to match the corpus statistics; "
                                             r"got shape \(9, 39\)\.$"):
        level_correlation(corpus, z[:, 1:], level="system", coefficient="pearson")
    with pytest.raises(ParameterError, match=r"^`statistics` must be an array of shape \(systems, inputs, "
                                             r"statistics\); got shape \(9, 40\)\.$"):
        CorpusScores(x, ratio)


def test_corpus_pairwise_pvalues_of_a_mean_metric_are_the_segment_ones():
    from metaeval.stats.mt.wmt import corpus_system_pvalues, system_pvalues

    x, _, _, _ = _data(9, n=5, m=30)
    signs = np.where(np.random.default_rng(0).random((200, 30)) < 0.5, -1.0, 1.0)
    np.testing.assert_allclose(corpus_system_pvalues(as_corpus(x), signs), system_pvalues(x, signs), atol=1e-12)


def test_corpus_pairwise_pvalues_rescore_the_swapped_corpora():
    from metaeval.stats.mt.wmt import corpus_system_pvalues

    _, _, _, counts = _data(10, n=4, m=12)
    signs = np.where(np.random.default_rng(1).random((60, 12)) < 0.5, -1.0, 1.0)
    out = corpus_system_pvalues(CorpusScores(counts, ratio), signs)
    for i in range(4):
        for j in range(i + 1, 4):
            delta = ratio(counts[i].sum(0)) - ratio(counts[j].sum(0))
            null = []
            for row in signs:  # materialise the two swapped corpora
                a = np.where((row < 0)[:, None], counts[j], counts[i])
                b = np.where((row < 0)[:, None], counts[i], counts[j])
                null.append(ratio(a.sum(0)) - ratio(b.sum(0)))
            null = np.array(null)
            tol = 100 * np.finfo(float).eps * abs(delta)
            assert out[i, j] == (1 + (null >= delta - tol).sum()) / 61
            assert out[j, i] == (1 + (null <= delta + tol).sum()) / 61


@pytest.mark.parametrize("method", ["systems", "inputs", "both"])
def test_paired_bootstrap_test_of_a_corpus_metric_equals_the_matrix_test(method):
    from metaeval.stats.significance.paired_bootstrap import bootstrap_test

    x, y, z, _ = _data(11)
    kw = dict(level="system", coefficient="pearson", method=method, n_resamples=200, rng=4)
    corpus, matrix = bootstrap_test(as_corpus(x), y, z, **kw), bootstrap_test(x, y, z, **kw)
    assert corpus.pvalue == matrix.pvalue
    np.testing.assert_allclose(corpus.samples, matrix.samples, atol=1e-12)


def test_stats_permutation_test_refuses_corpus_metrics():
    from metaeval.stats.significance.permutation import permutation_test

    x, y, z, counts = _data(12)
    with pytest.raises(ParameterError, match=r"^`x` and `y` must be score matrices for a permutation test \(it "
                                             r"swaps cells.*; got CorpusScores\.$"):
        permutation_test(x, CorpusScores(counts, ratio), z, level="system", n_resamples=10, rng=0)
