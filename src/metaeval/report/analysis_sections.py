"""Report sections of the literature's analyses (issue 4): how each is run and how it is shown."""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class AnalysisSpec:
    """How the report runs one analysis and turns its result into a section."""

    title: str
    api: str
    run: Callable[..., Any]
    section: Callable[..., Any]
    headline: Callable[[Any], str]


ANALYSES: dict[str, AnalysisSpec] = {}


def run_analysis(name: str, ds, human: str, focus_metrics, settings: dict[str, Any]) -> Any:
    """The result of analysis ``name``, or a string saying why it could not run."""
    spec = ANALYSES[name]
    return spec.run(ds, human, tuple(focus_metrics), settings)
