"""Reproducibility signatures (in the manner of sacrebleu's): every result records its settings.

A :class:`Signature` is built from explicit ``(key, value)`` fields, in a fixed order, with the metaeval
version last. Its string form ``key:value|key:value|...|version:X`` is for humans and logs; the
structured fields live beside it and the string is never parsed back.
"""
from __future__ import annotations

import contextlib
import contextvars
from dataclasses import dataclass
from typing import Any, Iterator

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


_EXTRA: contextvars.ContextVar[tuple[tuple[str, Any], ...]] = contextvars.ContextVar("metaeval_signature_extra",
                                                                                 default=())


@contextlib.contextmanager
def recorded(**fields: Any) -> Iterator[None]:
    """Every :meth:`Signature.of` inside the block also records ``fields`` (after its own fields).

    For settings that apply to a whole call rather than to one statistic, such as the tie tolerance
    (:func:`metaeval._validation.with_tie_tolerance`): the results of the call and every result nested in
    them carry it.
    """
    merged = dict(_EXTRA.get())
    merged.update(fields)
    token = _EXTRA.set(tuple(merged.items()))
    try:
        yield
    finally:
        _EXTRA.reset(token)


@dataclass(frozen=True)
class Signature:
    """Settings that reproduce a result: ordered ``fields`` plus the metaeval ``version``."""

    fields: tuple[tuple[str, Any], ...]
    version: str = __version__

    @classmethod
    def of(cls, **fields: Any) -> "Signature":
        """Build a signature from keyword fields, in the order given; ``None`` fields are kept as 'none'.

        Fields recorded for the enclosing call (:func:`recorded`) follow, unless given here.
        """
        extra = tuple((k, v) for k, v in _EXTRA.get() if k not in fields)
        return cls(tuple(fields.items()) + extra)

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
