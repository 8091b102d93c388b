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
import warnings
from pathlib import Path
from typing import Any

from ..errors import DataWarning
from ..runtime.files import write_text_atomic

SIDECAR_SUFFIX = ".signatures.json"


def sidecar_path(path: str | Path) -> Path:
    """``<path>.signatures.json``."""
    path = Path(path)
    return path.with_name(path.name + SIDECAR_SUFFIX)


def file_digest(path: str | Path) -> dict[str, str]:
    """``{"name": ..., "sha256": ...}`` of a written score file."""
    path = Path(path)
    return {"name": path.name, "sha256": hashlib.sha256(path.read_bytes()).hexdigest()}


def write_sidecar(path: str | Path, fields: dict[str, Any]) -> Path:
    """Write (atomically) the sidecar of the score file ``path`` with ``fields``, keeping the other fields of
    a sidecar already there for this file name, and the file's current digest."""
    side = sidecar_path(path)
    kept = _load(side) or {}
    data = {**kept, **fields, "scores_file": file_digest(path)}
    return write_text_atomic(side, json.dumps(data, indent=2) + "\n")


def recorded_humans(path: str | Path) -> tuple[str, ...] | None:
    """The human scorers recorded beside ``path`` (None without a sidecar, or one that records no humans);
    a sidecar whose digest is not the file's is ignored with a :class:`DataWarning`."""
    side = sidecar_path(path)
    data = _load(side)
    if not data or "humans" not in data:
        return None
    if data.get("scores_file", {}).get("sha256") != file_digest(path)["sha256"]:
        warnings.warn(f"{side}: ignored: it describes another version of {Path(path).name} (the file changed"
                      " after it was written); its human scorers are not applied.", DataWarning, stacklevel=3)
        return None
    humans = data["humans"]
    if not isinstance(humans, list) or not all(isinstance(h, str) for h in humans):
        return None
    return tuple(humans)


def _load(side: Path) -> dict[str, Any] | None:
    try:
        data = json.loads(side.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None
