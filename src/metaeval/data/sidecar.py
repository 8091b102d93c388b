"""The file written beside a score file: ``<file>.signatures.json``.

It describes the score file it sits beside: ``scores_file`` (its name and SHA-256, so a sidecar left
from an earlier version of the file is recognised and ignored), ``humans`` (which scorers are human
judgments: a CSV, TSV or JSON Lines file marks humans only through annotators, so a human score without
annotators would otherwise come back as a metric), and, from `metaeval score`, each metric's signature.
:func:`~metaeval.data.writers.write_scores` writes it when the file cannot mark every human itself;
:func:`~metaeval.data.readers.read_scores` reads the humans back when ``humans=`` is not given.
"""
from __future__ import annotations

import hashlib
import json
import os
import warnings
from pathlib import Path
from typing import Any

from ..errors import DataWarning, InputFileError
from ..runtime.files import write_text_atomic
from .formats import JsonShapeError, check_regular_file, json_type, parse_json, read_text

SIDECAR_SUFFIX = ".signatures.json"


def sidecar_path(path: str | Path) -> Path:
    """``<path>.signatures.json``."""
    path = Path(path)
    return path.with_name(path.name + SIDECAR_SUFFIX)


def file_digest(path: str | Path, data: bytes | None = None) -> dict[str, str]:
    """``{"name": ..., "sha256": ...}`` of a written score file (of its content ``data`` when given: a file of
    a command's output set is not on disk until the set is committed)."""
    path = Path(path)
    return {"name": path.name, "sha256": hashlib.sha256(path.read_bytes() if data is None else data).hexdigest()}


def write_sidecar(path: str | Path, fields: dict[str, Any], *, data: bytes | None = None) -> Path:
    """Write (atomically) the sidecar of the score file ``path`` with ``fields``, keeping the other fields of
    a sidecar already there for this file name, and the file's digest (of ``data``, its new content, when
    given; else of the file on disk)."""
    side = sidecar_path(path)
    kept = _load(side) or {}
    data = {**kept, **fields, "scores_file": file_digest(path, data)}
    return write_text_atomic(side, json.dumps(data, indent=2) + "\n")


def recorded_humans(path: str | Path) -> tuple[str, ...] | None:
    """The human scorers recorded beside ``path`` (None without a sidecar, or one that records no humans);
    a sidecar whose digest is not the file's is ignored with a :class:`DataWarning`.

    Raises
    ------
    InputFileError
        If the sidecar is not a regular file (a FIFO would block the read, a device never end it), is not one
        JSON object (malformed, nested too deep, a key repeated), or holds a ``scores_file`` that is not an
        object or ``humans`` that are not a list of names.
    """
    side = sidecar_path(path)
    data = read_sidecar(side)
    if not data or "humans" not in data:
        return None
    described = data.get("scores_file", {})
    if not isinstance(described, dict):
        raise _invalid(side, f"its 'scores_file' must be an object with 'name' and 'sha256'; got {json_type(described)}")
    humans = data["humans"]
    if not isinstance(humans, list) or not all(isinstance(h, str) for h in humans):
        raise _invalid(side, f"its 'humans' must be a list of scorer names; got {json_type(humans)}")
    if described.get("sha256") != file_digest(path)["sha256"]:
        warnings.warn(f"{side}: ignored: it describes another version of {Path(path).name} (the file changed"
                      " after it was written); its human scorers are not applied.", DataWarning, stacklevel=3)
        return None
    return tuple(humans)


def read_sidecar(side: Path) -> dict[str, Any] | None:
    """The JSON object of the sidecar ``side`` (None when there is none), read with the checks of
    :func:`recorded_humans`: only a regular file is opened, and it must hold one strict JSON object."""
    if not os.path.lexists(side):
        return None
    try:
        check_regular_file(side)
        text = read_text(side)
    except InputFileError as exc:
        raise _invalid(side, exc.detail.rstrip(".")) from None
    try:
        data = parse_json(text)
    except json.JSONDecodeError as exc:
        raise _invalid(side, f"it must be one JSON object; got malformed JSON: {exc.msg} at line {exc.lineno},"
                             f" column {exc.colno}") from None
    except JsonShapeError as exc:
        raise _invalid(side, str(exc)) from None
    if not isinstance(data, dict):
        raise _invalid(side, f"it must be one JSON object; got {json_type(data)}")
    return data


def _invalid(side: Path, reason: str) -> InputFileError:
    return InputFileError(side, f"the sidecar of {side.name[:-len(SIDECAR_SUFFIX)]}: {reason} (repair it, or delete"
                                " it to read the file without it).")


def _load(side: Path) -> dict[str, Any] | None:
    """The fields of a sidecar about to be replaced: an unreadable, invalid or non-regular one keeps none."""
    try:
        return read_sidecar(side)
    except InputFileError:
        return None
