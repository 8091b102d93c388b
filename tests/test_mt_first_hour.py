"""A WMT organiser's first hour with `metaeval mt` (issue 41 item 4): errors that name the language pair and the
gold the protocol chose, a TOML [gold] with an unknown language pair, --human twice, a ratings file alone,
--allow-unmatched in the signature, Markdown notes, the audit's table and signature."""
from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

import metaeval as me
from metaeval.cli.main import main
from metaeval.errors import ParameterError


def _cli(argv, capsys):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def ende(shared_data, tmp_path, monkeypatch):
    rng = np.random.default_rng(0)
    mqm = pd.read_csv(shared_data / "wmt" / "mqm_newstest2020_ende.avg_seg_scores.tsv", sep=r"\s+", na_values=["None"])
    mqm = mqm[mqm.seg_id <= 60]
    for i in range(3):
        mqm[f"metric-{i}"] = mqm.mqm_avg_score + rng.normal(scale=0.5 + i, size=len(mqm))
    mqm.rename(columns={"mqm_avg_score": "mqm", "seg_id": "input"}).to_csv(tmp_path / "ende.csv", index=False)
    monkeypatch.chdir(tmp_path)
    return tmp_path


MT = ["mt", "--scores", "en-de=ende.csv", "--n-resamples", "20", "--task", "system/pearson"]


def test_a_gold_the_protocol_chose_is_named_with_its_language_pair(ende, capsys):
    code, out, err = _cli(["mt", "--scores", "en-de=ende.csv", "--protocol", "wmt25", "--n-resamples", "20"], capsys)
    assert (code, out) == (2, "")
    assert err == ("metaeval: error: `--human`: the gold of language pair 'en-de' must be one of its scorers; got"
                   " 'esa-human1' (the protocol 'wmt25' chose it) (its human scorers: none; its scorers: 'mqm',"
                   " 'metric-0', 'metric-1', 'metric-2'; name one with --human en-de=NAME or --human NAME).\n")
    code, out, err = _cli(MT + ["--human", "mqn"], capsys)
    assert code == 2 and "language pair 'en-de'" in err and "got 'mqn' (did you mean 'mqm'?)" in err
    assert "the protocol" not in err  # the user named it


def test_a_toml_gold_for_an_unknown_language_pair_is_refused(ende, capsys):
    (ende / "p.toml").write_text('name = "mine"\nhuman = "mqm"\n[gold]\n"en-dee" = "mqm"\n'
                                 '[[task]]\nlevel = "system"\nstatistic = "pearson"\n')
    code, out, err = _cli(["mt", "--scores", "en-de=ende.csv", "--protocol", "p.toml", "--n-resamples", "20"], capsys)
    assert (code, out, err) == (2, "", "metaeval: error: the protocol 'mine': its [gold] must name language pairs of"
                                       " the data ('en-de'); got 'en-dee'.\n")
    # a preset's golds name WMT25's language pairs: running it on others is not an error of the protocol
    ds = me.read_scores("ende.csv", humans=["mqm"])
    assert me.mt_evaluate({"en-de": ds}, human="mqm", protocol="wmt25", n_resamples=20, rng=0).gold == {"en-de": "mqm"}


def test_human_given_twice_blames_the_repetition_not_the_name(ende, capsys):
    code, out, err = _cli(MT + ["--human", "mqm", "--human", "mqm"], capsys)
    assert (code, out, err) == (2, "", "metaeval: error: `--human` without LP= names the gold of every language pair"
                                       " and must be given once; got 'mqm' and 'mqm' (write LP=NAME for one language"
                                       " pair's gold).\n")


def test_a_ratings_file_alone_asks_for_a_metric_file(shared_data, capsys):
    ratings = shared_data / "wmt" / "mqm_ratings" / "mqm_ted_ende.tsv.gz"
    code, out, err = _cli(["mt", "--scores", f"en-de={ratings}", "--n-resamples", "20"], capsys)
    assert (code, out) == (2, "")
    assert err == ("metaeval: error: `--metric`: language pair 'en-de' holds human scores only ('mqm'); add a metric's"
                   " scores (a metric file with --scores LP=PATH, or metrics= in the data).\n")


def test_allow_unmatched_is_in_the_signature(ende, capsys):
    a = me.read_scores("ende.csv", humans=["mqm"])
    b = me.ScoreSet.from_matrices({"other": np.ones((2, 2))}, systems=[a.systems[0], "zz"], inputs=[a.inputs[0], "x"],
                                  name="b")
    with pytest.warns(me.errors.DataWarning):
        joined = a.merge(b, allow_unmatched=True)
    assert joined.signature_fields()["subset"].endswith("join:unmatched-allowed")
    plain = a.merge(me.ScoreSet.from_matrices({"other": np.ones(a.shape)}, systems=a.systems, inputs=a.inputs))
    assert "unmatched" not in str(plain.signature_fields())


def test_markdown_notes_say_p_below_alpha_as_written(ende, capsys):
    code, out, err = _cli(MT + ["--human", "mqm", "--human-baseline", "metric-2", "--format", "markdown"], capsys)
    assert code == 0, err
    assert "p < 0.05" in out and "&lt;" not in out


def test_the_audit_shows_every_sentinel_header_and_signs_each_task_once(ende, capsys):
    lines = [json.dumps({"system": s, "input": str(i), "candidate": "word " * (len(s) % 5 + i % 3 + 1)})
             for s in pd.read_csv("ende.csv").system.unique() for i in range(1, 61)]
    (ende / "cand.jsonl").write_text("\n".join(lines) + "\n")
    (ende / "de.csv").write_text((ende / "ende.csv").read_text())
    code, out, err = _cli(["mt", "audit", "--scores", "en-de=ende.csv", "--scores", "de-en=de.csv", "--human", "mqm",
                           "--candidates", "en-de=cand.jsonl", "--candidates", "de-en=cand.jsonl", "--n-resamples", "20", "--consistency", "2",
                           "--task", "system/pearson", "--task", "summary/pearson"], capsys)
    assert code == 0, err
    header = next(line for line in out.splitlines() if "┃ task" in line)
    assert [c.strip() for c in header.strip("┃").split("┃")] == ["task", "random", "system-mean", "rounded", "length"]
    assert "|tasks:system/pearson,summary/pearson|" in out.replace("\n  ", "")


def test_a_rater_of_the_gold_named_as_a_metric_is_marked_part_of_the_gold(shared_data):
    ratings = me.read_mqm_ratings(shared_data / "wmt" / "mqm_ratings" / "sxs_mqm_generalMT2023_ende.3ratings.tsv.gz")
    ds = ratings.scores
    noise = np.random.default_rng(0).normal(size=ds.shape)
    metric = me.ScoreSet.from_matrices({"metric": np.nan_to_num(ds.matrix("mqm")) + noise}, systems=ds.systems,
                                       inputs=ds.inputs, name="metric")
    data = {"en-de": ds.merge(metric)}
    with pytest.warns(me.errors.DataWarning, match=r"^metric 'mqm\.rater3' is part of the gold 'mqm' \(its raters are"
                                                   r" averaged into it\)"):
        res = me.mt_evaluate(data, human="mqm", metrics=["metric", "mqm.rater3"], tasks=["system/pearson"],
                             n_resamples=20, rng=0)
    assert res.label("mqm.rater3") == "mqm.rater3 (human)" and res.label("metric") == "metric"
