"""The protocol audit: sentinel metrics (never built from the gold), discriminative power and ranking
consistency, `metaeval mt audit` on the real WMT20 MQM data, and its one-line errors."""
from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
import scipy.stats

import metaeval as me
from metaeval.cli.main import main
from metaeval.mt.audit import discriminative_power, mt_audit, wilson_interval
from metaeval.mt.sentinels import add_sentinels, sentinel_matrices
from metaeval.errors import ParameterError


def _toy(seed=0, n=6, m=30, gold=None):
    rng = np.random.default_rng(seed)
    h = rng.normal(size=(n, m)) if gold is None else gold
    mats = {"human": h, "a": h + rng.normal(scale=0.5, size=(n, m)), "b": rng.normal(size=(n, m))}
    mats["a"][0, 0] = np.nan
    return me.ScoreSet.from_matrices(mats, humans=["human"], name="toy")


@pytest.mark.parametrize("seed", range(5))
def test_sentinels_never_touch_the_gold(seed):
    """Property: replacing the gold by anything (other values, NaN cells) leaves every sentinel unchanged."""
    ds = _toy(seed)
    other = ds.matrix("human").copy()
    other[:, ::3] = np.nan
    other = np.random.default_rng(seed + 100).permutation(other.ravel()).reshape(other.shape) * 7
    ds2 = me.ScoreSet.from_matrices({"human": other, "a": ds.matrix("a"), "b": ds.matrix("b")}, humans=["human"])
    one, _ = add_sentinels(ds, ["a", "b"], rng=seed)
    two, _ = add_sentinels(ds2, ["a", "b"], rng=seed)
    for s in ("sentinel-random", "sentinel-system-mean", "sentinel-rounded"):
        np.testing.assert_array_equal(one.matrix(s), two.matrix(s))
    assert "human" not in sentinel_matrices.__code__.co_varnames


def test_sentinel_construction():
    ds = _toy()
    out, notes = add_sentinels(ds, ["a", "b"], levels=4, rng=3)
    a = ds.matrix("a")
    mean = out.matrix("sentinel-system-mean")
    np.testing.assert_allclose(mean, np.repeat(np.nanmean(a, axis=1)[:, None], a.shape[1], axis=1))
    rounded = out.matrix("sentinel-rounded")
    assert set(np.unique(rounded[np.isfinite(rounded)])) <= {0.0, 1.0, 2.0, 3.0}
    assert np.isnan(rounded[0, 0]) and np.isfinite(out.matrix("sentinel-random")).all()
    again, _ = add_sentinels(ds, ["a", "b"], levels=4, rng=3)
    np.testing.assert_array_equal(out.matrix("sentinel-random"), again.matrix("sentinel-random"))
    assert notes == ["sentinel-length left out: no candidate texts given"]
    texts = {(s, i): "w " * (k % 5 + 1) for k, (s, i) in enumerate((s, i) for s in ds.systems for i in ds.inputs)}
    with_len, notes = add_sentinels(ds, ["a"], candidates=texts, rng=0)
    assert notes == [] and with_len.matrix("sentinel-length")[0, :3].tolist()[1:] == [2.0, 3.0]
    assert np.isnan(with_len.matrix("sentinel-length")[0, 0])  # "a" does not score that cell


def test_candidates_missing_a_system_leave_the_length_sentinel_out_not_the_system():
    """Issue 41: texts missing for one system removed that system from every metric's results; now the length
    sentinel is left out (named) and the metrics keep every system."""
    ds = _toy()
    texts = {(s, i): "w " * 3 for s in ds.systems[1:] for i in ds.inputs}
    out, notes = add_sentinels(ds, ["a", "b"], candidates=texts, rng=0)
    assert "sentinel-length" not in out.scorers and list(out.systems) == list(ds.systems)
    assert len(notes) == 1 and notes[0].startswith("sentinel-length left out: the candidate texts lack ")
    assert f"(systems {ds.systems[0]!r}); the metrics' results keep every system" in notes[0]
    np.testing.assert_array_equal(out.matrix("a"), ds.matrix("a"))


@pytest.mark.parametrize("call, message", [
    (lambda ds: add_sentinels(ds, []), "`metrics` must name at least one metric to build the sentinels from; got none."),
    (lambda ds: add_sentinels(ds, ["a"], base="b"), "`base` must be one of the metrics ('a'); got 'b'."),
    (lambda ds: add_sentinels(ds, ["a"], levels=1), "`levels` must be an integer >= 2; got 1."),
    (lambda ds: add_sentinels(ds, ["a"], candidates={("x", "y"): "t"}),
     "`candidates` must hold texts of the data's systems and inputs; got none that match."),
    (lambda ds: mt_audit(ds, ["a"], "human"), "`metrics` must hold at least 2 real metrics to rank the sentinels among;"
     " got 1 ('a')."),
    (lambda ds: mt_audit(ds, ["a", "b"], "human", n_consistency=-1), "`n_consistency` must be an integer >= 0; got -1."),
])
def test_bad_input_is_one_line(call, message):
    with pytest.raises(ParameterError) as err:
        call(_toy())
    assert str(err.value) == message


def test_discriminative_power_by_hand():
    """Three metrics: a beats b (p = 0.01), c beats a in no direction (0.3, 0.6), b vs c only one way at 0.049;
    two of the three pairs differ at alpha = 0.05."""
    p = np.array([[np.nan, 0.01, 0.3], [0.99, np.nan, 0.049], [0.6, 0.95, np.nan]])
    assert discriminative_power(p, 0.05) == (2, 3)
    assert discriminative_power(p, 0.01) == (0, 3)
    low, high = wilson_interval(2, 3, 0.05)
    ci = scipy.stats.binomtest(2, 3).proportion_ci(confidence_level=0.95, method="wilson")
    assert (low, high) == pytest.approx((ci.low, ci.high))


@pytest.fixture
def wmt_ende(shared_data, tmp_path, monkeypatch):
    """The real WMT20 en-de MQM scores with five synthetic metrics (MQM plus seeded noise of growing size)."""
    rng = np.random.default_rng(0)
    mqm = pd.read_csv(shared_data / "wmt" / "mqm_newstest2020_ende.avg_seg_scores.tsv", sep=r"\s+",
                      na_values=["None"])
    mqm = mqm[mqm.seg_id <= 300]
    for i in range(5):
        mqm[f"metric-{i}"] = mqm.mqm_avg_score + rng.normal(scale=0.5 + i, size=len(mqm))
    mqm.rename(columns={"mqm_avg_score": "mqm", "seg_id": "input"}).to_csv(tmp_path / "ende.csv", index=False)
    monkeypatch.chdir(tmp_path)
    return tmp_path


TASKS = ["summary/pearson", "summary/acc-eq", "system/pearson", "system/accuracy"]


def test_audit_on_real_data(wmt_ende):
    ds = me.read_scores("ende.csv", humans=["mqm"])
    res = mt_audit({"en-de": ds}, human="mqm", tasks=TASKS, n_resamples=100, n_consistency=10, rng=1)
    assert res.metrics == tuple(f"metric-{i}" for i in range(5))
    assert res.sentinels == ("sentinel-random", "sentinel-system-mean", "sentinel-rounded")
    frame = res.to_frame().set_index(["task", "scorer"])
    # the system-mean sentinel has exactly its base metric's system scores: equal system-level statistics
    for task in ("en-de:system/pearson", "en-de:system/accuracy"):
        assert frame.loc[(task, "sentinel-system-mean"), "statistic"] == pytest.approx(
            frame.loc[(task, "metric-0"), "statistic"])
    # the random sentinel is below every real metric at item level, and significantly so
    row = frame.loc[("en-de:summary/pearson", "sentinel-random")]
    assert row.position == 6 and row.beaten_by == 5
    # the statistics are mt_evaluate's for the same scorers
    stats = res.statistics[res.tasks.index("en-de:summary/pearson"), :5]
    ref = me.mt_evaluate({"en-de": ds}, human="mqm", protocol="mean", tasks=["summary/pearson"], n_resamples=10, rng=0)
    np.testing.assert_allclose(stats, ref.statistics[0])
    measures = res.measures_frame().set_index("task")
    assert measures.loc["en-de:summary/pearson", "pairs"] == 10
    assert ((measures.dp_low <= measures.discriminative_power) & (measures.discriminative_power <= measures.dp_high)).all()
    cons = measures.loc["en-de:system/pearson"]
    assert -1 <= cons.cons_low <= cons.consistency <= cons.cons_high <= 1 and cons.subsamples == 10
    assert np.isnan(measures.loc["pooled:system/accuracy", "consistency"])
    again = mt_audit({"en-de": ds}, human="mqm", tasks=TASKS, n_resamples=100, n_consistency=10, rng=1)
    assert again.to_frame().equals(res.to_frame()) and again.signature == res.signature


def test_mt_audit_cli(wmt_ende, capsys):
    argv = ["mt", "audit", "--scores", "en-de=ende.csv", "--human", "mqm",
            "--task", "summary/pearson", "--task", "system/pearson", "--n-resamples", "50", "--consistency", "5"]
    assert main([*argv, "--format", "json", "--plot", "audit.png"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["sentinels"] == ["sentinel-random", "sentinel-system-mean", "sentinel-rounded"]
    assert (wmt_ende / "audit.png").stat().st_size > 1000
    assert main(argv) == 0
    text = capsys.readouterr().out
    assert "sentinel position among the 5 metrics" in text and "sentinel-length left out" in text
    # `metaeval mt` itself is unchanged
    assert main(["mt", "--scores", "en-de=ende.csv", "--human", "mqm", "--task",
                 "system/pearson", "--n-resamples", "20", "--format", "json"]) == 0


@pytest.mark.parametrize("extra, message", [
    (["--metric", "metric-0"], "`--metric` must hold at least 2 real metrics to rank the sentinels among; got 1"
     " ('metric-0')."),
    (["--plot", "audit.txt"], "`plot` must be a file name ending in .png or .svg; got 'audit.txt'."),
    (["--candidates", "xx=out.jsonl"], "`--candidates` must name language pairs of the data ('en-de'); got 'xx'."),
    (["--task", "system/nope"], None),
])
def test_mt_audit_cli_errors(wmt_ende, capsys, extra, message):
    argv = ["mt", "audit", "--scores", "en-de=ende.csv", "--human", "mqm", *extra]
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "Traceback" not in err
    if message:
        assert err.endswith(message), err
    assert main(["mt", "audit"]) == 2
    assert capsys.readouterr().err.strip() == "metaeval: error: `--scores` or `--dataset` must be given; got neither."
