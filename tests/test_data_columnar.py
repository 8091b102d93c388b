"""The column-wise CSV / TSV reader equals the row-wise one: same tables, numbers, warnings and errors.

``read_scores`` reads CSV and TSV column-wise when it can (``metaeval.data.columnar``) and falls back to the
row-wise parser otherwise. Each test reads the same file both ways (the row-wise way by calling
``read_table`` without ``columnar``) and compares: the raw tables (column names, every text, row numbers),
the ScoreSets (labels, humans, every score bit for bit), the warnings, or the error message. The files are
the real CSV / TSV files of ``../shared/data``, the packaged real datasets written as CSV and TSV, generated
tie-heavy files, and generated files with every anomaly the row-wise parser checks.
"""
from __future__ import annotations

import gzip
import warnings
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from metaeval.data import formats, readers
from metaeval.data.columnar import TextColumn, delimited_columns, plain_floats
from metaeval.data.datasets import load_dataset
from metaeval.data.writers import write_scores
from metaeval.errors import InputFileError, MetaevalError

SHARED_DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"


def _shared_files() -> list[Path]:
    files = []
    for path in sorted(SHARED_DATA.rglob("*")) if SHARED_DATA.is_dir() else ():
        try:
            if path.is_file() and formats.file_format(path) in ("csv", "tsv"):
                files.append(path)
        except MetaevalError:
            continue
    return files


def _outcome(call):
    """``("ok", value, warnings)`` or ``("error", type, message)`` of ``call()``."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            value = call()
        except (MetaevalError, ValueError) as exc:
            return "error", type(exc).__name__, str(exc)
    return "ok", value, [(w.category.__name__, str(w.message)) for w in caught]


def _plain_table(table: formats.RawTable) -> tuple:
    columns = {name: list(cells) for name, cells in table.columns.items()}
    return table.path, table.format, columns, table.rows.tolist(), table.header_row


def _same_tables(path: Path, format: str) -> bool:
    """Both readers give the same table or the same error; True when the column-wise path read the file."""
    rowwise = _outcome(lambda: formats.read_table(path, format))
    columnar = _outcome(lambda: formats.read_table(path, format, columnar=True))
    assert rowwise[0] == columnar[0], (rowwise, columnar)
    if rowwise[0] == "error":
        assert rowwise == columnar
        return False
    assert _plain_table(rowwise[1]) == _plain_table(columnar[1])
    assert rowwise[2] == columnar[2]
    return any(isinstance(c, TextColumn) for c in columnar[1].columns.values())


def _rowwise_read_scores(monkeypatch, path, **options):
    """``read_scores`` with the row-wise CSV / TSV parser (the reference)."""
    with monkeypatch.context() as patch:
        patch.setattr(readers, "read_table", lambda p, f, columnar=False: formats.read_table(p, f))
        return _outcome(lambda: readers.read_scores(path, **options))


def _same_scoresets(monkeypatch, path, **options) -> None:
    rowwise = _rowwise_read_scores(monkeypatch, path, **options)
    columnar = _outcome(lambda: readers.read_scores(path, **options))
    assert rowwise[0] == columnar[0], (rowwise, columnar)
    if rowwise[0] == "error":
        assert rowwise == columnar
        return
    left, right = rowwise[1], columnar[1]
    assert (left.systems, left.inputs, left.scorers, left.humans, left.name) == (
        right.systems, right.inputs, right.scorers, right.humans, right.name)
    for scorer in left.scorers:
        a, b = left.annotations(scorer), right.annotations(scorer)
        assert a.shape == b.shape and np.array_equal(np.isnan(a), np.isnan(b))
        assert np.array_equal(np.nan_to_num(a).view(np.int64), np.nan_to_num(b).view(np.int64)), scorer
    assert rowwise[2] == columnar[2]


# -- the real files -------------------------------------------------------------------------------
def test_real_csv_and_tsv_files_give_the_same_tables():
    files = _shared_files()
    if not files:
        pytest.skip(f"SKIPPED: the shared data directory {SHARED_DATA} is absent")
    fast = [path.name for path in files if _same_tables(path, formats.file_format(path))]
    assert len(files) >= 30 and fast  # the MTurk CSVs quote every field and go to the row-wise parser


@pytest.mark.parametrize("name", ["summeval", "realsumm", "wmt20-mqm-ende", "wmt20-mqm-zhen", "wmt19-da-sys"])
@pytest.mark.parametrize("extension", [".csv", ".tsv.gz"])
def test_real_datasets_written_as_text_read_the_same(tmp_path, monkeypatch, name, extension):
    path = tmp_path / f"{name}{extension}"
    dataset = load_dataset(name)
    write_scores(dataset, path)
    assert _same_tables(path, formats.file_format(path))
    _same_scoresets(monkeypatch, path, humans=list(dataset.humans))
    _same_scoresets(monkeypatch, path)


# -- generated tie-heavy files --------------------------------------------------------------------
def _tie_heavy(path: Path, n_systems: int = 7, n_inputs: int = 60, seed: int = 0, delimiter: str = ",") -> Path:
    rng = np.random.default_rng(seed)
    quality = rng.normal(size=(n_systems, 1)) + 0.7 * rng.normal(size=(n_systems, n_inputs))
    human = np.clip(np.round(3 + quality[..., None] + rng.normal(scale=0.8, size=(*quality.shape, 3))), 1, 5).mean(2)
    cont = quality + rng.normal(scale=0.8, size=quality.shape)
    grid = np.round((quality + rng.normal(scale=0.6, size=quality.shape)) * 20) / 20
    lines = [delimiter.join(["system", "input", "human", "m_cont", "m_grid", "m_full"])]
    for i in range(n_systems):
        for j in range(n_inputs):
            fields = [f"sys{i}", f"doc{j:04d}", f"{human[i, j]:.6g}", f"{cont[i, j]:.6g}", f"{grid[i, j]:.6g}",
                      repr(float(cont[i, j]) / 3)]
            lines.append(delimiter.join(fields))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_generated_tie_heavy_files_read_the_same(tmp_path, monkeypatch, seed):
    for delimiter, name in ((",", "ties.csv"), ("\t", "ties.tsv")):
        path = _tie_heavy(tmp_path / name, seed=seed, delimiter=delimiter)
        assert _same_tables(path, formats.file_format(path))
        _same_scoresets(monkeypatch, path, humans=["human"])
        _same_scoresets(monkeypatch, path, where={"system": ["sys1", "sys3"]})
        _same_scoresets(monkeypatch, path, columns={"human": "human"})


def test_the_column_wise_path_is_taken_and_keeps_memory_small(tmp_path):
    path = _tie_heavy(tmp_path / "ties.csv", n_systems=20, n_inputs=500)
    table = formats.read_table(path, "csv", columnar=True)
    assert all(isinstance(c, TextColumn) for c in table.columns.values())
    assert table.rows.tolist() == list(range(2, 10_002))
    assert sum(c.arrow.nbytes for c in table.columns.values()) < 2 * path.stat().st_size  # the text and its offsets


# -- anomalies: every one goes to the row-wise parser (same result or same message) ----------------
HEADER = "system,input,h,m\n"
ANOMALIES = {
    "clean": HEADER + "A,d1,1,0.5\nB,d1,2,0.25\nA,d2,3,-1e-3\nB,d2,4,.5\n",
    "quotes": HEADER + 'A,d1,1,"0.5"\nB,d1,2,0.25\n',
    "quoted comma": HEADER + 'A,"d,1",1,0.5\nB,"d,1",2,0.25\n',
    "bad quote": HEADER + 'A,d1,1,0.5"x"\nB,d1,2,0.25\n',
    "newline in quotes": HEADER + 'A,"d\n1",1,0.5\nB,d1,2,0.25\n',
    "blank lines": "\n" + HEADER + "A,d1,1,0.5\n\nB,d1,2,0.25\n\n",
    "crlf": HEADER.replace("\n", "\r\n") + "A,d1,1,0.5\r\nB,d1,2,0.25\r\n",
    "lone cr": HEADER + "A,d1,1,0.5\rB,d1,2,0.25\n",
    "no final newline": HEADER + "A,d1,1,0.5\nB,d1,2,0.25",
    "ragged short": HEADER + "A,d1,1,0.5\nB,d1,2\n",
    "ragged long": HEADER + "A,d1,1,0.5\nB,d1,2,0.25,9\n",
    "trailing delimiter": "system,input,h,m,\nA,d1,1,0.5,\nB,d1,2,0.25,\n",
    "blank-only line": HEADER + "A,d1,1,0.5\n   \nB,d1,2,0.25\n",
    "duplicate header": "system,input,h,h\nA,d1,1,0.5\nB,d1,2,0.25\n",
    "padded duplicate header": "system,input, h,h \nA,d1,1,0.5\nB,d1,2,0.25\n",
    "empty header name": "system,input,,m\nA,d1,1,0.5\nB,d1,2,0.25\n",
    "header only": HEADER,
    "header only no newline": HEADER.strip(),
    "one column": "system\nA\nB\n",
    "nan spellings": HEADER + "A,d1,NaN,0.5\nB,d1,N/A,0.25\nA,d2,null,NONE\nB,d2,,nA\n",
    "padded nan": HEADER + "A,d1, nan ,0.5\nB,d1,2,0.25\n",
    "padded numbers": HEADER + "A,d1, 1 ,0.5\nB,d1,2,\t0.25\n",
    "signed and bare points": HEADER + "A,d1,+1,5.\nB,d1,-.5,1E+2\n",
    "underscore number": HEADER + "A,d1,1_000,0.5\nB,d1,2,0.25\n",
    "minus nan": HEADER + "A,d1,-nan,0.5\nB,d1,2,0.25\n",
    "infinity": HEADER + "A,d1,inf,0.5\nB,d1,2,0.25\n",
    "overflow": HEADER + "A,d1,1e999,0.5\nB,d1,2,0.25\n",
    "underflow": HEADER + "A,d1,1e-999,0.5\nB,d1,2,1e-320\n",
    "text score": HEADER + "A,d1,good,0.5\nB,d1,2,0.25\n",
    "text column": "system,input,h,m,split\nA,d1,1,0.5,test\nB,d1,2,0.25,dev\n",
    "label padding": HEADER + " A ,d1,1,0.5\nA,d2,2,0.25\nB , d1,3,1\nB,d2,4,2\n",
    "empty label": HEADER + "A,d1,1,0.5\n ,d1,2,0.25\n",
    "duplicate row": HEADER + "A,d1,1,0.5\nA,d1,2,0.25\n",
    "system without scores": HEADER + "A,d1,1,0.5\nB,d1,,\n",
    "nul byte": HEADER + "A,d1,1,0.5\nB,d\x001,2,0.25\n",
    "non-ascii": HEADER + "Ä,d1,1,0.5\nB,dé,2,0.25\n",
    "unicode digits": HEADER + "A,d1,\u0661,0.5\nB,d1,2,0.25\n",
    "unicode separator": HEADER + "A,d\u20281,1,0.5\nB,d1,2,0.25\n",
    "huge field": HEADER + "A,d1,1," + "5" * 140_000 + "\nB,d1,2,0.25\n",
    "long scorer table": "system,input,scorer,score\nA,d1,h,1\nA,d1,m,0.5\nB,d1,h,2\nB,d1,m,0.25\n",
    "annotator axis": "system,input,annotator,h,m\nA,d1,r1,1,0.5\nA,d1,r2,2,0.5\nB,d1,r1,3,0.25\nB,d1,r2,4,0.25\n",
    "numeric annotator": "system,input,annotator,m\nA,d1,1,0.5\nB,d1,2,0.25\n",
}


@pytest.mark.parametrize("case", list(ANOMALIES))
def test_anomalies_read_the_same_or_fail_with_the_same_message(tmp_path, monkeypatch, case):
    for extension, text in ((".csv", ANOMALIES[case]), (".tsv", ANOMALIES[case].replace(",", "\t"))):
        path = tmp_path / f"case{extension}"
        path.write_text(text, encoding="utf-8", newline="")
        taken = _same_tables(path, extension[1:])
        _same_scoresets(monkeypatch, path)
        if "h" in text.split("\n")[0].split(","):
            _same_scoresets(monkeypatch, path, humans=["h"])
        if case == "clean":
            assert taken


def test_bom_gzip_and_bad_bytes(tmp_path, monkeypatch):
    text = ANOMALIES["clean"]
    cases = {"bom.csv": b"\xef\xbb\xbf" + text.encode(), "gz.csv.gz": gzip.compress(text.encode()),
             "latin1.csv": text.replace("d1", "d\xe91").encode("latin-1"), "plain.csv.gz": text.encode()}
    for name, data in cases.items():
        path = tmp_path / name
        path.write_bytes(data)
        _same_tables(path, "csv")
        _same_scoresets(monkeypatch, path)


# -- random cells ---------------------------------------------------------------------------------
CELLS = st.one_of(
    st.floats(allow_nan=False, allow_infinity=False).map(repr),
    st.floats(allow_nan=False, allow_infinity=False, width=32).map(lambda v: f"{v:.6g}"),
    st.integers(-10**30, 10**30).map(str),
    st.sampled_from(["", "nan", "NaN", "NA", "n/a", "None", "NULL", " ", " 1", "1 ", "inf", "-Infinity", "1e999",
                     "1e-999", ".5", "5.", "+3", "-0", "1_0", "0x10", "x", '"1"', "1,5", "\t", "١"]),
    st.text(alphabet="0123456789.eE+-", min_size=1, max_size=8),
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(cells=st.lists(st.lists(CELLS, min_size=2, max_size=2), min_size=1, max_size=6))
def test_random_score_cells_read_the_same(tmp_path, monkeypatch, cells):
    lines = ["system,input,a,b"] + [f"S{k % 2},d{k // 2},{a},{b}" for k, (a, b) in enumerate(cells)]
    path = tmp_path / "random.csv"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8", newline="")
    _same_tables(path, "csv")
    _same_scoresets(monkeypatch, path)


@settings(max_examples=200, deadline=None)
@given(texts=st.lists(CELLS, min_size=1, max_size=20))
def test_plain_floats_are_the_row_wise_numbers_bit_for_bit(texts):
    import pyarrow as pa

    column = TextColumn(pa.array(texts, type=pa.string()))
    values = plain_floats(column)
    if values is None:
        return
    missing = [t.strip().lower() in formats.MISSING_TOKENS for t in texts]
    expected = np.array([np.nan if m else float(t) for m, t in zip(missing, texts)])
    assert np.array_equal(np.isnan(values), np.isnan(expected))
    assert np.array_equal(np.nan_to_num(values).view(np.int64), np.nan_to_num(expected).view(np.int64))


def test_plain_floats_refuse_what_they_cannot_read_exactly():
    import pyarrow as pa

    for texts in (["1", " 1"], ["1", "inf"], ["1e999"], ["1_0"], ["-nan"], ["x"], ["\u0661"]):
        assert plain_floats(TextColumn(pa.array(texts))) is None, texts
    values = plain_floats(TextColumn(pa.array(["1", "", "NaN", "n/A", "-2.5e-1", ".5", "5."])))
    assert np.array_equal(values, [1, np.nan, np.nan, np.nan, -0.25, 0.5, 5.0], equal_nan=True)


def test_text_column_is_a_sequence_of_the_texts():
    import pyarrow as pa

    texts = ["a", " b", "", "a", "c"]
    column = TextColumn(pa.array(texts))
    assert column == texts and list(column) == texts and len(column) == 5
    assert column[1] == " b" and column[-1] == "c" and column[np.int64(3)] == "a"
    assert column[np.array([4, 0])] == ["c", "a"] and column[np.array([True, False, True, False, False])] == ["a", ""]
    assert column[1:4] == texts[1:4] and column[::-2] == texts[::-2]
    codes, distinct = column.coded()
    assert distinct == ["a", " b", "", "c"] and codes.tolist() == [0, 1, 2, 0, 3]
    assert np.array(column).tolist() == texts
    with pytest.raises(IndexError):
        column[5]


def test_files_the_row_wise_parser_must_read_are_left_to_it():
    assert delimited_columns('system,input\nA,"d1"\n', ",") is None
    assert delimited_columns("system,input\nA,d1\n\nB,d2\n", ",") is None
    assert delimited_columns("system,input\n", ",") is None
    assert delimited_columns("system,input\nA,d1,x\n", ",") is None
    names, columns, rows = delimited_columns("system, input \nA,d1\nB,d2", ",")
    assert names == ["system", "input"] and columns["input"] == ["d1", "d2"] and rows.tolist() == [2, 3]


def test_errors_keep_file_row_and_column(tmp_path):
    path = tmp_path / "bad.csv"
    path.write_text(_tie_heavy(tmp_path / "t.csv").read_text().replace("\nsys3,doc0005,", "\nsys3,doc0005,x"))
    with pytest.raises(InputFileError) as caught:
        readers.read_scores(path)
    row = 2 + 3 * 60 + 5
    assert str(caught.value) == f"{path}, row {row}, column 'human': a score must be a number or empty; got 'x3.33333'."
