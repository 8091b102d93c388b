"""A content-addressed, crash-safe score cache: one SQLite file in WAL mode.

An entry maps ``(metric signature, sha256 of the candidate, sha256 of the references)`` to the
metric's flattened scores of that pair. The key is the content, not a row number or a file name, so
the same pair scored by the same metric in another corpus, another run or another process is found
again; any change of the text, of a reference, of their order, of a metric option or of the metaeval
version (it is part of every signature) gives a new key.

Crash safety comes from SQLite: every :meth:`ScoreCache.put` is one transaction (``BEGIN IMMEDIATE``
... ``COMMIT``) in write-ahead-log mode with ``synchronous=FULL``, so a process killed at any point
(SIGKILL, power loss) leaves every committed batch intact and no partial batch; the next open rolls the
log forward. Several processes may share one file (readers never block; writers wait up to
:data:`BUSY_TIMEOUT` seconds for each other).

Integrity: every row carries a checksum (BLAKE2b, 16 bytes) of its metric signature, key and scores
text, verified on every read. A row whose checksum does not match (a flipped byte on disk, an edit by
another program) is deleted and reported as missing, so its pair is scored again; :attr:`ScoreCache.rejected`
counts such rows and the scoring engine warns once per run. A database that SQLite itself reports as
damaged ("database disk image is malformed") raises a one-line :class:`~metaeval.errors.InputFileError`
naming the file: delete it to start a new cache.
"""
from __future__ import annotations

import hashlib
import json
import sqlite3
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from ..errors import InputFileError

__all__ = ["ScoreCache", "pair_key", "row_checksum", "text_digest"]

#: ``PRAGMA application_id`` of a metaeval cache ("meva").
APPLICATION_ID = 0x6D657661
#: ``PRAGMA user_version``: the layout of the tables below (2: each row has a checksum).
SCHEMA_VERSION = 2
#: Seconds a writer waits for another process's transaction before giving up.
BUSY_TIMEOUT = 60.0
_LOOKUP_CHUNK = 400  # candidate digests per SELECT (SQLite allows 32766 parameters)

_SCHEMA = """
CREATE TABLE IF NOT EXISTS metrics (
    id INTEGER PRIMARY KEY,
    signature TEXT NOT NULL UNIQUE
);
CREATE TABLE IF NOT EXISTS scores (
    metric INTEGER NOT NULL REFERENCES metrics(id),
    candidate BLOB NOT NULL,
    refs BLOB NOT NULL,
    scores TEXT NOT NULL,
    checksum BLOB NOT NULL,
    PRIMARY KEY (metric, candidate, refs)
) WITHOUT ROWID;
"""

Key = tuple[bytes, bytes]


def row_checksum(signature: str, candidate: bytes, refs: bytes, scores: str) -> bytes:
    """The checksum stored with a row: BLAKE2b-128 of the signature, the key and the scores text."""
    digest = hashlib.blake2b(digest_size=16)
    for part in (signature.encode("utf-8"), bytes(candidate), bytes(refs), scores.encode("utf-8")):
        digest.update(len(part).to_bytes(8, "little"))
        digest.update(part)
    return digest.digest()


def _damaged(path: Path, error: sqlite3.Error) -> InputFileError:
    """The one-line error of an SQLite failure while using the cache."""
    text = str(error)
    if isinstance(error, sqlite3.OperationalError) and "locked" in text:
        return InputFileError(path, f"must be a score cache that no other process holds locked for more than"
                                    f" {BUSY_TIMEOUT:g} s; got {text!r}.")
    if isinstance(error, sqlite3.DatabaseError) and not isinstance(error, sqlite3.OperationalError) or "malformed" in text:
        return InputFileError(path, f"must be an intact score cache; got a damaged database ({text}): delete the"
                                    " file to start a new cache (its scores are computed again).")
    return InputFileError(path, f"must be a usable score cache; got {type(error).__name__}: {text}.")


def text_digest(value: Any) -> bytes:
    """sha256 of a text or a list of texts, in canonical JSON (so ``"a\\nb"`` and ``["a", "b"]`` differ)."""
    encoded = json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    return hashlib.sha256(encoded).digest()


def pair_key(candidate: Any, references: Sequence[Any]) -> Key:
    """The content key of one (candidate, references) pair: two sha256 digests."""
    return text_digest(candidate), text_digest(list(references))


def _verified(signature: str, key: Key, scores: Any, checksum: Any) -> dict[str, float] | None:
    """The scores of a row whose checksum matches, else None."""
    if not isinstance(scores, str) or not isinstance(checksum, bytes):
        return None
    if row_checksum(signature, key[0], key[1], scores) != checksum:
        return None
    try:
        values = json.loads(scores)
    except ValueError:
        return None
    return values if isinstance(values, dict) else None


class ScoreCache:
    """Scores on disk, keyed by (metric signature, candidate digest, references digest).

    Parameters
    ----------
    path : str or path-like
        The SQLite file; created (with its directory) when absent.

    Raises
    ------
    InputFileError
        If ``path`` exists but is not a metaeval score cache (or not a database at all).

    Notes
    -----
    Scores are stored as JSON with Python's shortest round-trip float repr (NaN as ``NaN``), so a value
    read back is bitwise the value written. Use as a context manager or call :meth:`close`.
    """

    def __init__(self, path: str | Path):
        self.path = Path(path)
        if self.path.is_dir():
            raise InputFileError(self.path, "must be a file for the score cache; got a directory.")
        self.path.parent.mkdir(parents=True, exist_ok=True)
        try:
            self._db = sqlite3.connect(str(self.path), timeout=BUSY_TIMEOUT, isolation_level=None)
        except sqlite3.Error as error:
            raise InputFileError(self.path, f"must be a writable score cache; got {error}.") from None
        try:
            self._open()
        except sqlite3.DatabaseError as error:
            self._db.close()
            if "malformed" in str(error):
                raise _damaged(self.path, error) from None
            raise InputFileError(self.path, f"must be a metaeval score cache (an SQLite database); got {error}.") from None
        except BaseException:
            self._db.close()
            raise
        self._metric_ids: dict[str, int] = {}
        #: Rows dropped since this cache was opened because their checksum did not match.
        self.rejected = 0

    def _open(self) -> None:
        db = self._db
        db.execute("PRAGMA busy_timeout = %d" % int(BUSY_TIMEOUT * 1000))
        app = db.execute("PRAGMA application_id").fetchone()[0]
        tables = db.execute("SELECT count(*) FROM sqlite_master").fetchone()[0]
        if tables and app != APPLICATION_ID:
            raise InputFileError(self.path, "must be a metaeval score cache; got another SQLite database.")
        if app == APPLICATION_ID:
            version = db.execute("PRAGMA user_version").fetchone()[0]
            if version != SCHEMA_VERSION:
                raise InputFileError(self.path, f"must be a score cache of layout {SCHEMA_VERSION}; got layout"
                                     f" {version} (written by another metaeval version; use a new file).")
        db.execute("PRAGMA journal_mode = WAL")
        db.execute("PRAGMA synchronous = FULL")
        if app != APPLICATION_ID:
            db.execute("BEGIN IMMEDIATE")
            try:
                for statement in _SCHEMA.split(";"):
                    if statement.strip():
                        db.execute(statement)
                db.execute(f"PRAGMA application_id = {APPLICATION_ID}")
                db.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
                db.execute("COMMIT")
            except BaseException:
                db.execute("ROLLBACK")
                raise

    # -- context manager --------------------------------------------------------------------------
    def __enter__(self) -> "ScoreCache":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def close(self) -> None:
        """Close the connection (committed entries are already on disk)."""
        self._db.close()

    def __repr__(self) -> str:
        return f"ScoreCache({str(self.path)!r})"

    # -- entries ----------------------------------------------------------------------------------
    def _metric_id(self, signature: str, *, create: bool) -> int | None:
        cached = self._metric_ids.get(signature)
        if cached is not None:
            return cached
        row = self._db.execute("SELECT id FROM metrics WHERE signature = ?", (signature,)).fetchone()
        if row is None and create:
            self._db.execute("INSERT OR IGNORE INTO metrics (signature) VALUES (?)", (signature,))
            row = self._db.execute("SELECT id FROM metrics WHERE signature = ?", (signature,)).fetchone()
        if row is None:
            return None
        self._metric_ids[signature] = row[0]
        return row[0]

    def get(self, signature: str, keys: Iterable[Key]) -> dict[Key, dict[str, float]]:
        """The cached scores of those ``keys`` that are present (absent keys are left out).

        Parameters
        ----------
        signature : str
            ``str(scorer.signature)``.
        keys : iterable of (bytes, bytes)
            From :func:`pair_key`.
        """
        wanted = set(keys)
        try:
            return self._get(signature, wanted)
        except sqlite3.Error as error:
            raise _damaged(self.path, error) from None

    def _get(self, signature: str, wanted: set[Key]) -> dict[Key, dict[str, float]]:
        metric = self._metric_id(signature, create=False)
        if metric is None or not wanted:
            return {}
        candidates = sorted({c for c, _ in wanted})
        found: dict[Key, dict[str, float]] = {}
        bad: list[tuple[Any, Any]] = []
        for start in range(0, len(candidates), _LOOKUP_CHUNK):
            chunk = candidates[start:start + _LOOKUP_CHUNK]
            marks = ",".join("?" * len(chunk))
            rows = self._db.execute(
                f"SELECT candidate, refs, scores, checksum FROM scores WHERE metric = ? AND candidate IN ({marks})",
                (metric, *chunk),
            )
            for candidate, refs, scores, checksum in rows:
                key = (bytes(candidate), bytes(refs))
                if key not in wanted:
                    continue
                values = _verified(signature, key, scores, checksum)
                if values is None:
                    bad.append((candidate, refs))
                else:
                    found[key] = values
        if bad:
            self._drop(metric, bad)
        return found

    def _drop(self, metric: int, rows: list[tuple[Any, Any]]) -> None:
        """Delete rows that failed verification (their pairs are then scored again and stored anew)."""
        db = self._db
        db.execute("BEGIN IMMEDIATE")
        try:
            db.executemany("DELETE FROM scores WHERE metric = ? AND candidate = ? AND refs = ?",
                           [(metric, c, r) for c, r in rows])
            db.execute("COMMIT")
        except BaseException:
            if db.in_transaction:
                db.execute("ROLLBACK")
            raise
        self.rejected += len(rows)

    def put(self, signature: str, entries: Iterable[tuple[Key, Mapping[str, float]]]) -> int:
        """Store ``entries`` in one transaction; return how many were given.

        Existing keys are overwritten (a key's scores are a function of the key, so the value is the
        same). Either every entry of the call is stored or, if the process dies first, none is.
        """
        rows = [(c, r, json.dumps(dict(values), allow_nan=True, separators=(",", ":"))) for (c, r), values in entries]
        try:
            self._put(signature, rows)
        except sqlite3.Error as error:
            raise _damaged(self.path, error) from None
        return len(rows)

    def _put(self, signature: str, rows: list[tuple[bytes, bytes, str]]) -> None:
        db = self._db
        db.execute("BEGIN IMMEDIATE")
        try:
            metric = self._metric_id(signature, create=True)
            db.executemany(
                "INSERT OR REPLACE INTO scores (metric, candidate, refs, scores, checksum) VALUES (?, ?, ?, ?, ?)",
                [(metric, c, r, s, row_checksum(signature, c, r, s)) for c, r, s in rows],
            )
            db.execute("COMMIT")
        except BaseException:
            if db.in_transaction:
                db.execute("ROLLBACK")
            self._metric_ids.pop(signature, None)
            raise

    def count(self, signature: str | None = None) -> int:
        """Number of entries (of one metric signature, or of all)."""
        try:
            if signature is None:
                return self._db.execute("SELECT count(*) FROM scores").fetchone()[0]
            metric = self._metric_id(signature, create=False)
            if metric is None:
                return 0
            return self._db.execute("SELECT count(*) FROM scores WHERE metric = ?", (metric,)).fetchone()[0]
        except sqlite3.Error as error:
            raise _damaged(self.path, error) from None

    def signatures(self) -> list[str]:
        """The metric signatures that have entries, in order of first use."""
        try:
            return [row[0] for row in self._db.execute("SELECT signature FROM metrics ORDER BY id")]
        except sqlite3.Error as error:
            raise _damaged(self.path, error) from None
