"""`metaeval human ...` on the real data: exit codes, outputs, atomic score files."""
from __future__ import annotations

import json

import pytest

from metaeval.cli.main import main


def test_pyramid_realsumm(shared_data, tmp_path, capsys):
    out = tmp_path / "lp.csv"
    code = main(["human", "pyramid", "--realsumm", str(shared_data / "realsumm" / "human_annotations"),
                 "--compare-dataset", "realsumm", "--write-scores", str(out)])
    text = capsys.readouterr().out
    assert code == 0
    assert "match with realsumm litepyramid.recall: 2400 of 2400 cells (100.00%); not in realsumm: bart_out_abs" in text
    assert out.read_text().startswith("system,input,litepyramid.recall\n")
    assert len(out.read_text().splitlines()) == 2501


def test_agreement_json(shared_data, capsys):
    code = main(["human", "agreement", "--realsumm", str(shared_data / "realsumm" / "human_annotations"),
                 "--format", "json"])
    assert code == 0
    payload = json.loads(capsys.readouterr().out)
    assert payload["alpha"] == pytest.approx(0.7195, abs=1e-4) and payload["by"] == "dataset"


def test_agreement_normalize_sample_on_packaged_data(tmp_path, capsys):
    assert main(["human", "agreement", "--dataset", "summeval", "--scorer", "expert.relevance"]) == 0
    assert "Krippendorff's alpha (interval): 0.4526 over 1600 units" in capsys.readouterr().out
    out = tmp_path / "z.jsonl"
    assert main(["human", "normalize", "--dataset", "summeval", "--scorer", "turker.relevance",
                 "--write-scores", str(out)]) == 0
    assert len(out.read_text().splitlines()) == 1600
    capsys.readouterr()
    assert main(["human", "sample", "--dataset", "realsumm", "--metric", "rouge-2.f1", "--n", "10",
                 "--format", "csv"]) == 0
    assert capsys.readouterr().out.count("True") == 10


def test_user_errors_exit_2(capsys):
    assert main(["human", "pyramid"]) == 2
    assert capsys.readouterr().err == ("metaeval: error: exactly one of `--realsumm` and `--scus` must be given;"
                                       " got neither.\n")
    assert main(["human", "agreement", "--dataset", "summeval", "--scorer", "rouge-1.f1"]) == 2
    assert capsys.readouterr().err == ("metaeval: error: `scorer` must have at least 2 annotators per cell (an"
                                       " annotator axis, or per-rater human scorers rouge-1.f1.<rater> as MQM ratings"
                                       " give); got 'rouge-1.f1' with 1.\n")
