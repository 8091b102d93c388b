"""`metaeval mt` protocols against an oracle written from mt-metrics-eval's documented formulas (issue 19).

The oracle below is our own code following the formulas of mt-metrics-eval (MTME) ``stats.py`` /
``tasks.py`` / ``data.py``: ``Agreement`` (every system pair counts, agreement = equal signs),
``KendallWithTiesOpt`` acc23 (a pair is a metric tie when ``|dx| <= eps``; epsilon maximises the item mean),
``PermutationSigDiff`` (z-score each metric over the task's units, swap each unit with probability 1/2,
``p = #{delta_r >= delta} / k``), ``PairwisePermutationSigDiff`` (swap the comparison results of pairs),
``TaskSetResults.AverageCorrs`` / ``AverageCorrMatrix`` ((r + 1) / 2 rescaling, weights of ``tasks.WMT23``,
the average's null as the weighted sum of the tasks' draws) and ``pce.compute_pairwise_p_values`` (c / R).
Its draws are independent per pair (as MTME's); metaeval shares them across pairs, so p-values agree within
Monte Carlo error, and statistics and averages exactly.
"""
import itertools

import numpy as np
import pandas as pd
import pytest
import scipy.stats

import metaeval as me
from metaeval.errors import ParameterError
from metaeval.stats.mt.wmt import pairwise_agreement, soft_pairwise_accuracy

K = 400


def _wmt20(shared_data, lp):
    df = pd.read_csv(shared_data / "wmt" / f"mqm_newstest2020_{lp}.avg_seg_scores.tsv", sep=r"\s+",
                     na_values=["None"])
    wide = df.pivot(index="system", columns="seg_id", values="mqm_avg_score")
    return wide.to_numpy(dtype=float), list(wide.index), [str(c) for c in wide.columns]


def _synthetic(mqm, seed):
    """8 metrics of issue 19: continuous, rounded to 0.5, to integers, to multiples of 5, mostly zero, noise."""
    r = np.random.default_rng(seed)
    base = mqm + r.normal(scale=1.5, size=mqm.shape)
    wide = mqm + r.normal(scale=4.0, size=mqm.shape)
    return {"A": base, "B": wide, "C": np.round(base * 2) / 2, "D": np.round(wide), "E": 5 * np.round(wide / 5),
            "F": np.where(r.random(mqm.shape) < 0.6, 0.0, np.round(base)),
            "G": r.normal(size=mqm.shape), "H": mqm + r.normal(scale=2.5, size=mqm.shape)}


@pytest.fixture(scope="module")
def wmt20(shared_data):
    data, complete = {}, {}
    for lp, seed in (("ende", 1), ("zhen", 2)):
        mqm, systems, segs = _wmt20(shared_data, lp)
        mats = {"mqm": mqm, **_synthetic(np.nan_to_num(mqm), seed)}
        data[lp] = me.ScoreSet.from_matrices(mats, systems=systems, inputs=segs, humans=["mqm"], name=lp)
        keep = np.isfinite(mqm).all(axis=0)
        complete[lp] = (np.stack([mats[m][:, keep] for m in "ABCDEFGH"]), mqm[:, keep])
    return data, complete


# --- the oracle ---------------------------------------------------------------------------------------------

def _agreement(x, z):
    """MTME stats.Agreement: every pair counts; agree when the signs of the differences are equal."""
    agree = pairs = 0
    for a, b in itertools.combinations(range(len(x)), 2):
        agree += np.sign(z[a] - z[b]) == np.sign(x[a] - x[b])
        pairs += 1
    return agree, pairs


def _acc23(x, z):
    """Item-grouped acc23 with the best epsilon: pairs tie in the metric when |dx| <= eps, in the human when
    dz == 0; value (concordant or both tied); mean over items of the mean over pairs."""
    n, m = x.shape
    ia, ib = np.triu_indices(n, 1)
    dx, dz = np.abs(x[ia] - x[ib]).ravel(), (z[ia] - z[ib]).ravel()
    conc = (np.sign(x[ia] - x[ib]) * np.sign(z[ia] - z[ib]) > 0).ravel().astype(float)
    tie_z = (dz == 0).astype(float)
    order = np.argsort(dx, kind="stable")
    gain = np.cumsum((tie_z - conc)[order])
    cands = np.concatenate([[0.0], dx[order]])
    values = conc.sum() + np.concatenate([[((tie_z - conc) * (dx <= 0)).sum()], gain])
    last = np.r_[dx[order][1:] != dx[order][:-1], True]  # a threshold ties every pair up to it
    values = np.concatenate([[values[0]], values[1:][last]])
    cands = np.concatenate([[0.0], dx[order][last]])
    best = np.argmax(values)
    return values[best] / dx.size, cands[best]


def _zs(v):
    return scipy.stats.zscore(v, axis=None)


def _perm_pearson(x1, x2, z, rng, k):
    """PermutationSigDiff with Pearson over flattened units: null draws of corr(h1) - corr(h2), vectorized over
    the k draws (each draw a vector of independent fair bits, one per unit)."""
    a, b, zf = _zs(x1.ravel()), _zs(x2.ravel()), z.ravel()
    w = rng.binomial(1, 0.5, (k, a.size))
    h1, h2 = w * a + (1 - w) * b, w * b + (1 - w) * a

    def corr(h):
        hc, zc = h - h.mean(axis=1, keepdims=True), zf - zf.mean()
        return (hc @ zc) / np.sqrt((hc * hc).sum(axis=1) * (zc @ zc))

    return corr(h1) - corr(h2)


def _perm_accuracy(blocks1, blocks2, zblocks, rng, k):
    """PermutationSigDiff of the pooled accuracy: system scores of all language pairs z-scored together."""
    sizes = [len(b) for b in zblocks]
    a, b = _zs(np.concatenate(blocks1)), _zs(np.concatenate(blocks2))
    bounds = np.cumsum([0] + sizes)

    def acc(h):
        ag = pr = 0
        for lo, hi, zb in zip(bounds[:-1], bounds[1:], zblocks):
            ia, ib = np.triu_indices(hi - lo, 1)
            ag = ag + (np.sign(zb[ia] - zb[ib]) == np.sign(h[:, lo + ia] - h[:, lo + ib])).sum(axis=1)
            pr += ia.size
        return ag / pr

    w = rng.binomial(1, 0.5, (k, a.size))
    return acc(w * a + (1 - w) * b) - acc(w * b + (1 - w) * a)


def _perm_pairs(x1, e1, x2, e2, z, rng, k):
    """PairwisePermutationSigDiff (acc23): each pair of each item takes its result from one metric or the other."""
    n, m = z.shape
    ia, ib = np.triu_indices(n, 1)
    dz = z[ia] - z[ib]

    def values(x, e):
        dx = x[ia] - x[ib]
        tie = np.abs(dx) <= e
        return np.where(tie, dz == 0, np.sign(dx) * np.sign(dz) > 0).astype(float).ravel()

    d = values(x1, e1) - values(x2, e2)
    out = np.empty(k)
    for lo in range(0, k, 50):
        w = rng.binomial(1, 0.5, (min(50, k - lo), d.size))
        out[lo:lo + w.shape[0]] = ((2 * w - 1) @ d) / d.size  # mean(h1) - mean(h2)
    return out


def _oracle(complete, k, seed):
    """WMT23 on both language pairs: per-task statistics, the average, and the average's p-values."""
    rng = np.random.default_rng(seed)
    lps = sorted(complete)
    p = 8
    stats, nulls = {}, {}
    xbars = {lp: complete[lp][0].mean(axis=2) for lp in lps}
    zbars = {lp: complete[lp][1].mean(axis=1) for lp in lps}
    counts = [[_agreement(xbars[lp][i], zbars[lp]) for lp in lps] for i in range(p)]
    stats["pooled:system/accuracy"] = np.array([sum(c[0] for c in cs) / sum(c[1] for c in cs) for cs in counts])
    eps = {}
    for lp in lps:
        xs, z = complete[lp]
        stats[f"{lp}:system/pearson"] = np.array([scipy.stats.pearsonr(zbars[lp], xbars[lp][i])[0] for i in range(p)])
        stats[f"{lp}:global/pearson"] = np.array([scipy.stats.pearsonr(z.ravel(), xs[i].ravel())[0] for i in range(p)])
        acc = [_acc23(xs[i], z) for i in range(p)]
        stats[f"{lp}:summary/acc23"], eps[lp] = np.array([a[0] for a in acc]), [a[1] for a in acc]
    weights = {"pooled:system/accuracy": len(lps)}
    weights.update({t: 1 for t in stats if not t.startswith("pooled")})
    total = sum(weights.values())
    low = {t: 0.0 if t.endswith("accuracy") or t.endswith("acc23") else -1.0 for t in stats}
    avg = sum(weights[t] / total * (stats[t] - low[t]) / (1 - low[t]) for t in stats)
    pv = np.full((p, p), np.nan)
    for i, j in itertools.combinations(range(p), 2):
        null = _perm_accuracy([xbars[lp][i] for lp in lps], [xbars[lp][j] for lp in lps],
                              [zbars[lp] for lp in lps], rng, k) * weights["pooled:system/accuracy"] / total
        for lp in lps:
            xs, z = complete[lp]
            null = null + _perm_pearson(xbars[lp][i], xbars[lp][j], zbars[lp], rng, k) / 2 / total
            null = null + _perm_pearson(xs[i], xs[j], z, rng, k) / 2 / total
            null = null + _perm_pairs(xs[i], eps[lp][i], xs[j], eps[lp][j], z, rng, k) / total
        pv[i, j] = np.mean(null >= avg[i] - avg[j])
        pv[j, i] = np.mean(-null >= avg[j] - avg[i])
    return stats, eps, avg, pv


# --- the tests ----------------------------------------------------------------------------------------------

@pytest.mark.slow
def test_wmt23_defaults_equal_the_mt_metrics_eval_oracle(wmt20):
    data, complete = wmt20
    res = me.mt_evaluate(data, human="mqm", n_resamples=K, rng=0)
    assert res.protocol == "wmt23" and "protocol:wmt23" in str(res.signature)
    stats, eps, avg, pv = _oracle(complete, K, seed=1)
    assert sorted(res.ranked_tasks["pooled"]) == sorted(stats)
    for task, values in stats.items():
        if not task.endswith("acc23"):
            np.testing.assert_allclose(res.statistics[res.tasks.index(task)], values, atol=1e-9, err_msg=task)
    assert res.weights["pooled"][res.ranked_tasks["pooled"].index("pooled:system/accuracy")] == pytest.approx(2 / 8)
    np.testing.assert_allclose(res.averages["pooled"], avg, atol=1e-4)
    # p-values: independent Monte Carlo estimates of the same test
    ours = res.pvalues["pooled"]
    off = ~np.eye(8, dtype=bool)
    se = np.sqrt(np.clip(pv * (1 - pv), 0.002, None) * 2 / K)
    assert (np.abs(ours - pv)[off] <= 5 * se[off] + 0.01).all()
    # cluster decisions agree wherever the oracle's p-value is far from alpha
    far = off & ((pv < 0.02) | (pv > 0.1))
    assert ((ours < 0.05) == (pv < 0.05))[far].all()
    # acc23 and its epsilon: tie calibration compares pair gaps |x_a - x_b| <= eps, mt-metrics-eval's rule (issue
    # 19 item 1; the float rule max <= min + eps gave the 0.5-grid metric C a threshold 0.4999999999999982)
    for lp in complete:
        t = res.tasks.index(f"{lp}:summary/acc23")
        np.testing.assert_allclose(res.statistics[t], stats[f"{lp}:summary/acc23"], atol=1e-9)
        np.testing.assert_array_equal(res.tie_thresholds[f"{lp}:summary/acc23"], eps[lp])


def test_wmt23_per_task_and_plain_mean(wmt20):
    data, complete = wmt20
    res = me.mt_evaluate(data, human="mqm", n_resamples=50, rng=0)
    mean = me.mt_evaluate(data, human="mqm", n_resamples=50, rng=0, protocol="mean")
    assert mean.human_ties == "skip" and res.human_ties == "count"
    # the plain mean: per-pair accuracies replaced by the pooled one (human ties skipped), equal weights
    t = [mean.tasks.index(x) for x in mean.ranked_tasks["pooled"]]
    np.testing.assert_allclose(mean.averages["pooled"], mean.statistics[t].mean(axis=0), atol=1e-12)
    # the WMT23 average is not the plain mean (rescaling and weights)
    t = [res.tasks.index(x) for x in res.ranked_tasks["pooled"]]
    assert np.abs(res.averages["pooled"] - res.statistics[t].mean(axis=0)).max() > 1e-3
    # every task has its p-value matrix and cluster ranks, also in JSON and CSV
    out = res.to_dict()
    assert set(out["task_pvalues"]) == set(res.tasks) and set(out["task_ranks"]) == set(res.tasks)
    assert len(out["pvalues"]["pooled"]) == 8
    frame = res.to_frame()
    assert set(frame["task"]) == {"average", "system/accuracy", "system/pearson", "global/pearson",
                                  "summary/acc23"}
    assert "p_vs_A" in frame.columns


def test_system_accuracy_human_tie_rule():
    """Issue 19 item 4: h = 1, 1, 2, 3 and x = 1, 1.5, 2, 3: MTME counts the human-tied pair (5/6)."""
    x, h = np.array([1, 1.5, 2, 3.0]), np.array([1, 1, 2, 3.0])
    assert tuple(int(v) for v in pairwise_agreement(x, h, "count")) == (5, 6)
    assert tuple(int(v) for v in pairwise_agreement(x, h, "skip")) == (5, 5)
    assert _agreement(x, h) == (5, 6)
    ds = me.ScoreSet.from_matrices({"h": np.repeat(h[:, None], 3, axis=1), "x": np.repeat(x[:, None], 3, axis=1)},
                                   humans=["h"], name="tiny")
    kw = dict(tasks=["system/accuracy"], n_resamples=20, rng=0)
    assert me.mt_evaluate(ds, **kw).statistics[0, 0] == pytest.approx(5 / 6)
    assert me.mt_evaluate(ds, **kw, human_ties="skip").statistics[0, 0] == 1.0
    assert me.mt_evaluate(ds, **kw, protocol="mean").statistics[0, 0] == 1.0


def test_spa_pvalue_conventions_tiny_case():
    """SPA's system p-values: c / R under the WMT presets (MTME pce.py), (1 + c) / (1 + R) otherwise."""
    z = np.array([[1.0, 2.0, 3.0], [0.0, 0.0, 0.0]])
    signs = np.array([[1, 1, 1], [1, -1, 1], [-1, -1, 1], [1, 1, -1.0]])
    # delta = 2; permuted deltas 2, 2/3 (2 of 6), -1/3 ... c = #{>= 2} = 1: only the identity
    from metaeval.stats.mt.wmt import system_pvalues

    assert system_pvalues(z, signs, "fraction")[0, 1] == pytest.approx(1 / 4)
    assert system_pvalues(z, signs, "randomized")[0, 1] == pytest.approx(2 / 5)
    spa = soft_pairwise_accuracy(z[None], z, signs, pvalue="fraction")
    assert spa[0] == 1.0


def test_wmt24_preset(wmt20):
    data, complete = wmt20
    res = me.mt_evaluate(data, human="mqm", protocol="wmt24", n_resamples=20, spa_permutations=200, rng=0,
                         metrics=["A", "B", "G"])
    assert res.tasks == ("ende:system/soft-accuracy", "ende:summary/acc23", "zhen:system/soft-accuracy",
                         "zhen:summary/acc23")
    assert res.weights["pooled"] == (0.25, 0.25, 0.25, 0.25)
    # MTME TaskSetResults.AverageCorrs: sum_t w_t (s_t - b_t) / (e_t - b_t), (b, e) = TaskResults.range, which
    # is (0, 1) for 'accuracy', 'pce' (SPA) and KendallWithTiesOpt without variant '23' (acc23), else (-1, 1)
    s = res.statistics
    np.testing.assert_allclose(res.averages["pooled"], _mtme_average(res.tasks, s, [0.25] * 4), rtol=0, atol=1e-15)
    for lp in ("ende", "zhen"):
        use = [t for t, name in enumerate(res.tasks) if name.startswith(lp + ":")]
        np.testing.assert_allclose(res.averages[lp], _mtme_average([res.tasks[t] for t in use], s[use], [0.5] * 2),
                                   rtol=0, atol=1e-15)
        # SPA is averaged as it is, never (SPA + 1) / 2
        assert np.all(np.abs(res.averages[lp] - (s[use[0]] + s[use[1]]) / 2) < 1e-15)


def _mtme_range(task):
    """MTME ``TaskResults.range`` of a task named 'lp:level/statistic' (our names for its corr_fcn)."""
    statistic = task.rsplit("/", 1)[1]
    mtme_fcn = {"accuracy": "accuracy", "soft-accuracy": "pce", "acc23": "KendallWithTiesOpt-acc23"}.get(
        statistic, "correlation")
    return (0.0, 1.0) if mtme_fcn in ("accuracy", "pce", "KendallWithTiesOpt-acc23") else (-1.0, 1.0)


def _mtme_average(tasks, statistics, weights):
    """MTME ``TaskSetResults.AverageCorrs``: the weighted sum of each task's statistic mapped to [0, 1]."""
    total = 0.0
    for task, values, w in zip(tasks, statistics, weights):
        lo, hi = _mtme_range(task)
        total = total + w * (values - lo) / (hi - lo)
    return total


def test_messages_and_single_metric(wmt20):
    data, _ = wmt20
    with pytest.raises(ParameterError) as err:
        me.mt_evaluate(data, human="mqm", protocol="wmt22")
    assert str(err.value) == "`protocol` must be one of 'wmt23', 'wmt24', 'wmt25', 'mean' or a .toml file; got 'wmt22'."
    with pytest.raises(ParameterError) as err:
        me.mt_evaluate(data, human="mqm", significance="jackknife")
    assert str(err.value) == "`significance` must be one of 'permutation', 'bootstrap'; got 'jackknife'."
    with pytest.raises(ParameterError) as err:
        me.mt_evaluate(data, human="mqm", recalibrate=True)
    assert str(err.value) == ("`recalibrate` must be False with significance='permutation' (the pairs test of "
                              "acc23 keeps each metric's calibrated threshold); got True.")
    ende = data["ende"]
    two = me.ScoreSet.from_matrices({"mqm": ende.matrix("mqm"), "psqm": ende.matrix("A"), "B": ende.matrix("B")},
                                    systems=ende.systems, inputs=ende.inputs, humans=["mqm", "psqm"], name="x")
    with pytest.raises(ParameterError) as err:
        me.mt_evaluate(two)
    assert str(err.value) == ("`human` must name the human scorer; got none, and the data marks 2 scorers as human "
                              "('mqm', 'psqm').")
    one = me.mt_evaluate(data, human="mqm", metrics=["A"], n_resamples=20, rng=0)
    assert one.ranks["pooled"].tolist() == [1] and one.pvalues["pooled"].shape == (1, 1)


def test_table_shows_dropped_segments(wmt20, tmp_path, capsys):
    from metaeval.cli.main import main

    data, _ = wmt20
    ende = data["ende"]
    mqm = ende.matrix("mqm").copy()
    mqm[np.random.default_rng(0).random(mqm.shape) < 0.05] = np.nan  # 5% of the human cells missing
    ds = me.ScoreSet.from_matrices({"mqm": mqm, "A": ende.matrix("A"), "B": ende.matrix("B")},
                                   systems=ende.systems, inputs=ende.inputs, humans=["mqm"], name="ende")
    path = tmp_path / "ende.csv"
    me.write_scores(ds, path)
    assert main(["mt", "--scores", f"en-de={path}", "--human", "mqm", "--metric", "A", "--metric", "B",
                 "--n-resamples", "20"]) == 0
    out = capsys.readouterr().out
    dropped = int((~np.isfinite(mqm).all(axis=0) & np.isfinite(mqm).any(axis=0)).sum())
    assert dropped > 0.3 * ds.shape[1]
    assert f"en-de: {dropped} of {ds.shape[1]} segments dropped" in " ".join(out.split())
    assert "protocol:wmt23" in out


@pytest.mark.parametrize("plus_minus", [False, True])
def test_pairs_test_bit_counts_equal_the_matrix_product(plus_minus):
    """The pairwise permutation test's two engines read the same random words and give the same draws."""
    from metaeval.stats.mt.wmt_permutation import pair_values_null

    r = np.random.default_rng(3)
    values = (r.random((5, 1000)) < 0.6).astype(float)
    if plus_minus:
        values = 2 * values - 1
    weights = np.full(1000, 1 / 1000)
    bits = pair_values_null(values, weights, np.random.default_rng(7), 130, batch=40, engine="bits")
    ref = pair_values_null(values, weights, np.random.default_rng(7), 130, batch=40, engine="matmul")
    np.testing.assert_allclose(bits, ref, atol=1e-12)
    # and the reference equals the definition, with the masks of one draw
    from metaeval.stats.mt.wmt_permutation import _unpack_words, random_words

    varies = (values != values[:1]).any(axis=0)
    m = _unpack_words(random_words(np.random.default_rng(7), 40, int(varies.sum())), int(varies.sum()))[0]
    v = values[:, varies]
    u = ((2 * m - 1) * v).sum(axis=1) / 1000
    assert ref[0, 0] == pytest.approx(u[0] - u[1], abs=1e-12)


def test_cli_two_human_files_need_human_and_csv_json_hold_the_pvalues(tmp_path, capsys):
    import json

    from metaeval.cli.main import main

    root = tmp_path / "wmtx"
    rng = np.random.default_rng(4)
    systems = ["sysA", "sysB", "sysC", "sysD"]
    q = rng.normal(size=(4, 1)) + rng.normal(size=(4, 12))
    (root / "human-scores").mkdir(parents=True)
    (root / "metric-scores" / "en-de").mkdir(parents=True)
    for name, noise in (("mqm", 0.0), ("psqm", 0.5)):
        lines = [f"{s}\t{float(v)!r}" for i, s in enumerate(systems) for v in q[i] + noise * rng.normal(size=12)]
        (root / "human-scores" / f"en-de.{name}.seg.score").write_text("\n".join(lines) + "\n")
    for metric, noise in (("COMET-refA", 0.3), ("BLEU-refA", 2.0)):
        lines = [f"{s}\t{float(v)!r}" for i, s in enumerate(systems) for v in q[i] + noise * rng.normal(size=12)]
        (root / "metric-scores" / "en-de" / f"{metric}.seg.score").write_text("\n".join(lines) + "\n")
    argv = ["mt", "--mt-metrics-eval", str(root), "--language-pair", "en-de", "--n-resamples", "50"]
    assert main(argv) == 2
    assert capsys.readouterr().err.strip() == (
        "metaeval: error: `--human` must name the human scorer; got none, and the data marks 2 scorers as human "
        "('mqm', 'psqm').")
    assert main([*argv, "--human", "psqm", "--format", "json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert "en-de:summary/acc23" in out["task_pvalues"] and "pooled" in out["pvalues"]
    assert out["human_ties"] == "count" and out["protocol"] == "wmt23"
    assert main([*argv, "--human", "mqm", "--format", "csv", "--protocol", "mean"]) == 0
    header = capsys.readouterr().out.splitlines()[0].split(",")
    assert header[:5] == ["scope", "task", "metric", "statistic", "rank"]
    assert {"p_vs_COMET-refA", "p_vs_BLEU-refA"} <= set(header)
