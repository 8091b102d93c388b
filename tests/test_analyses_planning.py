"""Annotation planning: simulated interval widths and power from a pilot; the width model and its answer."""
from __future__ import annotations

import numpy as np
import pytest

import metaeval as me
from metaeval.report import formats
from metaeval.analyses.planning import fit_width


def pilot(seed=0):
    rng = np.random.default_rng(seed)
    quality = np.linspace(0, 3, 10)[:, None]
    human = quality + rng.normal(size=(10, 20))
    good = human + 0.5 * rng.normal(size=(10, 20))
    bad = rng.normal(size=(10, 20))
    return me.ScoreSet.from_matrices({"good": good, "bad": bad, "h": human}, humans=["h"])


@pytest.mark.parametrize("kwargs,message", [
    (dict(n_inputs=[1, 10]), "`n_inputs` must be a non-empty list of distinct integers >= 2; got [1, 10]."),
    (dict(n_systems=[2]), "`n_systems` must be a non-empty list of distinct integers between 3 and 10; got [2]."),
    (dict(test="williams"), "`test` must be one of 'permutation', 'bootstrap'; got 'williams'."),
    (dict(target_width=3), "`target_width` must be a number in (0, 2]; got 3.0."),
    (dict(target_power=1.5), "`target_power` must be a number in (0, 1); got 1.5."),
    (dict(n_repetitions=0), "`n_repetitions` must be an integer >= 1; got 0."),
])
def test_validation_messages(kwargs, message):
    with pytest.raises(me.ParameterError) as info:
        me.plan_annotation(pilot(), "good", "h", **kwargs)
    assert str(info.value) == message


def test_width_model_and_its_answer():
    sizes = np.array([10.0, 40.0, 160.0])
    a, c = fit_width(sizes, 0.1 + 1.0 / np.sqrt(sizes))
    assert (a, c) == pytest.approx((0.1, 1.0))
    assert np.isnan(fit_width(sizes, np.array([np.nan, 0.3, np.nan]))).all()  # fewer than 2 points


def test_simulated_grid_and_answers():
    r = me.plan_annotation(pilot(), "good", "h", metric_b="bad", n_inputs=[5, 20, 40], n_systems=[6, 10],
                           target_width=0.5, n_repetitions=8, n_resamples=50, rng=0)
    assert r.width_mean.shape == (2, 3) and r.extrapolated.tolist() == [False, False, True]
    assert (r.n_defined_width == 8).all() and (r.n_defined_power == 8).all()
    assert np.all(np.diff(r.width_mean, axis=1) < 0)  # more inputs, narrower intervals
    assert np.all(r.width_mean[1] < r.width_mean[0])  # more systems, narrower intervals
    assert r.power[1, -1] >= r.power[0, 0] and r.power[1, -1] > 0.5  # 'good' clearly beats 'bad'
    answers = r.answer_frame()
    assert answers["n_systems"].tolist() == [6, 10]
    for s in range(2):
        meets = r.n_inputs[r.width_mean[s] <= 0.5]
        assert r.required_inputs[s] == (meets[0] if meets.size else -1)
    again = me.plan_annotation(pilot(), "good", "h", metric_b="bad", n_inputs=[5, 20, 40], n_systems=[6, 10],
                               target_width=0.5, n_repetitions=8, n_resamples=50, rng=0)
    np.testing.assert_array_equal(r.width_mean, again.width_mean)
    np.testing.assert_array_equal(r.power, again.power)
    formats.to_json(r)


def test_identical_metrics_have_no_power():
    ds = pilot()
    ds = me.ScoreSet.from_matrices({"good": ds.matrix("good"), "copy": ds.matrix("good"), "h": ds.matrix("h")},
                                   humans=["h"])
    r = me.plan_annotation(ds, "good", "h", metric_b="copy", n_inputs=[10], n_repetitions=5, n_resamples=30,
                           test="bootstrap", rng=0)
    assert r.power[0, 0] == 0.0


def test_realsumm_pilot_planning(shared_data):
    ds = me.load_dataset("realsumm")
    r = me.plan_annotation(ds, "rouge-2.recall", "litepyramid.recall", n_inputs=[25, 100], method="inputs",
                           target_width=0.25, n_repetitions=10, n_resamples=100, rng=0)
    assert r.pilot_shape == (24, 100) and np.isnan(r.power).all()
    assert r.width_mean[0, 0] > r.width_mean[0, 1]
    assert r.required_inputs_power.tolist() == [-1]


def test_a_fitted_answer_beyond_the_grid_is_marked_and_warned(shared_data, capsys):
    """Regression: `plan --target-width 0.3` answered 12,407 inputs from a grid ending at 400, unmarked."""
    from metaeval.cli.main import main
    from metaeval.errors import MetaevalWarning

    ds = me.load_dataset("realsumm")
    with pytest.warns(MetaevalWarning, match=r"required_inputs_fit beyond the simulated grid \(which ends at 50 inputs\)"
                                             r" is an extrapolation of width\(m\) = a \+ c / sqrt\(m\), not a simulated"
                                             r" answer \(24 systems: [0-9,]+\)"):
        r = me.plan_annotation(ds, "rouge-2.recall", "litepyramid.recall", n_inputs=[25, 50], target_width=0.3,
                               n_repetitions=10, n_resamples=50, rng=0)
    assert r.fit_beyond_grid.tolist() == [True] and r.required_inputs_fit[0] > 50
    assert r.answer_frame()["fit_beyond_grid"].tolist() == [True]
    assert r.to_dict()["answers"][0]["fit_beyond_grid"] is True
    inside = me.plan_annotation(ds, "rouge-2.recall", "litepyramid.recall", n_inputs=[25, 50], target_width=0.9,
                                n_repetitions=10, n_resamples=50, rng=0)
    assert inside.fit_beyond_grid.tolist() == [False]
    code = main(["plan", "--dataset", "realsumm", "--metric", "rouge-2.recall", "--n-inputs", "25,50",
                 "--target-width", "0.3", "--n-repetitions", "10", "--n-resamples", "50"])
    out, err = capsys.readouterr()
    assert code == 0 and "(beyond the grid)" in out and "metaeval: warning: required_inputs_fit beyond" in err
