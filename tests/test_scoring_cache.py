"""The SQLite score cache: exact round trips, content keys, transactions, foreign files."""
from __future__ import annotations

import math
import sqlite3

import pytest

from metaeval.errors import InputFileError
from metaeval.scoring.cache import ScoreCache, pair_key, row_checksum, text_digest

SIG = "metric:rouge-1.5.5|flags:-n 2 -f A -p 0.5 -t 0|rounding:none|scale:0-1|version:0.1.0"


# -- validation: every message pinned -------------------------------------------------------------

def test_foreign_files_are_refused(tmp_path):
    text = tmp_path / "notes.txt"
    text.write_text("hello, this is not a database at all, but it is long enough to have a header" * 3)
    with pytest.raises(InputFileError) as caught:
        ScoreCache(text)
    assert str(caught.value) == (f"{text}: must be a metaeval score cache (an SQLite database); got file is not a"
                                 " database.")
    other = tmp_path / "other.db"
    with sqlite3.connect(other) as db:
        db.execute("CREATE TABLE t (x)")
    with pytest.raises(InputFileError) as caught:
        ScoreCache(other)
    assert str(caught.value) == f"{other}: must be a metaeval score cache; got another SQLite database."
    with pytest.raises(InputFileError) as caught:
        ScoreCache(tmp_path)
    assert str(caught.value) == f"{tmp_path}: must be a file for the score cache; got a directory."
    old = tmp_path / "old.sqlite"
    ScoreCache(old).close()
    with sqlite3.connect(old) as db:
        db.execute("PRAGMA user_version = 99")
    with pytest.raises(InputFileError) as caught:
        ScoreCache(old)
    assert str(caught.value) == (f"{old}: must be a score cache of layout 2; got layout 99 (written by another"
                                 " metaeval version; use a new file).")


# -- behaviour --------------------------------------------------------------------------------------

def test_round_trip_is_bitwise_and_keys_are_content(tmp_path):
    values = {"a": 0.1 + 0.2, "b": 1 / 3, "c": math.nan, "d": 5e-324, "e": 0.0}
    k1 = pair_key("the cat", ["a cat", "the cat ."])
    with ScoreCache(tmp_path / "c.sqlite") as cache:
        assert cache.put(SIG, [(k1, values)]) == 1
    with ScoreCache(tmp_path / "c.sqlite") as cache:
        got = cache.get(SIG, [k1, pair_key("the cat", ["the cat .", "a cat"])])
        assert list(got) == [k1]  # reference order is part of the key
        for name, value in values.items():
            assert got[k1][name] == value or (math.isnan(value) and math.isnan(got[k1][name]))
        assert cache.get(SIG.replace("0.1.0", "0.2.0"), [k1]) == {}  # another version: another metric
        assert cache.count() == cache.count(SIG) == 1 and cache.signatures() == [SIG]
    assert text_digest("a\nb") != text_digest(["a", "b"])  # a text and a list of sentences differ
    assert len(k1[0]) == len(k1[1]) == 32


def test_a_failed_transaction_stores_nothing(tmp_path):
    keys = [pair_key(f"c{i}", ["r"]) for i in range(3)]
    with ScoreCache(tmp_path / "c.sqlite") as cache:
        with pytest.raises(TypeError):  # the second row has no bytes key: the first is rolled back
            cache.put(SIG, [(keys[0], {"x": 1.0}), ((object(), b""), {"x": 2.0})])
        assert cache.count() == 0
        cache.put(SIG, [(keys[2], {"x": 3.0})])
        assert cache.get(SIG, keys) == {keys[2]: {"x": 3.0}}


def test_two_connections_share_the_file(tmp_path):
    path = tmp_path / "c.sqlite"
    keys = [pair_key(f"c{i}", ["r"]) for i in range(1000)]
    with ScoreCache(path) as first, ScoreCache(path) as second:
        first.put(SIG, [(k, {"x": float(i)}) for i, k in enumerate(keys[:600])])
        second.put(SIG, [(k, {"x": float(i)}) for i, k in enumerate(keys) if i >= 400])
        got = first.get(SIG, keys)
        assert len(got) == 1000 and got[keys[999]] == {"x": 999.0}
    with sqlite3.connect(path) as db:
        assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"


# -- integrity (issue 22 items 4 and 5) -----------------------------------------------------------------

def _flip_in_file(path, old: bytes, new: bytes) -> None:
    """Replace the one occurrence of ``old`` in the file by ``new`` (same length): a byte changed on disk."""
    data = path.read_bytes()
    assert data.count(old) == 1 and len(old) == len(new)
    path.write_bytes(data.replace(old, new))


def test_a_flipped_byte_drops_the_row_and_counts_it(tmp_path):
    path = tmp_path / "c.sqlite"
    keys = [pair_key(f"c{i}", ["r"]) for i in range(50)]
    with ScoreCache(path) as cache:
        cache.put(SIG, [(k, {"bleu": 8.4825 + i}) for i, k in enumerate(keys)])
    _flip_in_file(path, b'{"bleu":8.4825}', b'{"bleu":9.4825}')  # still valid JSON: silently wrong without a checksum
    with ScoreCache(path) as cache:
        got = cache.get(SIG, keys)
        assert keys[0] not in got and len(got) == 49 and got[keys[1]] == {"bleu": 9.4825}
        assert cache.rejected == 1 and cache.count() == 49  # the damaged row is deleted
        cache.put(SIG, [(keys[0], {"bleu": 8.4825})])
        assert cache.get(SIG, keys[:1]) == {keys[0]: {"bleu": 8.4825}} and cache.rejected == 1


def test_a_damaged_checksum_drops_the_row(tmp_path):
    path = tmp_path / "c.sqlite"
    key = pair_key("c", ["r"])
    with ScoreCache(path) as cache:
        cache.put(SIG, [(key, {"x": 1.0})])
    checksum = row_checksum(SIG, key[0], key[1], '{"x":1.0}')
    _flip_in_file(path, checksum, bytes([checksum[0] ^ 1]) + checksum[1:])
    with ScoreCache(path) as cache:
        assert cache.get(SIG, [key]) == {} and cache.rejected == 1


def test_a_damaged_page_is_a_one_line_error(tmp_path):
    """Regression (issue 22 item 4): a corrupted page raised sqlite3.DatabaseError (a traceback)."""
    path = tmp_path / "c.sqlite"
    keys = [pair_key(f"c{i}", ["r"]) for i in range(3000)]
    with ScoreCache(path) as cache:
        cache.put(SIG, [(k, {"x": float(i), "y": i / 7}) for i, k in enumerate(keys)])
    data = bytearray(path.read_bytes())
    page = len(data) // 4096 // 2
    data[page * 4096:(page + 1) * 4096] = b"\xff" * 4096
    path.write_bytes(bytes(data))
    with pytest.raises(InputFileError) as caught:
        with ScoreCache(path) as cache:
            cache.get(SIG, keys)
    assert str(caught.value) == (f"{path}: must be an intact score cache; got a damaged database (database disk image"
                                 " is malformed): delete the file to start a new cache (its scores are computed"
                                 " again).")
