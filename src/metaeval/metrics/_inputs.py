"""Input checks and text conventions shared by the scorers of :data:`metaeval.metrics.METRICS`.

A candidate or a reference is a text (one sentence per line) or a list of sentences; ``references`` is a
non-empty list of those. Metrics other than ROUGE see one segment per text: its lines (or sentences)
joined with one space, so ``"a\\nb"`` and ``["a", "b"]`` are the same input.
"""
from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import Any

from ..errors import DegenerateWarning, ParameterError

__all__ = ["as_segment", "check_bool", "check_pair", "warn_degenerate"]


def _lines(name: str, value: Any) -> list[str]:
    if isinstance(value, str):
        return value.splitlines()
    if isinstance(value, Sequence) and not isinstance(value, (bytes, bytearray)) and all(
        isinstance(s, str) for s in value
    ):
        return [line for s in value for line in s.splitlines()]
    raise ParameterError(f"`{name}` must be a text or a list of sentences (str); got {value!r}.")


def as_segment(name: str, value: Any) -> str:
    """One segment: the lines of ``value`` joined with a space (a one-line text is returned unchanged)."""
    if isinstance(value, str) and "\n" not in value and "\r" not in value:
        return value
    return " ".join(_lines(name, value))


def check_pair(candidate: Any, references: Any) -> tuple[str, list[str]]:
    """Validate ``(candidate, references)`` and return them as segments."""
    if isinstance(references, (str, bytes)) or not isinstance(references, Sequence) or len(references) == 0:
        raise ParameterError(
            "`references` must be a non-empty list of references (each a text or a list of sentences); "
            f"got {references!r}."
        )
    return as_segment("candidate", candidate), [as_segment("references", r) for r in references]


def check_bool(name: str, value: Any) -> bool:
    if not isinstance(value, bool):
        raise ParameterError(f"`{name}` must be True or False; got {value!r}.")
    return value


def warn_degenerate(message: str) -> None:
    """Emit a :class:`DegenerateWarning` pointing at the caller of the public scorer method."""
    warnings.warn(message, DegenerateWarning, stacklevel=4)
