"""r_SYS Delta(l, u) (Deutsch, Dror & Roth 2022): hand-computed cells, boundaries, degenerate cells, bootstrap."""
from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

import metaeval as me
from metaeval.report import formats
from metaeval.stats.resampling.draws import bootstrap_draws

METRICS = ["rouge-1.recall", "rouge-2.recall", "rouge-l.recall", "bertscore.recall", "js-2"]


def one_input(x, z, **more):
    """A ScoreSet whose system scores are exactly ``x`` and ``z`` (one input)."""
    scores = {"m": np.asarray(x, float)[:, None], "h": np.asarray(z, float)[:, None]}
    scores.update({k: np.asarray(v, float)[:, None] for k, v in more.items()})
    return me.ScoreSet.from_matrices(scores, humans=["h"])


# -- validation -----------------------------------------------------------------------------------

@pytest.mark.parametrize("kwargs,message", [
    (dict(fractions=[0.5, 0.2]), "`fractions` must be a non-empty, strictly increasing list of numbers in (0, 1]; "
                                 "got [0.5, 0.2]."),
    (dict(fractions=[0.5, 1.5]), "`fractions` must be a non-empty, strictly increasing list of numbers in (0, 1]; "
                                 "got [0.5, 1.5]."),
    (dict(edges=[0.0, 1.0]), "`edges` must be a non-empty, strictly increasing list of numbers > 0; got [0.0, 1.0]."),
    (dict(fractions=[0.5], edges=[1.0]), "`edges` must be None when `fractions` is given; got both."),
    (dict(boundary="left"), "`boundary` must be one of 'both', 'upper'; got 'left'."),
    (dict(min_pairs=0), "`min_pairs` must be an integer >= 1; got 0."),
    (dict(n_resamples=-1), "`n_resamples` must be an integer >= 0; got -1."),
    (dict(full_test_set=1), "`full_test_set` must be True or False; got 1."),
])
def test_validation_messages(kwargs, message):
    ds = one_input([0, 1, 3, 6], [0, 2, 1, 3])
    with pytest.raises(me.ParameterError) as info:
        me.delta_correlations(ds, "m", "h", **kwargs)
    assert str(info.value) == message


def test_metrics_messages():
    ds = one_input([0, 1, 3, 6], [0, 2, 1, 3])
    with pytest.raises(me.ParameterError) as info:
        me.delta_correlations(ds, [], "h")
    assert str(info.value) == "`metrics` must name at least one scorer; got an empty list."
    with pytest.raises(me.ParameterError) as info:
        me.delta_correlations(ds, ["m", "h"], "h")
    assert str(info.value) == "`metrics` must not contain the human scorer; got 'h'."
    with pytest.raises(me.ScoreSetError):
        me.delta_correlations(ds, "nope", "h")


# -- hand-computed cells --------------------------------------------------------------------------
# x = [0, 1, 3, 6], z = [0, 2, 1, 3]. Pairs by gap: (0,1) 1 C, (1,2) 2 D, (0,2) 3 C, (2,3) 3 C, (1,3) 5 C,
# (0,3) 6 C. Fractions 0.5 -> the ceil(0.5 * 6) = 3rd closest pair: u = 3 (two pairs have gap 3).

def test_hand_computed_cells_closed_boundaries():
    ds = one_input([0, 1, 3, 6], [0, 2, 1, 3])
    r = me.delta_correlations(ds, "m", "h", fractions=[0.5, 1.0], min_pairs=1, n_resamples=0)
    assert r.upper.tolist() == [[3.0, 6.0]] and r.lower.tolist() == [[0.0, 3.0]]
    # [0, 3]: both pairs at gap 3 included -> 4 pairs, S = 3 - 1 = 2, tau = 2 / 4
    assert r.n_pairs[0, 0, 0] == 4 and r.statistic[0, 0, 0] == pytest.approx(0.5)
    # [0, 6]: every pair, the ordinary system-level tau-b
    assert r.n_pairs[0, 0, 1] == 6
    assert r.statistic[0, 0, 1] == pytest.approx(stats.kendalltau([0, 1, 3, 6], [0, 2, 1, 3]).statistic)
    # [3, 6] with boundary 'both': the pairs at gap 3 belong to [0, 3] AND to [3, 6]
    assert r.n_pairs[0, 1, 1] == 4 and r.statistic[0, 1, 1] == pytest.approx(1.0)
    assert np.isnan(r.statistic[0, 1, 0]) and r.n_pairs[0, 1, 0] == 0  # l > u: not a cell


def test_boundary_upper_puts_an_edge_pair_in_one_cell_only():
    ds = one_input([0, 1, 3, 6], [0, 2, 1, 3])
    r = me.delta_correlations(ds, "m", "h", fractions=[0.5, 1.0], min_pairs=1, n_resamples=0, boundary="upper")
    assert r.n_pairs[0, 0, 0] == 4  # l = 0: [0, u] is closed either way
    assert r.n_pairs[0, 1, 1] == 2  # (3, 6]: only the gaps 5 and 6
    # the bands [0, u1], (u1, u2] partition the pairs
    assert r.n_pairs[0, 0, 0] + r.n_pairs[0, 1, 1] == r.n_total_pairs


def test_tau_b_tie_correction_restricted_to_the_cell():
    x, z = [0, 1, 3, 6], [0, 2, 2, 3]  # the pair (1, 2) is tied in z
    ds = one_input(x, z)
    r = me.delta_correlations(ds, "m", "h", fractions=[1.0], min_pairs=1, n_resamples=0)
    assert r.statistic[0, 0, 0] == pytest.approx(stats.kendalltau(x, z).statistic)  # 5 / sqrt(6 * 5)
    # cell [0, 2]: pairs (0,1) C and (1,2) tied in z -> S = 1, n0 = 2, untied x = 2, untied z = 1
    r = me.delta_correlations(ds, "m", "h", edges=[2.0, 6.0], min_pairs=1, n_resamples=0)
    assert r.n_pairs[0, 0, 0] == 2 and r.statistic[0, 0, 0] == pytest.approx(1 / math.sqrt(2 * 1))


def test_quantile_edges_include_the_pair_at_u():
    gaps = np.array([5.0, 1.0, 4.0, 2.0, 3.0, 6.0, 7.0, 8.0, 9.0, 10.0])
    from metaeval.analyses.delta import quantile_edges

    assert quantile_edges(gaps, np.array([0.1, 0.25, 0.3, 1.0])).tolist() == [1.0, 3.0, 3.0, 10.0]


# -- degenerate cells -----------------------------------------------------------------------------

@pytest.mark.filterwarnings("ignore:BOOT-INPUTS cannot resample the inputs")  # one input, on purpose
def test_empty_cell_is_nan_with_reason():
    ds = one_input([0, 1, 3, 6], [0, 2, 1, 3])
    with pytest.warns(me.DegenerateWarning, match="no system pair in the cell"):
        r = me.delta_correlations(ds, "m", "h", edges=[0.5, 10.0], min_pairs=1, n_resamples=20, rng=0)
    assert np.isnan(r.statistic[0, 0, 0]) and r.n_pairs[0, 0, 0] == 0
    assert r.reasons[0, 0, 0] == "no system pair in the cell"
    assert np.isnan(r.ci_low[0, 0, 0]) and r.n_resamples_dropped[0, 0, 0] == 20
    assert r.statistic[0, 0, 1] == pytest.approx(4 / 6) and r.reasons[0, 0, 1] == ""


def test_two_systems_and_tied_humans_are_nan_with_reasons():
    ds = one_input([0, 1], [0, 2])
    with pytest.warns(me.DegenerateWarning, match="fewer than 5 system pairs"):
        r = me.delta_correlations(ds, "m", "h", n_resamples=0)
    assert np.isnan(r.statistic).all()
    assert r.reasons[0, 0, -1] == "fewer than 5 system pairs in the cell (min_pairs)"
    ds = one_input([0, 1, 3, 6], [2, 2, 2, 2])
    with pytest.warns(me.DegenerateWarning, match="tied in the human score"):
        r = me.delta_correlations(ds, "m", "h", min_pairs=1, n_resamples=0)
    assert np.isnan(r.statistic[0, 0]).all()
    assert r.reasons[0, 0, -1] == "every pair in the cell is tied in the human score"


# -- bootstrap --------------------------------------------------------------------------------------

def test_bootstrap_matches_a_plain_loop():
    rng = np.random.default_rng(3)
    human = rng.normal(size=(7, 12)) + np.arange(7)[:, None] / 2
    metric = human + rng.normal(size=(7, 12))
    ds = me.ScoreSet.from_matrices({"m": metric, "h": human}, humans=["h"])
    r = me.delta_correlations(ds, "m", "h", fractions=[0.5, 1.0], min_pairs=1, n_resamples=60, rng=5)
    draws = bootstrap_draws(7, 12, method="inputs", n_resamples=60, rng=np.random.default_rng(5))
    samples = []
    for s in range(60):
        cols = draws.cols[s]
        x, z = metric[:, cols].mean(axis=1), human[:, cols].mean(axis=1)
        conc = disc = tx = tz = n0 = 0
        for i in range(7):
            for j in range(i + 1, 7):
                if not abs(x[i] - x[j]) <= r.upper[0, 0]:
                    continue
                n0 += 1
                a, b = np.sign(x[i] - x[j]), np.sign(z[i] - z[j])
                conc += a * b > 0
                disc += a * b < 0
                tx += a == 0
                tz += b == 0
        samples.append((conc - disc) / math.sqrt((n0 - tx) * (n0 - tz)) if n0 - tx and n0 - tz else np.nan)
    samples = np.array(samples)
    ok = samples[np.isfinite(samples)]
    assert r.n_resamples_dropped[0, 0, 0] == 60 - ok.size
    assert r.ci_low[0, 0, 0] == pytest.approx(np.percentile(ok, 2.5))
    assert r.ci_high[0, 0, 0] == pytest.approx(np.percentile(ok, 97.5))


def test_full_test_set_mode_averages_each_scorer_over_its_inputs():
    rng = np.random.default_rng(0)
    metric = rng.normal(size=(6, 30)) + np.arange(6)[:, None]
    human = metric[:, :10] + rng.normal(size=(6, 10))
    human = np.concatenate([human, np.full((6, 20), np.nan)], axis=1)
    ds = me.ScoreSet.from_matrices({"m": metric, "h": human}, humans=["h"])
    full = me.delta_correlations(ds, "m", "h", full_test_set=True, min_pairs=1, n_resamples=30, rng=0)
    judged = me.delta_correlations(ds, "m", "h", min_pairs=1, n_resamples=0)
    np.testing.assert_allclose(full.metric_scores[0], metric.mean(axis=1))
    np.testing.assert_allclose(judged.metric_scores[0], metric[:, :10].mean(axis=1))
    np.testing.assert_allclose(full.human_scores, np.nanmean(human, axis=1))
    assert "full_test_set:yes" in str(full.signature)
    assert full.statistic[0, 0, -1] == pytest.approx(me.correlate(ds, "m", "h", full_test_set=True).statistic)


# -- real data: packaged REALSumm -----------------------------------------------------------------

def test_realsumm_grid(shared_data):
    ds = me.load_dataset("realsumm")
    r = me.delta_correlations(ds, METRICS, "litepyramid.recall", n_resamples=100, rng=0)
    assert r.statistic.shape == (5, 10, 10)
    for a, metric in enumerate(METRICS):
        assert r.curve[a, -1] == pytest.approx(me.correlate(ds, metric, "litepyramid.recall").statistic)
        assert np.all(np.diff(r.upper[a]) > 0)
    assert r.n_pairs[:, 0, -1].tolist() == [276] * 5
    assert r.n_pairs[:, 0, 0].tolist() == [28] * 5  # ceil(0.1 * 276)
    # the 10% closest pairs agree far less than all pairs (the paper's point)
    assert np.all(r.curve[:, 0] < r.curve[:, -1])
    assert np.all(r.curve[:3, 0] < r.curve[:3, -1] - 0.5)  # ROUGE-1/2/L
    again = me.delta_correlations(ds, METRICS, "litepyramid.recall", n_resamples=100, rng=0)
    np.testing.assert_array_equal(r.ci_low, again.ci_low)
    frame = r.to_frame()
    assert len(frame) == 5 * 55 and set(frame.columns) >= {"lower", "upper", "n_pairs", "statistic", "reason"}
    assert len(r.curve_frame()) == 50
    formats.to_json(r)  # JSON-ready (no NaN)
