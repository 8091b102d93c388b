"""Hostile input files and options: one-line errors, never a traceback or a silently wrong number (issue 22)."""
from __future__ import annotations

import json
import math
import os
import stat

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
    from metaeval.mt.readers import read_mt_metrics_eval

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


# -- sidecars, --metric-option JSON, flattened names, huge integers, sizes -------------------------------------
def _small_scores(tmp_path):
    path = tmp_path / "s.csv"
    path.write_text("system,input,m,h\n" + "".join(f"{s},{i},{(i * 7 + k) % 5},{(i + k) % 4}\n"
                                                  for k, s in enumerate("abcd") for i in range(5)))
    return path


def _sidecar_error(path, reason):
    side = f"{path}.signatures.json"
    return (f"metaeval: error: {side}: the sidecar of s.csv: {reason} (repair it, or delete it to read the file"
            " without it).\n")


@pytest.mark.parametrize("scores_file, got", [('"s.csv"', "a string"), ("null", "null"), ("[1, 2]", "an array")])
def test_a_sidecar_whose_scores_file_is_not_an_object_is_one_line(tmp_path, capsys, scores_file, got):
    path = _small_scores(tmp_path)
    (tmp_path / "s.csv.signatures.json").write_text('{"humans": ["h"], "scores_file": %s}' % scores_file)
    code, out, err = run(["correlate", "--scores", str(path), "--human", "h", "--level", "system", "--ci", "none"],
                         capsys)
    assert code == 2 and not out
    assert err == _sidecar_error(path, f"its 'scores_file' must be an object with 'name' and 'sha256'; got {got}")


@pytest.mark.parametrize("text, reason", [
    ('{"humans": ["h"], "deep": ' + "[" * 100000 + "]" * 100000 + "}",
     "JSON values must be nested at most a few hundred levels deep; got deeper nesting"),
    ('{"humans": ["h"], "humans": []}', "a JSON object must not repeat a key; got 'humans' twice"),
    ('{"humans": "h"}', "its 'humans' must be a list of scorer names; got a string"),
    ("[1]", "it must be one JSON object; got an array"),
    ("{", "it must be one JSON object; got malformed JSON: Expecting property name enclosed in double quotes at"
          " line 1, column 2"),
])
def test_a_malformed_sidecar_is_one_line(tmp_path, capsys, text, reason):
    path = _small_scores(tmp_path)
    (tmp_path / "s.csv.signatures.json").write_text(text)
    code, _, err = run(["correlate", "--scores", str(path), "--human", "h", "--level", "system", "--ci", "none"],
                       capsys)
    assert code == 2 and err == _sidecar_error(path, reason)
    with pytest.raises(InputFileError, match="the sidecar of s.csv: "):
        read_scores(path)


@pytest.mark.parametrize("kind", ["device", "fifo"])
def test_a_sidecar_that_is_not_a_regular_file_is_never_opened(tmp_path, capsys, kind):
    """A FIFO sidecar blocked `correlate` and `score`, a link to /dev/zero read forever: reading refuses them
    in one line; writing (score, write_scores) replaces a link to a device without opening it and refuses
    to remove a FIFO."""
    path = _small_scores(tmp_path)
    side = tmp_path / "s.csv.signatures.json"
    os.symlink("/dev/zero", side) if kind == "device" else os.mkfifo(side)
    expected = "a character device" if kind == "device" else "a FIFO (named pipe)"
    code, _, err = run(["correlate", "--scores", str(path), "--human", "h", "--level", "system", "--ci", "none"],
                       capsys)
    assert code == 2 and err == _sidecar_error(path, f"the path must name a regular file; got {expected}")
    cands, refs = tmp_path / "c.jsonl", tmp_path / "r.jsonl"
    cands.write_text('{"system": "a", "input": "1", "candidate": "the cat sat"}\n')
    refs.write_text('{"input": "1", "reference": "the cat sat"}\n')
    code, _, err = run(["score", "--candidates", str(cands), "--references", str(refs), "--metric", "bleu",
                        "--output", str(path)], capsys)
    import numpy as np

    import metaeval as me

    scores = me.ScoreSet.from_matrices({"h": np.ones((2, 2)), "m": np.eye(2)}, humans=["h"])
    if kind == "fifo":
        # a special file is never removed to make room for an output: one line, nothing written
        assert code == 2 and err == (f"metaeval: error: {side}: must be a file metaeval can replace; got a special"
                                     " file, which it never removes: choose another output path\n")
        assert stat.S_ISFIFO(os.lstat(side).st_mode)
        me.write_scores(scores, path)  # the library replaces it by a rename, never opening it
        assert read_scores(path).humans == ("h",)
        return
    assert code == 0, err
    assert side.is_file() and not side.is_symlink() and json.loads(side.read_text())["scores_file"]["name"] == "s.csv"
    os.remove(side)
    os.symlink("/dev/zero", side)
    me.write_scores(scores, path)
    assert read_scores(path).humans == ("h",)


def test_metric_option_json_is_strict(tmp_path, capsys):
    cands, refs = tmp_path / "c.jsonl", tmp_path / "r.jsonl"
    cands.write_text('{"system": "a", "input": "1", "candidate": "the cat sat"}\n')
    refs.write_text('{"input": "1", "reference": "the cat sat"}\n')
    base = ["score", "--candidates", str(cands), "--references", str(refs), "--metric", "bleu", "--output",
            str(tmp_path / "o.csv"), "--metric-option"]
    code, _, err = run([*base, "bleu.tokenize=" + "[" * 5000 + "]" * 5000], capsys)
    assert code == 2 and err == ("metaeval: error: `--metric-option` must hold plain JSON or text; got"
                                 f" {'[' * 40!r}...: JSON values must be nested at most a few hundred levels deep;"
                                 " got deeper nesting.\n")
    code, _, err = run([*base, 'bleu.tokenize={"a": 1, "a": 2}'], capsys)
    assert code == 2 and err == ("metaeval: error: `--metric-option` must hold plain JSON or text; got"
                                 " '{\"a\": 1, \"a\": 2}': a JSON object must not repeat a key; got 'a' twice.\n")
    assert not (tmp_path / "o.csv").exists()


@pytest.mark.parametrize("line, message", [
    ('{"system": "a", "input": "1", "h": 1, "m": {"x": 1}, "m.x": -1}',
     "row 1: fields must keep distinct names when nested objects flatten with dots; got 'm.x' twice."),
    ('{"system": "a", "input": "1", "m.x": -1, "m": {"x": 1}, "h": 1}',
     "row 1: fields must keep distinct names when nested objects flatten with dots; got 'm.x' twice."),
    ('{"system": "a", "input": "1", "metrics": {"h": 1, "system": "b"}}',
     "row 1, column 'metrics.system': the 'metrics' object must hold scores only; got the label field 'system' in"
     " it (it would relabel the row: put it beside the object)."),
    ('{"summarizer_id": "a", "instance_id": "1", "scores": {"h": 1, "instance_id": "2"}}',
     "row 1, column 'scores.instance_id': the 'scores' object must hold scores only; got the label field"
     " 'instance_id' in it (it would relabel the row: put it beside the object)."),
])
def test_no_json_field_silently_overwrites_another(tmp_path, line, message):
    path = tmp_path / "f.jsonl"
    path.write_text(line + "\n")
    with pytest.raises(InputFileError) as info:
        read_scores(path)
    assert str(info.value) == f"{path}, {message}"


def test_400_digit_integers_in_tables_and_options_are_one_line(tmp_path, capsys):
    big = "1" * 400
    counts = tmp_path / "counts.jsonl"
    counts.write_text('{"system": "a", "input": "1", "vital_matched": %s, "vital_total": 3, "length": 100}\n' % big)
    code, _, err = run(["nuggets", "counts", str(counts)], capsys)
    assert code == 2 and err == (f"metaeval: error: {counts}, row 1, column 'vital_matched': the cell must be a finite"
                                 " number >= 0; got an integer of 400 digits.\n")
    judgments = tmp_path / "j.jsonl"
    judgments.write_text("".join(
        '{"subject": "s%d", "document": "d", "condition": "%s", "judgment": "yes", "len": %s}\n'
        % (k, c, big if k == 1 else 3) for k in range(2) for c in ("full", "summary")))
    code, _, err = run(["extrinsic", "agreement", str(judgments), "--metric", "len"], capsys)
    assert code == 2 and err == (f"metaeval: error: {judgments}, row 3, column 'len': the cell must be a finite"
                                 " number; got an integer of 400 digits.\n")
    code, _, err = run(["familywise", "--comparisons", big], capsys)
    assert code == 2 and err == ("metaeval: error: `comparisons` must be an integer <= 9007199254740992; got an"
                                 " integer of 400 digits.\n")
    code, _, err = run(["familywise", "--systems", big], capsys)
    assert code == 2 and err == "metaeval: error: `n_systems` must be an integer <= 134217728; got an integer of 400 digits.\n"


@pytest.mark.parametrize("depth", ["1e9", "1000000000"])
def test_a_huge_syntactic_depth_is_refused_up_front(tmp_path, capsys, depth):
    cands, refs = tmp_path / "c.jsonl", tmp_path / "r.jsonl"
    cands.write_text('{"system": "a", "input": "1", "candidate": "(S (NP a) (VP b))"}\n')
    refs.write_text('{"input": "1", "reference": "(S (NP a) (VP b))"}\n')
    code, _, err = run(["score", "--candidates", str(cands), "--references", str(refs), "--metric", "stm",
                        "--metric-option", f"stm.depth={depth}", "--output", str(tmp_path / "o.csv")], capsys)
    got = "1000000000.0" if "e" in depth else "1000000000"
    rule = "an integer >= 1" if "e" in depth else "an integer in [1, 100]"
    assert code == 2 and err == f"metaeval: error: `depth` must be {rule}; got {got}.\n"


def test_nugget_f_at_a_huge_beta_is_its_limit_not_nan(tmp_path, capsys):
    from metaeval.stats.frameworks.nugget import nugget_f, nugget_recall

    r, a, big_r, length = [2, 1, 0], [0, 1, 0], [3, 3, 3], [100, 1000, 50]
    limit = nugget_f(r, a, big_r, length, beta=1e200)
    np = pytest.importorskip("numpy")
    np.testing.assert_allclose(limit, nugget_f(r, a, big_r, length, beta=1e150), rtol=1e-15)
    np.testing.assert_array_equal(limit, [*nugget_recall(r[:2], big_r[:2]), 0.0])
    counts = tmp_path / "c.csv"
    counts.write_text("system,input,vital_matched,okay_matched,vital_total,length\n"
                      "a,1,2,0,3,100\nb,1,1,1,3,1000\n")
    code, out, err = run(["nuggets", "counts", str(counts), "--beta", "1e200", "--format", "json"], capsys)
    assert code == 0, err
    assert "NaN" not in out and json.loads(out)["mean"] == pytest.approx(0.5)
