"""Binary decisions: hand-computed confusion measures, cross-validated thresholds, labels, baselines, report."""
from __future__ import annotations

import numpy as np
import pytest

from metaeval.data.scoreset import ScoreSet
from metaeval.errors import ParameterError
from metaeval.spans import Span, SpanAnnotations, evaluate_binary, evaluate_spans
from metaeval.spans.binary import binary_measures, cv_threshold_labels


def test_binary_measures_by_hand():
    # tp 3, fp 1, fn 2, tn 4: P 3/4, R 3/5, F1 2/3, MCC (12 - 2) / sqrt(4 * 5 * 5 * 6)
    p, r, f, mcc = binary_measures(np.array([3.0, 1, 2, 4]))
    assert (p, r) == (0.75, 0.6) and f == pytest.approx(2 * 0.75 * 0.6 / 1.35)
    assert mcc == pytest.approx(10 / np.sqrt(4 * 5 * 5 * 6))
    assert binary_measures(np.array([0.0, 0, 2, 4])).tolist() == [1.0, 0.0, 0.0, 0.0]


def test_mcc_equals_sklearn():
    sklearn = pytest.importorskip("sklearn.metrics")
    rng = np.random.default_rng(0)
    y, p = rng.random(200) < 0.4, rng.random(200) < 0.5
    sums = np.array([np.sum(p & y), np.sum(p & ~y), np.sum(~p & y), np.sum(~p & ~y)], dtype=float)
    assert binary_measures(sums)[3] == pytest.approx(sklearn.matthews_corrcoef(y, p))
    assert binary_measures(sums)[2] == pytest.approx(sklearn.f1_score(y, p))


def test_thresholds_never_see_the_rows_they_label():
    rng = np.random.default_rng(1)
    scores = rng.random(60)
    labels = scores > 0.5
    groups = np.repeat(np.arange(20), 3).astype(str)
    pred, ts = cv_threshold_labels(scores, labels, groups, positive_high=True, n_folds=4, rng=np.random.default_rng(2))
    assert len(ts) == 4
    # changing the scores of one fold's rows changes no threshold chosen for that fold
    fold_rng = np.random.default_rng(2)
    order = fold_rng.permutation(np.unique(groups))
    fold_of = {g: i % 4 for i, g in enumerate(order.tolist())}
    in_fold0 = np.array([fold_of[g] == 0 for g in groups])
    moved = scores.copy()
    moved[in_fold0] = rng.random(in_fold0.sum())
    _, ts2 = cv_threshold_labels(moved, labels, groups, positive_high=True, n_folds=4, rng=np.random.default_rng(2))
    assert ts2[0] == ts[0] and ts2[1:] != ts[1:]


def _tiny():
    systems, segments = ["A", "B"], [str(j) for j in range(6)]
    targets = {(s, g): "abcdefgh"[: 3 + j] for s in systems for j, g in enumerate(segments)}
    human = np.array([[0, -1, 0, -5, 0, -10], [0, 0, -1, 0, -6, 0]], dtype=float)
    spans = {(s, g): ([Span(0, 2, "minor")] if human[a, j] < 0 else []) for a, s in enumerate(systems)
             for j, g in enumerate(segments)}
    gold = SpanAnnotations("gold", spans, targets)
    metric = -human + np.array([[0.5, 0, 0, 0, 0, 0], [0, 0, 0, 0, 0, 0]])  # higher = worse: a bad metric
    labels = (human == 0).astype(float)
    ds = ScoreSet({"mqm": human, "bad": metric, "oracle": labels}, systems=systems, inputs=segments, humans=["mqm"])
    return ds, gold


def test_error_free_with_labels_and_baselines():
    ds, gold = _tiny()
    res = evaluate_binary(ds, "mqm", gold=gold, labels=["oracle"], n_resamples=20, rng=0, n_folds=2)
    rows = {r["predictor"]: r for r in res.to_frame().to_dict("records")}
    assert res.n_positive == 7 and res.n_cells == 12
    assert rows["oracle"]["f1"] == 1.0 and rows["oracle"]["mcc"] == 1.0
    assert rows["baseline:all-error-free"]["precision"] == pytest.approx(7 / 12)
    assert rows["baseline:all-error-free"]["recall"] == 1.0 and rows["baseline:all-error-free"]["mcc"] == 0.0
    assert len(rows["baseline:length"]["thresholds"].split(",")) == 2
    crit = evaluate_binary(ds, "mqm", task="critical", gold=gold, n_resamples=20, rng=0, n_folds=2)
    assert crit.n_positive == 3  # -5, -10, -6


def test_binary_errors():
    ds, gold = _tiny()
    with pytest.raises(ParameterError, match="`labels`: 'bad' must be 1 \\(positive\\) or 0 on every evaluated "
                                             "segment; got 0.5."):
        evaluate_binary(ds, "mqm", gold=gold, labels=["bad"], n_resamples=5, n_folds=2)
    with pytest.raises(ParameterError, match="`n_folds` must be at most the number of segments or documents \\(6\\); "
                                             "got 7."):
        evaluate_binary(ds, "mqm", gold=gold, n_resamples=5, n_folds=7)
    with pytest.raises(ParameterError, match="`gold` spans must be given"):
        evaluate_binary(ds, "mqm", n_resamples=5)


def test_report_section_has_the_severity_figure():
    from metaeval.report.spans_section import spans_page, spans_section

    _, gold = _tiny()
    res = evaluate_spans(gold, [], n_resamples=20, rng=0, compare=True)
    section = spans_section(res)
    assert section.figures[0].key == "spans-severity" and "<svg" in section.figures[0].svg
    assert [c.text for c in section.tables[0].rows[0][:2]] == ["baseline:no-spans", "baseline"]
    page = spans_page(res)
    assert page.startswith("<!DOCTYPE html>") and "Error spans" in page


def test_signature_names_the_weights_of_the_human_score():
    """Rules reading the MQM score sign its description (the weights: google vs severity differ in 429 WMT23
    cells), so two weightings never share a signature; the span-only rule does not read the score."""
    ds, gold = _tiny()
    named = ScoreSet({k: ds.matrix(k) for k in ds.scorers}, systems=ds.systems, inputs=ds.inputs, humans=["mqm"],
                     description="MQM ratings, weights major=5,zero=none")
    both = evaluate_binary(named, "mqm", gold=gold, n_resamples=10, rng=0, n_folds=2)
    assert "|subset:MQM ratings, weights major=5,zero=none|" in str(both.signature)
    crit = evaluate_binary(named, "mqm", task="critical", gold=gold, n_resamples=10, rng=0, n_folds=2)
    assert "subset:MQM ratings" in str(crit.signature)
    no_span = evaluate_binary(named, "mqm", gold=gold, gold_rule="no-span", n_resamples=10, rng=0, n_folds=2)
    assert "subset:" not in str(no_span.signature)
