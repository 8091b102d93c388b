"""The tie tolerance: one rule, exact comparison on request, passed explicitly and recorded."""
from __future__ import annotations

import json

import numpy as np
import pytest
from scipy import stats

import metaeval as me
from metaeval.cli.main import main
from metaeval.errors import ParameterError
from metaeval.runtime.tasks import map_tasks
from metaeval.stats.resampling.bootstrap import bootstrap_samples
from metaeval.stats.correlations.coefficients import correlation
from metaeval.stats.resampling.draws import bootstrap_draws
from metaeval.stats.correlations.ties import TIE_RTOL, check_tie_tolerance

HUMAN = "expert.relevance"
# SummEval metrics whose summary-level Kendall tau-b differs from scipy's under the default rule: their
# per-input values include pairs equal in exact arithmetic that differ in the last bit
LAST_BIT_METRICS = ("qa-eval.f1", "s3.pyr", "s3.resp", "bewte.f1")


@pytest.fixture(scope="module")
def summeval():
    return me.load_dataset("summeval")


@pytest.mark.parametrize("value, message", [
    (-1e-9, "`tie_tolerance` must be a number in [0, 0.001] (0 = exact ties); got -1e-09."),
    (0.01, "`tie_tolerance` must be a number in [0, 0.001] (0 = exact ties); got 0.01."),
    ("tight", "`tie_tolerance` must be a number in [0, 0.001] (0 = exact ties); got 'tight'."),
    (True, "`tie_tolerance` must be a number in [0, 0.001] (0 = exact ties); got True."),
    (float("nan"), "`tie_tolerance` must be a number in [0, 0.001] (0 = exact ties); got nan."),
])
def test_validation_messages(value, message):
    with pytest.raises(ParameterError) as info:
        check_tie_tolerance(value)
    assert str(info.value) == message


def test_default_is_the_relative_rule_and_the_parameter_changes_it():
    assert TIE_RTOL == me.defaults.TIE_TOLERANCE == 1e-9
    x, y = [1.0, 1.0 + 1e-12, 2.0], [1.0, 2.0, 3.0]
    assert correlation(x, y, "kendall-b") == pytest.approx(0.8164965809277259)  # the first two tie
    assert correlation(x, y, "kendall-b", rtol=0.0) == 1.0  # exact comparison: no tie
    assert correlation(x, y, "kendall-b") == pytest.approx(0.8164965809277259)  # no state left behind


@pytest.mark.parametrize("metric", LAST_BIT_METRICS)
def test_exact_ties_reproduce_scipy_on_summeval(summeval, metric):
    x, z = summeval.matrix(metric), summeval.matrix(HUMAN)
    scipy_value = np.mean([stats.kendalltau(x[:, j], z[:, j]).statistic for j in range(x.shape[1])])
    exact = me.correlate(summeval, metric, HUMAN, level="summary", coefficient="kendall-b", tie_tolerance=0)
    assert exact.statistic == pytest.approx(scipy_value, abs=1e-12)
    default = me.correlate(summeval, metric, HUMAN, level="summary", coefficient="kendall-b")
    assert 1e-5 < abs(default.statistic - scipy_value) < 5e-4


def test_a_non_default_tolerance_is_in_every_signature_of_the_call(summeval):
    table = me.correlation_table(summeval, HUMAN, ["rouge-2.recall", "s3.pyr"], levels=["summary"],
                                 coefficients=["kendall-b"], ci="none", tie_tolerance=0)
    signatures = [str(s) for s in table.to_frame()["signature"]]
    assert signatures and all("|tie_tolerance:0|" in s for s in signatures)
    default = me.correlate(summeval, "s3.pyr", HUMAN, level="summary")
    assert "tie_tolerance" not in str(default.signature)


def test_nested_calls_receive_the_tolerance(summeval):
    table = me.correlation_table(summeval, HUMAN, ["s3.pyr"], levels=["summary"], coefficients=["kendall-b"],
                                 ci="none", rng=None, tie_tolerance=0)
    nested = table.get("s3.pyr", "summary", "kendall-b")
    explicit = me.correlate(summeval, "s3.pyr", HUMAN, level="summary", coefficient="kendall-b", tie_tolerance=0)
    assert nested.statistic == explicit.statistic
    assert str(nested.signature) == str(explicit.signature)


@pytest.mark.parametrize("method", ["systems", "inputs", "both"])
@pytest.mark.parametrize("level", ["system", "summary", "by-system", "global"])
@pytest.mark.parametrize("rtol", [0.0, 1e-9])
def test_kernels_follow_the_tolerance(method, level, rtol):
    rng = np.random.default_rng(0)
    z = rng.integers(1, 4, size=(9, 7)) / 3.0
    x = z + rng.integers(0, 2, size=(9, 7)) * 1e-13  # near-ties: ties under 1e-9, distinct when exact
    draws = bootstrap_draws(9, 7, method=method, n_resamples=30, rng=1)
    kw = dict(level=level, coefficient="kendall-b", draws=draws, rtol=rtol)
    fast = bootstrap_samples(x, z, engine="auto", **kw)
    ref = bootstrap_samples(x, z, engine="reference", **kw)
    if rtol == 0 and level == "system" and method != "systems":
        # exact ties of resampled means depend on how they were summed: the kernel sums exactly
        # (rounded once), the reference with numpy - the reason for the default tolerance
        assert np.nanmax(np.abs(fast - ref)) > 0.01
        return
    np.testing.assert_allclose(fast, ref, rtol=0, atol=1e-12)


def _kendall_of_task(rtol):
    return float(correlation([1.0, 1.0 + 1e-12, 2.0], [1.0, 2.0, 3.0], "kendall-b", rtol=rtol))


def test_worker_processes_receive_the_tolerance_with_their_task():
    assert map_tasks(_kendall_of_task, [0.0, TIE_RTOL], workers=2) == [1.0, pytest.approx(0.8164965809277259)]


def test_cli_option(tmp_path, capsys):
    out = tmp_path / "t.json"
    code = main(["correlate", "--dataset", "summeval", "--metric", "s3.pyr", "--level", "summary",
                 "--coefficient", "kendall-b", "--ci", "none", "--tie-tolerance", "0", "--format", "json",
                 "--output", str(out)])
    assert code == 0, capsys.readouterr().err
    [result] = json.loads(out.read_text())["results"]
    assert "tie_tolerance:0" in result["signature"]
    assert main(["correlate", "--dataset", "summeval", "--tie-tolerance", "1"]) == 2
    assert "--tie-tolerance" in capsys.readouterr().err
