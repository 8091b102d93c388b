"""`metaeval mt` on what it leaves out and what it reads: system scores of mt-metrics-eval's *.sys.score files,
common or per-metric segments (naming the scorer behind each drop), systems without any score (one rule with
`correlate`), packaged datasets as language pairs."""
import json
import warnings

import numpy as np
import pytest
import scipy.stats

import metaeval as me
from metaeval.cli.main import main
from metaeval.errors import DataWarning


def _write_mtme(root, lp, seed, sys_files=True):
    """An mt-metrics-eval test set: segment scores of 5 systems (mqm, COMET-refA, BLEU-refA) and, with
    ``sys_files``, the system scores WMT computes over all segments: BLEU's corpus-like score (not the mean of its
    segment scores) and the human's, as mt-metrics-eval's ``<lp>.<name>.sys.score`` / ``<metric>.sys.score``."""
    rng = np.random.default_rng(seed)
    systems = ["sysA", "sysB", "sysC", "sysD", "sysE"]
    q = rng.normal(size=(5, 1)) + rng.normal(size=(5, 40))
    (root / "human-scores").mkdir(parents=True, exist_ok=True)
    (root / "metric-scores" / lp).mkdir(parents=True, exist_ok=True)

    def write(path, names, matrix):
        path.write_text("".join(f"{s}\t{float(v)!r}\n" for s, row in zip(names, matrix) for v in np.atleast_1d(row)))

    write(root / "human-scores" / f"{lp}.mqm.seg.score", systems, q)
    comet = q + rng.normal(scale=0.5, size=q.shape)
    bleu = q + rng.normal(scale=2.0, size=q.shape)
    write(root / "metric-scores" / lp / "COMET-refA.seg.score", systems, comet)
    write(root / "metric-scores" / lp / "BLEU-refA.seg.score", systems, bleu)
    sys_bleu = np.array([3.0, 1.0, 4.0, 1.5, 5.0])
    sys_mqm = q.mean(axis=1) + np.array([0.3, -0.2, 0.1, 0.0, -0.4])
    if sys_files:
        write(root / "metric-scores" / lp / "BLEU-refA.sys.score", systems, sys_bleu)
        write(root / "human-scores" / f"{lp}.mqm.sys.score", systems, sys_mqm)
    return {"mqm": q, "COMET-refA": comet, "BLEU-refA": bleu}, sys_bleu, sys_mqm


def test_mt_metrics_eval_uses_the_system_score_files(tmp_path, capsys):
    root = tmp_path / "wmtx"
    seg, sys_bleu, sys_mqm = _write_mtme(root, "en-de", 1)
    argv = ["mt", "--mt-metrics-eval", str(root), "--language-pair", "en-de", "--task", "system/pearson",
            "--task", "global/pearson", "--n-resamples", "50"]
    assert main([*argv, "--format", "json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["system_level"] == {"en-de": ["BLEU-refA", "mqm"]}
    stats = dict(zip(out["metrics"], out["statistics"][0]))
    # BLEU-refA: its own system scores against the human's system scores (both from the .sys.score files)
    assert stats["BLEU-refA"] == pytest.approx(scipy.stats.pearsonr(sys_bleu, sys_mqm)[0], abs=1e-12)
    # COMET-refA has no system file: the mean of its segments, against the human's system scores
    assert stats["COMET-refA"] == pytest.approx(scipy.stats.pearsonr(seg["COMET-refA"].mean(1), sys_mqm)[0],
                                                abs=1e-12)
    # segment level still uses the segment scores
    glob = dict(zip(out["metrics"], out["statistics"][1]))
    assert glob["BLEU-refA"] == pytest.approx(scipy.stats.pearsonr(seg["BLEU-refA"].ravel(), seg["mqm"].ravel())[0])
    assert "system_level:BLEU-refA,mqm" in out["signature"]
    assert main(argv) == 0
    text = capsys.readouterr().out
    assert "en-de: system level from system-score files for BLEU-refA, mqm (the others: mean of the segments)" in text
    # without system files: the means, as before
    plain = tmp_path / "plain"
    _write_mtme(plain, "en-de", 1, sys_files=False)
    assert main(["mt", "--mt-metrics-eval", str(plain), "--language-pair", "en-de", "--task", "system/pearson",
                 "--n-resamples", "50", "--format", "json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["system_level"] == {}
    stats = dict(zip(out["metrics"], out["statistics"][0]))
    assert stats["BLEU-refA"] == pytest.approx(scipy.stats.pearsonr(seg["BLEU-refA"].mean(1), seg["mqm"].mean(1))[0])


def _with_holes(seed=0):
    rng = np.random.default_rng(seed)
    q = rng.normal(size=(8, 1)) + rng.normal(size=(8, 80))
    mats = {"human": q, "A": q + rng.normal(size=q.shape), "B": q + 2 * rng.normal(size=q.shape)}
    mats["B"][rng.random(q.shape) < 0.05] = np.nan  # B lacks some cells: a common-segments run drops them for A too
    return me.ScoreSet.from_matrices(mats, humans=["human"], name="lp")


def test_per_metric_segments_make_a_metric_independent_of_the_others():
    ds = _with_holes()
    kw = dict(tasks=["system/pearson", "summary/acc23", "global/pearson"], n_resamples=50, rng=0)
    both = me.mt_evaluate({"lp": ds}, **kw)
    alone = me.mt_evaluate({"lp": ds}, metrics=["A"], **kw)
    per = me.mt_evaluate({"lp": ds}, segments="per-metric", **kw)
    a = both.metrics.index("A")
    # common segments (the default): A is computed where B has scores too, so B changes A's statistics
    assert not np.allclose(both.statistics[:, a], alone.statistics[:, 0])
    lost = int((~np.isfinite(ds.matrix("B"))).any(axis=0).sum())
    assert both.n_segments_dropped["lp"] == lost and both.segments_lacking["lp"]["B"] == lost
    assert both.segments_lacking["lp"]["A"] == 0
    assert any(f"lp: {lost} of 80 segments dropped" in line and f"B lacks {lost}" in line for line in both.notes())
    # per metric: A on its own segments equals A alone; B on its own
    np.testing.assert_allclose(per.statistics[:, per.metrics.index("A")], alone.statistics[:, 0], rtol=0, atol=1e-15)
    b_alone = me.mt_evaluate({"lp": ds}, metrics=["B"], **kw)
    np.testing.assert_allclose(per.statistics[:, per.metrics.index("B")], b_alone.statistics[:, 0], rtol=0,
                               atol=1e-15)
    assert per.metric_segments["lp"] == {"A": 80, "B": 80 - lost}
    assert np.isnan(per.pvalues["pooled"]).all() and per.significance == "none"
    assert sorted(per.ranks["pooled"].tolist()) == [1, 2]
    assert "segments:per-metric" in str(per.signature)
    assert any("each metric on its own segments of 80 (A 80, B" in line for line in per.notes())
    with pytest.raises(me.errors.ParameterError) as err:
        me.mt_evaluate({"lp": ds}, segments="some")
    assert str(err.value) == "`segments` must be one of 'common', 'per-metric'; got 'some'."


def test_cli_segments_option(tmp_path, capsys):
    path = tmp_path / "lp.csv"
    me.write_scores(_with_holes(), path)
    base = ["mt", "--scores", f"lp={path}", "--task", "system/pearson", "--n-resamples", "50"]
    assert main([*base, "--segments", "per-metric", "--format", "json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["segments"] == "per-metric" and out["metric_segments"]["lp"]["A"] == 80
    assert main(base) == 0
    assert "; --segments per-metric keeps each metric's own)" in capsys.readouterr().out


def test_a_system_without_metric_scores_is_left_out_by_mt_and_correlate_alike(tmp_path, capsys):
    """A reference with human scores but no metric score: named and left out by both commands (one rule)."""
    ds = _with_holes()
    mats = {name: np.vstack([ds.matrix(name), np.full((1, 80), np.nan if name != "human" else 0.5)])
            for name in ds.scorers}
    ref = me.ScoreSet.from_matrices(mats, systems=[*ds.systems, "refA"], inputs=list(ds.inputs), humans=["human"],
                                    name="lp")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        res = me.mt_evaluate({"lp": ref}, tasks=["system/pearson"], n_resamples=20, rng=0)
    assert res.systems_dropped == {"lp": {"refA": ["A", "B"]}}
    assert [str(w.message) for w in caught if issubclass(w.category, DataWarning)] == [
        "language pair 'lp': left out 1 system(s) without any score: 'refA' (no score of 'A', 'B')."]
    alone = me.mt_evaluate({"lp": ds}, tasks=["system/pearson"], n_resamples=20, rng=0)
    np.testing.assert_array_equal(res.statistics, alone.statistics)
    # the files of a study: the human's (with the reference) and the metrics' (without it), joined
    human, metrics = tmp_path / "human.csv", tmp_path / "metrics.csv"
    me.write_scores(ref.subset(scorers=["human"]), human)
    me.write_scores(ds.subset(scorers=["A", "B"]), metrics)
    assert main(["mt", "--scores", f"lp={human}", "--scores", f"lp={metrics}", "--human", "human", "--task",
                 "system/pearson", "--n-resamples", "20", "--format", "json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["systems_dropped"] == {"lp": {"refA": ["A", "B"]}}
    assert out["statistics"] == alone.statistics.tolist()
    assert main(["mt", "--scores", f"lp={human}", "--scores", f"lp={metrics}", "--human", "human", "--task",
                 "system/pearson", "--n-resamples", "20"]) == 0
    assert "lp: system 'refA' left out (no score of 'A', 'B')" in capsys.readouterr().out
    assert main(["correlate", "--scores", str(human), "--scores", str(metrics), "--human", "human", "--level",
                 "system", "--ci", "none"]) == 0
    assert "'refA' (no score of 'A', 'B')" in capsys.readouterr().err


def test_mt_takes_packaged_datasets(shared_data, tmp_path, capsys):
    ende = me.load_dataset("wmt20-mqm-ende")
    rng = np.random.default_rng(3)
    mqm = ende.matrix("mqm")
    metric = me.ScoreSet.from_matrices({"noisy": mqm + rng.normal(size=mqm.shape)}, systems=list(ende.systems),
                                       inputs=list(ende.inputs), name="m")
    path = tmp_path / "metric.csv"
    me.write_scores(metric, path)
    argv = ["mt", "--dataset", "en-de=wmt20-mqm-ende", "--scores", f"en-de={path}", "--task", "system/pearson",
            "--exclude-system", "en-de=Human-A.0", "--n-resamples", "20", "--format", "json"]
    assert main(argv) == 0
    out = json.loads(capsys.readouterr().out)
    keep = [i for i, s in enumerate(ende.systems) if s != "Human-A.0"]
    expected = scipy.stats.pearsonr(np.nanmean((mqm + 0)[keep], axis=1), np.nanmean(metric.matrix("noisy")[keep], 1))
    assert out["language_pairs"] == ["en-de"] and out["gold"] == {"en-de": "mqm"}
    assert out["statistics"][0][0] == pytest.approx(expected[0], abs=1e-12)
    # a system-level dataset as a language pair: its language pair is the dataset option, and a segment task is
    # a one-line error
    assert main(["mt", "--dataset", "de-en=wmt19-da-sys", "--task", "system/pearson", "--metric", "bleu",
                 "--metric", "chrf", "--n-resamples", "20", "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["metrics"] == ["bleu", "chrf"]
    assert main(["mt", "--dataset", "de-en=wmt19-da-sys", "--task", "summary/acc23", "--metric", "bleu"]) == 2
    assert capsys.readouterr().err.strip() == (
        "metaeval: error: task 'summary/acc23' needs segment scores; language pair 'de-en' has 1 segment "
        "(system-level scores only).")
