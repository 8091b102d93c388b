"""A ranking-consistency mean outside its own percentile interval gets its one-line explanation (issue 41 item 4)."""
from __future__ import annotations

import numpy as np

import metaeval as me
import metaeval.mt.audit as audit_module
from metaeval.mt.audit import consistency_note, mt_audit


def test_a_skewed_consistency_by_hand():
    taus = np.array([1.0] * 99 + [-1.0])  # 99 halves give the same ranking, one the reverse
    mean, low, high = taus.mean(), *np.percentile(taus, [2.5, 97.5])
    assert (mean, low, high) == (0.98, 1.0, 1.0)
    note = consistency_note("en-de:system/accuracy", mean, low, high, 0.05)
    assert note == ("en-de:system/accuracy: ranking consistency 0.980 is below its 95% interval [1.000, 1.000]: a few"
                    " subsamples far from the rest move the mean, which the percentiles leave out (the subsamples'"
                    " tau-b are skewed)")
    assert consistency_note("t", 0.5, 0.2, 0.9, 0.05) is None
    assert consistency_note("t", float("nan"), float("nan"), float("nan"), 0.05) is None


def _toy(seed=0, n=6, m=30):
    rng = np.random.default_rng(seed)
    h = rng.normal(size=(n, m))
    mats = {"human": h, "a": h + rng.normal(scale=0.5, size=(n, m)), "b": rng.normal(size=(n, m))}
    return me.ScoreSet.from_matrices(mats, humans=["human"], name="toy")


def test_the_audit_notes_it(monkeypatch):
    real = audit_module._consistency

    def skewed(*args, **kwargs):  # the audit's own consistency, with one task's made skewed
        out = real(*args, **kwargs)
        out["toy:system/pearson"] = (0.98, 1.0, 1.0, 100)
        return out

    monkeypatch.setattr(audit_module, "_consistency", skewed)
    res = mt_audit({"toy": _toy()}, ["a", "b"], "human", tasks=["system/pearson", "summary/pearson"],
                   n_resamples=20, n_consistency=5, rng=0)
    lines = [n for n in res.notes if "ranking consistency 0.980" in n]
    assert lines == ["toy:system/pearson: ranking consistency 0.980 is below its 95% interval [1.000, 1.000]: a few"
                     " subsamples far from the rest move the mean, which the percentiles leave out (the subsamples'"
                     " tau-b are skewed)"]
    assert not any("toy:summary/pearson: ranking consistency" in n for n in res.notes)


def test_equal_halves_are_not_outside():
    taus = np.full(20, 0.7)  # their mean may differ from 0.7 in the last bits
    assert consistency_note("t", taus.mean(), *np.percentile(taus, [2.5, 97.5]), 0.05) is None
