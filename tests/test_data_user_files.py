"""The user's own data (issue 11): JSON arrays, column mapping, filtering, joins, MT layouts, FRANK.

The FRANK-style fixture (tests/data/frank, written by scripts/make_test_fixtures.py) is checked against
an independent transcription of FRANK's evaluation procedure (Pagnoni et al. 2021, evaluation/evaluate.py):
merge the human and metric records on (hash, model_name), keep the rows where both are present, regress
each on one-hot model_name indicators with an intercept, and correlate the residuals with scipy.
"""
from __future__ import annotations

import json
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats

import metaeval as me
from metaeval.cli.main import main

DATA = Path(__file__).parent / "data"
FRANK = DATA / "frank"
HUMANS, METRICS = FRANK / "human_annotations.json", FRANK / "baseline_factuality_metrics_outputs.json"
FRANK_ARGS = ["--scores", str(HUMANS), "--scores", str(METRICS), "--system-column", "model_name",
              "--input-column", "hash", "--human-column", "Factuality"]
FRANK_METRICS = ["Rouge L", "BertScore P Art", "QAGS", "FactCC"]


def run(argv, capsys):
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def frank_reference(split=None):
    """FRANK's partial correlations, computed independently (pandas merge + least squares + scipy)."""
    data = pd.read_json(HUMANS).merge(pd.read_json(METRICS).drop(columns="split"), on=["hash", "model_name"],
                                      validate="one_to_one")
    if split is not None:
        data = data[data["split"] == split]
    out = {}
    for metric in FRANK_METRICS:
        rows = data[data[metric].notna() & data["Factuality"].notna()]
        design = np.column_stack([np.ones(len(rows)), pd.get_dummies(rows["model_name"]).to_numpy(float)])
        res = [v - design @ np.linalg.lstsq(design, v, rcond=None)[0]
               for v in (rows[metric].to_numpy(float), rows["Factuality"].to_numpy(float))]
        # Spearman ranks the residuals: values equal in exact arithmetic (the fixture's 4-decimal scores in
        # different systems) differ in the last bits of a least-squares fit, and scipy would rank that
        # noise (FRANK's script on the raw residuals gives 0.743338 instead of 0.743218 for 'BertScore P Art').
        # Rounded to 10 decimals they tie, as under metaeval's tie rule.
        out[metric] = (stats.pearsonr(*res), stats.spearmanr(*[np.round(r, 10) for r in res]), len(rows))
    return out


def test_frank_fixture_to_partial_correlations_in_one_command(capsys):
    code, out, err = run(["correlate", *FRANK_ARGS, "--level", "partial", "--coefficient", "pearson",
                          "--coefficient", "spearman", "--ci", "none", "--format", "json"], capsys)
    assert code == 0, err
    assert "ignored 5 column(s) without scores: 'dataset', 'split', 'article', 'summary'" in err
    results = {(r["metric"], r["coefficient"]): r for r in json.loads(out)["results"]}
    for metric, (pearson, spearman, n) in frank_reference().items():
        for coefficient, ref in (("pearson", pearson), ("spearman", spearman)):
            got = results[(metric, coefficient)]
            assert got["statistic"] == pytest.approx(ref.statistic, abs=1e-12)
            assert got["pvalue"] == pytest.approx(ref.pvalue, rel=1e-9)
            assert got["n_used"] == n


def test_frank_fixture_with_a_where_filter_and_a_report(tmp_path, capsys):
    code, out, err = run(["correlate", *FRANK_ARGS, "--where", "split=test", "--level", "partial",
                          "--coefficient", "pearson", "--ci", "none", "--format", "json"], capsys)
    assert code == 0, err
    results = {r["metric"]: r["statistic"] for r in json.loads(out)["results"]}
    for metric, (pearson, _, _) in frank_reference(split="test").items():
        assert results[metric] == pytest.approx(pearson.statistic, abs=1e-12)
    code, out, err = run(["report", *FRANK_ARGS, "--level", "partial", "--level", "global", "--quick",
                          "--repetitions", "5", "--analysis", "normality", "--output", str(tmp_path / "r")], capsys)
    assert code == 0, err
    payload = json.loads((tmp_path / "r" / "results.json").read_text())
    assert {"partial", "global"} <= {row["level"] for row in payload["correlations"]["results"]}


def test_json_array_and_column_mapping_in_the_api():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        ds = me.read_scores(HUMANS, columns={"system": "model_name", "input": "hash", "human": "Factuality"},
                            where={"dataset": "bbc"})
    assert ds.humans == ("Factuality",) and ds.shape == (4, 16)
    assert [str(w.message).split(": ", 1)[1] for w in caught] == [
        "ignored 4 column(s) without scores: 'split', 'article', 'summary',"
        " 'summary_sentences_annotations' (filter rows on them with where={'COLUMN': 'VALUE'})."]


def test_mapping_and_filter_messages(tmp_path):
    with pytest.raises(me.InputFileError) as info:
        me.read_scores(METRICS, columns={"system": "model", "input": "hash"})
    assert str(info.value) == (f"{METRICS}: `columns['system']` must name a column of the file ('hash', 'model_name',"
                               " 'split', 'Rouge L', 'BertScore P Art', 'QAGS', 'FactCC'); got 'model'.")
    with pytest.raises(me.InputFileError) as info:
        me.read_scores(METRICS, columns={"system": "model_name", "input": "hash"}, where={"split": "train"})
    assert str(info.value) == f"{METRICS}: `where` must keep at least one row; got none matching split=train."
    with pytest.raises(me.ParameterError) as info:
        me.read_scores(METRICS, columns={"model": "model_name"})
    assert str(info.value) == "`columns` keys must be one of 'system', 'input', 'annotator', 'human'; got 'model'."


def test_bad_user_input_is_one_line_and_exit_2(tmp_path, capsys):
    mixed = tmp_path / "mixed.csv"
    mixed.write_text("model,doc,m,h\nA,d1,0.5,1\nB,d1,high,2\nC,d1,0.1,3\n")
    code, out, err = run(["correlate", "--scores", str(mixed), "--system-column", "model", "--input-column", "doc",
                          "--human-column", "h"], capsys)
    assert code == 2 and err == f"metaeval: error: {mixed}, row 3, column 'm': a score must be a number or empty; got 'high'.\n"
    code, out, err = run(["correlate", *FRANK_ARGS[:4], "--system-column", "model", "--input-column", "hash",
                          "--human-column", "Factuality"], capsys)
    assert code == 2 and len(err.strip().splitlines()) == 1
    assert err.startswith(f"metaeval: error: {HUMANS}: `--system-column` must name a column of the file (")
    code, out, err = run(["correlate", *FRANK_ARGS[:4], "--system-column", "model_name", "--input-column", "hash",
                          "--human-column", "factuality"], capsys)
    assert code == 2 and err.strip().endswith("got 'factuality' (did you mean 'Factuality'?).")
    assert err.startswith("metaeval: error: `--human-column` must name a scorer of this ScoreSet")


def test_wmt_mqm_tsv_and_mt_metrics_eval_load_with_one_call(shared_data):
    mqm = me.read_mqm_averages(shared_data / "wmt" / "mqm_newstest2020_ende.avg_seg_scores.tsv")
    assert mqm.shape == (10, 1418) and mqm.humans == ("mqm",)
    generic = me.read_scores(shared_data / "wmt" / "mqm_newstest2020_ende.avg_seg_scores.tsv",
                             columns={"input": "seg_id", "human": "mqm_avg_score"})
    np.testing.assert_array_equal(generic.matrix("mqm_avg_score"), mqm.matrix("mqm"))
    seg = me.read_mt_metrics_eval(DATA / "mt-metrics-eval" / "wmtfix", "en-de")
    assert seg.shape == (4, 5) and seg.humans == ("mqm",) and seg.scorers == ("mqm", "BLEU-refA", "COMET-refA")
    assert np.isnan(seg.matrix("mqm")[1, 2])
    sys = me.read_mt_metrics_eval(DATA / "mt-metrics-eval" / "wmtfix", "en-de", level="sys")
    assert sys.shape == (4, 1) and sys.inputs == ("en-de",)
    np.testing.assert_allclose(sys.matrix("COMET-refA")[:, 0], np.nanmean(seg.matrix("COMET-refA"), axis=1), atol=1e-4)


def test_whitespace_tsv_with_tab_rows(tmp_path):
    path = tmp_path / "mqm.tsv"
    path.write_text("system mqm_avg_score seg_id\nA\t-1.5\t1\nA\tNone\t2\nB\t-0.5\t1\nB\t-2\t2\n")
    ds = me.read_scores(path, columns={"input": "seg_id", "human": "mqm_avg_score"})
    np.testing.assert_array_equal(ds.matrix("mqm_avg_score"), [[-1.5, np.nan], [-0.5, -2.0]])


def _user_metric(ds, path, drop_system=None):
    rng = np.random.default_rng(0)
    rows = [{"system": s, "input": j, "my-metric": float(v + rng.normal())}
            for s, row in zip(ds.systems, ds.matrix("mqm")) for j, v in zip(ds.inputs, row)
            if np.isfinite(v) and s != drop_system]
    pd.DataFrame(rows).to_csv(path, index=False)
    return path


def test_packaged_dataset_joined_with_a_user_metric_file(tmp_path, capsys):
    ds = me.load_dataset("wmt20-mqm-ende")
    path = _user_metric(ds, tmp_path / "my_metric.csv", drop_system="Human-P.0")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        merged = ds.merge(me.read_scores(path))
    assert merged.shape == ds.shape and merged.humans == ("mqm",)
    assert [str(w.message) for w in caught] == [
        "join wmt20-mqm-ende + my_metric: 1 systems of wmt20-mqm-ende match nothing in my_metric: 'Human-P.0'.",
        "join wmt20-mqm-ende + my_metric: 1418 of 14180 scored cells of wmt20-mqm-ende have no score in my_metric"
        " (kept; NaN there): ('Human-P.0', '1'), ('Human-P.0', '2'), ('Human-P.0', '3'), ... (1415 more)."]
    source = ["--dataset", "wmt20-mqm-ende", "--scores", str(path), "--system", "Human-A.0", "--system", "Human-B.0",
              "--system", "eTranslation.737", "--system", "Online-B.1590", "--system", "OPPO.1535"]
    code, out, err = run(["correlate", *source, "--level", "system", "--level", "segment", "--ci", "none",
                          "--format", "json"], capsys)
    assert code == 0, err
    assert "1 systems of wmt20-mqm-ende match nothing in my_metric: 'Human-P.0'" in err
    assert {r["metric"] for r in json.loads(out)["results"]} == {"my-metric"}
    code, out, err = run(["compare", *source, "--scores", str(_user_metric(ds, tmp_path / "other.csv").with_name(
        "other.csv")), "--n-resamples", "50"], capsys)
    assert code == 2 and "scorer 'my-metric' must have one meaning in a join" in err
    other = pd.read_csv(tmp_path / "other.csv").rename(columns={"my-metric": "other-metric"})
    other.to_csv(tmp_path / "other.csv", index=False)
    code, out, err = run(["compare", *source, "--scores", str(tmp_path / "other.csv"), "--n-resamples", "50",
                          "--level", "segment", "--format", "json"], capsys)
    assert code == 0, err
    code, out, err = run(["report", *source, "--quick", "--repetitions", "5", "--analysis", "normality",
                          "--output", str(tmp_path / "rep")], capsys)
    assert code == 0, err


def test_merge_messages():
    a = me.ScoreSet.from_matrices({"h": np.ones((3, 2))}, systems=["a", "b", "c"], inputs=["1", "2"], name="A")
    b = me.ScoreSet.from_matrices({"m": np.ones((3, 2))}, systems=["x", "y", "z"], inputs=["1", "2"], name="B")
    with pytest.raises(me.ScoreSetError) as info:
        a.merge(b)
    assert str(info.value) == ("the join of A and B on (system, input) must match at least one cell; got none"
                               " (systems 'a', 'b', 'c' vs 'x', 'y', 'z'; inputs '1', '2' vs '1', '2').")


def _shifted_files(tmp_path, shift):
    """The WMT20 en-de MQM scores as a 1-based human file and a metric file (the human plus noise) whose
    segment ids are ``shift`` off (-1: the metric's ids are 0-based)."""
    ds = me.load_dataset("wmt20-mqm-ende")
    rng = np.random.default_rng(1)
    human, metric = [], []
    for s, row in zip(ds.systems, ds.matrix("mqm")):
        for j, v in zip(ds.inputs, row):
            if np.isfinite(v):
                human.append({"system": s, "input": j, "mqm": v})
                metric.append({"system": s, "input": str(int(j) + shift), "metric": v + rng.normal()})
    pd.DataFrame(human).to_csv(tmp_path / "human.csv", index=False)
    pd.DataFrame(metric).to_csv(tmp_path / "metric.csv", index=False)
    return ["--scores", str(tmp_path / "human.csv"), "--scores", str(tmp_path / "metric.csv"), "--human", "mqm",
            "--level", "segment", "--ci", "none", "--format", "json"]


def test_segment_ids_shifted_by_one_stop_the_join(tmp_path, capsys):
    """0-based ids against 1-based ones: all but one id match and every pair is wrong; the join refuses."""
    args = _shifted_files(tmp_path, -1)
    code, out, err = run(["correlate", *args], capsys)
    assert code == 2 and not out
    assert err == (
        "metaeval: error: the join of human and metric must pair the same inputs; got inputs that look shifted by"
        " one (the labels of metric +1 match 1418 of the 1418 of human, unshifted 1417: 0-based against 1-based"
        " ids?); first inputs of human: '1', '2', '3', ... (1415 more); of metric: '0', '1', '2', ... (1415 more)"
        " (fix the labels, or pass allow_unmatched=True / --allow-unmatched if this is intended).\n")
    with pytest.raises(me.ScoreSetError, match="look shifted by one"):
        me.read_scores(tmp_path / "human.csv").merge(me.read_scores(tmp_path / "metric.csv"))
    # allowed: the run goes on with the mispaired rows, and the unmatched rows of each file are counted and named
    code, out, err = run(["correlate", *args, "--allow-unmatched"], capsys)
    assert code == 0, err
    shifted = json.loads(out)["results"][0]["statistic"]
    assert "1 inputs of human match nothing in metric: '1418'." in err
    assert "1 inputs of metric match nothing in human: '0'." in err
    assert "scored cells of metric have no score in human (kept; NaN there): ('eTranslation.737', '0')," in err
    code, out, err = run(["correlate", *_shifted_files(tmp_path, 0)], capsys)
    assert code == 0 and "join" not in err
    aligned = json.loads(out)["results"][0]["statistic"]
    assert aligned > 0.5 and abs(shifted) < 0.2  # what the refusal protects: the mispaired rows correlate nothing


def test_labels_unmatched_on_both_sides_stop_the_join_unless_allowed():
    a = me.ScoreSet.from_matrices({"h": np.arange(6.0).reshape(3, 2)}, systems=["a", "b", "c"], inputs=["x", "y"],
                                  name="A")
    b = me.ScoreSet.from_matrices({"m": np.arange(6.0).reshape(3, 2)}, systems=["a", "b", "d"], inputs=["x", "y"],
                                  name="B")
    with pytest.raises(me.ScoreSetError) as info:
        a.merge(b)
    assert str(info.value) == (
        "the join of A and B must pair the same systems; got systems unmatched on both sides (1 of A: 'c'; 1 of B:"
        " 'd'), which no judged subset explains; first systems of A: 'a', 'b', 'c'; of B: 'a', 'b', 'd' (fix the"
        " labels, or pass allow_unmatched=True / --allow-unmatched if this is intended).")
    with pytest.warns(me.DataWarning) as caught:
        merged = a.merge(b, allow_unmatched=True)
    assert merged.systems == ("a", "b", "c", "d")
    assert [str(w.message) for w in caught] == [
        "join A + B: 1 systems of A match nothing in B: 'c'.",
        "join A + B: 1 systems of B match nothing in A: 'd'.",
        "join A + B: 2 of 6 scored cells of A have no score in B (kept; NaN there): ('c', 'x'), ('c', 'y').",
        "join A + B: 2 of 6 scored cells of B have no score in A (kept; NaN there): ('d', 'x'), ('d', 'y')."]
    # a judged subset (one side's labels within the other's) joins with a note, no error
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        a.merge(b.subset(systems=["a", "b"]))
    assert str(caught[0].message) == "join A + B: 1 systems of A match nothing in B: 'c'."
    with pytest.raises(me.ParameterError, match="`allow_unmatched` must be True or False; got 'yes'"):
        a.merge(b, allow_unmatched="yes")


def test_shift_detection_on_integer_labels_only():
    from metaeval.data.join import shifted_by

    assert shifted_by(["1", "2", "3"], ["0", "1", "2"]) == 1
    assert shifted_by(["0", "1", "2"], ["1", "2", "3"]) == -1
    assert shifted_by(["1", "3", "5"], ["0", "1", "2", "3", "4", "5"]) == 0  # a judged subset: no better shift
    assert shifted_by(["01", "02"], ["00", "01"]) == 0  # not canonical integers
    assert shifted_by(["s1", "s2"], ["s0", "s1"]) == 0


def test_a_file_name_with_an_equals_sign_is_targeted_by_the_longest_file_prefix(tmp_path, capsys, monkeypatch):
    """``FILE=VALUE`` options: the longest --scores file that the value starts with (then ``=``) is targeted."""
    from metaeval.data.targets import split_target

    assert split_target("run=3.csv=doc", ["run.csv", "run", "run=3.csv"]) == ("run=3.csv", "doc")
    assert split_target("run=doc", ["run.csv", "run", "run=3.csv"]) == ("run", "doc")
    assert split_target("doc", ["run.csv"]) == (None, "doc")
    ds = me.load_dataset("summeval")
    frame = ds.to_frame()
    human = frame[["system", "input", "expert.relevance"]].rename(columns={"input": "doc"})
    human["split"] = np.where(np.arange(len(human)) % 2 == 0, "test", "dev")
    human.to_csv(tmp_path / "run=3.csv", index=False)
    frame[["system", "input", "rouge-1.recall"]].to_csv(tmp_path / "run.csv", index=False)
    monkeypatch.chdir(tmp_path)
    code, out, err = run(["correlate", "--scores", "run=3.csv", "--scores", "run.csv", "--input-column",
                          "run=3.csv=doc", "--where", "run=3.csv=split=test", "--human", "expert.relevance",
                          "--level", "system", "--ci", "none", "--format", "json"], capsys)
    assert code == 0, err
    test = human[human["split"] == "test"].groupby("system", sort=False)["expert.relevance"].mean()
    metric = frame[human["split"] == "test"].groupby("system", sort=False)["rouge-1.recall"].mean()  # the judged cells
    expected = stats.pearsonr(test.loc[list(ds.systems)], metric.loc[list(ds.systems)])[0]
    assert json.loads(out)["results"][0]["statistic"] == pytest.approx(expected)
