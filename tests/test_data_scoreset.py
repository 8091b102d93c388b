"""ScoreSet: construction errors, labels, subsets, annotator aggregation and read-only arrays."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

from metaeval.data.scoreset import AGGREGATIONS, DEFAULT_AGGREGATION, ScoreSet
from metaeval.errors import ParameterError, ScoreSetError


def _set(**kwargs) -> ScoreSet:
    human = np.array([[[1, 2, 3], [4, 4, 4]], [[5, np.nan, 1], [np.nan, np.nan, np.nan]], [[2, 2, 5], [3, 1, 2]]],
                     dtype=float)
    metric = np.array([[0.1, 0.2], [0.3, np.nan], [0.5, 0.6]])
    options = dict(systems=["a", "b", "c"], inputs=["x", "y"], humans=["human"], name="toy")
    options.update(kwargs)
    return ScoreSet({"metric": metric, "human": human}, **options)


# -- construction errors (messages pinned) --------------------------------------------------------
@pytest.mark.parametrize(
    "scores,kwargs,message",
    [
        ({"m": [[1.0]]}, dict(systems=["a", "a"], inputs=["x"]), "`systems` must hold unique labels; got 'a' twice."),
        ({"m": [[1.0]]}, dict(systems=["a"], inputs=[1, "1"]), "`inputs` must hold unique labels; got '1' twice."),
        ({"m": [[1.0, 2.0]]}, dict(systems=["a"], inputs=["x"]),
         "scores of 'm' must have shape (systems, inputs) = (1, 1) or (systems, inputs, annotators); got (1, 2)."),
        ({"m": [1.0]}, dict(systems=["a"], inputs=["x"]),
         "scores of 'm' must have shape (systems, inputs) = (1, 1) or (systems, inputs, annotators); got (1,)."),
        ({"m": [["high"]]}, dict(systems=["a"], inputs=["x"]), "scores of 'm' must be numeric; got values of type list."),
        ({"m": [[np.inf]]}, dict(systems=["a"], inputs=["x"]), "scores of 'm' must be finite or NaN; got an infinite value."),
        ({"m": [[1.0]]}, dict(systems=["a"], inputs=["x"], humans=["h"]),
         "`humans` must name a scorer of this ScoreSet ('m'); got 'h'."),
    ],
)
def test_construction_errors(scores, kwargs, message):
    with pytest.raises(ScoreSetError) as info:
        ScoreSet(scores, **kwargs)
    assert str(info.value) == message


def test_aggregation_choice_error():
    with pytest.raises(ParameterError) as info:
        _set(aggregation="max")
    assert str(info.value) == "`aggregation` must be one of 'mean', 'median', 'z-mean'; got 'max'."
    assert AGGREGATIONS == ("mean", "median", "z-mean") and DEFAULT_AGGREGATION == "mean"


def test_from_matrices_defaults_and_errors():
    ds = ScoreSet.from_matrices({"m": np.zeros((2, 3))})
    assert ds.systems == ("0", "1") and ds.inputs == ("0", "1", "2")
    with pytest.raises(ScoreSetError) as info:
        ScoreSet.from_matrices({})
    assert str(info.value) == "`scores` must hold at least one scorer; got an empty mapping."
    with pytest.raises(ScoreSetError) as info:
        ScoreSet.from_matrices({"m": np.zeros(3)})
    assert str(info.value) == "scores must be matrices of shape (systems, inputs); got shape (3,)."


# -- labels and roles -----------------------------------------------------------------------------
def test_labels_roles_and_description():
    ds = _set()
    assert ds.name == "toy" and ds.shape == (3, 2)
    assert ds.scorers == ("metric", "human") and ds.humans == ("human",) and ds.metrics == ("metric",)
    assert ds.n_annotators("human") == 3 and ds.n_annotators("metric") == 1
    assert "metric" in ds and "bleu" not in ds
    assert repr(ds) == "ScoreSet('toy', 3 systems x 2 inputs, 2 scorers, humans=['human'])"
    with pytest.raises(ScoreSetError) as info:
        ds.require("bleu", param="metric")
    assert str(info.value) == "`metric` must name a scorer of this ScoreSet ('metric', 'human'); got 'bleu'."
    assert ds.with_humans(["metric", "human"]).humans == ("metric", "human")
    described = ds.describe()
    assert described["scorers"][1] == {"scorer": "human", "human": True, "annotators": 3, "missing_cells": 1,
                                       "missing_ratings": 4}
    assert ds.signature_fields() == {"dataset": "toy", "systems": 3, "inputs": 2, "subset": None, "aggregation": "mean"}


def test_to_frame_is_wide_and_aggregated():
    frame = _set().to_frame()
    assert list(frame.columns) == ["system", "input", "metric", "human"]
    assert frame["system"].tolist() == ["a", "a", "b", "b", "c", "c"]
    assert frame["human"].iloc[0] == 2.0


# -- aggregation ----------------------------------------------------------------------------------
def test_mean_aggregation_ignores_missing_annotators_and_keeps_empty_cells_missing():
    ds = _set()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        matrix = ds.matrix("human")
    np.testing.assert_array_equal(matrix, [[2.0, 4.0], [3.0, np.nan], [3.0, 2.0]])


def test_median_aggregation():
    np.testing.assert_array_equal(_set(aggregation="median").matrix("human"), [[2.0, 4.0], [3.0, np.nan], [2.0, 2.0]])


def test_z_mean_aggregation_by_hand():
    ds = _set().with_aggregation("z-mean")
    human = ds.annotations("human")
    expected = np.full((3, 2), np.nan)
    z = np.empty_like(human)
    for k in range(3):
        values = human[:, :, k]
        z[:, :, k] = (values - np.nanmean(values)) / np.nanstd(values)
    for i in range(3):
        for j in range(2):
            cell = z[i, j][~np.isnan(z[i, j])]
            if cell.size:
                expected[i, j] = cell.mean()
    np.testing.assert_allclose(ds.matrix("human"), expected, rtol=1e-12)
    assert ds.aggregation == "z-mean" and ds.signature_fields()["aggregation"] == "z-mean"


def test_z_mean_with_a_constant_annotator_does_not_divide_by_zero():
    human = np.stack([np.ones((2, 2)), np.array([[1.0, 2.0], [3.0, 4.0]])], axis=2)
    ds = ScoreSet({"h": human}, systems=["a", "b"], inputs=["x", "y"], aggregation="z-mean")
    assert np.isfinite(ds.matrix("h")).all()


def test_metric_matrix_is_unchanged_by_aggregation():
    for aggregation in AGGREGATIONS:
        np.testing.assert_array_equal(_set(aggregation=aggregation).matrix("metric"), _set().annotations("metric"))


# -- subsets --------------------------------------------------------------------------------------
def test_subset_by_labels_keeps_order_given_and_records_it():
    ds = _set()
    sub = ds.subset(systems=["c", "a"], inputs=["y"])
    assert sub.systems == ("c", "a") and sub.inputs == ("y",)
    np.testing.assert_array_equal(sub.matrix("metric"), [[0.6], [0.2]])
    assert sub.annotations("human").shape == (2, 1, 3)
    assert sub.humans == ("human",) and sub.name == "toy"
    assert sub.description == "systems=c,a; inputs=y"
    again = sub.subset(systems=["a"], description="only a")
    assert again.description == "systems=c,a; inputs=y; only a"
    many = ScoreSet.from_matrices({"m": np.zeros((12, 1))}).subset(systems=[str(i) for i in range(10)])
    assert many.description.startswith("10 of 12 systems (sha1 ") and len(many.description) == 34


def test_subset_by_scorers_drops_humans_not_kept():
    sub = _set().subset(scorers=["metric"], name="metric-only")
    assert sub.scorers == ("metric",) and sub.humans == () and sub.name == "metric-only"


@pytest.mark.parametrize(
    "kwargs,error,message",
    [
        (dict(systems=["z"]), ScoreSetError, "`systems` must hold labels of this ScoreSet; got 'z' (labels: 'a', 'b', 'c')."),
        (dict(systems=["A"]), ScoreSetError, "`systems` must hold labels of this ScoreSet; got 'A' (did you mean 'a'?)."),
        (dict(inputs=["x.0"]), ScoreSetError, "`inputs` must hold labels of this ScoreSet; got 'x.0' (did you mean 'x'?)."),
        (dict(inputs=[]), ScoreSetError, "`inputs` must select at least one label; got an empty selection."),
        (dict(systems="a"), ParameterError, "`systems` must be a list of labels; got the string 'a'."),
        (dict(scorers=["bleu"]), ScoreSetError, "`scorer` must name a scorer of this ScoreSet ('metric', 'human'); got 'bleu'."),
    ],
)
def test_subset_errors(kwargs, error, message):
    with pytest.raises(error) as info:
        _set().subset(**kwargs)
    assert str(info.value) == message


# -- read-only storage ----------------------------------------------------------------------------
def test_arrays_are_read_only_and_copied_from_the_caller():
    metric = np.array([[1.0, 2.0]])
    ds = ScoreSet({"m": metric}, systems=["a"], inputs=["x", "y"])
    metric[0, 0] = 99.0
    assert ds.matrix("m")[0, 0] == 1.0
    for array in (ds.annotations("m"), ds.matrix("m"), _set().annotations("human"), _set().matrix("human")):
        assert not array.flags.writeable
        with pytest.raises(ValueError):
            array[0, 0] = 0.0


def test_derived_sets_do_not_share_writable_state():
    ds = _set()
    sub = ds.subset(systems=["a"])
    assert not sub.annotations("metric").flags.writeable
    np.testing.assert_array_equal(ds.matrix("metric")[0], sub.matrix("metric")[0])
