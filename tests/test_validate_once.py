"""The scores of one call are checked once: a report checks its human (and metrics) at its entry point, and the
table, the significance matrix and the analyses trust the checked object they receive."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import metaeval as me
from metaeval import _validation as iv
from metaeval.data.scoreset import ScoreSet
from metaeval.errors import DataWarning, ParameterError, ScoreSetError


def _scores(unscored: bool = False) -> ScoreSet:
    rng = np.random.default_rng(0)
    n, m = 12, 30
    q = rng.normal(size=(n, 1)) + rng.normal(size=(n, m))
    human = np.round(q * 3) / 3
    if unscored:
        human[-1] = np.nan  # a system without any human score: left out once, with one warning
    return ScoreSet.from_matrices({"human": human, "a": q + rng.normal(size=(n, m)),
                                   "b": q + 2 * rng.normal(size=(n, m)), "c": np.round(q + rng.normal(size=(n, m)))},
                                  humans=["human"])


def test_build_report_checks_the_human_once(monkeypatch):
    calls = {"human": 0, "scored_systems": 0}
    require = ScoreSet.require

    def counting_require(self, scorer, *, param="scorer"):
        calls["human"] += scorer == "human"
        return require(self, scorer, param=param)

    scored = iv.scored_systems

    def counting_scored(*args, **kwargs):
        calls["scored_systems"] += 1
        return scored(*args, **kwargs)

    monkeypatch.setattr(ScoreSet, "require", counting_require)
    monkeypatch.setattr(iv, "scored_systems", counting_scored)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        report = me.build_report(_scores(), "human", n_resamples=20, repetitions=5)
    assert {"delta", "stability", "topk", "verdicts", "normality"} <= set(report.analyses)
    assert calls == {"human": 1, "scored_systems": 1}  # 34 and 28 before the checked object


def test_unscored_system_is_left_out_once_with_one_warning():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        report = me.build_report(_scores(unscored=True), "human", n_resamples=20, repetitions=5,
                                 analyses=["delta", "topk"])
    left_out = [w for w in caught if issubclass(w.category, DataWarning) and "left out" in str(w.message)]
    assert len(left_out) == 1 and "'11'" in str(left_out[0].message)
    assert report.dataset["systems"] == 11


@pytest.mark.filterwarnings("ignore::metaeval.errors.DegenerateWarning")
def test_a_checked_object_is_trusted_and_gives_the_same_results():
    ds = _scores()
    checked = iv.check_scores(ds, "human", ["a", "b"]).scored()
    assert iv.check_scores(checked, "human", ["a"]).metrics == ("a",)
    assert iv.trusted(checked, "human", ["a", "c"]) is None  # 'c' was not checked: checked afresh
    plain = me.bootstrap_ci(ds, "a", "human", level="summary", coefficient="kendall", n_resamples=50, rng=0)
    trusted = me.bootstrap_ci(checked, "a", "human", level="summary", coefficient="kendall", n_resamples=50, rng=0)
    assert plain.to_dict() == trusted.to_dict()
    table = me.correlation_table(checked, "human", ["a", "b"], n_resamples=30)
    assert table.to_dict() == me.correlation_table(ds, "human", ["a", "b"], n_resamples=30).to_dict()


def test_errors_stay_at_the_public_entry_points():
    ds = _scores()
    with pytest.raises(ScoreSetError, match="`human` must name a scorer of this ScoreSet"):
        me.build_report(ds, "humans", n_resamples=20)
    with pytest.raises(ScoreSetError, match="`metrics` must name a scorer"):
        me.correlation_table(ds, "human", ["a", "z"], n_resamples=20)
    with pytest.raises(ParameterError, match="`human` must be a scorer name; got 3"):
        me.delta_correlations(ds, ["a"], 3)
    with pytest.raises(ScoreSetError, match="`metric` must name a scorer"):
        me.bootstrap_ci(ds, "zz", "human", n_resamples=20)
