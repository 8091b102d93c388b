"""data/texts.py: text files checked before use (every message pinned)."""
from __future__ import annotations

import gzip

import pytest

from metaeval.analyses.power import load_texts
from metaeval.data.texts import label_field, read_records, text_field, texts_field
from metaeval.errors import InputFileError


@pytest.mark.parametrize("content, message", [
    (b"", "{p}: the file must hold at least one JSON line; got an empty file."),
    (b'{"a": 1}\n{"a": \n', "{p}, row 2: a line must be one JSON object; got malformed JSON: Expecting value at column 7."),
    (b"[1, 2]\n", "{p}, row 1: a line must be one JSON object; got an array."),
    (b"\xff\n", "{p}: the file must be UTF-8 text; got byte 0xff at offset 0."),
    (gzip.compress(b'{"a": 1}\n', mtime=0)[:10], "{p}: the gzip stream must be complete and valid;"),
])
def test_read_records_rejects(tmp_path, content, message):
    path = tmp_path / "t.jsonl"
    path.write_bytes(content)
    with pytest.raises(InputFileError) as info:
        read_records(path)
    assert str(info.value).startswith(message.format(p=path))


def test_read_records_accepts_bom_crlf_and_gzip_without_extension(tmp_path):
    path = tmp_path / "t.jsonl"
    path.write_bytes(gzip.compress(b'\xef\xbb\xbf{"a": 1}\r\n\r\n{"a": 2}\r\n'))
    assert read_records(path) == [(1, {"a": 1}), (3, {"a": 2})]


def test_field_messages():
    record = {"doc": True, "text": " ", "refs": ["x", 3]}
    with pytest.raises(InputFileError, match=r"^f, row 4: every line must have the field 'x'; got the fields"
                                             r" \['doc', 'refs', 'text'\]\.$"):
        label_field("f", 4, record, "x")
    with pytest.raises(InputFileError, match=r"^f, row 4, column 'doc': a label must be a non-empty string or an"
                                             r" integer; got True\.$"):
        label_field("f", 4, record, "doc")
    with pytest.raises(InputFileError, match=r"^f, row 4, column 'text': a text must be a non-empty string;"
                                             r" got ' '\.$"):
        text_field("f", 4, record, "text")
    with pytest.raises(InputFileError, match=r"^f, row 4, column 'refs': a list of texts must be a non-empty array"
                                             r" of non-empty strings; got \['x', 3\]\.$"):
        texts_field("f", 4, record, "refs")


def test_load_texts_rejects_a_repeated_cell(tmp_path):
    (tmp_path / "summeval").mkdir()
    path = tmp_path / "summeval" / "texts.jsonl"
    line = '{"doc_id": "d1", "system_id": "M0", "summary": "x", "references": ["r"]}\n'
    path.write_text(line * 2)
    with pytest.raises(InputFileError) as info:
        load_texts("summeval", directory=tmp_path)
    assert str(info.value) == f"{path}, row 2: (system_id, doc_id) must be unique; got ('M0', 'd1') again."
