"""Reading candidates and references (metaeval.scoring.inputs): formats and every error message."""
from __future__ import annotations

import gzip
import json
import re

import pandas as pd
import pytest

from metaeval.errors import InputFileError, ParameterError
from metaeval.scoring.inputs import load_inputs, read_candidates, read_references


def lines(path, *rows, raw: bytes | None = None):
    data = "".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows).encode("utf-8")
    path.write_bytes(data if raw is None else data + raw)
    return path


def error(fn, *args):
    with pytest.raises(InputFileError) as caught:
        fn(*args)
    return str(caught.value)


# -- validation: every message pinned -------------------------------------------------------------

def test_candidate_errors(tmp_path):
    p = tmp_path / "c.jsonl"
    assert error(read_candidates, lines(p, '{"system": "a",')) == (
        f"{p}, row 1: must hold one JSON object per line; got invalid JSON (Expecting property name enclosed in"
        " double quotes at character 16).")
    assert error(read_candidates, lines(p, [1, 2])) == (
        f"{p}, row 1: must be a JSON object with system, input and candidate; got [1, 2].")
    assert error(read_candidates, lines(p, {"input": "d", "candidate": "x"})) == (
        f"{p}, row 1: must have the field 'system'; got the fields ['candidate', 'input'].")
    assert error(read_candidates, lines(p, {"system": "s", "input": "d"})) == (
        f"{p}, row 1: must have the field 'candidate'; got the fields ['input', 'system'].")
    assert error(read_candidates, lines(p, {"system": 1.5, "input": "d", "candidate": "x"})) == (
        f"{p}, row 1, column 'system': must be a label (a string or an integer); got 1.5.")
    assert error(read_candidates, lines(p, {"system": " ", "input": "d", "candidate": "x"})) == (
        f"{p}, row 1, column 'system': must be a non-empty label; got an empty string.")
    assert error(read_candidates, lines(p, {"system": "s", "input": "d", "candidate": " \n"})) == (
        f"{p}, row 1, column 'candidate': must be a non-empty candidate; got ' \\n'.")
    assert error(read_candidates, lines(p, {"system": "s", "input": "d", "candidate": ["", " "]})) == (
        f"{p}, row 1, column 'candidate': must be a non-empty candidate; got ['', ' '].")
    assert error(read_candidates, lines(p, {"system": "s", "input": "d", "candidate": 3})) == (
        f"{p}, row 1, column 'candidate': must be a candidate: a text or a list of sentences (strings); got 3.")
    row = {"system": "s", "input": "d", "candidate": "x"}
    assert error(read_candidates, lines(p, row, "", row)) == (
        f"{p}, row 3, column 'input': must hold one candidate per (system, input); got ('s', 'd') again"
        " (first on row 1).")
    assert error(read_candidates, lines(p, "", "  ")) == f"{p}: must hold at least one candidate; got none."


def test_non_utf8_and_bad_gzip(tmp_path):
    p = tmp_path / "c.jsonl"
    lines(p, {"system": "s", "input": "d", "candidate": "x"}, raw=b'{"system": "caf\xe9"}\n')
    assert error(read_candidates, p) == (
        f"{p}, row 2: must be UTF-8 text; got the byte 0xe9 at byte 16, which is not UTF-8.")
    g = tmp_path / "c.jsonl.gz"
    g.write_bytes(b"not gzip at all")
    assert error(read_candidates, g) == (
        f"{g}: must be a readable gzip file (it ends in .gz); got Not a gzipped file (b'no').")
    assert error(read_candidates, tmp_path / "absent.jsonl") == (
        f"{tmp_path / 'absent.jsonl'}: must be an existing file; got a path that does not exist.")
    assert error(read_candidates, tmp_path) == f"{tmp_path}: must be a file; got a directory."


def test_reference_errors(tmp_path):
    p = tmp_path / "r.jsonl"
    assert error(read_references, lines(p, {"input": "d"})) == (
        f"{p}, row 1: must have exactly one of the fields 'references' (a list) and 'reference' (one text);"
        " got the fields ['input'].")
    assert error(read_references, lines(p, {"input": "d", "references": "one text"})) == (
        f"{p}, row 1, column 'references': must be a non-empty list of references (each a text or a list of"
        " sentences; use 'reference' for a single text); got 'one text'.")
    assert error(read_references, lines(p, {"input": "d", "references": []})) == (
        f"{p}, row 1, column 'references': must be a non-empty list of references (each a text or a list of"
        " sentences; use 'reference' for a single text); got [].")
    assert error(read_references, lines(p, {"input": "d", "references": ["ok", ""]})) == (
        f"{p}, row 1, column 'references': must be a non-empty reference; got ''.")
    assert error(read_references, lines(p, {"input": "d", "reference": None})) == (
        f"{p}, row 1, column 'reference': must be a reference: a text or a list of sentences (strings); got None.")
    assert error(read_references, lines(p, {"input": "d", "reference": "a"}, {"input": "d", "reference": "b"})) == (
        f"{p}, row 2, column 'input': must hold one line per input; got 'd' again (first on row 1).")
    assert error(read_references, lines(p, "")) == f"{p}: must hold at least one input with references; got none."


def test_missing_reference_names_the_candidate_row(tmp_path):
    c = lines(tmp_path / "c.jsonl", {"system": "s", "input": "d1", "candidate": "x"},
              {"system": "s", "input": "d2", "candidate": "y"})
    r = lines(tmp_path / "r.jsonl", {"input": "d1", "reference": "x"})
    assert error(load_inputs, c, r) == (
        f"{c}, row 2, column 'input': must name an input that has references; got 'd2', which is not in {r}.")


def test_in_memory_errors_name_a_pseudo_file():
    assert error(read_candidates, [{"system": "s", "input": "d", "candidate": ""}]) == (
        "<candidates>, row 1, column 'candidate': must be a non-empty candidate; got ''.")
    assert error(load_inputs, {"s": {"d": "x"}}, {"e": ["y"]}) == (
        "<candidates>, row 1, column 'input': must name an input that has references; got 'd', which is not in"
        " <references>.")
    with pytest.raises(ParameterError, match=re.escape(
            "`candidates` must be a path to a JSON Lines file, a list of records or a pandas DataFrame; got int.")):
        read_candidates(3)
    with pytest.raises(ParameterError, match=re.escape(
            "`candidates` must map each system to a mapping {input: candidate}; got 'x' for 's'.")):
        read_candidates({"s": "x"})


# -- formats ----------------------------------------------------------------------------------------

def test_files_records_frames_and_mappings_agree(tmp_path):
    records = [
        {"system": "A", "input": 1, "candidate": "one .\ntwo ."},
        {"system": "B", "input": 1, "candidate": ["one .", "two ."]},
        {"system": "A", "input": 2, "candidate": "three ."},
    ]
    refs = [{"input": 1, "references": ["one .", ["two", "three ."]]}, {"input": 2, "reference": "three ."},
            {"input": 3, "reference": "unused"}]
    path_c = tmp_path / "c.jsonl.gz"
    with gzip.open(path_c, "wt", encoding="utf-8") as stream:
        stream.writelines(json.dumps(r) + "\n" for r in records)
    path_r = lines(tmp_path / "r.jsonl", *refs)
    from_files = load_inputs(path_c, path_r)
    assert from_files.systems == ("A", "B") and from_files.inputs == ("1", "2")
    assert from_files.cells == ((0, 0), (1, 0), (0, 1))
    assert from_files.candidates[1] == ("one .", "two .")
    assert from_files.references == {"1": ("one .", ("two", "three .")), "2": ("three .",)}
    assert from_files.pair(2) == ("three .", ("three .",))
    from_frame = load_inputs(pd.DataFrame(records), pd.DataFrame(refs[:1]).assign(input="1").to_dict("records")
                             + [{"input": "2", "reference": "three ."}])
    assert from_frame == from_files
    nested = {"A": {"1": "one .\ntwo .", "2": "three ."}, "B": {"1": ["one .", "two ."]}}
    from_mapping = load_inputs(nested, {"1": ["one .", ["two", "three ."]], "2": ["three ."]})
    assert from_mapping.systems == ("A", "B") and from_mapping.inputs == ("1", "2")
    assert from_mapping.cells == ((0, 0), (0, 1), (1, 0))
    assert from_mapping.candidates == ("one .\ntwo .", "three .", ("one .", "two ."))
