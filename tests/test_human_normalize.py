"""Per-annotator normalization, aggregation and combined criteria."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import metaeval as me
from metaeval.errors import DegenerateWarning, InputFileError, ParameterError
from metaeval.human import combine_criteria, normalize, read_judgments

JUDGMENTS = pd.DataFrame({
    "system": ["A", "A", "B", "B", "A", "B"],
    "input": ["1", "1", "1", "1", "2", "2"],
    "annotator": ["x", "y", "x", "y", "x", "x"],
    "score": [1.0, 4.0, 3.0, 5.0, 2.0, 6.0],
})


def test_validation_messages():
    with pytest.raises(ParameterError, match=r"^`method` must be one of 'none', 'z'; got 'minmax'\.$"):
        normalize(JUDGMENTS, method="minmax")
    with pytest.raises(ParameterError, match=r"^`aggregation` 'majority' needs `method` 'none' \(z-scores are not"
                                             r" categories\); got method 'z'\.$"):
        normalize(JUDGMENTS, aggregation="majority")
    with pytest.raises(ParameterError, match=r"^`source` must have the columns system, input, annotator, score; got no"
                                             r" 'score'\.$"):
        normalize(JUDGMENTS.drop(columns="score"))
    ds = me.load_dataset("summeval")
    with pytest.raises(ParameterError, match=r"^`weights` must be 2 non-negative numbers with a positive sum; got"
                                             r" \[1, -1\]\.$"):
        combine_criteria(ds, ["expert.coherence", "expert.relevance"], weights=[1, -1])


def test_hand_computed_z_scores():
    result = normalize(JUDGMENTS)
    # x: 1, 3, 2, 6 -> mean 3, std sqrt(14 / 4); y: 4, 5 -> mean 4.5, std 0.5
    sx, sy = np.sqrt(3.5), 0.5
    matrix = result.scoreset.matrix("human")
    assert matrix[0, 0] == pytest.approx(((1 - 3) / sx + (4 - 4.5) / sy) / 2)
    assert matrix[1, 0] == pytest.approx(((3 - 3) / sx + (5 - 4.5) / sy) / 2)
    assert matrix[1, 1] == pytest.approx((6 - 3) / sx)
    assert "normalization:z|aggregation:mean|annotators:2" in str(result.signature)
    details = result.details.set_index("annotator")
    assert details.loc["y", "std"] == pytest.approx(0.5)


def test_majority_ties_go_to_the_lowest():
    frame = pd.DataFrame({"system": ["A"] * 4, "input": ["1"] * 4, "annotator": list("abcd"), "score": [3, 5, 5, 3.0]})
    assert normalize(frame, method="none", aggregation="majority").scoreset.matrix("human")[0, 0] == 3.0
    assert normalize(frame, method="none", aggregation="median").scoreset.matrix("human")[0, 0] == 4.0


def test_constant_annotator_warns():
    frame = JUDGMENTS.assign(score=np.where(JUDGMENTS["annotator"] == "y", 2.0, JUDGMENTS["score"]))
    with pytest.warns(DegenerateWarning, match=r"^1 annotators gave one constant score, so they have no z-scores and"
                                               r" their scores are left out \(e\.g\. 'y'\)\.$"):
        result = normalize(frame)
    assert result.scoreset.matrix("human")[0, 0] == pytest.approx((1 - 3) / np.sqrt(3.5))


def test_criteria_column_and_reader(tmp_path):
    path = tmp_path / "j.csv"
    path.write_text("system,input,annotator,criterion,score\nA,1,x,fluency,1\nA,1,x,relevance,2\nB,1,x,fluency,3\n"
                    "B,1,x,relevance,5\n", encoding="utf-8")
    result = normalize(read_judgments(path), method="none", name="h")
    assert result.scorers == ("h.fluency", "h.relevance")
    assert result.scoreset.matrix("h.relevance")[:, 0].tolist() == [2.0, 5.0]
    path.write_text("system,input,annotator,score\nA,1,x,1\nA,1,x,2\n", encoding="utf-8")
    with pytest.raises(InputFileError) as info:
        read_judgments(path)
    assert str(info.value) == (f"{path}, row 3, column 'annotator': an annotator must score a cell once; got annotator"
                               " 'x' again on system 'A', input '1' (first at row 2).")
    path.write_text("system,input,annotator,score\nA,1,x,good\n", encoding="utf-8")
    with pytest.raises(InputFileError, match=r"row 2, column 'score': a score must be a finite number; got 'good'\.$"):
        read_judgments(path)


def test_summeval_z_and_combined():
    ds = me.load_dataset("summeval")
    z = normalize(ds, "expert.relevance")
    assert z.scoreset.shape == (16, 100) and z.scoreset.humans == ("expert.relevance",)
    assert abs(np.nanmean(z.scoreset.matrix("expert.relevance"))) < 1e-12  # every annotator centred, all cells
    combined = combine_criteria(ds, ["expert.coherence", "expert.relevance"], weights=[1, 3])
    coh, rel = ds.matrix("expert.coherence"), ds.matrix("expert.relevance")
    expected = 0.25 * (coh - coh.mean()) / coh.std() + 0.75 * (rel - rel.mean()) / rel.std()
    assert combined.scoreset.matrix("combined") == pytest.approx(expected)


def test_more_validation_messages():
    ds = me.load_dataset("summeval")
    with pytest.raises(ParameterError, match=r"^`scorer` must name a scorer with annotators when `source` is a"
                                             r" ScoreSet; got None\.$"):
        normalize(ds)
    with pytest.raises(ParameterError, match=r"^`scorer` must be None for a judgments table; got 'x'\.$"):
        normalize(JUDGMENTS, "x")
    with pytest.raises(ParameterError, match=r"^`source` must be a ScoreSet or a judgments DataFrame; got list\.$"):
        normalize([])
    with pytest.raises(ParameterError, match=r"^`scorers` must list at least 2 criteria; got \['expert.coherence'\]\.$"):
        combine_criteria(ds, ["expert.coherence"])
    flat = me.ScoreSet.from_matrices({"a": np.ones((2, 2)), "b": np.eye(2)})
    with pytest.raises(ParameterError, match=r"^`scorers` must have non-constant scores to be standardized; got 'a'"
                                             r" constant\.$"):
        combine_criteria(flat, ["a", "b"])
