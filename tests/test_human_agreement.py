"""Krippendorff's alpha (checked against Krippendorff's worked example and a hand case), agreement of
pyramid votes and of annotator scores, pairwise annotator correlations, expert vs crowd."""
from __future__ import annotations

import json

import numpy as np
import pytest

import metaeval as me
from metaeval.errors import DegenerateWarning, ParameterError
from metaeval.human import (
    agreement,
    annotator_correlations,
    group_agreement,
    krippendorff_alpha,
    read_realsumm_annotations,
    read_scu_list,
    read_votes,
)

NAN = np.nan
# Krippendorff (2011), "Computing Krippendorff's Alpha-Reliability", sec. C: 4 coders x 12 units.
KRIPPENDORFF_2011 = np.array([
    [1, 2, 3, 3, 2, 1, 4, 1, 2, NAN, NAN, NAN],
    [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, NAN, 3],
    [NAN, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, NAN],
    [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, NAN],
])


# -- validation -----------------------------------------------------------------------------------
def test_alpha_validation():
    with pytest.raises(ParameterError, match=r"^`level` must be one of 'nominal', 'ordinal', 'interval', 'ratio'; got"
                                             r" 'binary'\.$"):
        krippendorff_alpha(KRIPPENDORFF_2011, level="binary")
    with pytest.raises(ParameterError, match=r"^`data` must be a coders x units matrix; got an array of shape \(3,\)\.$"):
        krippendorff_alpha([1, 2, 3])
    with pytest.raises(ParameterError, match=r"^`data` must hold finite values or NaN; got an infinite value\.$"):
        krippendorff_alpha([[1, np.inf], [1, 2]])


def test_agreement_validation():
    ds = me.load_dataset("summeval")
    with pytest.raises(ParameterError, match=r"^`scorer` must name a scorer with annotators when `source` is a"
                                             r" ScoreSet; got None\.$"):
        agreement(ds)
    with pytest.raises(ParameterError, match=r"^`scorer` must have at least 2 annotators per cell \(an annotator"
                                             r" axis, or per-rater human scorers rouge-1\.f1\.<rater> as MQM"
                                             r" ratings give\); got 'rouge-1.f1' with 1\.$"):
        agreement(ds, "rouge-1.f1")
    with pytest.raises(ParameterError, match=r"^`by` must be one of 'dataset', 'document', 'system'; got 'summary'\.$"):
        agreement(ds, "expert.relevance", by="summary")
    with pytest.raises(ParameterError, match=r"^`source` must be PyramidAnnotations or a ScoreSet; got list\.$"):
        agreement([])


# -- the computation ------------------------------------------------------------------------------
@pytest.mark.parametrize("level,expected", [
    ("nominal", 0.743), ("ordinal", 0.815), ("interval", 0.849), ("ratio", 0.797)])
def test_krippendorff_2011_worked_example(level, expected):
    assert krippendorff_alpha(KRIPPENDORFF_2011, level=level) == pytest.approx(expected, abs=5e-4)


def test_hand_computed_nominal():
    # values 1,1 | 2,2 | 3,3 | 3,4: n = 8, one disagreeing pair counted twice (o_34 = o_43 = 1);
    # alpha = 1 - (n - 1) * 2 / (n^2 - sum n_c^2) = 1 - 7 * 2 / (64 - 18) = 1 - 14 / 46
    assert krippendorff_alpha([[1, 2, 3, 3], [1, 2, 3, 4]], level="nominal") == pytest.approx(1 - 14 / 46)
    # perfect agreement with some variation is 1; a unit with one value adds nothing
    assert krippendorff_alpha([[0, 1, 1, 0], [0, 1, 1, NAN]]) == pytest.approx(1.0)


def test_undefined_alpha_is_nan_with_warning():
    with pytest.warns(DegenerateWarning, match=r"^Krippendorff's alpha is undefined: no unit has two values, or every"
                                               r" pairable value is the same \(no expected disagreement\)\.$"):
        assert np.isnan(krippendorff_alpha([[1, 1, 1], [1, 1, 1]]))
    with pytest.warns(DegenerateWarning):
        assert np.isnan(krippendorff_alpha([[1, NAN], [NAN, 2]]))


def test_votes_before_and_after_worker_filter(tmp_path):
    scus = tmp_path / "scus.csv"
    scus.write_text("document,scu,text\nd,a,A.\nd,b,B.\nd,c,C.\nd,e,E.\n", encoding="utf-8")
    rows = ["document,system,worker,scu,vote"]
    table = {"a": "pppn", "b": "nnnp", "c": "pppn", "e": "nnpn"}  # w4 disagrees on a, b, c
    for scu, votes in table.items():
        rows += [f"d,S,w{k + 1},{scu},{v}" for k, v in enumerate(votes)]
    path = tmp_path / "votes.csv"
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    ann = read_votes(path, scus=read_scu_list(scus))
    result = agreement(ann)
    # all 16 votes: 8 p / 8 n; after dropping w4, 12 votes: units a (ppp), b (nnn), c (ppp), e (nnp)
    before = krippendorff_alpha(np.array([list(v) for v in zip(*table.values())]) == "p")
    assert result.alpha_before_filter == pytest.approx(before)
    kept = np.array([[v == "p" for v in votes[:3]] for votes in table.values()], dtype=float).T
    assert result.alpha == pytest.approx(krippendorff_alpha(kept))
    assert result.alpha > result.alpha_before_filter


# -- real data ------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def realsumm(shared_data):
    return read_realsumm_annotations(shared_data / "realsumm" / "human_annotations")


@pytest.fixture(scope="module")
def extractive(shared_data):
    with open(shared_data / "realsumm" / "realsumm_scores.jsonl", encoding="utf-8") as handle:
        return sorted({r["system_id"] for r in map(json.loads, handle) if r["split"] == "ext"})


def test_realsumm_alpha_pooled_and_per_summary(realsumm, extractive):
    """Paper (after filtering): 0.66 overall, 0.57 extractive, 0.72 abstractive. The mean of per-summary
    alphas comes closest; the pooled alpha is higher (see docs/human.md)."""
    abstractive = [s for s in realsumm.systems if s not in extractive]
    assert len(abstractive) == 14 and len(extractive) == 11
    pooled = agreement(realsumm)
    assert pooled.alpha == pytest.approx(0.7195, abs=1e-4) and pooled.alpha_before_filter == pooled.alpha
    assert pooled.n_units == 26400 and pooled.n_coders == 4
    expected = {"all": (realsumm.systems, 0.654, 76), "ext": (extractive, 0.584, 20), "abs": (abstractive, 0.711, 56)}
    for name, (systems, mean, undefined) in expected.items():
        with pytest.warns(DegenerateWarning, match=rf"undefined for {undefined} of"):
            result = agreement(realsumm.subset(systems=systems), by="summary")
        assert result.mean_alpha == pytest.approx(mean, abs=1e-3), name
        assert result.n_skipped == undefined


def test_summeval_experts_and_crowd():
    ds = me.load_dataset("summeval")
    experts = agreement(ds, "expert.relevance", by="document")
    assert experts.level == "interval" and experts.n_units == 1600 and experts.n_used == 100
    assert 0.3 < experts.alpha < 0.6
    assert "aggregation:mean" in str(experts.signature)
    corr = annotator_correlations(ds, "expert.relevance")
    assert corr.matrix.shape == (3, 3) and np.allclose(np.diag(corr.matrix), 1)
    assert np.allclose(corr.matrix, corr.matrix.T) and len(corr.to_frame()) == 3
    groups = group_agreement(ds, "turker.relevance", "expert.relevance")
    frame = groups.to_frame()
    assert list(frame["measure"]) == ["correlation"] * 3 + ["krippendorff-alpha"]
    assert list(frame["level"]) == ["system", "summary", "global", "cell"]
    # SummEval: mean crowd relevance barely tracks mean expert relevance
    assert groups.correlations[0].statistic == pytest.approx(-0.1435, abs=1e-3)
    assert groups.alpha == pytest.approx(0.0558, abs=1e-3) and groups.n_cells == 1600
    with pytest.raises(ParameterError, match=r"^`levels` must be a non-empty list of levels; got 'system'\.$"):
        group_agreement(ds, "turker.relevance", "expert.relevance", levels="system")


@pytest.mark.parametrize("level", ["nominal", "ordinal", "interval", "ratio"])
def test_same_as_krippendorff_package(level):
    """The GPL-licensed PyPI package `krippendorff` is a test oracle only (not a dependency)."""
    krippendorff = pytest.importorskip("krippendorff")
    rng = np.random.default_rng(5)
    for _ in range(20):
        data = rng.integers(0, 5, size=(4, 20)).astype(float)
        data[rng.random(data.shape) < 0.3] = np.nan
        pairable = data[:, np.sum(~np.isnan(data), axis=0) >= 2]
        assert krippendorff_alpha(data, level=level) == pytest.approx(
            krippendorff.alpha(pairable, level_of_measurement=level), abs=1e-12)
