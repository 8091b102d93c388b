"""Nugget F(beta) (Lin & Demner-Fushman 2005): validation, the paper's worked numbers, the term-overlap
matcher on the paper's Figure 1, the CLI, and REALSumm's SCUs as nuggets."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import metaeval as me
from metaeval.analyses.nuggets import litepyramid_nuggets, match_nuggets, nugget_scores, realsumm_nugget_tables
from metaeval.cli.main import main
from metaeval.errors import InputFileError, ParameterError
from metaeval.metrics.nugget_match import NuggetMatcher, response_length
from metaeval.stats.frameworks.nugget import nugget_f, nugget_precision, nugget_recall

DATA = Path(__file__).parent / "data" / "nuggets"


# -- validation (every message pinned) ---------------------------------------------------------------
@pytest.mark.parametrize("args, kwargs, message", [
    ((-1, 0, 4, 10), {}, "`vital_matched` must hold finite numbers >= 0; got -1.0."),
    ((1, 0, 0, 10), {}, "`vital_total` must hold finite numbers > 0; got 0.0."),
    ((1, np.nan, 4, 10), {}, "`okay_matched` must hold finite numbers >= 0; got nan."),
    ((5, 0, 4, 10), {}, "`vital_matched` must be <= `vital_total`; got 5.0 > 4.0."),
    ((1, 0, 4, 10), {"beta": 0}, "`beta` must hold finite numbers > 0; got 0.0."),
    ((1, 0, 4, 10), {"allowance": -1}, "`allowance` must hold finite numbers > 0; got -1.0."),
    (([1, 2], 0, 4, [1, 2, 3]), {}, "`vital_matched`, `okay_matched`, `vital_total` and `length` must have "
                                    "broadcastable shapes; got (2,), (), (), (3,)."),
    (("x", 0, 4, 10), {}, "`vital_matched` must be a number or an array of numbers; got 'x'."),
])
def test_nugget_f_rejects_bad_input(args, kwargs, message):
    with pytest.raises(ParameterError) as info:
        nugget_f(*args, **kwargs)
    assert str(info.value) == message


def test_matcher_rejects_bad_options():
    with pytest.raises(ParameterError, match=r"^`threshold` must be a number in \(0, 1\]; got 0\.$"):
        NuggetMatcher(threshold=0)
    with pytest.raises(ParameterError, match=r"^`match` must be one of 'threshold', 'fraction'; got 'soft'\.$"):
        NuggetMatcher(match="soft")


def test_counts_table_errors_name_file_row_and_column(tmp_path):
    path = tmp_path / "c.csv"
    path.write_text("vital_matched,vital_total,length\n1,4,100\n5,4,100\n", encoding="utf-8")
    with pytest.raises(InputFileError) as info:
        nugget_scores(path)
    assert str(info.value) == f"{path}, row 3, column 'vital_matched': `vital_matched` must be <= `vital_total` (4); got 5."
    path.write_text("vital_matched,vital_total\n1,4\n", encoding="utf-8")
    with pytest.raises(InputFileError, match=r"must have the columns \['vital_matched', 'vital_total', 'length'\]"):
        nugget_scores(path)
    path.write_text("vital_matched,vital_total,length\n1,4,-3\n", encoding="utf-8")
    with pytest.raises(InputFileError) as info:
        nugget_scores(path)
    assert str(info.value) == f"{path}, row 2, column 'length': the cell must be a finite number >= 0; got '-3'."


# -- the paper's numbers (Lin & Demner-Fushman 2005, Fig. 2) -------------------------------------------
def test_worked_case_beta_3_and_5():
    # r = 3 vital, a = 2 okay, R = 4, l = 600: allowance 500, P = 1 - 100/600 = 5/6, R = 3/4
    assert nugget_f(3, 2, 4, 600) == pytest.approx(0.757576, abs=5e-7)
    assert nugget_f(3, 2, 4, 600, beta=3) == pytest.approx(25 / 33)
    assert nugget_f(3, 2, 4, 600, beta=5) == pytest.approx(0.752896, abs=5e-7)
    assert nugget_precision(3, 2, 600) == pytest.approx(5 / 6)
    assert nugget_recall(3, 4) == pytest.approx(0.75)


def test_okay_nuggets_alone_score_zero():
    assert nugget_f(0, 7, 4, 50) == 0.0
    assert nugget_f(0, 0, 4, 0) == 0.0


def test_precision_is_one_below_the_allowance_and_continuous_at_it():
    assert nugget_precision(2, 1, 299) == 1.0
    assert nugget_precision(2, 1, 300) == 1.0  # 1 - (300 - 300)/300
    assert nugget_precision(2, 1, 400) == pytest.approx(0.75)
    assert nugget_f(4, 0, 4, 10) == 1.0


def test_vectorized_equals_scalar_and_stays_in_unit_interval():
    rng = np.random.default_rng(3)
    big_r = rng.integers(1, 12, size=200)
    r = rng.integers(0, big_r + 1)
    a = rng.integers(0, 6, size=200)
    l = rng.integers(0, 2000, size=200)
    f = nugget_f(r, a, big_r, l, beta=5)
    assert f.shape == (200,)
    assert np.array_equal(f, [nugget_f(*v, beta=5) for v in zip(r, a, big_r, l)])
    assert ((f >= 0) & (f <= 1)).all()
    # more vital nuggets never lower F; a longer answer never raises it
    assert (nugget_f(np.minimum(r + 1, big_r), a, big_r, l) >= nugget_f(r, a, big_r, l) - 1e-15).all()
    assert (nugget_f(r, a, big_r, l + 50) <= nugget_f(r, a, big_r, l) + 1e-15).all()


def test_exported():
    with pytest.warns(DeprecationWarning, match=r"^metaeval.nugget_f is deprecated and goes in metaeval 0.2; use"
                                                r" metaeval.nugget_scores"):
        assert me.nugget_f is nugget_f  # the duplicate of nugget_scores: one release with a warning
    assert me.match_nuggets is match_nuggets


# -- the matcher, on the paper's Figure 1 ----------------------------------------------------------------
def test_matcher_reproduces_the_assessor_on_figure_1():
    key = pd.read_csv(DATA / "copland_key.csv")
    matcher = NuggetMatcher()
    found = []
    with open(DATA / "copland_answers.jsonl", encoding="utf-8") as stream:
        for line in stream:
            credit = matcher.credits(matcher.overlaps(list(key["nugget"]), json.loads(line)["text"]))
            found.append(set(np.flatnonzero(credit) + 1))
    assert found == [{1}, {6}, {9}]  # Figure 1: "Nugget present: 1", "6", "9"


def test_matcher_terms_overlap_and_length():
    matcher = NuggetMatcher()
    assert matcher.terms("The composers of America") == {"compos", "america"}
    assert NuggetMatcher(stem=False).terms("The composers") == {"composers"}
    over = matcher.overlaps(["american communist", "of the"], "An American composer")
    assert over[0] == 0.5 and np.isnan(over[1])
    assert list(NuggetMatcher(match="fraction").credits(over[:1])) == [0.5]
    assert response_length("<t> a bc </t> <t> d </t>") == 4


def test_match_nuggets_counts_vital_and_okay(tmp_path):
    result = match_nuggets(DATA / "copland_key.csv", DATA / "copland_answers.jsonl")
    table = result.table.set_index("system")
    assert table.loc["NYT19990708.0196", ["vital_matched", "okay_matched", "vital_total"]].tolist() == [1, 0, 4]
    assert table.loc["NYT20000107.0305", ["vital_matched", "okay_matched"]].tolist() == [0, 1]
    assert table.loc["NYT20000107.0305", "nugget_f"] == 0.0
    text = "after four prior nominations, he won an Oscar in 1949 for his music for \"The Heiress\""
    assert table.loc["NYT19991117.0369", "length"] == len("".join(text.split()))
    first = table.loc["NYT19990708.0196"]
    assert first["nugget_f"] == pytest.approx(nugget_f(1, 0, 4, first["length"]))
    assert "match:threshold|threshold:0.6|stem:yes" in str(result.signature)


def test_match_nuggets_needs_a_vital_nugget_per_input(tmp_path):
    key = tmp_path / "key.csv"
    key.write_text("input,nugget,importance\nq1,alpha beta,okay\n", encoding="utf-8")
    texts = tmp_path / "t.jsonl"
    texts.write_text('{"system": "s", "input": "q1", "text": "alpha"}\n', encoding="utf-8")
    with pytest.raises(InputFileError) as info:
        match_nuggets(key, texts)
    assert str(info.value) == (f"{texts}, row 1, column 'input': every input must have a vital nugget with a "
                               "content word in the answer key; got none for 'q1'.")
    key.write_text("input,nugget,importance\nq1,alpha beta,useful\n", encoding="utf-8")
    with pytest.raises(InputFileError, match=r"row 2, column 'importance': the cell must be one of 'vital', 'okay'"):
        match_nuggets(key, texts)


# -- CLI ---------------------------------------------------------------------------------------------------
def test_cli_counts_and_match(tmp_path, capsys):
    counts = tmp_path / "counts.csv"
    counts.write_text("system,input,vital_matched,okay_matched,vital_total,length\nA,q1,3,2,4,600\nB,q1,0,3,4,90\n",
                      encoding="utf-8")
    out = tmp_path / "out.json"
    assert main(["nuggets", "counts", str(counts), "--beta", "5", "--format", "json", "--output", str(out)]) == 0
    rows = json.loads(out.read_text())["responses"]
    assert [round(r["nugget_f"], 6) for r in rows] == [0.752896, 0.0]
    assert main(["nuggets", "match", "--nuggets", str(DATA / "copland_key.csv"), "--texts",
                 str(DATA / "copland_answers.jsonl")]) == 0
    assert "3 responses, mean nugget F" in capsys.readouterr().out


def test_cli_bad_input_is_one_line_and_exit_2(tmp_path, capsys):
    counts = tmp_path / "counts.csv"
    counts.write_text("vital_matched,vital_total,length\n1,0,10\n", encoding="utf-8")
    assert main(["nuggets", "counts", str(counts)]) == 2
    err = capsys.readouterr().err
    assert err == f"metaeval: error: {counts}, row 2, column 'vital_total': the cell must be a number > 0; got '0'.\n"
    assert main(["nuggets", "realsumm", str(tmp_path)]) == 2
    assert capsys.readouterr().err.count("\n") == 1


# -- REALSumm: SCUs as vital nuggets ------------------------------------------------------------------------
@pytest.fixture(scope="module")
def realsumm_auto(shared_data):
    base = shared_data / "realsumm"
    key, texts = realsumm_nugget_tables(base / "human_annotations", base / "realsumm_scores.jsonl")
    return key, texts, match_nuggets(key, texts)


def test_realsumm_automatic_matcher(realsumm_auto):
    key, texts, result = realsumm_auto
    assert len(key) == 1056 and (key["importance"] == "vital").all()
    assert len(texts) == 2400 and texts["system"].nunique() == 24
    table = result.table
    assert np.allclose(table["nugget_f"], nugget_f(table["vital_matched"], 0, table["vital_total"], table["length"]))
    ds = me.load_dataset("realsumm").merge(result.scoreset())
    system = me.correlate(ds, "nugget_f", "litepyramid.recall", level="system", coefficient="kendall-b").statistic
    summary = me.correlate(ds, "nugget_f", "litepyramid.recall", level="summary", coefficient="kendall-b").statistic
    assert system > 0.7 and 0.25 < summary < 0.45


def test_realsumm_crowd_matches_recall_is_litepyramid(shared_data):
    annotations = me.human.read_realsumm_annotations(shared_data / "realsumm" / "human_annotations")
    pyramid = me.litepyramid(annotations)
    result = litepyramid_nuggets(pyramid, annotations.texts)
    scores = pyramid.summaries.set_index(["system", "document"])["score"]
    recall = result.table.set_index(["system", "input"])["recall"]
    assert np.allclose(recall.to_numpy(), scores.reindex(recall.index).to_numpy())
    # with P = 1 (no verbosity penalty), F = (b^2 + 1) R / (b^2 + R), computed by hand
    t = result.table
    full = t["precision"] == 1
    assert full.mean() > 0.5
    assert np.allclose(t.loc[full, "nugget_f"], 10 * t.loc[full, "recall"] / (9 + t.loc[full, "recall"]))
    assert (t["nugget_f"] <= np.maximum(t["precision"], t["recall"]) + 1e-12).all()
    with pytest.raises(ParameterError, match=r"^`result` must be a LitePyramidResult; got dict\.$"):
        litepyramid_nuggets({}, {})


def test_scoreset_needs_labels(tmp_path):
    counts = tmp_path / "c.csv"
    counts.write_text("vital_matched,vital_total,length\n1,4,100\n", encoding="utf-8")
    result = nugget_scores(counts)
    assert result.table["nugget_f"].iloc[0] == pytest.approx(nugget_f(1, 0, 4, 100))
    with pytest.raises(ParameterError) as info:
        result.scoreset()
    assert str(info.value) == ("the responses must have `system` and `input` labels to form a ScoreSet; "
                               "got a table without them.")
