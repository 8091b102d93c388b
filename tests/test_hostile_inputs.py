"""Hostile input files and options: one-line errors, never a traceback or a silently wrong number (issue 22)."""
from __future__ import annotations

import json
import math
import os

import pytest

from metaeval import read_scores
from metaeval.cli.main import main
from metaeval.errors import InputFileError, ParameterError
from metaeval.metrics.registry import get_scorer
from metaeval.serialization import plain


def run(argv, capsys):
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def _rows(path, value_of=lambda s, i: str(i), extra=""):
    lines = []
    for s in "abcd":
        for i in range(5):
            lines.append('{"system": "%s", "input": "%d", "m": %s, %s"h": %d}' % (s, i, value_of(s, i), extra, i + (s == "b")))
    path.write_text("\n".join(lines) + "\n")
    return path


def test_repeated_json_key_is_refused_like_a_repeated_csv_column(tmp_path):
    path = _rows(tmp_path / "dup.jsonl", extra='"m": 7, ')
    with pytest.raises(InputFileError) as info:
        read_scores(path)
    assert str(info.value) == f"{path}, row 1: a JSON object must not repeat a key; got 'm' twice."


def test_repeated_key_in_a_json_array_file(tmp_path):
    path = tmp_path / "a.json"
    path.write_text('[{"system": "a", "input": "1", "m": 1, "m": 2}]')
    with pytest.raises(InputFileError, match=r"a\.json: a JSON object must not repeat a key; got 'm' twice\.$"):
        read_scores(path)


def test_deeply_nested_json_is_a_one_line_error(tmp_path, capsys):
    path = tmp_path / "deep.jsonl"
    path.write_text('{"system": "a", "input": "1", "m": 1, "h": ' + "[" * 100000 + "]" * 100000 + "}\n")
    code, _, err = run(["correlate", "--scores", str(path), "--human", "h"], capsys)
    assert code == 2
    assert err == (f"metaeval: error: {path}, row 1: JSON values must be nested at most a few hundred levels deep;"
                   " got deeper nesting.\n")


def test_integer_too_large_for_a_float(tmp_path, capsys):
    path = _rows(tmp_path / "big.jsonl", value_of=lambda s, i: "1" + "0" * 400 if (s, i) == ("a", 0) else str(i))
    code, _, err = run(["correlate", "--scores", str(path), "--human", "h"], capsys)
    assert code == 2
    assert err == (f"metaeval: error: {path}, row 1, column 'm': a score must be a number a float64 can hold"
                   " (magnitude below 1.8e308); got an integer of 401 digits.\n")


@pytest.mark.parametrize("kind", ["device", "fifo"])
def test_special_files_are_refused(tmp_path, capsys, kind):
    path = tmp_path / "scores.csv"
    if kind == "device":
        os.symlink("/dev/zero", path)
        expected = "a character device"
    else:
        os.mkfifo(path)
        expected = "a FIFO (named pipe)"
    code, _, err = run(["correlate", "--scores", str(path), "--human", "h"], capsys)
    assert code == 2 and err == f"metaeval: error: {path}: the path must name a regular file; got {expected}.\n"
    refs = tmp_path / "refs.jsonl"
    refs.write_text('{"input": "1", "reference": "a b"}\n')
    code, _, err = run(["score", "--candidates", str(path), "--references", str(refs), "--metric", "bleu",
                        "--output", str(tmp_path / "o.csv")], capsys)
    assert code == 2 and err == f"metaeval: error: {path}: the path must name a regular file; got {expected}.\n"


def test_candidates_with_a_byte_order_mark_are_read(tmp_path, capsys):
    cands = tmp_path / "c.jsonl"
    cands.write_bytes(b'\xef\xbb\xbf{"system": "a", "input": "1", "candidate": "the cat sat"}\n')
    refs = tmp_path / "r.jsonl"
    refs.write_text('{"input": "1", "reference": "the cat sat"}\n')
    code, _, err = run(["score", "--candidates", str(cands), "--references", str(refs), "--metric", "bleu",
                        "--output", str(tmp_path / "o.csv")], capsys)
    assert code == 0, err
    assert read_scores(tmp_path / "o.csv").matrix("bleu")[0, 0] == pytest.approx(100.0)


def test_unknown_metric_option_names_the_accepted_ones(tmp_path, capsys):
    with pytest.raises(ParameterError) as info:
        get_scorer("bleu", foo=1)
    assert str(info.value) == ("the options of metric 'bleu' must be among 'effective_order', 'lowercase',"
                               " 'max_ngram_order', 'preprocessing', 'ref_length', 'smooth_method', 'smooth_value',"
                               " 'tokenize'; got 'foo'.")


def test_json_output_has_no_infinity():
    text = json.dumps(plain({"a": [math.inf, -math.inf, math.nan, 1.5]}), allow_nan=False)
    assert text == '{"a": [null, null, null, 1.5]}'


def test_mt_metrics_eval_file_with_a_missing_line_is_named_with_its_system(tmp_path):
    from metaeval.data.wmt import read_mt_metrics_eval

    (tmp_path / "human-scores").mkdir()
    (tmp_path / "metric-scores" / "en-de").mkdir(parents=True)
    human = tmp_path / "human-scores" / "en-de.mqm.seg.score"
    human.write_text("".join(f"{s}\t{v}\n" for s in ("sysA", "sysB") for v in range(3)))
    metric = tmp_path / "metric-scores" / "en-de" / "BLEU-refA.seg.score"
    metric.write_text("sysA\t1\nsysA\t2\nsysA\t3\nsysB\t1\nsysB\t2\n")
    with pytest.raises(InputFileError) as info:
        read_mt_metrics_eval(tmp_path, "en-de")
    assert str(info.value) == (f"{metric}: every system must have the same number of segments in every file (3, one"
                               " line per segment, in most of them); got 2 lines for system 'sysB'.")


def test_a_constant_metric_in_a_permutation_test_is_named(tmp_path, capsys):
    import numpy as np

    import metaeval as me

    se = me.load_dataset("summeval")
    h = se.matrix("expert.relevance")
    ds = me.ScoreSet.from_matrices({"h": h, "r": se.matrix("rouge-1.recall"), "const": np.ones_like(h)},
                                   systems=se.systems, inputs=se.inputs, humans=["h"])
    expected = ("metric 'const' must vary over its non-missing cells to be standardized for a permutation test; got"
                " the same value in all 1600 of them (use a bootstrap test, or leave it out).")
    from metaeval.errors import DegenerateDataError

    with pytest.raises(DegenerateDataError) as info:
        me.permutation_test(ds, "const", "r", "h", level="summary", n_resamples=20)
    assert str(info.value) == expected
    me.write_scores(ds, tmp_path / "c.csv")
    code, _, err = run(["compare", "--scores", str(tmp_path / "c.csv"), "--human", "h", "--n-resamples", "20"], capsys)
    assert code == 2 and err == f"metaeval: error: {tmp_path / 'c.csv'}: {expected}\n"


def test_an_os_error_without_a_file_name_is_one_clean_line(monkeypatch, capsys):
    import errno

    from metaeval.cli import main as cli_main

    def full(*args, **kwargs):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(cli_main.cli, "main", full)
    code, _, err = run(["correlate"], capsys)
    assert code == 2 and err == "metaeval: error: No space left on device\n"
