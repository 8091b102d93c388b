"""Report sections of the literature's analyses (metaeval.analyses): how each runs and how it is shown.

An analysis with a section in the report (``section=True`` in :mod:`metaeval.analyses.registry`) declares
it next to its computation: ``REPORT``, a :class:`metaeval.analyses.interface.SectionSpec`, says how it runs
on the report's focus metrics with the report's seed, resamples and repetitions and how it is introduced.
:data:`ANALYSES` gives each such analysis an :class:`AnalysisSpec`: ``run`` from its declaration, ``section``
turning its result into a page :class:`~metaeval.report.html.Section` and ``headline`` the one line of the
terminal summary - the figures and tables of :data:`SECTIONS` where this module has them, otherwise a
section of the declaration's text and the result's frame. An analysis that cannot run on the data (a
:class:`MetaevalError`, e.g. too few inputs for two disjoint samples) is left out of the page with the
error as the reason.
"""
from __future__ import annotations

import importlib
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..analyses import registry
from ..errors import MetaevalError
from . import analysis_figures as figs
from .formats import number
from .html import Cell, Section, Table, number_cell


@dataclass(frozen=True)
class AnalysisSpec:
    """How the report runs one analysis and turns its result into a section."""

    title: str
    run: Callable[..., Any]
    section: Callable[..., Any]
    headline: Callable[[Any], str]
    min_inputs: int = 1
    needs: str = ""
    api: str = ""  # the public function it runs, from the analysis registry


def _ci_cell(value, low, high) -> Cell:
    sub = "" if np.isnan(low) or np.isnan(high) else f"[{number(low, 2)}, {number(high, 2)}]"
    return number_cell(float(value), sub=sub)


def _focus(report) -> tuple[str, ...]:
    return tuple(report.settings.get("focus_metrics", ()))


def _best_worst(values: np.ndarray, names) -> tuple[str, str]:
    finite = [(float(v), n) for v, n in zip(values, names) if np.isfinite(v)]
    if not finite:
        return "n/a", "n/a"
    best, worst = max(finite), min(finite)
    return f"{best[1]} {best[0]:.2f}", f"{worst[1]} {worst[0]:.2f}"


# -- Delta(l, u) ----------------------------------------------------------------------------------------

def _section_delta(result, report) -> Section:
    k = result.upper.shape[1]
    closest = 0
    half = min(range(k), key=lambda j: abs(result.fractions[j] - 0.5)) if result.fractions is not None else k // 2
    label = f"{result.fractions[closest]:.0%} closest" if result.fractions is not None else "first band"
    rows = tuple(
        (Cell(m, m), _ci_cell(result.statistic[a, 0, k - 1], result.ci_low[a, 0, k - 1], result.ci_high[a, 0, k - 1]),
         _ci_cell(result.statistic[a, 0, half], result.ci_low[a, 0, half], result.ci_high[a, 0, half]),
         _ci_cell(result.statistic[a, 0, closest], result.ci_low[a, 0, closest], result.ci_high[a, 0, closest]),
         Cell(str(int(result.n_pairs[a, 0, closest])), int(result.n_pairs[a, 0, closest])))
        for a, m in enumerate(result.metrics))
    half_label = f"{result.fractions[half]:.0%} closest" if result.fractions is not None else "half"
    table = Table("delta", "Kendall tau-b over all pairs and over the pairs closest in metric score",
                  ("metric", "all pairs", half_label, label, "pairs"), rows, (False, True, True, True, True))
    return Section(
        "delta", "Close systems: Delta(l, u)",
        question="Does the metric still rank systems correctly when their scores are close?",
        paragraphs=(
            f"Kendall tau-b with {result.human} over only the {result.n_total_pairs} system pairs whose metric-score"
            " gap lies in [l, u] (Deutsch, Dror & Roth 2022, Sec. 4). Researchers compare systems that are close,"
            " so the left end of the curve matters more than the usual all-pairs value.",
            f"Intervals here are {result.confidence_level:.0%} BOOT-INPUTS (inputs resampled, systems fixed);"
            " the 100% column is the system-level tau-b of the correlation table, whose interval there resamples"
            " systems too (see its method), so the two intervals of the same number differ on purpose.",
        ),
        figures=(figs.delta_curve(result, _focus(report)), figs.delta_heatmaps(result, _focus(report))),
        tables=(table,), signatures=(("Delta(l, u)", str(result.signature)),),
    )


def _headline_delta(result) -> str:
    best, worst = _best_worst(result.statistic[:, 0, 0], result.metrics)
    share = f"{result.fractions[0]:.0%}" if result.fractions is not None else "first band of"
    return f"tau over the {share} closest pairs: best {best}, worst {worst}"


# -- ranking stability ------------------------------------------------------------------------------------

def _section_stability(result, report) -> Section:
    g_small, g_large = 0, len(result.sizes) - 1
    rows = tuple(
        (Cell(s + (" (human)" if s == result.human else ""), s),
         number_cell(float(result.mean[i, g_small]), sub=f"sd {number(float(result.sd[i, g_small]), 2)}"),
         number_cell(float(result.mean[i, g_large]), sub=f"sd {number(float(result.sd[i, g_large]), 2)}"),
         Cell(str(int(result.n_inputs[i])), int(result.n_inputs[i])))
        for i, s in enumerate(result.scorers))
    table = Table("stability", "Agreement of two rankings from disjoint input samples",
                  ("scorer", f"m = {int(result.sizes[g_small])}", f"m = {int(result.sizes[g_large])}", "inputs"),
                  rows, (False, True, True, True))
    return Section(
        "stability", "Ranking stability",
        question="Would a different sample of judged inputs give the same ranking of systems?",
        paragraphs=(
            f"For each m, two random samples of m inputs each rank the systems; the curve is the mean"
            f" {result.coefficient} between the two rankings over {result.n_repetitions} repetitions, the band"
            " +- one standard deviation (Deutsch, Dror & Roth 2022, Sec. 3). A metric above the human curve"
            " ranks systems more consistently than the humans do on the same number of inputs.",
        ),
        figures=(figs.stability_curves(result, _focus(report)),), tables=(table,),
        signatures=(("ranking stability", str(result.signature)),),
    )


def _headline_stability(result) -> str:
    g = len(result.sizes) - 1
    human = result.scorers.index(result.human)
    metrics = [i for i in range(len(result.scorers)) if i != human]
    best, worst = _best_worst(result.mean[metrics, g], [result.scorers[i] for i in metrics])
    return (f"at m = {int(result.sizes[g])} inputs: humans {number(float(result.mean[human, g]), 2)},"
            f" metrics from {worst} to {best}")


# -- top-k systems --------------------------------------------------------------------------------------------

def _topk_columns(ks) -> list[int]:
    ks = [int(k) for k in ks]
    wanted = [max(ks), math.ceil(max(ks) / 2), 5, min(ks)]
    return [ks.index(k) for k in dict.fromkeys(wanted) if k in ks]


def _section_topk(result, report) -> Section:
    columns = _topk_columns(result.ks)
    rows = tuple((Cell(m, m),) + tuple(_ci_cell(result.statistic[a, g], result.ci_low[a, g], result.ci_high[a, g])
                                      for g in columns)
                 for a, m in enumerate(result.metrics))
    header = ("metric",) + tuple(f"top {int(result.ks[g])}" for g in columns)
    table = Table("topk", f"{result.coefficient} over the k best systems", header, rows,
                  (False,) + (True,) * len(columns))
    best_k = int(min(result.ks))
    return Section(
        "topk", "Top-k systems",
        question="Can the metric tell the best systems apart, not just good from bad?",
        paragraphs=(
            f"The correlation with {result.human} over only the k systems the humans rank best, for k from"
            f" {int(max(result.ks))} down to {best_k} (Bhandari et al. 2020, Exp-II). New systems compete with"
            " the best ones, so this is the ranking that matters for a new paper's claim.",
            "Intervals here are BOOT-INPUTS (inputs resampled, the k systems fixed); at k = all systems the"
            " value is the correlation table's system-level one, whose interval there also resamples systems.",
        ),
        figures=(figs.topk_curves(result, _focus(report)),), tables=(table,),
        signatures=(("top-k correlations", str(result.signature)),),
    )


def _headline_topk(result) -> str:
    ks = [int(k) for k in result.ks]
    g = ks.index(5) if 5 in ks else len(ks) - 1
    best, worst = _best_worst(result.statistic[:, g], result.metrics)
    return f"over the top {ks[g]} systems: best {best}, worst {worst}"


# -- system verdicts -------------------------------------------------------------------------------------------

def _section_verdicts(result, report) -> Section:
    parts = figs.verdict_parts(result.confusion)
    rows = tuple(
        (Cell(m, m), number_cell(float(result.f1[a])), number_cell(float(result.agreement[a])),
         Cell(str(int(result.n_used[a])), int(result.n_used[a]),
              css="warn" if result.n_skipped[a] else "", sub=f"{int(result.n_skipped[a])} skipped" if result.n_skipped[a] else ""))
        + tuple(Cell(str(int(v)), int(v)) for v in parts[a])
        for a, m in enumerate(result.metrics))
    header = ("metric", "weighted F1", "agreement", "pairs") + tuple(short for short, _, _ in figs.VERDICT_PARTS)
    table = Table("verdicts", "Metric verdicts against human verdicts, per system pair (same: same significant"
                  " verdict; n.s.: no significant difference; only: significant for one side only)", header, rows,
                  (False,) + (True,) * (len(header) - 1), wide=True)
    human = np.asarray(result.human_verdicts)
    significant = int(np.sum((human == "better") | (human == "worse")))
    return Section(
        "verdicts", "System verdicts",
        question="When the metric says system A beats system B, do the humans agree?",
        paragraphs=(
            f"For each of the {len(result.pairs)} system pairs, a paired {result.test} test over inputs gives a verdict"
            f" (better, worse, or no significant difference at {result.confidence_level:.0%}) for the humans and for"
            " each metric (Bhandari et al. 2020, Exp-III; Koehn 2004). Weighted F1 scores the metric's verdicts"
            " against the humans'.",
        ),
        facts=(("pairs the humans separate", f"{significant} of {len(result.pairs)}"),),
        figures=(figs.verdict_bars(result, _focus(report)),), tables=(table,),
        signatures=(("system verdicts", str(result.signature)),),
    )


def _headline_verdicts(result) -> str:
    best, worst = _best_worst(result.f1, result.metrics)
    return f"weighted F1 against human verdicts: best {best}, worst {worst}"


# -- normality ----------------------------------------------------------------------------------------------------

def _section_normality(result, report) -> Section:
    rows = tuple(
        (Cell(s + (" (human)" if s in result.humans else ""), s), number_cell(float(result.system_statistic[k])),
         number_cell(float(result.system_pvalue[k]), 4,
                     css="warn" if result.system_pvalue[k] < result.alpha else "",
                     sub=str(result.system_reasons[k])),
         number_cell(float(result.share_rejected[k]), 2),
         Cell(str(int(result.n_inputs_tested[k])), int(result.n_inputs_tested[k]),
              sub=f"{int(result.n_inputs_skipped[k])} skipped" if result.n_inputs_skipped[k] else ""))
        for k, s in enumerate(result.scorers))
    table = Table("normality", "Shapiro-Wilk tests", ("scorer", "W (systems)", "p (systems)",
                                                       "share of inputs rejected", "inputs tested"),
                  rows, (False, True, True, True, True))
    return Section(
        "normality", "Normality",
        question="Are the assumptions of Pearson-based Fisher intervals and Williams' test met?",
        paragraphs=(
            "Shapiro-Wilk test of each scorer's system scores, and of its scores across systems on each input"
            f" (Deutsch, Dror & Roth 2021, App. A), at alpha {result.alpha:g}. Rejections favour the resampling"
            " methods this report uses over the Fisher and Williams alternatives.",
        ),
        figures=(figs.normality_chart(result, _focus(report)),), tables=(table,),
        signatures=(("normality", str(result.signature)),),
    )


def _headline_normality(result) -> str:
    rejected = int(np.sum(np.asarray(result.system_pvalue) < result.alpha))
    shares = np.asarray(result.share_rejected, dtype=float)
    shares = shares[np.isfinite(shares)]
    spread = f"{shares.min():.0%}-{shares.max():.0%}" if shares.size else "n/a"
    return (f"{rejected} of {len(result.scorers)} scorers reject normal system scores; inputs rejecting: {spread}")


SECTIONS: dict[str, tuple[Callable[..., Section], Callable[[Any], str]]] = {
    "delta": (_section_delta, _headline_delta),
    "stability": (_section_stability, _headline_stability),
    "topk": (_section_topk, _headline_topk),
    "verdicts": (_section_verdicts, _headline_verdicts),
    "normality": (_section_normality, _headline_normality),
}
"""The figures and tables (section builder, headline) of the analyses this module draws itself."""


def _declared_section(name: str, declared) -> Callable[..., Section]:
    """A section of an analysis without figures of its own: its question, paragraphs and frame."""
    def section(result, report) -> Section:
        frame = result.to_frame()
        columns = tuple(declared.columns or frame.columns)
        rows = tuple(tuple(number_cell(float(v)) if isinstance(v, (int, float, np.number)) and not isinstance(v, bool)
                           else Cell(str(v), str(v)) for v in record)
                     for record in frame[list(columns)].itertuples(index=False))
        table = Table(name, declared.title, columns, rows, tuple(frame[c].dtype.kind in "fiu" for c in columns))
        return Section(name, declared.title[:1].upper() + declared.title[1:], question=declared.question,
                       paragraphs=declared.paragraphs(result) if declared.paragraphs else (), tables=(table,),
                       signatures=((declared.title, str(result.signature)),))
    return section


def _spec(entry) -> AnalysisSpec:
    declared = importlib.import_module(entry.module).REPORT
    section, headline = SECTIONS.get(entry.name, (_declared_section(entry.name, declared), None))
    headline = headline or declared.headline or (lambda result, title=declared.title: title)
    return AnalysisSpec(declared.title, declared.run, section, headline, min_inputs=declared.min_inputs,
                        needs=declared.needs, api=entry.function)


ANALYSES: dict[str, AnalysisSpec] = {entry.name: _spec(entry) for entry in registry.ANALYSES if entry.section}
"""The report's analyses, in the registry's order."""


def run_analysis(name: str, ds, human: str, focus_metrics, settings: dict[str, Any], corpus=None) -> Any:
    """The result of analysis ``name``, or a string saying why it is left out of the report (``corpus``:
    ``{metric: CorpusScores}``, the corpus metrics' system scores)."""
    spec = ANALYSES[name]
    if ds.shape[1] < spec.min_inputs:
        return (f"{spec.title} needs at least {spec.min_inputs} inputs ({spec.needs}); the dataset has"
                f" {ds.shape[1]}.")
    try:
        return spec.run(ds, human, tuple(focus_metrics), settings, corpus or {})
    except ImportError as error:
        return f"metaeval.{spec.api} is not available in this install ({error})."
    except MetaevalError as error:
        return f"metaeval.{spec.api} cannot run on these data: {error}"
