"""What an analysis declares next to its computation, so that the command line and the report show it
without code of their own (the way a sacrebleu metric is one class).

An analysis module may hold two declarations, plain data read by the layers above:

- ``CLI``, a :class:`CommandSpec`: the options of ``metaeval <name>`` (each an :class:`Option`, or the name
  of an option every command shares, such as ``"coefficient"``), which inputs it takes (scores, corpus
  statistics, resamples, seed, tie tolerance, progress) and how a :class:`Call` becomes the result;
  :mod:`metaeval.cli.analysis_commands` builds the click command from it, and the result is printed in
  every output format (a table of its frame unless the CLI has a layout of its own for it);
- ``REPORT``, a :class:`SectionSpec`: how the report runs the analysis and introduces its section;
  :mod:`metaeval.report.analysis_sections` builds the page section (the result's frame as a table
  unless the report has figures of its own for it).

This module imports neither click nor anything of the CLI or the report: the library stays below them.
"""
from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

__all__ = ["Call", "CommandSpec", "INPUTS", "Option", "SectionSpec", "focus_corpus", "input_resamples"]

INPUTS = ("source", "corpus", "n_resamples", "seed", "tie_tolerance", "progress")
"""What a command can take besides its own options: the scores (``--dataset`` / ``--scores`` and the
reading options), corpus statistics (``--corpus-metric``), ``--n-resamples``, ``--seed``,
``--tie-tolerance``, ``--progress``."""


@dataclass(frozen=True)
class Option:
    """One option of an analysis's command.

    ``name`` is the parameter, and the flag with dashes (``min_pairs``: ``--min-pairs``); ``kind`` is
    ``str``, ``int``, ``float``, ``"flag"``, ``"integers"`` / ``"numbers"`` (comma-separated lists) or a
    tuple of choices; ``multiple``: repeatable (the value is a tuple). ``shared``: the option every command
    of that name shares (``--test``, ``--alpha``, ...), with what is given here changed for this command
    (the kind, a default that is not None, a help text); a plain string in
    :attr:`CommandSpec.options` is a shared option unchanged.
    """

    name: str
    kind: Any = str
    default: Any = None
    help: str = ""
    multiple: bool = False
    shared: bool = False


@dataclass(frozen=True)
class Call:
    """What the command line hands an analysis: the scores and their human scorer, the corpus statistics
    (or None), every option's value by name (``metric``, ``seed``, ``n_resamples`` among them) and
    ``progress(description, total)``, which returns a callback to call once per unit of work (or None).
    :attr:`metrics`: the ``--metric`` scorers, checked, by default every scorer that is not the human."""

    ds: Any
    human: str | None
    options: Mapping[str, Any]
    corpus: Mapping[str, Any] | None
    progress: Callable[[str, int | None], Callable[[], None] | None]
    choose: Callable[[], Any]

    @property
    def metrics(self) -> list[str]:
        return list(self.choose())


@dataclass(frozen=True)
class CommandSpec:
    """The command ``metaeval <name>`` of an analysis.

    ``run(call)`` returns the result; ``options`` are the command's own options in order (a string names
    a shared option of the command line unchanged, e.g. ``"confidence_level"``); ``inputs`` the :data:`INPUTS` it takes; ``help`` the text after the summary;
    ``frame(result, options)`` the table printed (default: ``result.to_frame()``), under ``title(result)``
    with ``notes(result)``; ``human_optional(options)``: the scores need no human scorer.
    """

    run: Callable[[Call], Any]
    options: tuple[Option | str, ...] = ()
    inputs: tuple[str, ...] = ("source", "n_resamples", "seed")
    help: str = ""
    frame: Callable[[Any, Mapping[str, Any]], Any] | None = None
    title: Callable[[Any], str] | None = None
    notes: Callable[[Any], list[str]] | None = None
    human_optional: Callable[[Mapping[str, Any]], bool] | None = None


@dataclass(frozen=True)
class SectionSpec:
    """The report's section of an analysis.

    ``run(ds, human, focus, settings, corpus)`` computes it on the report's focus metrics with the
    report's ``settings`` (``seed``, ``n_resamples``, ``repetitions``, ``coefficient``, ``tie_tolerance``) and corpus
    statistics; ``min_inputs`` / ``needs``: the analysis is left out, with this reason, on fewer inputs;
    ``question`` and ``paragraphs(result)`` introduce the section; ``headline(result)`` is its line of
    the terminal summary (default: the title).
    """

    title: str
    run: Callable[..., Any]
    min_inputs: int = 1
    needs: str = ""
    question: str = ""
    paragraphs: Callable[[Any], tuple[str, ...]] | None = None
    headline: Callable[[Any], str] | None = None
    columns: tuple[str, ...] | None = None


def input_resamples(ds: Any, settings: Mapping[str, Any]) -> int:
    """The report's BOOT-INPUTS resamples: none with a single input (every resample would be the data)."""
    return settings["n_resamples"] if ds.shape[1] > 1 else 0


def focus_corpus(corpus: Mapping[str, Any] | None, focus: tuple[str, ...]) -> dict[str, Any]:
    """``corpus_statistics=`` of an analysis of the ``focus`` metrics, only when one is a corpus metric."""
    chosen = {m: c for m, c in (corpus or {}).items() if m in focus}
    return {"corpus_statistics": chosen} if chosen else {}
