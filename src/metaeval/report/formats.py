"""Machine-readable renderings of results: JSON and CSV text."""
from __future__ import annotations

import json
from typing import Any

FORMATS = ("table", "json", "csv")


def to_json(payload: Any) -> str:
    """JSON text of a result (``to_dict()``) or of a list / dict of them."""
    return json.dumps(_dictify(payload), indent=2, allow_nan=False) + "\n"


def to_csv(frame) -> str:
    """CSV text of a pandas DataFrame (no index)."""
    return frame.to_csv(index=False, lineterminator="\n")


def _dictify(payload: Any) -> Any:
    if hasattr(payload, "to_dict") and not isinstance(payload, dict):
        return payload.to_dict()
    if isinstance(payload, dict):
        return {k: _dictify(v) for k, v in payload.items()}
    if isinstance(payload, (list, tuple)):
        return [_dictify(v) for v in payload]
    return payload
