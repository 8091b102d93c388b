"""A WMT organiser's first hour (issue 41 item 4), the data readers and the general CLI: a column option for the
metric file that also hit the ratings file, a file-scoped --where on a missing column, WMT submission files
(*.seg.score), agreement of MQM ratings with three raters per cell, per-rater scores and attention checks."""
from __future__ import annotations

import json

import numpy as np
import pytest

import metaeval as me
from metaeval.cli.main import main
from metaeval.errors import InputFileError

RATINGS3 = "wmt/mqm_ratings/sxs_mqm_generalMT2023_ende.3ratings.tsv.gz"


def _cli(argv, capsys):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def submission(tmp_path, monkeypatch):
    """A WMT metrics-task segment-level submission (two metrics, one reference) and a human score file."""
    rng = np.random.default_rng(0)
    lines, human = [], ["system,input,human"]
    for s in range(6):
        for seg in range(1, 21):
            h = s + rng.normal()
            human.append(f"sys{s},{seg},{h!r}")
            for metric, noise in (("COMET", 0.5), ("BLEU", 2.0)):
                lines.append(f"{metric}\ten-de\tnewstest2021\trefA\tsys{s}\t{seg}\t{h + rng.normal(scale=noise)!r}")
    (tmp_path / "mine.seg.score").write_text("\n".join(lines) + "\n")
    (tmp_path / "human.csv").write_text("\n".join(human) + "\n")
    monkeypatch.chdir(tmp_path)
    return tmp_path, lines


# -- WMT submission files ----------------------------------------------------------------------------------------

def test_a_wmt_submission_file_is_read_by_its_name_or_by_file_format(submission, capsys):
    folder, lines = submission
    ds = me.read_scores("mine.seg.score")
    assert ds.scorers == ("COMET", "BLEU") and ds.shape == (6, 20)
    first = lines[0].split("\t")
    assert ds.matrix("COMET")[0, 0] == float(first[6]) and ds.systems[0] == first[4] and ds.inputs[0] == first[5]
    (folder / "plain.txt").write_text((folder / "mine.seg.score").read_text())
    assert me.read_scores("plain.txt", format="wmt-seg").matrix("BLEU").tolist() == ds.matrix("BLEU").tolist()
    argv = ["correlate", "--scores", "plain.txt", "--file-format", "plain.txt=wmt-seg", "--scores", "human.csv",
            "--human", "human", "--level", "system", "--coefficient", "pearson", "--ci", "none", "--format", "json"]
    code, out, err = _cli(argv, capsys)
    assert code == 0, err
    rows = {r["metric"]: r["statistic"] for r in json.loads(out)["results"]}
    joined = ds.merge(me.read_scores("human.csv", humans=["human"]))
    expected = me.correlate(joined, "COMET", "human", level="system", coefficient="pearson").statistic
    assert rows["COMET"] == pytest.approx(expected, abs=1e-15)
    code, out, err = _cli(argv[:3] + argv[5:], capsys)  # by its name alone: plain.txt has no known extension
    assert code == 2 and "the extension must be one of" in err


def test_a_submission_with_two_language_pairs_must_be_filtered(submission, capsys):
    folder, lines = submission
    (folder / "two.seg.score").write_text("\n".join(lines + [l.replace("en-de", "zh-en") for l in lines]) + "\n")
    with pytest.raises(InputFileError) as caught:
        me.read_scores("two.seg.score")
    assert str(caught.value) == ("two.seg.score: a WMT metrics-task file must hold one language pair per read; got 2"
                                 " ('en-de', 'zh-en'): keep one with where lp=en-de.")
    assert me.read_scores("two.seg.score", where={"lp": "zh-en"}).shape == (6, 20)
    (folder / "bad.seg.score").write_text("COMET\ten-de\tsys\t1\t0.5\n")
    with pytest.raises(InputFileError) as caught:
        me.read_scores("bad.seg.score")
    assert str(caught.value) == ("bad.seg.score, row 1: a WMT metrics-task segment file (format 'wmt-seg') must have"
                                 " 7 tab-separated fields per line (metric, language pair, test set, reference,"
                                 " system, segment id, score; no header); got 5.")


def test_two_references_name_the_scorers_metric_reference(submission):
    folder, lines = submission
    (folder / "refs.seg.score").write_text("\n".join(lines + [l.replace("refA", "refB") for l in lines]) + "\n")
    assert me.read_scores("refs.seg.score").scorers == ("COMET-refA", "BLEU-refA", "COMET-refB", "BLEU-refB")


# -- column options and --where, file by file ------------------------------------------------------------------------

def test_a_column_option_for_every_file_is_refused_for_a_ratings_file(shared_data, submission, capsys):
    folder, _ = submission
    (folder / "metric.csv").write_text("sys,seg_id,COMET\n" + "".join(f"s{i},{j},{i + j}\n" for i in range(2)
                                                                    for j in range(2)))
    ratings = shared_data / RATINGS3
    code, out, err = _cli(["correlate", "--scores", ratings, "--scores", "metric.csv", "--input-column", "seg_id",
                           "--system-column", "metric.csv=sys"], capsys)
    assert (code, out) == (2, "")
    assert err == (f"metaeval: error: `--input-column` 'seg_id' applies to every --scores file, and {ratings} is an"
                   " MQM ratings file (read with its own columns: system, seg_id, rater, ...): give it for the metric"
                   " file alone as --input-column metric.csv=seg_id.\n")


def test_a_file_scoped_where_on_a_missing_column_is_an_error(submission, capsys):
    code, out, err = _cli(["correlate", "--scores", "mine.seg.score", "--scores", "human.csv", "--human", "human",
                           "--where", "human.csv=split=test", "--level", "system"], capsys)
    assert (code, out) == (2, "")
    assert err == ("metaeval: error: human.csv, row 1: `--where` for this file must name a column of it ('system',"
                   " 'input', 'human'); got 'split'.\n")


# -- MQM ratings with three raters per cell ---------------------------------------------------------------------------

def test_agreement_of_mqm_ratings_uses_the_raters(shared_data, capsys):
    import krippendorff

    ratings = me.read_mqm_ratings(shared_data / RATINGS3)
    raters = [s for s in ratings.scores.scorers if s.startswith("mqm.")]
    data = np.stack([ratings.scores.matrix(r).ravel() for r in raters])
    expected = krippendorff.alpha(reliability_data=data, level_of_measurement="interval")
    result = me.human.agreement(ratings.scores, "mqm")
    assert result.alpha == pytest.approx(expected, rel=1e-12)
    assert "annotators:raters:mqm.rater3+" in str(result.signature)
    code, out, err = _cli(["human", "agreement", "--scores", shared_data / RATINGS3, "--scorer", "mqm",
                           "--format", "json"], capsys)
    assert code == 0, err
    assert json.loads(out)["alpha"] == pytest.approx(expected, rel=1e-12)


def test_per_rater_scores_and_attention_checks_from_the_cli(shared_data, tmp_path, capsys):
    path = shared_data / RATINGS3
    out_file = tmp_path / "raters.csv"
    code, out, err = _cli(["human", "raters", "--ratings", path, "--write-scores", out_file, "--format", "json"],
                          capsys)
    assert code == 0, err
    ratings = me.read_mqm_ratings(path, per_rater=True)
    rows = {r["rater"]: r for r in json.loads(out)["raters"]}
    for rater, rate in ratings.attention_rates().items():
        assert rows[rater]["attention_rate"] == pytest.approx(rate)
        found, missed = ratings.attention[rater]
        assert (rows[rater]["attention_found"], rows[rater]["attention_missed"]) == (found, missed)
        own = ratings.scores.matrix(f"mqm.{rater}")
        assert rows[rater]["cells"] == int(np.isfinite(own).sum())
        assert rows[rater]["mean_mqm"] == pytest.approx(float(np.nanmean(own)), rel=1e-12)
    assert rows["rater4"]["attention_found"] == 22 and rows["rater4"]["attention_missed"] == 10
    written = me.read_scores(out_file)
    assert written.scorers == ratings.scores.scorers
    np.testing.assert_array_equal(written.matrix("mqm.rater4"), ratings.scores.matrix("mqm.rater4"))


# -- a system rename map ------------------------------------------------------------------------------------------------

def test_misspelt_systems_are_renamed_before_the_join_and_signed(submission, capsys):
    folder, _ = submission
    (folder / "human2.csv").write_text((folder / "human.csv").read_text().replace("sys0,", "Sys-0,"))
    base = ["correlate", "--scores", "mine.seg.score", "--scores", "human2.csv", "--human", "human", "--level",
            "system", "--coefficient", "pearson", "--ci", "none", "--format", "json"]
    code, out, err = _cli(base, capsys)
    assert code == 2 and "unmatched on both sides" in err
    code, out, err = _cli(base + ["--rename-system", "human2.csv=Sys-0:sys0"], capsys)
    assert code == 0, err
    row = json.loads(out)["results"][0]
    assert "|subset:human2: systems renamed: Sys-0->sys0|" in row["signature"]  # the file whose systems they are
    expected = me.correlate(me.read_scores("mine.seg.score").merge(me.read_scores("human.csv", humans=["human"])),
                            row["metric"], "human", level="system", coefficient="pearson").statistic
    assert row["statistic"] == pytest.approx(expected, abs=1e-15)
    code, out, err = _cli(base + ["--rename-system", "Sys-O:sys0"], capsys)
    assert (code, err) == (2, "metaeval: error: `--rename-system` must rename a system of the --scores files; got"
                              " 'Sys-O' (did you mean 'Sys-0'?).\n")
    code, out, err = _cli(base + ["--rename-system", "human2.csv=Sys-0:sys1"], capsys)
    assert (code, err) == (2, "metaeval: error: human2.csv: `--rename-system` must leave every system its own name;"
                              " got 'sys1' for 'Sys-0', 'sys1'.\n")
