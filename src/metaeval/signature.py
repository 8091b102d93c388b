"""Reproducibility signatures (in the manner of sacrebleu's): every result records its settings.

A :class:`Signature` is built from explicit ``(key, value)`` fields, in a fixed order, with the metaeval
version last. Its string form ``key:value|key:value|...|version:X`` is for humans and logs; the
structured fields live beside it and the string is never parsed back.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ._version import __version__


def _format(value: Any) -> str:
    if value is None:
        return "none"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:g}"
    if isinstance(value, (list, tuple)):
        return ",".join(_format(v) for v in value)
    return str(value)


@dataclass(frozen=True)
class Signature:
    """Settings that reproduce a result: ordered ``fields`` plus the metaeval ``version``."""

    fields: tuple[tuple[str, Any], ...]
    version: str = __version__

    @classmethod
    def of(cls, **fields: Any) -> "Signature":
        """Build a signature from keyword fields, in the order given; ``None`` fields are kept as 'none'.

        Every field is given by the caller (a setting of the whole call, such as a non-default tie tolerance,
        is passed along explicitly: :func:`metaeval._validation.tie_field`).
        """
        return cls(tuple(fields.items()))

    def with_fields(self, **fields: Any) -> "Signature":
        """A copy with ``fields`` added (or replaced in place)."""
        current = dict(self.fields)
        current.update(fields)
        return Signature(tuple(current.items()), self.version)

    def as_dict(self) -> dict[str, Any]:
        out = {k: v for k, v in self.fields}
        out["version"] = self.version
        return out

    def __str__(self) -> str:
        parts = [f"{k}:{_format(v)}" for k, v in self.fields]
        parts.append(f"version:{self.version}")
        return "|".join(parts)
