"""One serialisation for every result: ``to_dict`` and ``to_frame`` read the dataclass fields.

A result is a frozen dataclass that inherits :class:`ResultMixin`. ``to_dict`` gives plain JSON types
(NaN -> None, numpy scalars and arrays -> Python numbers and lists, a :class:`~metaeval.signature.Signature`
-> its string, nested results -> their dicts), field by field in declaration order, with two markers
set through ``dataclasses.field(metadata=...)``:

- :data:`EXCLUDED` leaves a field out (large resampled distributions, kept for plots);
- :data:`INTERVAL` writes a ``(low, high)`` pair as two keys ``<name>_low`` and ``<name>_high``
  (``ci`` -> ``ci_low``, ``ci_high``), None for both when there is no interval;
- :data:`RECORDS` writes a table (a pandas DataFrame) as a list of row dicts of plain values.

``to_frame`` is one row of ``to_dict`` for a scalar result; a result holding a table overrides
:meth:`ResultMixin.frame_rows` to return one dict per row.
"""
from __future__ import annotations

import dataclasses
import math
from typing import Any

__all__ = ["EXCLUDED", "INTERVAL", "RECORDS", "ResultMixin", "plain"]

EXCLUDED = {"serialize": "exclude"}
"""Field metadata: leave the field out of ``to_dict``."""

INTERVAL = {"serialize": "interval"}
"""Field metadata: write a ``(low, high)`` field as ``<name>_low`` and ``<name>_high``."""

RECORDS = {"serialize": "records"}
"""Field metadata: write a pandas DataFrame field as one dict of plain values per row."""


def plain(value: Any) -> Any:
    """JSON-ready version of ``value`` (NaN and +-inf -> None, as JSON has no such numbers; numpy -> Python,
    results -> dicts)."""
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, ResultMixin):
        return value.to_dict()
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, int):
        return value
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, (tuple, list)):
        return [plain(v) for v in value]
    module = type(value).__module__
    if module == "numpy":
        import numpy as np

        if isinstance(value, np.ndarray):
            return plain(value.tolist())
        if isinstance(value, np.bool_):
            return bool(value)
        if isinstance(value, np.integer):
            return int(value)
        if isinstance(value, np.floating):
            return plain(float(value))
    if type(value).__name__ == "Signature":
        return str(value)
    return value


class ResultMixin:
    """``to_dict`` / ``to_frame`` from the fields of a (frozen) dataclass result."""

    def to_dict(self) -> dict[str, Any]:
        """Every field as plain JSON types (see the module docstring for the markers)."""
        out: dict[str, Any] = {}
        for f in dataclasses.fields(self):  # type: ignore[arg-type]
            kind = f.metadata.get("serialize")
            if kind == "exclude":
                continue
            value = getattr(self, f.name)
            if kind == "interval":
                low, high = (None, None) if value is None else value
                out[f"{f.name}_low"] = plain(low)
                out[f"{f.name}_high"] = plain(high)
            elif kind == "records":
                out[f.name] = [{str(k): plain(v) for k, v in row.items()} for row in value.to_dict("records")]
            else:
                out[f.name] = plain(value)
        return out

    def frame_rows(self) -> list[dict[str, Any]]:
        """The rows of :meth:`to_frame`; one row, ``to_dict()``, unless a result overrides it."""
        return [self.to_dict()]

    def to_frame(self):
        """A pandas DataFrame of :meth:`frame_rows`; ``frame.attrs['n_resamples']`` is the result's number of
        resampling draws when it has one (the resolution its p-values are printed at)."""
        import pandas as pd

        frame = pd.DataFrame(self.frame_rows())
        k = getattr(self, "n_resamples", None)
        if isinstance(k, int) and not isinstance(k, bool) and k > 0:
            frame.attrs["n_resamples"] = k
        return frame
