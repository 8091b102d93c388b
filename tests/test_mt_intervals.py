"""`metaeval mt` prints confidence intervals (issue 41 item 4): each task statistic's and each average's percentile
interval over bootstrap resamples of the segments - the bootstrap test's own resamples, or under the permutation
test (``intervals=True``, ``--intervals``) resamples of their own keyed stream, so the test does not move."""
import json

import numpy as np
import pandas as pd
import pytest
import scipy.stats

import metaeval as me
from metaeval.cli.main import main
from metaeval.mt.evaluate import percentile_interval
from metaeval.mt.streams import stream
from metaeval.stats.resampling.draws import bootstrap_draws


@pytest.fixture
def ende(shared_data):
    """The real WMT20 en-de MQM averages with two generated metrics (a close one and a noisy one)."""
    rng = np.random.default_rng(0)
    mqm = pd.read_csv(shared_data / "wmt" / "mqm_newstest2020_ende.avg_seg_scores.tsv", sep=r"\s+")
    mqm = mqm.assign(good=mqm.mqm_avg_score + rng.normal(scale=2, size=len(mqm)),
                     noisy=mqm.mqm_avg_score + rng.normal(scale=8, size=len(mqm)))
    return mqm


def _scoreset(frame):
    frame = frame.dropna()
    full = frame.groupby("seg_id").system.nunique()
    frame = frame[frame.seg_id.isin(full[full == frame.system.nunique()].index)]
    mats = {name: frame.pivot(index="system", columns="seg_id", values=name).to_numpy()
            for name in ("mqm_avg_score", "good", "noisy")}
    return me.ScoreSet.from_matrices(mats, humans=["mqm_avg_score"], name="en-de"), mats


def test_bootstrap_intervals_are_the_percentiles_of_the_tests_resamples(ende):
    """Oracle: the segment resamples of the stream ('mt', lp, 'segments') rebuilt by hand, Pearson of the resampled
    system means by scipy, numpy's percentiles."""
    ds, mats = _scoreset(ende)
    res = me.mt_evaluate({"en-de": ds}, human="mqm_avg_score", tasks=["system/pearson"], significance="bootstrap",
                         n_resamples=60, rng=11)
    m = mats["good"].shape[1]
    cols = bootstrap_draws(mats["good"].shape[0], m, method="inputs", n_resamples=60,
                           rng=stream(11, "mt", "en-de", "segments")).col_indices()
    for i, metric in enumerate(res.metrics):
        r = [scipy.stats.pearsonr(mats[metric][:, c].mean(axis=1), mats["mqm_avg_score"][:, c].mean(axis=1))[0]
             for c in cols]
        np.testing.assert_allclose(res.intervals["en-de:system/pearson"][i], np.percentile(r, [2.5, 97.5]),
                                   rtol=1e-10)
        lo, hi = res.intervals["en-de:system/pearson"][i]
        assert lo <= res.statistics[0, i] <= hi
    # the average of one correlation task: its rescaled interval
    np.testing.assert_allclose(res.average_intervals["en-de"], (res.intervals["en-de:system/pearson"] + 1) / 2)
    assert "intervals" not in str(res.signature)  # the test's own resamples: already signed by significance


def test_permutation_intervals_leave_the_test_as_it_was(ende):
    ds, _ = _scoreset(ende)
    kw = dict(human="mqm_avg_score", tasks=["system/pearson", "summary/kendall-b"], n_resamples=40, rng=5)
    plain = me.mt_evaluate({"en-de": ds}, **kw)
    with_ci = me.mt_evaluate({"en-de": ds}, **kw, intervals=True)
    assert plain.intervals == {} and "intervals" not in plain.to_dict()
    for task in plain.tasks:
        np.testing.assert_array_equal(plain.task_pvalues[task], with_ci.task_pvalues[task])
        assert with_ci.intervals[task].shape == (2, 2)
        assert (with_ci.intervals[task][:, 0] <= with_ci.intervals[task][:, 1]).all()
    assert "|intervals:boot-inputs|" in str(with_ci.signature)
    # rebuilt from the seed alone
    again = me.mt_evaluate({"en-de": ds}, **kw, intervals=True)
    for task in plain.tasks:
        np.testing.assert_array_equal(again.intervals[task], with_ci.intervals[task])
    rows = pd.DataFrame(with_ci.frame_rows())
    assert {"low", "high"} <= set(rows.columns) and rows[["low", "high"]].notna().all().all()


def test_percentile_interval_drops_undefined_resamples():
    got = percentile_interval(np.array([[0.0, 1.0, np.nan, 2.0], [np.nan] * 4]), 0.5)
    np.testing.assert_allclose(got[0], np.percentile([0.0, 1.0, 2.0], [25, 75]))
    assert np.isnan(got[1]).all()


def test_cli_prints_the_intervals(ende, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("COLUMNS", "100")
    ende.to_csv("ende.csv", index=False)
    argv = ["mt", "--scores", "en-de=ende.csv", "--input-column", "seg_id", "--human", "mqm_avg_score",
            "--task", "system/pearson", "--n-resamples", "40", "--seed", "3"]
    assert main(argv) == 0
    assert "intervals" not in capsys.readouterr().out
    assert main([*argv, "--intervals"]) == 0
    out = capsys.readouterr().out
    assert "95% intervals, language pairs" in out and "95% intervals, pooled" in out
    assert main([*argv, "--intervals", "--format", "json"]) == 0
    got = json.loads(capsys.readouterr().out)
    lo, hi = got["intervals"]["en-de:system/pearson"][0]
    assert lo <= got["statistics"][0][0] <= hi
    assert f"[{lo:.3f}, {hi:.3f}]" in out


@pytest.mark.parametrize("kwargs, message", [
    (dict(intervals="yes"), "`intervals` must be True or False; got 'yes'."),
    (dict(intervals=True, segments="per-metric"),
     "`intervals` must not be given with segments 'per-metric' (each metric on its own segments draws no"
     " resamples); got it."),
])
def test_intervals_refused_where_they_cannot_be_drawn(ende, kwargs, message):
    ds, _ = _scoreset(ende)
    with pytest.raises(me.ParameterError) as err:
        me.mt_evaluate({"en-de": ds}, human="mqm_avg_score", tasks=["system/pearson"], n_resamples=10, rng=0, **kwargs)
    assert str(err.value) == message


def test_cli_names_the_flag(ende, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    ende.to_csv("ende.csv", index=False)
    assert main(["mt", "--scores", "en-de=ende.csv", "--input-column", "seg_id", "--human", "mqm_avg_score",
                 "--task", "system/pearson", "--segments", "per-metric", "--intervals"]) == 2
    assert capsys.readouterr().err.strip() == (
        "metaeval: error: `--intervals` must not be given with segments 'per-metric' (each metric on its own segments"
        " draws no resamples); got it.")
