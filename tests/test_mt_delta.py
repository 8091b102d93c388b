"""The delta-to-accuracy curve (Kocmi et al. 2024): the logistic fit against statsmodels and scipy and a
hand-computed case, the system pairs against pooled pairwise accuracy, the shared bootstrap draws, real WMT19
and WMT20 data, `metaeval mt audit` with its table, figure and HTML page, and the one-line errors."""
from __future__ import annotations

import itertools
import re
import json

import numpy as np
import pandas as pd
import pytest
import scipy.optimize

import metaeval as me
from metaeval.cli.main import main
from metaeval.mt.delta import delta_to_accuracy
from metaeval.errors import ParameterError
from metaeval.stats.mt.delta_accuracy import (agreement_pairs, delta_for_accuracy, fit_logistic, logistic_curve,
                                              separated)

sm = pytest.importorskip("statsmodels.api")

WMT19 = ("de-en", "fi-en", "gu-en", "kk-en", "lt-en", "ru-en", "zh-en")


def _logit_oracle(d, y, w=None):
    """statsmodels' logistic regression (frequency weights through the binomial GLM)."""
    x = sm.add_constant(np.asarray(d, dtype=float), has_constant="add")
    if w is None:
        return sm.Logit(np.asarray(y, dtype=float), x).fit(disp=0, method="newton", tol=1e-12, maxiter=200).params
    return sm.GLM(y, x, family=sm.families.Binomial(), freq_weights=w).fit(tol=1e-13).params


# -- the fit -------------------------------------------------------------------------------------


def test_hand_case():
    """Deltas 1 and 2 with agreement 2/3 and 4/5: b0 + b1 = logit(2/3) = ln 2 and b0 + 2 b1 = logit(4/5) = ln 4,
    so b0 = 0, b1 = ln 2; 90% agreement at (ln 9 - 0) / ln 2 = 3.1699 (beyond the data), 50% at delta 0."""
    d = np.array([1, 1, 1, 2, 2, 2, 2, 2.0])
    y = np.array([1, 1, 0, 1, 1, 1, 1, 0.0])
    b0, b1 = fit_logistic(d, y)
    assert b0[0] == pytest.approx(0.0, abs=1e-12) and b1[0] == pytest.approx(np.log(2), abs=1e-12)
    assert delta_for_accuracy(b0, b1, 0.9)[0] == pytest.approx(np.log(9) / np.log(2), abs=1e-12)
    assert delta_for_accuracy(b0, b1, 0.5)[0] == pytest.approx(0.0, abs=1e-12)
    np.testing.assert_allclose(logistic_curve(b0, b1, np.array([0.0, 1.0, 2.0]))[0], [0.5, 2 / 3, 0.8])


@pytest.mark.parametrize("seed", range(8))
def test_fit_equals_statsmodels_and_scipy(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(20, 300))
    d = rng.exponential(rng.uniform(0.01, 20), size=n)
    beta = rng.normal([0.3, 1.0], 0.5) / np.array([1.0, d.mean()])
    y = (rng.random(n) < 1 / (1 + np.exp(-(beta[0] + beta[1] * d)))).astype(float)
    if separated(d[None], y[None], np.ones((1, n)))[0]:
        pytest.skip("separated draw")
    b0, b1 = fit_logistic(d, y)
    np.testing.assert_allclose([b0[0], b1[0]], _logit_oracle(d, y), rtol=1e-7, atol=1e-9)
    # frequency weights (bootstrap multiplicities) equal repeated rows, and scipy's optimum of the likelihood
    w = rng.integers(0, 4, size=n).astype(float)
    if not separated(d[None], y[None], w[None])[0]:
        b0w, b1w = fit_logistic(d, y, w)
        np.testing.assert_allclose([b0w[0], b1w[0]], _logit_oracle(d, y, w), rtol=1e-7, atol=1e-9)
        np.testing.assert_allclose([b0w[0], b1w[0]], _logit_oracle(np.repeat(d, w.astype(int)),
                                                                   np.repeat(y, w.astype(int))), rtol=1e-7, atol=1e-9)

        def nll(b):
            eta = b[0] + b[1] * d
            return -(w * (y * eta - np.logaddexp(0, eta))).sum()

        opt = scipy.optimize.minimize(nll, [0.0, 0.0], method="BFGS", options={"gtol": 1e-10})
        assert nll([b0w[0], b1w[0]]) <= opt.fun + 1e-9


def test_rows_are_fitted_alike_batched_or_alone():
    rng = np.random.default_rng(3)
    d = rng.exponential(1.0, size=(6, 40))
    y = (rng.random((6, 40)) < 0.5 + 0.4 * np.tanh(d)).astype(float)
    b0, b1 = fit_logistic(d, y)
    for r in range(6):
        one = fit_logistic(d[r], y[r])
        np.testing.assert_allclose([b0[r], b1[r]], [one[0][0], one[1][0]], equal_nan=True)


def test_separation_is_detected_and_not_fitted():
    d = np.array([[0.1, 0.2, 0.3, 0.4], [0.1, 0.2, 0.3, 0.4], [0.1, 0.2, 0.3, 0.4], [0.1, 0.2, 0.3, 0.4]])
    y = np.array([[1, 1, 1, 1], [0, 0, 1, 1], [0, 1, 0, 1], [1, 0, 0, 0.0]])
    assert separated(d, y, np.ones_like(d)).tolist() == [True, True, False, True]
    # quasi-complete separation: a tie at the boundary
    assert separated(np.array([[1.0, 2, 2, 3]]), np.array([[0.0, 0, 1, 1]]), np.ones((1, 4)))[0]
    b0, b1 = fit_logistic(d, y)
    assert np.isnan(b0[[0, 1, 3]]).all() and np.isfinite(b0[2])
    # a zero weight takes an observation out
    assert separated(d[2:3], y[2:3], np.array([[1.0, 1, 0, 1]]))[0]


def test_delta_for_accuracy_edges():
    b0, b1 = np.array([3.0, -1.0, -1.0, np.nan]), np.array([1.0, -0.5, 0.0, 1.0])
    np.testing.assert_array_equal(delta_for_accuracy(b0, b1, 0.9), [0.0, np.inf, np.inf, np.nan])


def test_agreement_pairs_by_hand():
    """Human 4 > 3 > 2 > 1; metric 4, 3.5, 1, 2 (and a tie): a metric tie disagrees, a human tie is not counted."""
    d, y, counted = agreement_pairs(np.array([4, 3.5, 1, 2.0]), np.array([4, 3, 2, 1.0]))
    np.testing.assert_allclose(d, [0.5, 3, 2, 2.5, 1.5, 1])
    assert y.tolist() == [1, 1, 1, 1, 1, 0] and counted.all()
    d, y, counted = agreement_pairs(np.array([1, 1, 2.0]), np.array([1, 2, 2.0]))
    assert d.tolist() == [0, 1, 1] and y.tolist() == [0, 1, 0] and counted.tolist() == [True, True, False]


# -- labelled -------------------------------------------------------------------------------------


def test_one_language_pair_by_hand():
    mats = {"human": np.array([[4.0], [3.0], [2.0], [1.0]]), "m": np.array([[4.0], [3.5], [1.0], [2.0]]),
            "n": np.array([[1.0], [2.0], [3.0], [4.0]])}
    ds = me.ScoreSet.from_matrices(mats, humans=["human"], name="toy")
    res = delta_to_accuracy(ds, n_resamples=50, rng=0)
    assert res.metrics == ("m", "n") and res.pairs.tolist() == [6, 6] and res.agreeing.tolist() == [5, 0]
    np.testing.assert_allclose(res.coefficients[0], _logit_oracle([0.5, 3, 2, 2.5, 1.5, 1], [1, 1, 1, 1, 1, 0]),
                               rtol=1e-7)
    assert np.isnan(res.coefficients[1]).all()  # every pair disagrees: separated
    assert any(n.startswith("n: no logistic fit: the agreement is separated") for n in res.notes)
    assert res.method == "systems"  # one segment: the systems are resampled
    row = res.to_frame().iloc[0]
    assert row.metric == "m" and row.target == 0.8 and row.pairs == 6


@pytest.fixture(scope="module")
def wmt19():
    return {lp: me.load_dataset("wmt19-da-sys", language_pair=lp) for lp in WMT19}


def test_wmt19_pairs_are_pooled_pairwise_accuracy_and_the_fit_is_statsmodels(wmt19):
    res = delta_to_accuracy(wmt19, n_resamples=200, rng=0)
    assert len(res.metrics) == 10 and res.language_pairs == WMT19
    acc = me.mt_evaluate(wmt19, human="da.z", protocol="mean", tasks=["system/accuracy"], n_resamples=1, rng=0)
    pooled = acc.statistics[acc.tasks.index("pooled:system/accuracy")]
    np.testing.assert_allclose(res.agreeing / res.pairs, pooled, rtol=1e-12)
    # the pooled pairs rebuilt with a plain loop, fitted by statsmodels
    for i, metric in enumerate(res.metrics):
        d, y = [], []
        for ds in wmt19.values():
            x, z = ds.matrix(metric)[:, 0], ds.matrix("da.z")[:, 0]
            for a, b in itertools.combinations(range(len(x)), 2):
                if z[a] != z[b]:
                    d.append(abs(x[a] - x[b]))
                    y.append(float(np.sign(x[a] - x[b]) == np.sign(z[a] - z[b])))
        assert len(d) == res.pairs[i]
        params = _logit_oracle(d, y)
        np.testing.assert_allclose(res.coefficients[i], params, rtol=1e-7)
        for t, target in enumerate(res.targets):
            assert res.deltas[i, t] == pytest.approx((np.log(target / (1 - target)) - params[0]) / params[1], rel=1e-7)
            assert res.delta_low[i, t] <= res.deltas[i, t] <= res.delta_high[i, t]
        assert (np.diff(res.deltas[i]) > 0).all()
    frame = res.to_frame()
    assert len(frame) == 30 and set(frame.columns) >= {"metric", "target", "delta", "delta_low", "delta_high"}


def test_draws_are_shared_by_every_metric_and_seeded(wmt19):
    both = delta_to_accuracy(wmt19, ["bleu", "chrf"], n_resamples=100, rng=5)
    alone = delta_to_accuracy(wmt19, ["chrf"], n_resamples=100, rng=5)
    np.testing.assert_array_equal(both.delta_low[1], alone.delta_low[0])
    np.testing.assert_array_equal(both.curve_high[1], alone.curve_high[0])
    again = delta_to_accuracy(wmt19, ["bleu", "chrf"], n_resamples=100, rng=5)
    assert again.to_frame().equals(both.to_frame()) and again.signature == both.signature
    assert "fit:logistic-ml" in str(both.signature) and "seed:5" in str(both.signature)


def test_wmt20_segments_are_resampled(shared_data):
    """The real WMT20 MQM en-de and zh-en scores with noisy synthetic metrics: BOOT-BOTH over systems and
    segments; the band widens with the metric's noise."""
    rng = np.random.default_rng(0)
    data = {}
    for lp, code in (("en-de", "ende"), ("zh-en", "zhen")):
        df = pd.read_csv(shared_data / "wmt" / f"mqm_newstest2020_{code}.avg_seg_scores.tsv", sep=r"\s+",
                         na_values=["None"])
        wide = df.pivot(index="system", columns="seg_id", values="mqm_avg_score")
        mqm = wide.to_numpy(dtype=float)
        mats = {"mqm": mqm, "close": mqm + rng.normal(scale=20, size=mqm.shape),
                "far": mqm + rng.normal(scale=40, size=mqm.shape)}
        mats["far"][3, 7] = np.nan  # one segment a metric did not score: left out for every metric, and said
        data[lp] = me.ScoreSet.from_matrices(mats, systems=list(wide.index), inputs=[str(c) for c in wide.columns],
                                             humans=["mqm"], name=lp)
    res = delta_to_accuracy(data, human="mqm", n_resamples=200, rng=1)
    assert res.method == "both" and res.pairs.tolist() == [90, 90]
    assert "en-de: 1 of 1418 segments left out (some system, metric or the human has no score)" in res.notes
    assert np.isfinite(res.deltas).all() and (res.delta_low <= res.deltas).all() and (res.deltas <= res.delta_high).all()
    assert (res.curve_low <= res.curve + 1e-12).all() and (res.curve <= res.curve_high + 1e-12).all()


# -- errors ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("kwargs, message", [
    (dict(targets=(0.9, 1.0)), "`targets` must be a number in (0, 1); got 1.0."),
    (dict(targets=()), "`targets` must hold at least one agreement level in (0, 1); got none."),
    (dict(method="inputs"), "`method` 'inputs' cannot resample language pair 'de-en': it has 1 segment; use "
                            "'systems' or 'both'."),
    (dict(method="rows"), "`method` must be one of 'systems', 'inputs', 'both'; got 'rows'."),
    (dict(metrics=[]), "`metrics` must name at least one metric; got none."),
    (dict(metrics=["da.z"]), "`metrics` must not contain the gold of language pair 'de-en'; got 'da.z'."),
])
def test_bad_input_is_one_line(wmt19, kwargs, message):
    with pytest.raises(ParameterError) as info:
        delta_to_accuracy({"de-en": wmt19["de-en"]}, **{"n_resamples": 10, **kwargs})
    assert str(info.value) == message


def test_too_few_systems_left():
    ds = me.ScoreSet.from_matrices({"h": np.array([[1.0], [2.0]]), "m": np.array([[1.0], [3.0]])}, humans=["h"],
                                   systems=["a", "b"], name="x")
    with pytest.raises(ParameterError, match=r"^language pair 'x' must keep at least 2 systems for a system pair; "
                                             r"got 1\.$"):
        delta_to_accuracy(ds, exclude_systems=["a"], n_resamples=10)


# -- the command line and the page ------------------------------------------------------------------


def test_mt_audit_shows_the_curve_and_writes_the_page(tmp_path, capsys):
    argv = ["mt", "audit", *(a for lp in WMT19[:3] for a in ("--dataset", f"{lp}=wmt19-da-sys")),
            "--task", "system/pearson", "--task", "system/accuracy", "--consistency", "0", "--n-resamples", "100",
            "--metric", "bleu", "--metric", "chrf", "--metric", "ter"]
    page, plot = tmp_path / "audit.html", tmp_path / "delta.png"
    assert main([*argv, "--html", str(page), "--delta-plot", str(plot), "--accuracy-target", "0.85"]) == 0
    captured = capsys.readouterr()
    assert "delta-to-accuracy: metric delta for" in captured.out and "delta@85%" in captured.out
    assert f"wrote {page}" in captured.err
    html = page.read_text()
    for key in ('data-table="mt-audit-sentinels"', 'data-table="mt-audit-measures"', 'data-table="mt-delta-accuracy"',
                'data-figure="mt-audit"', 'data-figure="mt-delta-accuracy"', "<svg",
                "delta at 85%", "sentinel-rounded", "beaten by"):
        assert key in html, key
    assert plot.stat().st_size > 1000 and not list(tmp_path.glob("*.partial*"))
    assert main([*argv, "--format", "json"]) == 0
    out = json.loads(capsys.readouterr().out)
    curve = out["delta_accuracy"]
    assert curve["metrics"] == ["bleu", "chrf", "ter"] and curve["targets"] == [0.8, 0.9, 0.95]
    res = me.mt_audit({lp: me.load_dataset("wmt19-da-sys", language_pair=lp) for lp in WMT19[:3]},
                      ["bleu", "chrf", "ter"], tasks=["system/pearson", "system/accuracy"], n_resamples=100,
                      n_consistency=0, rng=0)
    np.testing.assert_allclose(np.array(curve["deltas"], dtype=float), res.delta_accuracy.deltas)


@pytest.mark.parametrize("extra, message", [
    (["--accuracy-target", "1.5"], "`targets` must be a number in (0, 1); got 1.5."),
    (["--method", "inputs"], "`method` 'inputs' cannot resample language pair 'de-en': it has 1 segment; use "
                             "'systems' or 'both'."),
    (["--delta-plot", "delta.txt"], "`delta_plot` must be a file name ending in .png or .svg; got 'delta.txt'."),
])
def test_mt_audit_delta_errors(tmp_path, monkeypatch, capsys, extra, message):
    monkeypatch.chdir(tmp_path)
    argv = ["mt", "audit", "--dataset", "de-en=wmt19-da-sys", "--dataset", "fi-en=wmt19-da-sys", "--task",
            "system/pearson", "--consistency", "0", "--n-resamples", "20", "--html", "page.html", *extra]
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "Traceback" not in err and err.endswith(message), err
    assert not (tmp_path / "page.html").exists()


def test_audit_page_in_a_browser_with_hostile_names(wmt19, tmp_path):
    """The page of `mt audit --html` in headless Chromium: no console message, both figures as accessible SVG,
    the three tables, and metric names that look like markup shown as text (also inside the SVG)."""
    from test_report_browser import HOSTILE_METRIC, MATH_METRIC, chromium, run_chromium

    from metaeval.report.mt_audit_section import write_mt_audit_page

    browser = chromium()
    renames = {"bleu": HOSTILE_METRIC, "chrf": MATH_METRIC}
    data = {lp: me.ScoreSet({renames.get(s, s): ds.annotations(s) for s in ds.scorers}, systems=ds.systems,
                            inputs=ds.inputs, humans=ds.humans, name=lp) for lp, ds in list(wmt19.items())[:3]}
    res = me.mt_audit(data, [HOSTILE_METRIC, MATH_METRIC, "ter"], tasks=["system/pearson", "system/accuracy"],
                      n_resamples=50, n_consistency=0, rng=0)
    page = write_mt_audit_page(tmp_path / "audit.html", res, command="metaeval mt audit")
    dom, console = run_chromium(browser, page, tmp_path, fragment="#selftest")
    assert console == [] and 'data-ready="yes"' in dom
    assert re.findall(r'data-figure="([^"]+)"', dom) == ["mt-audit", "mt-delta-accuracy"]
    assert re.findall(r'data-table="([^"]+)"', dom) == ["mt-audit-sentinels", "mt-audit-measures", "mt-delta-accuracy"]
    for tag in re.findall(r"<svg [^>]*>", dom):
        assert 'role="img"' in tag and 'aria-label="' in tag
    assert "<img" not in dom and "&lt;img src=x onerror=alert(2)&gt;" in dom
    assert dom.count("<script") == 1
