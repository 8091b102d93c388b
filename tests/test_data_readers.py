"""read_scores / write_scores: the generic wide, long and JSON Lines formats, and every reader error.

Validation tests come first: each malformed file is written into tmp_path and its full one-line
message is pinned (file, row as an editor shows it, column, what was expected, what was found).
"""
from __future__ import annotations

import gzip
import json
import math
from pathlib import Path

import numpy as np
import pytest

from metaeval.data.native import read_realsumm_scores, read_wmt19_system_scores, read_mqm_averages
from metaeval.data.readers import read_scores
from metaeval.data.scoreset import ScoreSet
from metaeval.data.writers import write_scores
from metaeval.errors import DataWarning, InputFileError, ParameterError, ScoreSetError

SHARED_DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"


@pytest.fixture(scope="module")
def shared() -> Path:
    if not SHARED_DATA.is_dir():
        pytest.skip(f"SKIPPED: the shared data directory {SHARED_DATA} is absent (clone ../shared beside the repo)")
    return SHARED_DATA


def _write(tmp_path: Path, name: str, text: str | bytes) -> Path:
    path = tmp_path / name
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path


# -- validation: every message pinned -------------------------------------------------------------
MALFORMED = [
    ("empty.csv", "", "the file must hold at least one row of scores; got an empty file."),
    ("header.csv", "system,input,rouge\n", "the file must hold at least one row of scores; got only a header."),
    ("blank.jsonl", "\n\n", "the file must hold at least one row of scores; got an empty file."),
    ("nosystem.csv", "sys,input,rouge\nA,d1,1\n",
     "row 1: the header must name the column 'system' (or 'summarizer_id'); got 'sys', 'input', 'rouge'"
     " (or map the file's own column: columns={'system': 'sys'})."),
    ("noinput.jsonl", '{"system": "A", "doc": "d1", "rouge": 1}\n',
     "every line must have the field 'input' (or 'instance_id'); got fields 'system', 'doc', 'rouge'"
     " (or map the file's own column: columns={'input': 'doc'})."),
    ("someinput.jsonl", '{"system": "A", "input": "d1", "rouge": 1}\n{"system": "A", "rouge": 1}\n',
     "row 2, column 'input': the input label must be non-empty; got None."),
    ("emptylabel.csv", "system,input,r\nA,d1,1\n,d2,2\n",
     "row 3, column 'system': the system label must be non-empty; got ''."),
    ("duplicate.csv", "system,input,rouge\nA,d1,1\nA,d2,2\nA,d1,3\n",
     "row 4: (system, input) must be unique; got ('A', 'd1') again (first on row 2)."),
    ("duplicate_long.csv", "system,input,scorer,score\nA,d1,rouge,1\nA,d1,bleu,2\n\nA,d1,rouge,3\n",
     "row 5: (system, input, scorer) must be unique; got ('A', 'd1', 'rouge') again (first on row 2)."),
    ("duplicate_annotator.csv", "system,input,annotator,h\nA,d1,x,1\nA,d1,y,2\nA,d1,x,3\n",
     "row 4: (system, input, annotator) must be unique; got ('A', 'd1', 'x') again (first on row 2)."),
    ("text.csv", "system,input,rouge\nA,d1,1\nA,d2,abc\n",
     "row 3, column 'rouge': a score must be a number or empty; got 'abc'."),
    ("comma.tsv", "system\tinput\tr\nA\td1\t1,5\n", "row 2, column 'r': a score must be a number or empty; got '1,5'."),
    ("text_long.csv", "system,input,scorer,score\nA,d1,r,0.5\nA,d2,r,high\n",
     "row 3, column 'score': a score must be a number or empty; got 'high'."),
    ("nested.jsonl", '{"instance_id": "d1", "summarizer_id": "A", "metrics": {"r": {"f1": "x"}}}\n',
     "row 1, column 'r.f1': a score must be a number, a list of numbers or null; got 'x'."),
    ("boolean.jsonl", '{"system": "A", "input": "d1", "h": true}\n',
     "row 1, column 'h': a score must be a number, a list of numbers or null; got True."),
    ("infinite.csv", "system,input,rouge\nA,d1,1\nA,d2,-inf\n", "row 3, column 'rouge': a score must be finite or missing; got '-inf'."),
    ("infinite.jsonl", '{"system": "A", "input": "d1", "h": [1, Infinity]}\n',
     "row 1, column 'h': a score must be finite or missing; got [1, inf]."),
    ("scorer_missing.csv", "system,input,rouge,bleu\nA,d1,1,2\nB,d1,,3\nC,d1,NaN,4\n",
     "column 'rouge': scorer 'rouge' must have a score for every system; got none for 'B', 'C'."),
    ("scorer_missing_long.csv", "system,input,scorer,score\nA,d1,r,1\nB,d1,b,2\nB,d1,r,\n",
     "scorer 'r' must have a score for every system; got none for 'B'."),
    ("scores.txt", "a", "the extension must be one of '.csv', '.tsv', '.jsonl', '.json', '.ndjson', '.parquet'"
                        " (optionally followed by '.gz'), or pass format=; got '.txt'."),
    ("scores.parquet.gz", "x", "a Parquet file must not be gzipped (Parquet compresses itself); got '.parquet.gz'."),
    ("malformed.jsonl", '{"system": "A", "input": "d1", "rouge": 1}\n{"system": "A" "input": "d2"}\n',
     "row 2: a line must be one JSON object; got malformed JSON: Expecting ',' delimiter at column 16."),
    ("array.json", '[{"system": "A", "input": "d1", "r": 1}, 2]\n',
     "row 2: every element of the array must be a JSON object; got int (a JSON array of records holds one object"
     " per row)."),
    ("array_line.jsonl", '{"system": "A", "input": "d1", "r": 1}\n[{"system": "A", "input": "d2", "r": 1}]\n',
     "row 2: a line must be one JSON object; got an array (JSON Lines holds one object per line)."),
    ("annotators.jsonl", '{"system": "A", "input": "d1", "h": [1, 2, 3]}\n\n{"system": "A", "input": "d2", "h": [1, 2]}\n',
     "row 3, column 'h': every cell of 'h' must hold the same number of annotator scores; got 2 here and 3 on row 1."),
    ("annotators_scalar.jsonl", '{"system": "A", "input": "d1", "h": [1, 2]}\n{"system": "A", "input": "d2", "h": 3}\n',
     "row 2, column 'h': every cell of 'h' must hold the same number of annotator scores;"
     " got a single number here and 2 on row 1."),
    ("list_with_annotator.jsonl", '{"system": "A", "input": "d1", "annotator": "x", "h": [1, 2]}\n',
     "row 1, column 'h': a score must be one number in a file with an 'annotator' column; got a list."),
    ("mixed_annotator.csv", "system,input,annotator,h\nA,d1,,1\nA,d1,x,2\n",
     "row 3, column 'h': scores of 'h' must be either all in rows with an annotator or all in rows without one;"
     " got both (rows 2 and 3)."),
    ("unreadable.parquet", "not parquet",
     "the file must be readable as Parquet; got 'Parquet magic bytes not found in footer. Either the file is"
     " corrupted or this is not a parquet file.'."),
    ("fields.csv", "system,input,rouge\nA,d1,1\nA,d2\n", "row 3: a row must have as many fields as the header (3); got 2."),
    ("quote.csv", 'system,input,r\nA,d1,"1\n', "row 2: the row must be valid CSV; got 'unexpected end of data'."),
    ("duplicate_column.csv", "system,input,rouge,rouge\nA,d1,1,2\n",
     "row 1, column 'rouge': column names must be unique; got 'rouge' twice."),
    ("unnamed_column.csv", "system,input,,r\nA,d1,1,2\n",
     "row 1: every column must have a name; got an empty name for column 3."),
    ("long_extra.csv", "system,input,scorer,score,note\nA,d1,r,1,2\n",
     "row 1: the long layout (the file has both a 'scorer' and a 'score' column) takes the columns system, input,"
     " scorer, score, optionally annotator, and text columns (set aside); got also 'note' (to read one column per"
     " scorer, pass layout='wide' / --layout wide)."),
    ("no_scorers.csv", "system,input\nA,d1\n",
     "row 1: the file must have at least one scorer column besides system, input and annotator; got none."),
    ("not_gzip.csv.gz", "system,input,r\n", "a '.gz' file must be gzip-compressed; got bytes without the gzip header."),
    ("latin1.csv", "system,input,r\nA\xe9,d1,1\n".encode("latin-1"), "the file must be UTF-8 text; got byte 0xe9 at offset 16."),
    ("truncated.csv.gz", gzip.compress(b"system,input,r\nA,d1,1\n", mtime=0)[:-6],
     "the gzip stream must be complete and valid; got 'Compressed file ended before the end-of-stream marker was"
     " reached'."),
]


@pytest.mark.parametrize("name,content,message", MALFORMED, ids=[case[0] for case in MALFORMED])
def test_malformed_file_message(tmp_path, name, content, message):
    path = _write(tmp_path, name, content)
    with pytest.raises(InputFileError) as info:
        read_scores(path)
    separator = ", " if message.startswith(("row ", "column ")) else ": "
    assert str(info.value) == f"{path}{separator}{message}"
    assert "\n" not in str(info.value)


def test_missing_file_message(tmp_path):
    path = tmp_path / "absent.csv"
    with pytest.raises(InputFileError, match=r"absent\.csv: the file must exist; got no such file\.$"):
        read_scores(path)


def test_error_records_row_and_column(tmp_path):
    path = _write(tmp_path, "s.csv", "system,input,rouge\nA,d1,1\nA,d2,abc\n")
    with pytest.raises(InputFileError) as info:
        read_scores(path)
    assert (info.value.path, info.value.row, info.value.column) == (str(path), 3, "rouge")


def test_parameter_errors(tmp_path):
    path = _write(tmp_path, "s.csv", "system,input,r\nA,d1,1\n")
    with pytest.raises(ParameterError) as info:
        read_scores(path, format="xls")
    assert str(info.value) == "`format` must be one of 'csv', 'tsv', 'jsonl', 'parquet', 'wmt-seg'; got 'xls'."
    with pytest.raises(ParameterError) as info:
        read_scores(path, humans=["h"])
    assert str(info.value) == "`humans` must name scorers of the file ('r'); got 'h'."
    with pytest.raises(ParameterError) as info:
        read_scores(path, humans="r")
    assert str(info.value) == "`humans` must be a list of scorer names; got the string 'r'."


# -- the three shapes -----------------------------------------------------------------------------
def test_wide_csv_order_missing_and_values(tmp_path):
    path = _write(tmp_path, "my_scores.csv", "system,input,rouge-2.recall,bleu\nB,d2,0.5,\nB,d1,0.25,-1\nA,d1,1e-2,3\nA,d2, 2 ,None\n")
    ds = read_scores(path)
    assert ds.name == "my_scores"
    assert ds.systems == ("B", "A") and ds.inputs == ("d2", "d1")
    assert ds.scorers == ("rouge-2.recall", "bleu") and ds.humans == ()
    np.testing.assert_array_equal(ds.matrix("rouge-2.recall"), [[0.5, 0.25], [2.0, 0.01]])
    np.testing.assert_array_equal(ds.matrix("bleu"), [[np.nan, -1.0], [np.nan, 3.0]])


def test_format_option_and_gzip(tmp_path):
    text = "system\tinput\tr\nA\td1\t1\nA\td2\t2\n"
    path = _write(tmp_path, "scores.data", gzip.compress(text.encode()))
    ds = read_scores(path, format="tsv", name="x")
    assert ds.name == "x" and ds.matrix("r").tolist() == [[1.0, 2.0]]
    gz = _write(tmp_path, "scores.tsv.gz", gzip.compress(text.encode()))
    assert read_scores(gz).name == "scores"


def test_long_format_with_annotators(tmp_path):
    path = _write(tmp_path, "long.csv",
                  "system,input,scorer,score,annotator\n"
                  "A,d1,rouge,0.1,\nA,d2,rouge,0.2,\nB,d1,rouge,0.3,\nB,d2,rouge,0.4,\n"
                  "A,d1,rel,1,a2\nA,d1,rel,3,a10\nA,d2,rel,2,a2\nB,d1,rel,5,a10\nB,d2,rel,4,a2\n")
    ds = read_scores(path)
    assert ds.scorers == ("rouge", "rel") and ds.humans == ("rel",)
    rel = ds.annotations("rel")
    assert rel.shape == (2, 2, 2)  # annotators in natural order of their labels: a2, a10
    np.testing.assert_array_equal(rel[0, 0], [1, 3])
    np.testing.assert_array_equal(rel[1, 0], [np.nan, 5])
    np.testing.assert_array_equal(ds.matrix("rel"), [[2.0, 2.0], [5.0, 4.0]])


def test_wide_annotator_column_and_repeated_metric_collapses(tmp_path):
    # a merged table: the metric repeats on every annotator's row; it stays one matrix, not a human
    path = _write(tmp_path, "merged.csv",
                  "system,input,annotator,rouge,rel\nA,d1,x,0.5,1\nA,d1,y,0.5,2\nB,d1,x,0.7,4\nB,d1,y,0.7,4\n")
    ds = read_scores(path)
    assert ds.humans == ("rel",)
    assert ds.annotations("rouge").shape == (2, 1)
    assert ds.annotations("rel").shape == (2, 1, 2)
    assert read_scores(path, humans=[]).humans == ()


def test_summeval_line_format(tmp_path):
    lines = [
        {"instance_id": "d1", "summarizer_id": "M0", "summarizer_type": "peer",
         "metrics": {"rouge-2": {"recall": 41.0, "f1": "NaN"}, "expert": {"relevance": [2, 1, 2]}, "MoverScore": 0.2}},
        {"instance_id": "d2", "summarizer_id": "M0", "summarizer_type": "peer",
         "metrics": {"rouge-2": {"recall": 30.0, "f1": 1.0}, "expert": {"relevance": [4, 4, None]}, "MoverScore": 0.3}},
    ]
    path = _write(tmp_path, "s.jsonl", "\n".join(json.dumps(line) for line in lines) + "\n")
    ds = read_scores(path)
    assert ds.scorers == ("rouge-2.recall", "rouge-2.f1", "expert.relevance", "MoverScore")
    assert ds.humans == ("expert.relevance",)
    assert ds.matrix("expert.relevance").tolist() == [[5 / 3, 4.0]]
    assert ds.matrix("rouge-2.f1").tolist()[0][1] == 1.0 and math.isnan(ds.matrix("rouge-2.f1")[0, 0])
    # also `system` / `input` with nested `scores`
    other = _write(tmp_path, "t.jsonl", '{"system": "M0", "input": "d1", "scores": {"a": {"b": 1}}}\n')
    assert read_scores(other).scorers == ("a.b",)


def test_humans_override_and_default(tmp_path):
    path = _write(tmp_path, "s.jsonl", '{"system": "A", "input": "d1", "pyr": 0.3, "r": 1}\n')
    assert read_scores(path).humans == ()
    assert read_scores(path, humans=["pyr"]).humans == ("pyr",)


def test_parquet_input_with_integer_labels_and_lists(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    table = pa.table({"system": ["A", "A", "B"], "input": [7, 8, 7], "r": [0.1, None, 0.3],
                      "h": [[1.0, 2.0], None, [3.0, 5.0]]})
    pq.write_table(table, tmp_path / "s.parquet")
    ds = read_scores(tmp_path / "s.parquet")
    assert ds.inputs == ("7", "8") and ds.humans == ("h",)
    assert ds.annotations("h").shape == (2, 2, 2)
    np.testing.assert_array_equal(ds.matrix("r"), [[0.1, np.nan], [0.3, np.nan]])


# -- writing --------------------------------------------------------------------------------------
def _sample() -> ScoreSet:
    rng = np.random.default_rng(3)
    expert = rng.integers(1, 6, size=(3, 4, 3)).astype(float)
    expert[0, 1, 2] = np.nan
    turker = rng.integers(1, 6, size=(3, 4, 5)).astype(float)
    rouge = rng.random((3, 4)) * 100
    rouge[2, 3] = np.nan
    return ScoreSet({"rouge-2.recall": rouge, "expert.relevance": expert, "turker.relevance": turker,
                     "pyramid": rng.random((3, 4)) / 3},
                    systems=["M0", "M 1", "M,2"], inputs=["d1", "d2", "d3", "d\t4"],
                    humans=["expert.relevance", "turker.relevance", "pyramid"], name="sample")


@pytest.mark.parametrize("filename", ["s.csv", "s.tsv", "s.jsonl", "s.parquet", "s.csv.gz", "s.jsonl.gz"])
def test_write_then_read_round_trips(tmp_path, filename):
    ds = _sample()
    path = tmp_path / filename
    write_scores(ds, path)
    back = read_scores(path, humans=["expert.relevance", "turker.relevance", "pyramid"])
    assert back.systems == ds.systems and back.inputs == ds.inputs and back.scorers == ds.scorers
    assert back.humans == ds.humans
    for scorer in ds.scorers:
        np.testing.assert_array_equal(back.annotations(scorer), ds.annotations(scorer))
    assert read_scores(path).humans == ds.humans  # 'pyramid' (no annotators) is recorded in the sidecar
    # no temporary file left behind; the sidecar records the humans
    assert sorted(p.name for p in tmp_path.iterdir()) == [filename, filename + ".signatures.json"]


def test_humans_without_annotators_come_back_from_the_sidecar(tmp_path):
    ds = ScoreSet({"m": [[1.0, 2.0], [3.0, 1.0]], "rating": [[1.0, 2.0], [2.0, 2.0]], "rating2": [[3.0, 2.0], [1.0, 2.0]]},
                  systems=["a", "b"], inputs=["x", "y"], humans=["rating", "rating2"])
    path = tmp_path / "scores.csv"
    write_scores(ds, path)
    assert read_scores(path).humans == ("rating", "rating2")
    assert json.loads((tmp_path / "scores.csv.signatures.json").read_text())["humans"] == ["rating", "rating2"]
    path.write_text(path.read_text().replace("1.0", "1.5", 1))  # edited by hand: the sidecar is stale
    with pytest.warns(DataWarning, match=r"scores\.csv\.signatures\.json: ignored: it describes another version"):
        assert read_scores(path).humans == ()


def test_no_sidecar_when_the_file_marks_every_human(tmp_path):
    ds = ScoreSet({"m": [[1.0, 2.0]], "rating": [[[1.0, 2.0], [2.0, 3.0]]]}, systems=["a"], inputs=["x", "y"],
                  humans=["rating"])
    write_scores(ds, tmp_path / "s.csv")
    assert [p.name for p in tmp_path.iterdir()] == ["s.csv"]


def test_write_without_annotators_has_no_annotator_column(tmp_path):
    ds = ScoreSet({"a": [[1.5, 2.0]]}, systems=["s"], inputs=["x", "y"])
    write_scores(ds, tmp_path / "o.csv")
    assert (tmp_path / "o.csv").read_text() == "system,input,a\ns,x,1.5\ns,y,2.0\n"
    write_scores(_sample().subset(scorers=["expert.relevance"]), tmp_path / "e.csv")
    first = _sample().annotations("expert.relevance")[0, 0]
    assert (tmp_path / "e.csv").read_text().splitlines()[:4] == [
        "system,input,annotator,expert.relevance"] + [f"M0,d1,{k + 1},{float(first[k])!r}" for k in range(3)]


def test_write_is_atomic_on_failure(tmp_path, monkeypatch):
    path = tmp_path / "o.csv"
    path.write_text("old\n")

    def broken(*args, **kwargs):
        raise OSError("disk full")

    monkeypatch.setattr("metaeval.runtime.files.os.replace", broken)
    with pytest.raises(OSError, match="disk full"):
        write_scores(_sample(), path)
    assert path.read_text() == "old\n"
    assert [p.name for p in tmp_path.iterdir()] == ["o.csv"]


def test_write_refuses_reserved_scorer_names(tmp_path):
    ds = ScoreSet({"input": [[1.0]]}, systems=["s"], inputs=["x"])
    with pytest.raises(ScoreSetError) as info:
        write_scores(ds, tmp_path / "o.csv")
    assert str(info.value) == ("scorer names must differ from the label columns system, summarizer_id, input,"
                               " instance_id, annotator; got 'input'.")
    with pytest.raises(InputFileError, match=r"o\.xlsx: the extension must be one of"):
        write_scores(_sample(), tmp_path / "o.xlsx")


# -- real files -----------------------------------------------------------------------------------
def test_deutsch2022_judged_files_load(shared):
    summeval = read_scores(shared / "deutsch2022" / "summeval" / "judged" / "metrics.jsonl.gz")
    assert summeval.shape == (16, 100)
    assert summeval.scorers == ("ground-truth", "ROUGE-1", "ROUGE-2", "ROUGE-L", "BERTScore", "QAEval")
    assert summeval.humans == ("ground-truth",) and summeval.n_annotators("ground-truth") == 3
    realsumm = read_scores(shared / "deutsch2022" / "realsumm" / "judged" / "metrics.jsonl.gz",
                           humans=["ground-truth"])
    assert realsumm.shape == (24, 100) and realsumm.humans == ("ground-truth",)
    # the judged ground truth is the SummEval expert relevance and the REALSumm LitePyramid recall
    relevance = read_scores(shared / "summeval" / "relevance.jsonl")
    sub = relevance.subset(systems=summeval.systems, inputs=summeval.inputs)
    np.testing.assert_array_equal(sub.annotations("expert.relevance"), summeval.annotations("ground-truth"))


def test_summeval_relevance_jsonl(shared):
    ds = read_scores(shared / "summeval" / "relevance.jsonl")
    assert ds.shape == (16, 100)
    assert {ds.n_annotators(h) for h in ds.humans if h.startswith("expert.")} == {3}
    assert {ds.n_annotators(h) for h in ds.humans if h.startswith("turker.")} == {5}
    first = json.loads((shared / "summeval" / "relevance.jsonl").read_text().splitlines()[0])
    i, j = ds.systems.index(first["summarizer_id"]), ds.inputs.index(first["instance_id"])
    assert ds.annotations("expert.relevance")[i, j].tolist() == first["metrics"]["expert"]["relevance"]


def test_native_realsumm_reader(shared):
    splits = read_realsumm_scores(shared / "realsumm" / "realsumm_scores.jsonl")
    assert {k: v.shape for k, v in splits.items()} == {"abs": (14, 100), "ext": (11, 100)}
    assert splits["abs"].humans == ("litepyramid.recall",)
    assert splits["abs"].scorers[:4] == ("litepyramid.recall", "rouge-1.recall", "rouge-1.precision", "rouge-1.f1")


def test_native_wmt_readers(shared):
    mqm = read_mqm_averages(shared / "wmt" / "mqm_newstest2020_ende.avg_seg_scores.tsv")
    assert mqm.shape == (10, 1418) and mqm.humans == ("mqm",)
    assert mqm.matrix("mqm")[mqm.systems.index("eTranslation.737"), mqm.inputs.index("1")] == -2.333333
    result = read_wmt19_system_scores(shared / "wmt" / "wmt19" / "DA-syslevel.csv", shared / "wmt" / "wmt19" / "baselines")
    assert len(result.scoresets) == 18 and "cs-de" not in result.scoresets
    de_cs = result.scoresets["de-cs"]
    assert "Unsupervised.de-cs.6929" in de_cs.systems
    assert not np.isnan(de_cs.matrix("sacrebleu-bleu")).any()
    assert any("'online-B.0' has metric scores" in note for note in result.notes)


def test_native_reader_errors(tmp_path):
    bad = _write(tmp_path, "m.tsv", "system mqm seg\n")
    with pytest.raises(InputFileError) as info:
        read_mqm_averages(bad)
    assert str(info.value) == f"{bad}, row 1: the header must be 'system mqm_avg_score seg_id'; got 'system mqm seg'."
    dup = _write(tmp_path, "d.tsv", "system mqm_avg_score seg_id\nA -1 1\nA None 1\n")
    with pytest.raises(InputFileError) as info:
        read_mqm_averages(dup)
    assert str(info.value) == f"{dup}, row 3: (system, input) must be unique; got ('A', '1') again (first on row 2)."
    missing = _write(tmp_path, "r.jsonl", '{"split": "abs", "doc_id": 0, "scores": {}}\n')
    with pytest.raises(InputFileError) as info:
        read_realsumm_scores(missing)
    assert str(info.value) == (f"{missing}, row 1, column 'system_id': every line must have a 'system_id' field;"
                               " got 'split', 'doc_id', 'scores'.")
    ok = _write(tmp_path, "ok.tsv", "system mqm_avg_score seg_id\nA -1 1\nA None 2\nB -2.5 1\nB -3 2\n")
    assert math.isnan(read_mqm_averages(ok).matrix("mqm")[0, 1])


def test_parquet_written_by_pandas_ignores_the_index(tmp_path):
    import pandas as pd

    frame = pd.DataFrame({"system": ["A", "B"], "input": ["x", "x"], "r": [1.0, 2.0]}, index=[5, 9])
    frame.to_parquet(tmp_path / "p.parquet")
    assert read_scores(tmp_path / "p.parquet").scorers == ("r",)


def test_missing_tokens_in_csv(tmp_path):
    path = _write(tmp_path, "m.csv", "system,input,r\nA,a,1\nA,b,NaN\nA,c, n/a \nA,d,None\nA,e,null\nA,f,NA\nA,g,\n")
    assert np.isnan(read_scores(path).matrix("r")[0, 1:]).all()
