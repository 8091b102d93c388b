"""The `mt` and `mt audit` signatures name the metrics, and the rater waves record the concrete seed (issue 41
item 2): a result is rebuilt from its signature alone."""
from __future__ import annotations

import warnings

import numpy as np

import metaeval as me
from metaeval.human.waves import rater_waves


def _fields(signature) -> dict[str, str]:
    return dict(part.split(":", 1) for part in str(signature).split("|"))


def _lp(seed, n=6, m=30):
    r = np.random.default_rng(seed)
    q = r.normal(size=(n, 1)) + r.normal(size=(n, m))
    mats = {"human": q, "zeta": q + r.normal(size=(n, m)), "alpha": q + 2 * r.normal(size=(n, m)),
            "noise": r.normal(size=(n, m)), "other": q + 3 * r.normal(size=(n, m))}
    return me.ScoreSet.from_matrices(mats, humans=["human"], name=f"lp{seed}")


def test_the_signature_names_the_metrics_and_rebuilds_the_result():
    data = {"en-de": _lp(1), "zh-en": _lp(2)}
    res = me.mt_evaluate(data, ["zeta", "noise", "alpha"], "human", tasks=["system/pearson", "summary/kendall-b"],
                         n_resamples=30, rng=4)
    fields = _fields(res.signature)
    assert fields["metrics"] == "zeta,noise,alpha"
    again = me.mt_evaluate(data, fields["metrics"].split(","), fields["human"], tasks=fields["tasks"].split(","),
                           protocol=fields["protocol"], n_resamples=int(fields["resamples"]), rng=int(fields["seed"]))
    assert str(again.signature) == str(res.signature)
    np.testing.assert_array_equal(again.statistics, res.statistics)
    for scope in res.scopes:
        np.testing.assert_array_equal(again.pvalues[scope], res.pvalues[scope])


def test_the_audit_signature_names_the_metrics():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = me.mt_audit({"en-de": _lp(3)}, ["zeta", "alpha", "other"], "human", tasks=["system/pearson"],
                          n_resamples=20, n_consistency=0, rng=0)
    assert _fields(res.signature)["metrics"] == "zeta,alpha,other"


def _ratings(seed=0, n=5, m=12, raters=3):
    r = np.random.default_rng(seed)
    q = r.normal(size=(n, m))
    mats = {f"mqm.r{i}": q + r.normal(size=(n, m)) for i in range(raters)}
    mats["mqm"] = np.mean([mats[k] for k in list(mats)], axis=0)
    mats["metric"] = q + r.normal(size=(n, m))
    return me.ScoreSet.from_matrices(mats, humans=["mqm", *[f"mqm.r{i}" for i in range(raters)]], name="lp")


def test_the_waves_record_the_concrete_seed():
    ds = _ratings()
    res = me.mt_evaluate({"en-de": ds}, ["metric"], "mqm.wave1", human_baselines=["mqm.wave2"], rater_waves=2,
                         tasks=["system/pearson"], n_resamples=20, rng=7)
    subset = _fields(res.signature)["subset"]
    assert "2 rater waves (seed 7, stream (7, 1))" in subset and "generator" not in subset
    # the seed recorded is the one used: the waves of that stream
    waves = rater_waves(ds, 2, rng=np.random.default_rng((7, 1)), recorded_seed=7)
    assert waves.seed == 7 and waves.scores.description.endswith("2 rater waves (seed 7, stream (7, 1))")
    assert rater_waves(ds, 2, rng=3).scores.description.endswith("2 rater waves (seed 3)")
