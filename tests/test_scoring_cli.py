"""`metaeval score`: output file and signatures, cache re-runs, one-line errors with exit 2, no partial files."""
from __future__ import annotations

import hashlib
import json
import re

import numpy as np
import pytest

import metaeval as me
from metaeval.cli.main import main
from metaeval.cli.score_command import parse_metric_options, sidecar_path, with_model_dir
from metaeval.errors import ParameterError

from scoring_helpers import summeval_corpus, write_jsonl


@pytest.fixture
def files(tmp_path, shared_data):
    candidates, references = summeval_corpus(shared_data, 40)
    c = write_jsonl(tmp_path / "c.jsonl", candidates)
    r = write_jsonl(tmp_path / "r.jsonl", [{"input": k, "references": v} for k, v in references.items()])
    return c, r


def run(argv, capsys):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_score_writes_scores_and_signatures(tmp_path, files, capsys):
    c, r = files
    out = tmp_path / "scores.parquet"
    cache = tmp_path / "cache.sqlite"
    argv = ["score", "--candidates", c, "--references", r, "--metric", "rouge", "--metric-option", "rouge.stem=true",
            "--metric-option", "rouge.weight=1.2", "--output", out, "--cache", cache, "--no-progress"]
    code, stdout, err = run(argv, capsys)
    assert code == 0, err
    assert all(len(line) <= 100 for line in stdout.splitlines() if not line.startswith("wrote ")), stdout  # wrapped to the width (100 off a terminal)
    text = _unwrapped(stdout)
    assert text.startswith("scored 40 candidates (39 distinct pairs) with 1 metric on serial in ")
    rouge = me.metrics.get_scorer("rouge", stem=True, weight=1.2)
    assert f": 39 computed, 0 from the cache rouge: {rouge.signature} wrote " in text
    expected = me.score(c, r, metrics=[rouge], progress=False)
    written = me.read_scores(out)
    assert written.scorers == expected.scorers and "rouge-w-1.2.f1" in written.scorers
    for scorer in expected.scorers:
        assert np.array_equal(written.matrix(scorer), expected.matrix(scorer), equal_nan=True)
    meta = json.loads(sidecar_path(out).read_text())
    assert meta["signatures"] == {"rouge": str(rouge.signature)}
    assert meta["scorers"]["rouge-2.f1"] == str(rouge.signature)
    assert meta["scores_file"] == {"name": "scores.parquet", "sha256": hashlib.sha256(out.read_bytes()).hexdigest()}
    code, stdout, err = run(argv, capsys)  # the re-run reads everything from the cache
    assert code == 0 and ": 0 computed, 39 from the cache rouge:" in _unwrapped(stdout)


def _unwrapped(text: str) -> str:
    """The printed text on one line: wrapped lines joined by one space, signature fields by '|'."""
    return re.sub(r" \|", "|", " ".join(text.split()))


@pytest.mark.parametrize("case, message", [
    ("missing-reference", "{c}, row 41, column 'input': must name an input that has references; got 'nowhere', which is"
                          " not in {r}."),
    ("empty-candidate", "{c}, row 41, column 'candidate': must be a non-empty candidate; got ''."),
    ("not-utf8", "{c}, row 41: must be UTF-8 text; got the byte 0xff at byte 45, which is not UTF-8."),
    ("unknown-metric", "`metric` must be one of 'rouge', "),
    ("bad-option", "`--metric-option` must look like METRIC.KEY=VALUE; got 'stem=true'."),
    ("bad-option-value", "`stem` must be True or False; got 'yes'."),
    ("bad-extension", "{out_dir}/scores.xlsx: the extension must be one of "),
    ("missing-directory", "{out_dir}/nowhere/scores.csv: must be in an existing directory; got a directory that does not exist."),
    ("workers", "`workers` must be an integer >= 1; got 0."),
    ("scheduler", "`scheduler` must be a scheduler address like 'tcp://host:8786'; got 'not-an-address' (missing port"
                  " number in address 'not-an-address')."),
    ("model-dir", "BERTScore: the model directory '{out_dir}/no-model' does not exist; pass `model_dir=`"),
])
def test_bad_input_one_line_exit_2_nothing_written(tmp_path, files, capsys, case, message):
    c, r = files
    out = tmp_path / "scores.csv"
    out.write_text("previous\n")
    argv = ["score", "--candidates", c, "--references", r, "--metric", "rouge", "--output", out, "--no-progress"]
    tail = {"missing-reference": b'{"system": "x", "input": "nowhere", "candidate": "text"}\n',
            "empty-candidate": json.dumps({"system": "x", "input": "nowhere", "candidate": ""}).encode() + b"\n",
            "not-utf8": b'{"system": "x", "input": "y", "candidate": "\xff"}\n'}
    if case in tail:
        c.write_bytes(c.read_bytes() + tail[case])
    elif case == "unknown-metric":
        argv[argv.index("rouge")] = "rogue"
    elif case == "bad-option":
        argv += ["--metric-option", "stem=true"]
    elif case == "bad-option-value":
        argv += ["--metric-option", "rouge.stem=yes"]
    elif case == "bad-extension":
        argv[argv.index(out)] = tmp_path / "scores.xlsx"
    elif case == "missing-directory":
        argv[argv.index(out)] = tmp_path / "nowhere" / "scores.csv"
    elif case == "workers":
        argv += ["--workers", "0"]
    elif case == "scheduler":
        pytest.importorskip("distributed")
        argv += ["--scheduler", "not-an-address"]
    elif case == "model-dir":
        argv += ["--metric", "bertscore", "--model-dir", tmp_path / "no-model"]
    code, stdout, err = run(argv, capsys)
    assert code == 2 and stdout == ""
    assert err.startswith("metaeval: error: " + message.format(c=c, r=r, out_dir=tmp_path)), err
    assert len(err.strip().splitlines()) == 1
    assert out.read_text() == "previous\n" and not sidecar_path(out).exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["c.jsonl", "r.jsonl", "scores.csv"]


def test_model_dir_goes_to_the_embedding_metrics_only():
    options = with_model_dir({"rouge": {}, "bertscore": {}, "moverscore": {"model_dir": "mine"}}, "/models/m")
    assert options == {"rouge": {}, "bertscore": {"model_dir": "/models/m"}, "moverscore": {"model_dir": "mine"}}


def test_metric_option_parsing():
    assert parse_metric_options(("rouge", "bleu"), ("rouge.stem=true", "rouge.n=4", "bleu.tokenize=13a",
                                                    "rouge.word-limit=100")) == {
        "rouge": {"stem": True, "n": 4, "word_limit": 100}, "bleu": {"tokenize": "13a"}}
    with pytest.raises(ParameterError) as caught:
        parse_metric_options(("rouge",), ("bleu.x=1",))
    assert str(caught.value) == "`--metric-option` must name a metric given with --metric; got 'bleu'."
