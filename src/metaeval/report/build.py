"""The meta-evaluation report of one dataset: what it computes, and where it writes it.

:func:`build_report` computes every number of the report (correlation table, significance matrix,
the analyses) into a :class:`Report`; :func:`write_report` writes the self-contained HTML page and the
machine-readable files (results.json, correlations.csv, comparison.csv) beside it.
"""
from __future__ import annotations

import time
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from .. import _validation as iv
from .. import defaults
from .._version import __version__
from ..correlation.matrix import compare_metrics
from ..correlation.results import MetricComparisonResult
from ..correlation.table import CorrelationTable, correlation_table
from ..data.scoreset import ScoreSet
from ..errors import MetaevalWarning, ParameterError, check_choice, check_int
from ..runtime.file_sets import write_file_set
from ..runtime.progress import as_progress, finish as progress_finish, step as progress_step
from ..stats.correlations.levels import system_means
from ..vocabulary import check_correction, check_family
from .formats import to_csv, to_json

PRESETS: dict[str, dict[str, Any]] = {
    "quick": {"n_resamples": defaults.REPORT_QUICK_RESAMPLES,
              "repetitions": defaults.REPORT_QUICK_REPETITIONS},
    "default": {"n_resamples": defaults.N_RESAMPLES, "repetitions": defaults.REPORT_REPETITIONS},
    "full": {"n_resamples": defaults.REPORT_FULL_RESAMPLES, "repetitions": defaults.REPORT_FULL_REPETITIONS},
}
"""Resampling presets of ``metaeval report``: bootstrap / permutation resamples of the correlation
table and the significance matrix, and repetitions of the analyses' own simulations."""

HTML_NAME = "report.html"
#: The report's file set beside the page (default name :data:`HTML_NAME`): the one list that the writer, the
#: CLI's guard against overwriting an input and the stale-file cleanup use.
DATA_FILES = RESULTS_JSON, CORRELATIONS_CSV, COMPARISON_CSV = ("results.json", "correlations.csv", "comparison.csv")


@dataclass(frozen=True)
class Report:
    """Everything the report shows.

    Attributes
    ----------
    dataset : dict
        ``ScoreSet.describe()`` plus ``human``, ``metrics``, ``system_scores`` (each system's mean
        human score, rank and missing cells) and ``agreement`` (None when unavailable).
    table : CorrelationTable
        Correlations with intervals for every metric x level x coefficient.
    comparison : MetricComparisonResult or None
        The system-level significance matrix (None with fewer than 2 metrics).
    summary_comparison : MetricComparisonResult or None
        The summary-level significance matrix (None with fewer than 2 metrics, or without the summary level
        among the report's levels).
    mt_audit : MtAuditResult or None
        The audit of an MT protocol run (:func:`metaeval.mt_audit`), shown as a section of the page and in
        results.json under ``mt_audit``; None when the report has none.
    judges : JudgesPart or None
        The judges' section (:func:`metaeval.report.judges_section.judges_part`: a Bradley-Terry ranking and
        the judge audit of pairwise comparisons, and their agreement with humans when named), when the
        report was given comparisons.
    analyses : dict
        Analysis name -> its result object (see :data:`metaeval.report.analysis_sections.ANALYSES`).
    omitted : dict
        Section name -> why it is not in the report.
    settings : dict
        The settings of :func:`build_report` (preset, resamples, seed, focus metrics, ...).
    command : str
        The command (or Python call) that reproduces the report.
    warnings : tuple of str
        The metaeval warnings raised while computing it (also shown on the page and re-raised).
    timings : dict
        Seconds spent per step (not part of ``to_dict``: it differs between runs).
    spans : SpanEvaluationResult or None
        The error-span section (:func:`metaeval.spans.evaluate_spans`), when the report was given MQM ratings
        with spans (``metaeval report --spans-gold``); None otherwise.
    """

    dataset: dict[str, Any]
    table: CorrelationTable
    comparison: MetricComparisonResult | None
    analyses: dict[str, Any] = field(default_factory=dict)
    omitted: dict[str, str] = field(default_factory=dict)
    settings: dict[str, Any] = field(default_factory=dict)
    command: str = ""
    warnings: tuple[str, ...] = ()
    timings: dict[str, float] = field(default_factory=dict, compare=False)
    summary_comparison: MetricComparisonResult | None = None
    mt_audit: Any = None
    spans: Any = None
    judges: Any = None

    @property
    def human(self) -> str:
        return self.table.human

    def to_dict(self) -> dict[str, Any]:
        return {
            "dataset": self.dataset,
            "settings": self.settings,
            "correlations": self.table.to_dict(),
            "comparison": None if self.comparison is None else self.comparison.to_dict(),
            "summary_comparison": None if self.summary_comparison is None else self.summary_comparison.to_dict(),
            "analyses": {name: result.to_dict() for name, result in self.analyses.items()},
            **({} if self.judges is None else {"judges": self.judges.to_dict()}),
            "omitted": dict(self.omitted),
            "warnings": list(self.warnings),
            "command": self.command,
            **({"spans": self.spans.to_dict()} if self.spans is not None else {}),
            "version": __version__,
            **({"mt_audit": self.mt_audit.to_dict()} if self.mt_audit is not None else {}),
        }


def _system_scores(ds: ScoreSet, human: str) -> list[dict[str, Any]]:
    z = ds.matrix(human)
    missing = np.isnan(z).sum(axis=1)
    means = system_means(z, z)[1]  # the human system scores the system level correlates
    order = np.argsort(-np.where(np.isnan(means), -np.inf, means), kind="stable")
    rank = np.empty(len(means), dtype=int)
    rank[order] = np.arange(1, len(means) + 1)
    return [{"system": s, "human_mean": None if np.isnan(m) else float(m), "rank": int(r), "missing": int(k)}
            for s, m, r, k in zip(ds.systems, means, rank, missing)]


def _agreement(checked: iv.CheckedScores, human: str) -> dict[str, Any] | None:
    """Krippendorff's alpha of the human scorer's annotators (None with one annotator per cell)."""
    if checked.ds.n_annotators(human) < 2:
        return None
    try:
        from ..human.agreement import agreement
    except ImportError:  # the human-judgment tools are not part of this install
        return None
    result = agreement(checked, human, by="dataset")
    return dict(result.to_dict(), scorer=human)


def _table_ci(ds) -> str:
    """BOOT-BOTH, or BOOT-SYSTEMS when the data has one input (its inputs cannot be resampled)."""
    return "boot-both" if ds.shape[1] > 1 else "boot-systems"


def _build_report_iv(ds, human, metrics, levels, coefficients, coefficient, correction, family, alpha,
                     n_resamples, seed, preset, repetitions, focus_metrics, analyses):
    from .analysis_sections import ANALYSES

    checked = iv.check_scores(ds, human, metrics)  # the one check of human and metrics: the layers below trust it
    ds, metrics = checked.ds, checked.metrics
    if levels is None:
        levels = iv.default_levels(ds)
    levels = tuple(iv.check_level(level) for level in levels)
    coefficients = tuple(iv.check_coefficient(c) for c in coefficients)
    coefficient = iv.check_coefficient(coefficient)
    correction = check_correction(correction)
    family = check_family(family)
    alpha = iv.check_alpha(alpha)
    preset = check_choice("preset", preset, tuple(PRESETS))
    n_resamples = iv.check_n_resamples(PRESETS[preset]["n_resamples"] if n_resamples is None else n_resamples)
    repetitions = check_int("repetitions", PRESETS[preset]["repetitions"] if repetitions is None else repetitions,
                            minimum=2)
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ParameterError(f"`seed` must be a non-negative integer; got {seed!r}.")
    if focus_metrics is not None:
        focus_metrics = tuple(focus_metrics)
        for metric in focus_metrics:
            if metric not in metrics:
                raise ParameterError(f"`focus_metrics` must be among the report's metrics; got {metric!r}.")
    analyses = tuple(ANALYSES) if analyses is None else tuple(analyses)
    for name in analyses:
        check_choice("analyses", name, tuple(ANALYSES))
    return (checked, metrics, levels, coefficients, coefficient, correction, family, alpha, n_resamples, int(seed),
            preset, repetitions, focus_metrics, analyses)


def build_report(
    ds: ScoreSet,
    human: str,
    metrics: Sequence[str] | None = None,
    *,
    levels: Sequence[str] | None = None,
    coefficients: Sequence[str] = defaults.REPORT_COEFFICIENTS,
    coefficient: str = defaults.COEFFICIENT,
    correction: str = defaults.REPORT_CORRECTION,
    family: str = defaults.FAMILY,
    alpha: float = defaults.ALPHA,
    n_resamples: int | None = None,
    seed: int = defaults.SEED,
    preset: str = "default",
    repetitions: int | None = None,
    focus_metrics: Sequence[str] | None = None,
    analyses: Sequence[str] | None = None,
    progress: Any = None,
    command: str | None = None,
    corpus_statistics: Any = None,
    tie_tolerance: float = defaults.TIE_TOLERANCE,
    mt_audit: Any = None,
    comparisons: Any = None,
    judge_humans: Any = None,
) -> Report:
    """Compute every number of the meta-evaluation report of ``ds`` against ``human``.

    - Correlations of every metric at ``levels`` x ``coefficients`` with BOOT-BOTH percentile intervals
      (BOOT-SYSTEMS when the data has one input)
      (Deutsch, Dror & Roth 2021), one seed shared by every cell.
    - The system-level significance matrix of ``coefficient``: PERM-BOTH permutation test (paired
      BOOT-BOTH bootstrap with corpus metrics) of H1: r(row) > r(column) for every ordered pair, corrected with ``correction`` over ``family``
      (default Holm within each row metric's comparisons, see :data:`~metaeval.defaults.FAMILY`),
      with significance-cluster ranks; the same at the summary level when it is among ``levels``
      (always PERM-BOTH: corpus scores are system scores).
    - The analyses in ``analyses`` (default: every one this install provides) on the ``focus_metrics``
      (default: the :data:`~metaeval.defaults.REPORT_FOCUS_METRICS` metrics with the highest
      system-level ``coefficient`` correlation).

    Parameters
    ----------
    levels : list of str, optional
        Levels of the correlation table; default :data:`~metaeval.defaults.REPORT_LEVELS` (system and
        summary), or only 'system' when the dataset has a single input.
    n_resamples : int, optional
        Bootstrap / permutation resamples; default: the ``preset``'s (1000 for 'default').
    correction, family, alpha
        As in :func:`metaeval.compare_metrics`.
    preset : {'quick', 'default', 'full'}
        Sets ``n_resamples`` and ``repetitions`` when they are not given.
    repetitions : int, optional
        Repetitions of the analyses' simulations (ranking stability); default: the preset's.
    seed : int
        Seed of every resampling; each computation starts from this seed.
    progress : callable, optional
        Receives the report's steps (:mod:`metaeval.runtime.progress`: one named step per computation,
        one unit per table cell); a ``rich.progress.Progress`` is accepted too (one task per step).
    command : str, optional
        The command line that reproduces this report (the CLI passes it); default: the Python call.
    corpus_statistics : mapping, optional
        ``{metric: CorpusScores | (statistics, aggregate)}``: these metrics' system scores are corpus scores
        (BLEU, chrF, TER; see :func:`metaeval.correlate`) in the system-level correlations, the significance
        matrix and the analyses that use system scores. The significance matrix is then a paired
        bootstrap test (BOOT-BOTH): PERM-BOTH swaps cells, which a corpus score does not have.
    tie_tolerance : float in [0, 0.001], optional
        Relative tolerance under which two scores tie in every rank statistic (Kendall's taus, Spearman, pairwise
        accuracy, acc-eq / tau-eq, the pair signs of the analyses): ``|a - b|`` at most ``tie_tolerance`` times
        the spread of their vector (docs/statistics.md, "The tie rule"). Default
        :data:`metaeval.defaults.TIE_TOLERANCE` (1e-9); 0 compares exactly, as scipy does. A non-default value
        is recorded in the signature.
    comparisons : Comparisons, optional
        Pairwise comparisons (:func:`metaeval.read_comparisons`): the report then has the judges' section, a
        Bradley-Terry ranking and the judge audit with the report's resamples and seed, and the judges'
        agreement with ``judge_humans`` (names or patterns) when given
        (:func:`metaeval.report.judges_section.judges_part`).

    mt_audit : MtAuditResult, optional
        The audit of an MT protocol run (:func:`metaeval.mt_audit`) to show as a section of the page.

    Returns
    -------
    Report
    """
    (checked, metrics, levels, coefficients, coefficient, correction, family, alpha, n_resamples, seed, preset,
     repetitions, focus_metrics, analyses) = _build_report_iv(
        ds, human, metrics, levels, coefficients, coefficient, correction, family, alpha, n_resamples, seed,
        preset, repetitions, focus_metrics, analyses)
    rtol = iv.check_tie_tolerance(tie_tolerance)
    checked = checked.scored(corpus_statistics)  # unscored systems left out once, for every section
    ds, corpus = checked.ds, checked.corpus
    from .analysis_sections import ANALYSES, run_analysis

    timings: dict[str, float] = {}
    steps = _Steps(progress, timings)
    with steps("correlations", len(metrics) * len(levels) * len(coefficients)) as advance:
        table = correlation_table(checked, human, metrics, levels=levels, coefficients=coefficients,
                                  ci=_table_ci(ds), n_resamples=n_resamples, rng=seed, progress=advance,
                                  corpus_statistics=corpus or None, tie_tolerance=rtol)
    omitted: dict[str, str] = {}
    comparison = None
    if len(metrics) >= 2:
        with steps("significance matrix", None):
            test = "bootstrap" if set(corpus) & set(metrics) else "permutation"
            comparison = compare_metrics(checked, metrics, human, level="system", coefficient=coefficient,
                                         test=test, method="both", n_resamples=n_resamples,
                                         correction=correction, family=family, alpha=alpha, rng=seed,
                                         corpus_statistics=corpus or None, tie_tolerance=rtol)
    else:
        omitted["significance"] = "the significance matrix needs at least 2 metrics; the report has 1."
    summary_comparison = None
    if len(metrics) >= 2 and "summary" in levels:
        with steps("significance matrix (summary level)", None):  # corpus scores exist at system level only
            summary_comparison = compare_metrics(checked, metrics, human, level="summary", coefficient=coefficient,
                                                 test="permutation", method="both", n_resamples=n_resamples,
                                                 correction=correction, family=family, alpha=alpha, rng=seed,
                                                 tie_tolerance=rtol)
    if focus_metrics is None:
        system = "system" if "system" in levels else levels[0]
        key = coefficient if coefficient in coefficients else coefficients[0]
        ranked = sorted(metrics, key=lambda m: -_finite(table.get(m, system, key).statistic))
        focus_metrics = tuple(ranked[: defaults.REPORT_FOCUS_METRICS])
    settings = {
        "preset": preset, "n_resamples": n_resamples, "repetitions": repetitions, "seed": seed,
        "levels": list(levels), "coefficients": list(coefficients), "coefficient": coefficient,
        "correction": correction, "family": family, "alpha": alpha,
        "focus_metrics": list(focus_metrics), "analyses": list(analyses),
        "corpus_metrics": [m for m in metrics if m in corpus],
    }
    results: dict[str, Any] = {}
    for name in ANALYSES:
        if name not in analyses:
            omitted[name] = "not requested."
            continue
        with steps(ANALYSES[name].title, None):
            outcome = run_analysis(name, checked, human, focus_metrics, {**settings, "tie_tolerance": rtol}, corpus)
        if isinstance(outcome, str):
            omitted[name] = outcome
        else:
            results[name] = outcome
    dataset = dict(ds.describe())
    dataset.update(human=human, metrics=list(metrics), system_scores=_system_scores(ds, human),
                   signature_fields={k: v for k, v in ds.signature_fields().items()})
    with steps("annotator agreement", None):
        dataset["agreement"] = _agreement(checked, human)
    judges = None
    if comparisons is not None:
        from .judges_section import judges_part

        with steps("judges", None):
            judges = judges_part(comparisons, humans=judge_humans, n_resamples=n_resamples, seed=seed)
    if command is None:
        command = _python_call(ds, human, metrics, settings)
    for text, category in steps.categories.items():
        warnings.warn(text, category, stacklevel=2)
    return Report(dataset=dataset, table=table, comparison=comparison, analyses=results, omitted=omitted,
                  settings=settings, command=command, warnings=tuple(steps.categories), timings=timings,
                  summary_comparison=summary_comparison, mt_audit=mt_audit, judges=judges)


def comparison_frame(report: Report):
    """comparison.csv: one row per ordered metric pair and level (system, then summary when computed)."""
    import pandas as pd

    frames = []
    for level, result in (("system", report.comparison), ("summary", report.summary_comparison)):
        if result is not None:
            frame = result.to_frame()
            frame.insert(0, "level", level)
            frames.append(frame)
    return pd.concat(frames, ignore_index=True)


def _finite(value: float) -> float:
    return -np.inf if value is None or np.isnan(value) else float(value)


def _python_call(ds: ScoreSet, human: str, metrics: Sequence[str], settings: dict[str, Any]) -> str:
    source = f"me.load_dataset({ds.name!r})" if ds.name else "ds  # your ScoreSet"
    return (f"import metaeval as me\nds = {source}\nreport = me.build_report(ds, {human!r}, {list(metrics)!r},"
            f" coefficient={settings['coefficient']!r}, correction={settings['correction']!r},"
            f" family={settings['family']!r}, preset={settings['preset']!r}, n_resamples={settings['n_resamples']},"
            f" repetitions={settings['repetitions']}, seed={settings['seed']})\n"
            "me.write_report(report, 'report-output')")


class _Steps:
    """One progress step (and one timing) per step of the report (:mod:`metaeval.runtime.progress`)."""

    def __init__(self, progress: Any, timings: dict[str, float]):
        self.progress = as_progress(progress)
        self.timings = timings
        self.categories: dict[str, type] = {}

    def __call__(self, name: str, total: int | None):
        return _Step(self, name, total)


class _Step:
    def __init__(self, steps: _Steps, name: str, total: int | None):
        self.steps, self.name, self.total = steps, name, total

    def __enter__(self):
        self.start = time.perf_counter()
        self.catcher = warnings.catch_warnings(record=True)
        self.caught = self.catcher.__enter__()
        warnings.simplefilter("always", MetaevalWarning)
        return progress_step(self.steps.progress, self.name, self.total)

    def __exit__(self, *exc):
        self.catcher.__exit__(*exc)
        for warning in self.caught:
            if issubclass(warning.category, MetaevalWarning):
                text = f"{self.name}: {warning.message}"
                if text not in self.steps.categories:
                    self.steps.categories[text] = warning.category
            else:
                warnings.warn_explicit(warning.message, warning.category, warning.filename, warning.lineno)
        self.steps.timings[self.name] = time.perf_counter() - self.start
        progress_finish(self.steps.progress, self.name)
        return False


def report_paths(output: str | Path) -> tuple[Path, Path]:
    """(directory, html file) for ``output``: a path ending in .html / .htm is the page itself, anything
    else is a directory that receives report.html."""
    output = Path(output)
    if output.suffix.lower() in (".html", ".htm"):
        return output.parent, output
    return output, output / HTML_NAME


def write_report(report: Report, output: str | Path, *, html: bool = True, progress: Any = None) -> list[Path]:
    """Write the HTML page and results.json, correlations.csv and comparison.csv beside it, as one set.

    ``output`` is a directory (the page is ``report.html`` inside it) or the page's own path ending in
    ``.html``. With ``html=False`` only the machine-readable files are written. ``progress`` (a callable of
    :mod:`metaeval.runtime.progress`, or a ``rich.progress.Progress``) gets the step "figures and page",
    one unit per section.

    The files are rendered in memory, written to a temporary directory and moved into place as a whole
    (:func:`metaeval.runtime.file_sets.write_file_set`): a reader, a crash or a full disk sees the previous
    report or the new one, never a page with missing or foreign data files; a comparison.csv of a previous
    report is removed with it when this report has no significance matrix. The directory is locked while it
    is written: another run writing it fails with one line naming it (:class:`~metaeval.errors.InputFileError`).
    In a directory that also holds other files, the files move in one by one, the page last.
    """
    directory, page = report_paths(output)
    files: dict[str, bytes] = {RESULTS_JSON: to_json(report).encode("utf-8"),
                               CORRELATIONS_CSV: to_csv(report.table.to_frame()).encode("utf-8")}
    if report.comparison is not None:
        files[COMPARISON_CSV] = to_csv(comparison_frame(report)).encode("utf-8")
    if html:
        from .page import render_report, section_count

        progress = as_progress(progress)
        advance = progress_step(progress, "figures and page", section_count(report))
        files[page.name] = render_report(report, advance, beside=tuple(files)).encode("utf-8")  # names the others
        progress_finish(progress, "figures and page")
    written = write_file_set(directory, files, owned=(page.name, *DATA_FILES))
    order = [page.name, *DATA_FILES]
    return sorted(written, key=lambda p: order.index(p.name))
