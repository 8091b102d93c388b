"""Human baselines in `metaeval mt` and rater waves (docs/mt.md, "Human baselines"): a human scorer other than
the gold scored as if it were a metric, under the same draws, marked as human in every output, with verdicts
above / level / below; multi-rater MQM ratings split into seeded waves."""
from __future__ import annotations

import json
import re
import warnings

import numpy as np
import pandas as pd
import pytest
import scipy.stats

import metaeval as me
from metaeval.cli.main import main
from metaeval.mt.baselines import verdict
from metaeval.errors import DataWarning, ParameterError
from metaeval.human.waves import rater_waves
from metaeval.report.formats import to_paper

RATINGS = "wmt/mqm_ratings/sxs_mqm_generalMT2023_{}.3ratings.tsv.gz"
TED = "wmt/mqm_ratings/mqm_ted_ende.tsv.gz"
LPS = {"en-de": "ende", "zh-en": "zhen"}
TASKS = ["system/accuracy", "system/pearson", "global/pearson", "summary/acc23"]


def _ratings(shared_data, short):
    return me.read_mqm_ratings(shared_data / RATINGS.format(short))


# -- rater waves ------------------------------------------------------------------------------------------


def _tiny():
    """2 systems x 2 segments, raters r1, r2, r3 on every cell (scores chosen so every mean is distinct)."""
    r = {"r1": [[-1.0, -2.0], [-3.0, -4.0]], "r2": [[-10.0, -20.0], [-30.0, -40.0]],
         "r3": [[-100.0, -200.0], [-300.0, -400.0]]}
    mats = {f"mqm.{k}": np.array(v) for k, v in r.items()}
    mats["mqm"] = np.mean([mats[f"mqm.{k}"] for k in r], axis=0)
    return me.ScoreSet(mats, systems=["A", "B"], inputs=["s1", "s2"], humans=["mqm"], name="tiny")


def test_waves_by_hand_follow_the_documented_rule():
    ds = _tiny()
    w = rater_waves(ds, 2, rng=7)
    gen = np.random.default_rng(7)  # the rule: per segment, a permutation of its raters dealt round-robin
    raters = ["r1", "r2", "r3"]
    for j, seg in enumerate(ds.inputs):
        order = [raters[i] for i in gen.permutation(3)]
        assert w.assignment[seg] == (tuple(order[0::2]), tuple(order[1::2]))
        for wave, members in zip(("mqm.wave1", "mqm.wave2"), w.assignment[seg]):
            expected = np.mean([ds.matrix(f"mqm.{r}")[:, j] for r in members], axis=0)
            np.testing.assert_array_equal(w.scores.matrix(wave)[:, j], expected)
    assert w.counts() == {"2+1": 2} and w.names == ("mqm.wave1", "mqm.wave2") and w.seed == 7
    # the waves and the raters are human scorers; the averaged human is unchanged
    assert set(w.scores.humans) == {"mqm", "mqm.r1", "mqm.r2", "mqm.r3", "mqm.wave1", "mqm.wave2"}
    np.testing.assert_array_equal(w.scores.matrix("mqm"), ds.matrix("mqm"))
    # seeded: the same seed gives the same waves, three waves give one rater each
    assert rater_waves(ds, 2, rng=7).assignment == w.assignment
    three = rater_waves(ds, 3, rng=0)
    assert three.counts() == {"1+1+1": 2}
    for seg, waves in three.assignment.items():
        assert sorted(r for wave in waves for r in wave) == raters


def test_waves_of_the_wmt23_ratings(shared_data):
    r = _ratings(shared_data, "ende")
    w = rater_waves(r, 2, rng=0)
    assert w.counts() == {"2+1": 104}
    ds = w.scores
    # two raters in wave 1, one in wave 2: their weighted mean is the three-rater average of the release
    np.testing.assert_allclose((2 * ds.matrix("mqm.wave1") + ds.matrix("mqm.wave2")) / 3, ds.matrix("mqm"))
    # each segment's raters are split, never shared between waves, and every rater of the segment is used
    for seg, (one, two) in w.assignment.items():
        assert len(one) == 2 and len(two) == 1 and not set(one) & set(two)
        j = ds.inputs.index(seg)
        rated = {name.split(".", 1)[1] for name in ds.scorers if name.startswith("mqm.rater")
                 and np.isfinite(ds.matrix(name)[:, j]).any()}
        assert rated == set(one) | set(two)


def test_waves_refuse_segments_with_too_few_raters(shared_data):
    with pytest.raises(ParameterError) as err:
        rater_waves(_ratings(shared_data, "ende"), 4, rng=0)
    assert str(err.value) == ("`waves` must leave every wave a rater on every system of a segment; got 104 of 104 "
                              "segments with fewer than 4 raters on some system they rated (first: '1', '2', '3', ...).")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DataWarning)  # the TED file's open span
        ted = me.read_mqm_ratings(shared_data / TED, per_rater=True)
    with pytest.raises(ParameterError, match=re.escape("got 529 of 529 segments with fewer than 2 raters")):
        rater_waves(ted, 2, rng=0)


def test_one_segment_left_one_rater_is_named():
    mats = {k: v.copy() for k, v in ((s, _tiny().matrix(s)) for s in _tiny().scorers)}
    mats["mqm.r2"][:, 1] = np.nan
    mats["mqm.r3"][:, 1] = np.nan
    ds = me.ScoreSet(mats, systems=["A", "B"], inputs=["s1", "s2"], humans=["mqm"])
    with pytest.raises(ParameterError) as err:
        rater_waves(ds, 2, rng=0)
    assert str(err.value) == ("`waves` must leave every wave a rater on every system of a segment; got 1 of 2 "
                              "segments with fewer than 2 raters on some system they rated (first: 's2').")


@pytest.mark.parametrize("call, message", [
    (lambda ds: rater_waves(ds, 1), "`waves` must be an integer >= 2; got 1."),
    (lambda ds: rater_waves(ds, 2.5), "`waves` must be an integer >= 2; got 2.5."),
    (lambda ds: rater_waves(ds.subset(scorers=["mqm"]), 2),
     "`waves` needs the per-rater scorers 'mqm.<rater>' (MQM ratings with several raters per segment); got none among"
     " the scorers of 'tiny'."),
    (lambda ds: rater_waves(rater_waves(ds, 2, rng=0).scores, 2),
     "`waves`: the scorer 'mqm.wave1' exists already in 'tiny'; split the ratings once."),
    (lambda ds: rater_waves("ratings.tsv", 2), "`scores` must be a ScoreSet or MQM ratings; got str."),
    (lambda ds: rater_waves(ds, 2, human=""), "`human` must be the name of the averaged human scorer; got ''."),
])
def test_wave_errors(call, message):
    with pytest.raises(ParameterError) as err:
        call(_tiny())
    assert str(err.value) == message


def test_a_rater_with_no_ratings_is_named_never_silent(tmp_path):
    mats = {s: _tiny().matrix(s) for s in _tiny().scorers}
    mats["mqm.r9"] = np.full((2, 2), np.nan)
    ds = me.ScoreSet(mats, systems=["A", "B"], inputs=["s1", "s2"], humans=["mqm"])
    with pytest.warns(DataWarning, match=re.escape("rater waves: left out 1 rater(s) with no ratings: 'mqm.r9'.")):
        w = rater_waves(ds, 2, rng=0)
    assert w.raters_left_out == ("mqm.r9",) and all("r9" not in sum(v, ()) for v in w.assignment.values())
    # the reader: a rater seen only in attention checks has no scorer, and a warning names it
    path = tmp_path / "r.tsv"
    path.write_text("system\tdoc\tdoc_id\tseg_id\trater\tsource\ttarget\tcategory\tseverity\n"
                    "A\td\t1\t1\tr1\ts\tx\tNo-error\tNo-error\n"
                    "B\td\t1\t1\tr2\ts\tq\tFound\tHOTW-test\n", encoding="utf-8")
    with pytest.warns(DataWarning) as caught:
        r = me.read_mqm_ratings(path)
    assert [str(w.message) for w in caught] == [
        f"{path}: 1 rater(s) with no ratings (attention checks only) left out of the scores: 'r2'."]
    assert r.raters == ("r1",) and r.counts["raters_without_ratings"] == 1 and r.attention == {"r2": (1, 0)}


# -- human baselines in mt_evaluate -----------------------------------------------------------------------


@pytest.fixture(scope="module")
def waves_data(shared_data):
    """Both WMT23 language pairs, split into two waves (seed 0), with three synthetic metrics: the three-rater
    average plus seeded noise of two sizes, and noise."""
    rng = np.random.default_rng(0)
    data = {}
    for lp, short in LPS.items():
        w = rater_waves(_ratings(shared_data, short), 2, rng=0).scores
        mqm = w.matrix("mqm")
        mats = {"mqm.wave1": w.matrix("mqm.wave1"), "mqm.wave2": w.matrix("mqm.wave2"),
                "metric-A": mqm + rng.normal(scale=1.0, size=mqm.shape),
                "metric-B": mqm + rng.normal(scale=4.0, size=mqm.shape), "metric-C": rng.normal(size=mqm.shape)}
        data[lp] = me.ScoreSet(mats, systems=w.systems, inputs=w.inputs, humans=["mqm.wave1", "mqm.wave2"], name=lp)
    return data


def _run(data, **kw):
    kw.setdefault("tasks", TASKS)
    return me.mt_evaluate(data, human="mqm.wave1", exclude_systems=["refA"], n_resamples=100, rng=0, **kw)


def test_a_baseline_is_scored_exactly_as_a_metric_under_the_same_draws(waves_data):
    res = _run(waves_data, metrics=["metric-A", "metric-B", "metric-C"], human_baselines=["mqm.wave2"])
    plain = _run(waves_data, metrics=["metric-A", "metric-B", "metric-C", "mqm.wave2"])
    assert res.metrics == plain.metrics and res.human_baselines == ("mqm.wave2",)
    np.testing.assert_array_equal(res.statistics, plain.statistics)
    for task in res.tasks:
        np.testing.assert_array_equal(res.task_pvalues[task], plain.task_pvalues[task])
        np.testing.assert_array_equal(res.task_ranks[task], plain.task_ranks[task])
    for scope in res.scopes:
        np.testing.assert_array_equal(res.pvalues[scope], plain.pvalues[scope])
    assert "human_baselines:mqm.wave2" in str(res.signature)
    # the baseline's system-level Pearson is scipy's on the wave means (refA left out)
    ds = waves_data["en-de"].subset(systems=[s for s in waves_data["en-de"].systems if s != "refA"])
    t = res.tasks.index("en-de:system/pearson")
    expected = scipy.stats.pearsonr(ds.matrix("mqm.wave2").mean(axis=1), ds.matrix("mqm.wave1").mean(axis=1))[0]
    assert res.statistics[t, 3] == pytest.approx(expected)


def test_verdicts_read_the_paired_pvalues(waves_data):
    res = _run(waves_data, human_baselines=["mqm.wave2"])
    assert list(res.metrics) == ["metric-A", "metric-B", "metric-C", "mqm.wave2"]  # the default metrics leave it out
    rows = res.baseline_verdicts()
    assert len(rows) == 3 * (len(res.scopes) + len(res.tasks))
    for r in rows:
        pv = res.task_pvalues[f"{r['scope']}:{r['task']}"] if r["task"] != "average" else res.pvalues[r["scope"]]
        i, b = res.metrics.index(r["metric"]), 3
        assert (r["p_above"], r["p_below"]) == (pv[i, b], pv[b, i])
        assert r["verdict"] == ("above" if pv[i, b] < 0.05 else "below" if pv[b, i] < 0.05 else "level")
    by = {(r["scope"], r["task"], r["metric"]): r["verdict"] for r in rows}
    # on real waves: noise is below the second human wave everywhere; the near-copy of the average is above
    # it on the item-grouped and global correlations
    assert all(v == "below" for (s, t, m), v in by.items() if m == "metric-C")
    assert by["en-de", "global/pearson", "metric-A"] == by["zh-en", "summary/acc23", "metric-A"] == "above"
    summary = res.baseline_verdicts(summary=True)
    assert summary[0]["scope"] == "en-de" and summary[0]["task"] == "average" and "metric-C" in summary[0]["below"]


def test_verdict_rule():
    assert verdict(0.01, 0.99, 0.05) == "above" and verdict(0.99, 0.01, 0.05) == "below"
    assert verdict(0.05, 0.95, 0.05) == "level"  # p < alpha, strict as everywhere
    assert verdict(np.nan, np.nan, 0.05) == "untested"


def test_per_metric_segments_leave_the_verdicts_untested(waves_data):
    res = _run(waves_data, tasks=["system/pearson"], human_baselines=["mqm.wave2"], segments="per-metric")
    assert {r["verdict"] for r in res.baseline_verdicts()} == {"untested"}


@pytest.mark.parametrize("kw, message", [
    (dict(human_baselines=["mqm.wave1"]),
     "`human_baselines` must not name the gold; got 'mqm.wave1', the gold of language pair 'en-de' (a baseline is "
     "scored against the gold: name another human scorer, e.g. a second rater or a rater wave)."),
    (dict(human_baselines=["mqm.wave3"]),
     "`human_baselines` must name a scorer of language pair 'en-de'; got 'mqm.wave3' (did you mean 'mqm.wave2'?)."),
    (dict(human_baselines=["mqm.wave2", "mqm.wave2"]), "`human_baselines` must name each scorer once; got 'mqm.wave2' twice."),
    (dict(human_baselines=[3]), "`human_baselines` must hold scorer names; got 3."),
    (dict(metrics=["metric-A", "mqm.wave2"], human_baselines=["mqm.wave2"]),
     "`human_baselines` must not name a metric too; got 'mqm.wave2' in `metrics` as well."),
])
def test_baseline_errors(waves_data, kw, message):
    with pytest.raises(ParameterError) as err:
        _run(waves_data, **kw)
    assert str(err.value) == message


def test_a_baseline_missing_from_one_language_pair(waves_data):
    data = dict(waves_data)
    data["zh-en"] = data["zh-en"].subset(scorers=["mqm.wave1", "metric-A", "metric-B", "metric-C"])
    with pytest.raises(ParameterError) as err:
        _run(data, human_baselines=["mqm.wave2"])
    assert str(err.value) == ("`human_baselines` must name a scorer of language pair 'zh-en'; got 'mqm.wave2' (did you"
                              " mean 'mqm.wave1'?).")


def test_every_output_marks_the_baseline(waves_data, tmp_path):
    res = _run(waves_data, human_baselines=["mqm.wave2"])
    out = json.loads(json.dumps(res.to_dict()))
    assert out["human_baselines"] == ["mqm.wave2"] and out["baseline_verdicts"][0]["baseline"] == "mqm.wave2"
    frame = res.to_frame()
    assert frame.loc[frame.metric == "mqm.wave2", "human"].all() and not frame.loc[frame.metric != "mqm.wave2", "human"].any()
    assert list(res.ranking_frame(marked=True).query("scope == 'pooled'").metric).count("mqm.wave2 (human)") == 1
    assert "human" in res.table("en-de").columns
    for fmt in ("markdown", "latex"):
        text = to_paper(res, fmt)
        assert text.count("mqm.wave2 (human)") == len(res.scopes) + len(res.scopes) + len(res.tasks)
        assert "Above" in text and "Below" in text
    # without a baseline nothing changes
    plain = _run(waves_data, metrics=["metric-A"])
    assert "human" not in plain.to_frame().columns and "baseline_verdicts" not in plain.to_dict()
    from metaeval.report.mt_figure import save_mt_figure

    for name in ("mt.png", "mt.svg"):
        path = save_mt_figure(res, tmp_path / name)
        assert path.stat().st_size > 1000
    assert "mqm.wave2 (human)" in (tmp_path / "mt.svg").read_text(encoding="utf-8")


# -- the command line -------------------------------------------------------------------------------------


@pytest.fixture
def cli_files(shared_data, tmp_path, monkeypatch):
    """Each WMT23 language pair: the real ratings file and a metric file of three synthetic metrics."""
    rng = np.random.default_rng(0)
    for short in LPS.values():
        ds = _ratings(shared_data, short).scores
        mqm = ds.matrix("mqm")
        mats = {"metric-A": mqm + rng.normal(scale=1.0, size=mqm.shape),
                "metric-B": mqm + rng.normal(scale=4.0, size=mqm.shape), "metric-C": rng.normal(size=mqm.shape)}
        me.write_scores(me.ScoreSet(mats, systems=ds.systems, inputs=ds.inputs), tmp_path / f"metrics_{short}.csv")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _argv(shared_data, *extra):
    argv = ["mt"]
    for lp, short in LPS.items():
        argv += ["--scores", f"{lp}={shared_data / RATINGS.format(short)}", "--scores", f"{lp}=metrics_{short}.csv"]
    return [*argv, "--exclude-system", "refA", "--n-resamples", "100", *extra]


def test_cli_waves_and_baseline(shared_data, cli_files, capsys):
    argv = _argv(shared_data, "--rater-waves", "2", "--human", "mqm.wave1", "--human-baseline", "mqm.wave2",
                 *(f"--task={t}" for t in TASKS))
    assert main([*argv, "--format", "json", "--plot", "mt.png"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["metrics"] == ["metric-A", "metric-B", "metric-C", "mqm.wave2"]
    assert out["human_baselines"] == ["mqm.wave2"] and "rater_waves:2" in out["signature"]
    assert (cli_files / "mt.png").stat().st_size > 1000
    # the same numbers as the API on the same waves (one Generator over the language pairs, apart from the tests')
    gen = np.random.default_rng((0, 1))
    data = {}
    for lp, short in LPS.items():
        ds = me.read_scores(shared_data / RATINGS.format(short)).merge(me.read_scores(f"metrics_{short}.csv"))
        data[lp] = rater_waves(ds, 2, rng=gen).scores
    api = me.mt_evaluate(data, None, "mqm.wave1", tasks=TASKS, human_baselines=["mqm.wave2"], exclude_systems=["refA"],
                         n_resamples=100, rng=0)
    np.testing.assert_allclose(np.array(out["statistics"], dtype=float), api.statistics)
    assert main(argv) == 0
    text = capsys.readouterr().out
    assert "mqm.wave2 (human)" in text and "metrics above / level with / below human baseline mqm.wave2 (p < 0.05)" in text
    assert main([*argv, "--format", "csv"]) == 0
    frame = pd.read_csv(__import__("io").StringIO(capsys.readouterr().out))
    assert set(frame.loc[frame.human, "metric"]) == {"mqm.wave2"}


@pytest.mark.parametrize("extra, message", [
    (["--rater-waves", "2", "--human", "mqm.wave1", "--human-baseline", "mqm.wave1"],
     "`--human-baseline` must not name the gold; got 'mqm.wave1', the gold of language pair 'en-de' (a baseline is "
     "scored against the gold: name another human scorer, e.g. a second rater or a rater wave)."),
    (["--rater-waves", "2", "--human", "mqm.wave1", "--human-baseline", "mqm.wave9"],
     "`--human-baseline` must name a scorer of language pair 'en-de'; got 'mqm.wave9' (did you mean 'mqm.wave2'?)."),
    (["--rater-waves", "2", "--human", "mqm.wave1", "--metric", "metric-A", "--metric", "mqm.wave2",
      "--human-baseline", "mqm.wave2"],
     "`--human-baseline` must not name a metric too; got 'mqm.wave2' in `--metric` as well."),
    (["--rater-waves", "1"], "language pair 'en-de': `--rater-waves` must be an integer >= 2; got 1."),
    (["--rater-waves", "1000000000"],  # bounded by the data: refused before anything is allocated
     "language pair 'en-de': `--rater-waves` must leave every wave a rater on every system of a segment; got 104 of "
     "104 segments with fewer than 1000000000 raters on some system they rated (first: '1', '2', '3', ...)."),
    (["--rater-waves", "4", "--human", "mqm.wave1"],
     "language pair 'en-de': `--rater-waves` must leave every wave a rater on every system of a segment; got 104 of "
     "104 segments with fewer than 4 raters on some system they rated (first: '1', '2', '3', ...)."),
])
def test_cli_messages(shared_data, cli_files, capsys, extra, message):
    assert main(_argv(shared_data, *extra)) == 2
    err = capsys.readouterr().err
    assert err.strip() == f"metaeval: error: {message}" and "Traceback" not in err


def test_cli_waves_of_one_rater_data_are_refused(shared_data, cli_files, capsys):
    assert main(["mt", "--scores", f"en-de={shared_data / TED}", "--rater-waves", "2", "--human", "mqm.wave1"]) == 2
    assert capsys.readouterr().err.strip().endswith(
        "metaeval: error: language pair 'en-de': `--rater-waves` needs the per-rater scorers 'mqm.<rater>' (MQM ratings"
        " with several raters per segment); got none among the scorers of 'mqm_ted_ende'.")


def test_cli_second_annotation_of_an_mt_metrics_eval_directory(tmp_path, capsys):
    """mt-metrics-eval's layout with two versions of the human scores (WMT25: esa-human1 the gold, esa-human2 a
    second annotation): the second is scored against the first as a baseline."""
    rng = np.random.default_rng(1)
    root = tmp_path / "wmt25"
    (root / "human-scores").mkdir(parents=True)
    (root / "metric-scores" / "en-de").mkdir(parents=True)
    systems = ["sysA", "sysB", "sysC", "sysD", "sysE"]
    truth = rng.normal(size=(5, 8))
    files = {root / "human-scores" / "en-de.esa-human1.seg.score": truth + rng.normal(scale=0.3, size=truth.shape),
             root / "human-scores" / "en-de.esa-human2.seg.score": truth + rng.normal(scale=0.3, size=truth.shape),
             root / "metric-scores" / "en-de" / "metric-refA.seg.score": truth + rng.normal(size=truth.shape)}
    for path, values in files.items():
        path.write_text("".join(f"{s}\t{v!r}\n" for s, row in zip(systems, values) for v in row.tolist()))
    argv = ["mt", "--mt-metrics-eval", str(root), "--language-pair", "en-de", "--human", "esa-human1",
            "--human-baseline", "esa-human2", "--task", "global/pearson", "--n-resamples", "50", "--format", "json"]
    assert main(argv) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["metrics"] == ["metric-refA", "esa-human2"] and out["human_baselines"] == ["esa-human2"]
    t = out["tasks"].index("en-de:global/pearson")
    h1 = files[root / "human-scores" / "en-de.esa-human1.seg.score"].ravel()
    h2 = files[root / "human-scores" / "en-de.esa-human2.seg.score"].ravel()
    assert out["statistics"][t][1] == pytest.approx(scipy.stats.pearsonr(h2, h1)[0])
    assert {r["metric"] for r in out["baseline_verdicts"]} == {"metric-refA"}


def test_a_baseline_inside_the_gold_is_named(waves_data):
    data = {lp: me.ScoreSet({**{s: ds.matrix(s) for s in ds.scorers},
                             "mqm": (2 * ds.matrix("mqm.wave1") + ds.matrix("mqm.wave2")) / 3},
                            systems=ds.systems, inputs=ds.inputs, humans=["mqm", *ds.humans]) for lp, ds in waves_data.items()}
    with pytest.warns(DataWarning) as caught:
        me.mt_evaluate(data, ["metric-A"], "mqm", tasks=["system/pearson"], human_baselines=["mqm.wave2"],
                       n_resamples=20, rng=0)
    assert [str(w.message) for w in caught] == [
        "human baseline 'mqm.wave2' is part of the gold 'mqm' (its raters are averaged into it), so it agrees with the"
        " gold partly by construction; for an independent baseline take a rater wave as the gold and another as the"
        " baseline."]
