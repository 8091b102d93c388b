"""SummEval correlations against the tables published with SacreROUGE.

Reference numbers: SacreROUGE documentation, doc/datasets/fabbri2020.md, "Single-reference" tables
(Deutsch & Roth, danieldeutsch/sacrerouge, Apache-2.0): correlations of each metric with the mean of
the three expert relevance scores on the 16 x 100 SummEval summaries, peers only; r = Pearson,
p = Spearman, k = Kendall tau-b, printed to 2 decimals. We compute them from the packaged dataset
(converted from ../shared/data/summeval).
"""
from __future__ import annotations

import pytest

import metaeval as me

#            scorer               summary-level (r, p, k)   system-level (r, p, k)
PUBLISHED = {
    "rouge-1.precision": ((0.13, 0.12, 0.09), (0.29, 0.15, 0.03)),
    "rouge-1.recall": ((0.31, 0.28, 0.23), (0.55, 0.56, 0.42)),
    "rouge-1.f1": ((0.28, 0.26, 0.20), (0.61, 0.62, 0.50)),
    "rouge-2.precision": ((0.15, 0.13, 0.09), (0.49, 0.41, 0.25)),
    "rouge-2.recall": ((0.26, 0.23, 0.18), (0.65, 0.78, 0.57)),
    "rouge-2.f1": ((0.23, 0.19, 0.14), (0.64, 0.60, 0.43)),
    "bertscore.precision": ((0.17, 0.17, 0.13), (0.18, 0.11, 0.02)),
    "bertscore.recall": ((0.37, 0.35, 0.27), (0.84, 0.91, 0.75)),
    "bertscore.f1": ((0.29, 0.28, 0.22), (0.54, 0.40, 0.28)),
    "moverscore": ((0.28, 0.24, 0.18), (0.56, 0.54, 0.42)),
    "qa-eval.em": ((0.23, 0.23, 0.19), (0.80, 0.91, 0.77)),
    "qa-eval.f1": ((0.30, 0.29, 0.22), (0.82, 0.91, 0.77)),
}
COEFFICIENTS = ("pearson", "spearman", "kendall-b")
CASES = [
    (metric, level, coefficient, values[position][index])
    for metric, values in PUBLISHED.items()
    for position, level in enumerate(("summary", "system"))
    for index, coefficient in enumerate(COEFFICIENTS)
]


@pytest.fixture(scope="module")
def summeval():
    return me.load_dataset("summeval")


@pytest.mark.parametrize("tie_tolerance", [None, 0.0])  # the default rule, and exact ties as scipy
@pytest.mark.parametrize("metric,level,coefficient,published", CASES)
def test_summeval_matches_sacrerouge_table(summeval, metric, level, coefficient, published, tie_tolerance):
    result = me.correlate(summeval, metric, "expert.relevance", level=level, coefficient=coefficient,
                          tie_tolerance=tie_tolerance)
    # agreeing to 2 decimals: the published value is our value rounded
    assert abs(result.statistic - published) <= 0.005 + 1e-9
    assert result.n_skipped == 0 or level == "summary"
