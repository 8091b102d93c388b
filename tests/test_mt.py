"""WMT statistics (stats/mt/wmt.py) against plain loops, and mt_evaluate end to end."""
import itertools

import numpy as np
import pytest
import scipy.stats

import metaeval as me
from metaeval.errors import ParameterError
from metaeval.stats.correlations.levels import level_correlation
from metaeval.stats.mt.tie_calibration import calibrate_ties
from metaeval.stats.resampling.draws import bootstrap_draws, count_weights
from metaeval.stats.corpus import corpus_scores
from metaeval.stats.mt.wmt import (
    darr_counts,
    pairwise_agreement,
    resampled_task,
    soft_pairwise_accuracy,
    system_pvalues,
)


def _lp(seed, n=8, m=60, scale=1.0):
    r = np.random.default_rng(seed)
    q = r.normal(size=(n, 1)) + r.normal(size=(n, m))
    mats = {"human": q * scale, "good": q + r.normal(size=(n, m)), "ok": q + 2 * r.normal(size=(n, m)),
            "bad": r.normal(size=(n, m))}
    return me.ScoreSet.from_matrices(mats, humans=["human"], name=f"lp{seed}")


def test_pairwise_accuracy_equals_loop():
    rng = np.random.default_rng(0)
    x, z = rng.integers(0, 4, size=9).astype(float), rng.integers(0, 4, size=9).astype(float)
    agree = pairs = 0
    for a, b in itertools.combinations(range(9), 2):
        if z[a] != z[b]:
            pairs += 1
            agree += np.sign(x[a] - x[b]) == np.sign(z[a] - z[b])
    assert tuple(int(v) for v in pairwise_agreement(x, z)) == (agree, pairs)


def test_darr_equals_mt_metrics_eval_loop():
    rng = np.random.default_rng(1)
    xs = rng.integers(0, 5, size=(2, 6, 20)).astype(float)
    z = rng.normal(scale=40, size=(6, 20))
    c, d = darr_counts(xs, z, 25.0)
    for p in range(2):
        cc = dd = 0
        for j in range(20):
            for a, b in itertools.combinations(range(6), 2):
                diff = z[a, j] - z[b, j]
                if abs(diff) >= 25:
                    if diff > 0 and xs[p, a, j] > xs[p, b, j] or diff < 0 and xs[p, a, j] < xs[p, b, j]:
                        cc += 1
                    else:
                        dd += 1
        assert (c[p].sum(), d[p].sum()) == (cc, dd)
    tau = resampled_task(xs, z, level="summary", coefficient="darr")
    np.testing.assert_allclose(tau, (c - d).sum(axis=1) / (c + d).sum(axis=1))


def test_system_pvalues_equal_loop():
    rng = np.random.default_rng(2)
    s = rng.normal(size=(4, 30))
    signs = np.where(rng.random((50, 30)) < 0.5, -1.0, 1.0)
    p = system_pvalues(s, signs)
    for i, j in itertools.permutations(range(4), 2):
        d = s[i] - s[j]
        null = [(sg * d).mean() for sg in signs]
        expected = (1 + sum(v >= d.mean() - 1e-12 for v in null)) / 51
        assert p[i, j] == pytest.approx(expected)


def test_soft_pairwise_accuracy_identical_metric_is_one():
    rng = np.random.default_rng(3)
    z = rng.normal(size=(5, 40))
    signs = np.where(rng.random((100, 40)) < 0.5, -1.0, 1.0)
    assert soft_pairwise_accuracy(z[None], z, signs)[0] == 1.0


@pytest.mark.parametrize("level,coefficient", [("system", "pearson"), ("system", "kendall-b"),
                                               ("summary", "pearson"), ("summary", "acc-eq"),
                                               ("global", "pearson"), ("global", "kendall-b"),
                                               ("by-system", "kendall-b"), ("by-system", "pearson"),
                                               ("global", "spearman")])
def test_resampled_tasks_equal_reference_on_resampled_matrices(level, coefficient):
    rng = np.random.default_rng(4)
    xs = rng.normal(size=(3, 6, 25))
    z = np.round(rng.normal(size=(6, 25)) + xs[0], 1)
    obs = resampled_task(xs, z, level=level, coefficient=coefficient)
    ref = [float(level_correlation(xs[i], z, level=level, coefficient=coefficient).statistic) for i in range(3)]
    np.testing.assert_allclose(obs, ref, rtol=0, atol=1e-12)
    cols = bootstrap_draws(6, 25, method="inputs", n_resamples=6, rng=0).col_indices()
    res = resampled_task(xs, z, level=level, coefficient=coefficient, weights=count_weights(cols, 25))
    for b in range(6):
        ref = [float(level_correlation(xs[i][:, cols[b]], z[:, cols[b]], level=level, coefficient=coefficient,
                                       col_units=cols[b]).statistic) for i in range(3)]
        np.testing.assert_allclose(res[:, b], ref, rtol=0, atol=1e-12)


def test_global_pearson_equals_scipy():
    rng = np.random.default_rng(5)
    xs, z = rng.normal(size=(2, 5, 30)), rng.normal(size=(5, 30))
    r = resampled_task(xs, z, level="global", coefficient="pearson")
    assert r[1] == pytest.approx(scipy.stats.pearsonr(xs[1].ravel(), z.ravel())[0], abs=1e-12)


def test_corpus_scores_sum_statistics_before_scoring():
    stats = np.arange(24, dtype=float).reshape(2, 3, 4)
    ratio = lambda s: s[..., 0] / s[..., 1]  # noqa: E731 - a corpus "score" of summed statistics
    np.testing.assert_allclose(corpus_scores(stats, ratio), stats[:, :, 0].sum(1) / stats[:, :, 1].sum(1))
    w = np.array([[2, 0, 1]])
    np.testing.assert_allclose(corpus_scores(stats, ratio, w)[0], (stats[:, :, 0] @ w[0]) / (stats[:, :, 1] @ w[0]))


def test_corpus_bleu_system_scores_with_sacrebleu():
    sacrebleu = pytest.importorskip("sacrebleu")
    from metaeval.metrics.sacrebleu_metrics import Bleu

    refs = ["the cat sat on the mat", "a dog barked loudly", "it rained all day long"]
    hyps = [["the cat sat on a mat", "a dog barked", "it rained all day"],
            ["cat on mat", "the dog barks loudly", "rain all day long"]]
    bleu = Bleu()
    stats = np.stack([bleu.item_statistics(h, [refs]) for h in hyps])
    scores = corpus_scores(stats, bleu.aggregate)
    for s, h in zip(scores, hyps):
        assert s == pytest.approx(sacrebleu.corpus_bleu(h, [refs]).score)


def test_mt_evaluate_messages():
    data = {"en-de": _lp(1)}
    with pytest.raises(ParameterError) as err:
        me.mt_evaluate(data, tasks=["segment/nonsense"])
    assert str(err.value).startswith("`tasks` must hold tasks 'level/statistic' with a level of ")
    assert str(err.value).endswith("; got 'segment/nonsense'.")
    with pytest.raises(ParameterError) as err:
        me.mt_evaluate(data, tasks=["summary/soft-accuracy"])
    assert str(err.value) == ("`tasks`: 'soft-accuracy' is defined at level 'system' only; "
                              "got 'summary/soft-accuracy'.")
    with pytest.raises(ParameterError) as err:
        me.mt_evaluate(data, exclude_systems=["refZ"])
    assert str(err.value).startswith("`exclude_systems` must name a system of the data or 'LP=SYSTEM'; got 'refZ' (")
    with pytest.raises(ParameterError) as err:
        me.mt_evaluate(data, exclude_systems=["en-de=refZ"])
    assert str(err.value).startswith("`exclude_systems` must name a system of language pair 'en-de'; got 'refZ' (")
    with pytest.raises(ParameterError) as err:
        me.mt_evaluate(data, exclude_systems=["fr-de=sys0"])
    assert str(err.value) == ("`exclude_systems` must name a system of the data or 'LP=SYSTEM'; got 'fr-de=sys0' "
                              "(language pairs: 'en-de').")


def test_exclude_system_per_language_pair():
    """'LP=SYSTEM' leaves a system out of that language pair only; a bare name leaves it out everywhere."""
    a, b = _lp(1), _lp(2)
    data = {"en-de": a, "zh-en": b}
    kw = dict(tasks=["system/pearson"], n_resamples=20, rng=0)
    name = a.systems[0]
    res = me.mt_evaluate(data, exclude_systems=[f"en-de={name}"], **kw)
    alone = me.mt_evaluate({"en-de": a.subset(systems=list(a.systems[1:])), "zh-en": b}, **kw)
    np.testing.assert_array_equal(res.statistics, alone.statistics)
    everywhere = me.mt_evaluate(data, exclude_systems=[name], **kw)
    both = me.mt_evaluate({"en-de": a.subset(systems=list(a.systems[1:])),
                           "zh-en": b.subset(systems=list(b.systems[1:]))}, **kw)
    np.testing.assert_array_equal(everywhere.statistics, both.statistics)
    assert not np.array_equal(res.statistics, everywhere.statistics)


def test_mt_evaluate_two_language_pairs_end_to_end():
    data = {"en-de": _lp(1), "zh-en": _lp(2)}
    tasks = ["system/accuracy", "system/pearson", "global/pearson", "summary/acc23", "summary/darr",
             "system/soft-accuracy"]
    res = me.mt_evaluate(data, tasks=tasks, n_resamples=200, rng=0, darr_threshold=1.0)
    assert res.scopes == ("en-de", "zh-en", "pooled")
    assert res.tasks[-1] == "pooled:system/accuracy"
    good, ok, bad = (res.metrics.index(m) for m in ("good", "ok", "bad"))
    assert res.ranks["pooled"][good] == 1 and res.ranks["pooled"][bad] > res.ranks["pooled"][ok]
    # under the permutation test soft pairwise accuracy has a null and is averaged (WMT24); the pooled
    # accuracy replaces the per-pair ones
    assert any("soft-accuracy" in t for t in res.ranked_tasks["pooled"])
    assert "en-de:system/accuracy" not in res.ranked_tasks["pooled"]
    boot = me.mt_evaluate(data, tasks=tasks, n_resamples=50, rng=0, darr_threshold=1.0, significance="bootstrap")
    assert not any("soft-accuracy" in t for t in boot.ranked_tasks["pooled"])
    # the pooled pairwise accuracy sums agreements and pairs over language pairs
    agree = pairs = 0
    for ds in data.values():
        a, n = pairwise_agreement(ds.matrix("good").mean(1), ds.matrix("human").mean(1), "count")
        agree, pairs = agree + a, pairs + n
    assert res.statistics[-1][good] == pytest.approx(agree / pairs)
    # acc23 is the calibrated acc-eq, with its threshold reported
    t = res.tasks.index("en-de:summary/acc23")
    cal = calibrate_ties(data["en-de"].matrix("good"), data["en-de"].matrix("human"))
    assert res.statistics[t][good] == pytest.approx(cal.statistic)
    assert res.tie_thresholds["en-de:summary/acc23"][good] == cal.threshold
    frame = res.to_frame()
    assert set(frame["scope"]) == {"en-de", "zh-en", "pooled"}
    again = me.mt_evaluate(data, tasks=tasks, n_resamples=200, rng=0, darr_threshold=1.0)
    np.testing.assert_array_equal(again.pvalues["pooled"], res.pvalues["pooled"])


def test_mt_evaluate_excludes_systems_and_uses_corpus_scores():
    ds = _lp(3)
    res = me.mt_evaluate(ds, tasks=["system/pearson"], exclude_systems=[ds.systems[0]], n_resamples=50, rng=0)
    x, z = ds.matrix("good")[1:], ds.matrix("human")[1:]
    assert res.statistics[0][res.metrics.index("good")] == pytest.approx(
        scipy.stats.pearsonr(x.mean(1), z.mean(1))[0])
    # a "corpus" metric: the system score is the ratio of summed statistics, not the mean of sentence ratios
    stats = np.stack([np.abs(ds.matrix("good")) + 1, np.ones(ds.shape) * 2], axis=-1)
    res = me.mt_evaluate({"lp": ds}, tasks=["system/pearson"], n_resamples=50, rng=0,
                         corpus_statistics={"good": {"lp": (stats, lambda s: s[..., 0] / s[..., 1])}})
    expected = scipy.stats.pearsonr(stats[..., 0].sum(1) / stats[..., 1].sum(1), ds.matrix("human").mean(1))[0]
    assert res.statistics[0][res.metrics.index("good")] == pytest.approx(expected)


def test_recalibrate_matches_calibration_on_each_resample():
    from metaeval.stats.mt.tie_calibration import calibrate_ties, pair_table, recalibrated

    rng = np.random.default_rng(0)
    x = np.round(rng.normal(size=(6, 30)), 1)
    z = rng.integers(0, 4, size=(6, 30)).astype(float)
    cols = bootstrap_draws(6, 30, method="inputs", n_resamples=7, rng=1).col_indices()
    for batch in (1, 3, 64):
        stats, thresholds = recalibrated(pair_table(x.T, z.T), "acc-eq", count_weights(cols, 30), batch=batch)
        for b in range(7):
            cal = calibrate_ties(x[:, cols[b]], z[:, cols[b]])
            assert stats[b] == pytest.approx(cal.statistic, abs=1e-12)
            assert thresholds[b] == cal.threshold


def test_cli_mt_two_language_pairs(tmp_path, capsys):
    import json

    from metaeval.cli.main import main

    paths = []
    for lp, seed in (("en-de", 1), ("zh-en", 2)):
        path = tmp_path / f"{lp}.csv"
        me.write_scores(_lp(seed), path)
        paths += ["--scores", f"{lp}={path}"]
    argv = ["mt", *paths, "--human", "human", "--task", "system/accuracy", "--task", "summary/acc23",
            "--exclude-system", "0", "--n-resamples", "100", "--format", "json"]
    assert main(argv) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["language_pairs"] == ["en-de", "zh-en"]
    assert "pooled:system/accuracy" in out["tasks"]
    path = tmp_path / "en-de.csv"
    assert main(["mt", "--scores", f"en-de={path}", "--scores", f"en-de={path}", "--human", "human"]) == 2
    assert capsys.readouterr().err.strip() == (
        f"metaeval: error: `--scores` must give a file once per language pair; got '{path}' twice for 'en-de'.")


def _write_mtme(root, lp, seed, n_seg=25):
    """An mt-metrics-eval layout: human MQM for 5 systems, metrics for those and for the reference refB."""
    rng = np.random.default_rng(seed)
    systems = ["sysA", "sysB", "sysC", "sysD", "sysE"]
    q = rng.normal(size=(5, 1)) + rng.normal(size=(5, n_seg))
    (root / "human-scores").mkdir(parents=True, exist_ok=True)
    (root / "metric-scores" / lp).mkdir(parents=True, exist_ok=True)
    lines = [f"{s}\t{float(v)!r}" for i, s in enumerate(systems) for v in q[i]]
    (root / "human-scores" / f"{lp}.mqm.seg.score").write_text("\n".join(lines) + "\n")
    for metric, noise in (("COMET-refA", 0.3), ("BLEU-refA", 2.0)):
        x = np.vstack([q + rng.normal(scale=noise, size=q.shape), rng.normal(size=(1, n_seg)) + 3])
        lines = [f"{s}\t{float(v)!r}" for i, s in enumerate(systems + ["refB"]) for v in x[i]]
        (root / "metric-scores" / lp / f"{metric}.seg.score").write_text("\n".join(lines) + "\n")


def test_cli_mt_metrics_eval_layout_end_to_end(tmp_path, capsys):
    import json

    from metaeval.cli.main import main

    root = tmp_path / "wmtx"
    _write_mtme(root, "en-de", 1)
    _write_mtme(root, "zh-en", 2)
    argv = ["mt", "--mt-metrics-eval", str(root), "--language-pair", "en-de", "--language-pair", "zh-en",
            "--n-resamples", "200", "--format", "json"]
    assert main(argv) == 0
    out = json.loads(capsys.readouterr().out)
    # refB has metric scores but no human score: left out (reported), never a NaN ranking
    assert out["systems_without_human"] == {"en-de": ["refB"], "zh-en": ["refB"]}
    assert out["scopes"] == ["en-de", "zh-en", "pooled"]
    metrics = out["metrics"]
    assert out["ranks"]["pooled"][metrics.index("COMET-refA")] == 1
    assert main([*argv, "--exclude-system", "refB", "--exclude-system", "sysE"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["systems_without_human"] == {"en-de": [], "zh-en": []}
    assert "exclude_systems:refB,sysE" in out["signature"]
    assert main(["mt", "--mt-metrics-eval", str(root)]) == 2
    assert capsys.readouterr().err.strip() == (
        "metaeval: error: `--language-pair` must be given at least once with `--mt-metrics-eval`; got none.")


def test_mt_evaluate_on_the_shared_mt_metrics_eval_fixture():
    ds = me.read_mt_metrics_eval("tests/data/mt-metrics-eval/wmtfix", "en-de")
    res = me.mt_evaluate({"en-de": ds}, n_resamples=100, rng=0)
    assert res.language_pairs == ("en-de",)
    assert set(res.metrics) == {"BLEU-refA", "COMET-refA"}
    assert np.isfinite(res.statistics).all()


def test_recalibration_compiled_and_numpy_paths_agree(monkeypatch):
    from metaeval.stats.kernels.kendall import calibration
    from metaeval.stats.mt.tie_calibration import pair_table, recalibrated

    rng = np.random.default_rng(3)
    x = np.round(rng.normal(size=(7, 40)), 1)  # metric ties: several pairs per threshold
    z = rng.integers(0, 3, size=(7, 40)).astype(float)
    w = count_weights(bootstrap_draws(7, 40, method="inputs", n_resamples=25, rng=2).col_indices(), 40)
    table = pair_table(x.T, z.T)
    for coefficient in ("acc-eq", "tau-eq"):
        fast = recalibrated(table, coefficient, w)
        monkeypatch.setattr(calibration.compiler, "numba_available", lambda: False)
        slow = recalibrated(table, coefficient, w, batch=4)
        monkeypatch.undo()
        np.testing.assert_array_equal(fast[0], slow[0])
        np.testing.assert_array_equal(fast[1], slow[1])
