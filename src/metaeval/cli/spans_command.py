"""`metaeval spans`: error-span detectors and binary segment decisions against MQM ratings.

Every choice and default comes from :mod:`metaeval.vocabulary` and :mod:`metaeval.defaults` (the options are
declared here, once, from those).
"""
from __future__ import annotations

import os
import warnings

import click

from .. import defaults
from ..errors import DataWarning, ParameterError
from ..vocabulary import (CORRECTIONS, SPAN_AVERAGINGS, SPAN_CRITICAL_RULES, SPAN_ERROR_RULES, SPAN_FOLDS_BY,
                          SPAN_GOLD_RULES, SPAN_MACRO_RULES, SPAN_MATCHINGS, SPAN_MEASURES, SPAN_SEVERITY_MODES,
                          SPAN_TASKS)
from .analysis_output import footer, output_options, render
from .spans_output import compact, compact_table, paper_frame, span_notes, span_table, spec_title
from .common import declare, group, option, reading_options, resamples_option, seed_option
from .progress import progress_bar, progress_option

#: The options of `metaeval spans` (parameter name -> click.option keywords), declared once.
SPAN_OPTIONS = {
    "gold": dict(required=True, type=click.Path(dir_okay=False),
                 help="MQM ratings file (TSV, `<v>...</v>` spans) that gives the gold spans and scores."),
    "gold_rater": dict(multiple=True, help="Build the gold from these raters only (repeatable; default every rater)."),
    "detector": dict(multiple=True, metavar="[NAME=]PATH",
                     help="A detector's spans, JSON Lines (docs/spans.md; repeatable); NAME= names it (default: the"
                          " file name up to its first dot)."),
    "measure": dict(type=click.Choice(SPAN_MEASURES), default=defaults.SPAN_MEASURE, show_default=True,
                    help="Matching rule (docs/spans.md)."),
    "averaging": dict(type=click.Choice(SPAN_AVERAGINGS), default=defaults.SPAN_AVERAGING, show_default=True,
                      help="Sum counts over segments (micro) or average per-segment values (macro)."),
    "macro": dict(type=click.Choice(SPAN_MACRO_RULES), default=defaults.SPAN_MACRO, show_default=True,
                  help="Macro F1: the mean of per-segment F1 (the reference's) or the F1 of macro P and R."),
    "matching": dict(type=click.Choice(SPAN_MATCHINGS), default=defaults.SPAN_MATCHING, show_default=True,
                     help="One-to-one span matching: optimal assignment (the reference's default) or greedy."),
    "severity": dict(type=click.Choice(SPAN_SEVERITY_MODES), default=defaults.SPAN_SEVERITY_MODE, show_default=True,
                     help="'match': a span (or character) counts only with the gold's severity."),
    "critical": dict(type=click.Choice(SPAN_CRITICAL_RULES), default=defaults.SPAN_CRITICAL, show_default=True,
                     help="Under --severity match, a critical severity compares as major (the reference) or as its"
                          " own."),
    "errors": dict(type=click.Choice(SPAN_ERROR_RULES), default=defaults.SPAN_ERRORS, show_default=True,
                   help="Which human errors count: the reference's standardization (no weight-0 categories,"
                        " critical as major) or all."),
    "source_spans": dict(flag="--source-spans/--no-source-spans", default=defaults.SPAN_SOURCE_SPANS,
                         show_default=True, help="Keep the errors marked in the source (omissions), scored on their"
                                                 " own side."),
    "ceiling": dict(flag="--ceiling/--no-ceiling", default=True, show_default=True,
                    help="Print the human ceiling (held-out rater vs the others; with --gold-rater, each other rater"
                         " vs the gold raters) and every row's F1 against the same golds, when segments have several"
                         " raters."),
    "pairwise": dict(flag="--pairwise/--no-pairwise", default=False, show_default=True,
                     help="Also every rater against every other rater on the segments both rated."),
    "task": dict(type=click.Choice(SPAN_TASKS), default=defaults.SPAN_TASK, show_default=True,
                 help="Positive class: error-free segments, or critical ones (a human score at most the threshold)."),
    "gold_rule": dict(type=click.Choice(SPAN_GOLD_RULES), default=defaults.SPAN_GOLD_RULE, show_default=True,
                      help="Error-free gold: no span and score >= threshold (both), no span, or the score alone."),
    "human_threshold": dict(type=float, help=f"Gold score threshold (default {defaults.SPAN_ERROR_FREE_THRESHOLD:g} for"
                                             f" error-free: MQM 0; {defaults.SPAN_CRITICAL_THRESHOLD:g} for critical:"
                                             f" score <= {defaults.SPAN_CRITICAL_THRESHOLD:g})."),
    "label": dict(multiple=True,
                  help="A column of --scores holding a detector's own decisions (1 = positive, 0 = negative)."),
    "n_folds": dict(type=int, default=defaults.SPAN_N_FOLDS, show_default=True, help="Cross-validation folds."),
    "folds_by": dict(type=click.Choice(SPAN_FOLDS_BY), default=defaults.SPAN_FOLDS_BY, show_default=True,
                     help="Cross-validation folds of whole segments or of whole documents (the ratings' doc"
                          " column)."),
    "compare": dict(flag="--compare/--no-compare", default=True, show_default=True,
                    help="Paired permutation tests on F1."),
    "correction": dict(type=click.Choice(CORRECTIONS),
                       default=defaults.CORRECTION, show_default=True, help="Correction of the pairwise p-values."),
    "correct_baselines": dict(flag="--correct-baselines/--no-correct-baselines", default=False, show_default=True,
                              help="Put the pairs with a baseline in the detectors' correction family (default: a"
                                   " family of their own)."),
    "offsets": dict(type=click.Choice(("char", "utf8", "utf16")), default="char", show_default=True,
                    help="What the detectors' start / end count: characters, UTF-8 bytes or UTF-16 code units."),
    "end": dict(type=click.Choice(("exclusive", "inclusive")), default="exclusive", show_default=True,
                help="Whether a detector span's end is the first character after it or its last character."),
    "exclude_system": dict(multiple=True, help="Leave this system out of the gold and every detector (repeatable)."),
    "allow_missing": dict(is_flag=True, help="Score the segments every detector covers; name and count the rest"
                                             " (default: a detector missing a gold segment is an error)."),
    "html": dict(type=click.Path(dir_okay=False),
                 help="Also write an HTML page with the table and the per-severity P/R figures."),
}


def spans_option(name: str, **changes) -> callable:
    """The option ``name`` of :data:`SPAN_OPTIONS`."""
    return declare(name, {**SPAN_OPTIONS[name], **changes})


def spans_options(*names: str):
    def decorate(command):
        for name in reversed(names):
            command = spans_option(name)(command)
        return command
    return decorate


_MEASURE_NAMES = ("measure", "averaging", "macro", "matching", "severity", "critical", "errors", "source_spans")


def _method_options(command):
    for decorator in reversed([
        option("method", help="Resample systems x segments cells (both), systems, or segments (inputs)."),
        option("confidence_level", help="Confidence level of the bootstrap intervals."),
    ]):
        command = decorator(command)
    return command


def _common(command, *, several_golds: bool = False):
    gold = (spans_option("gold", multiple=True, metavar="[LP=]PATH",
                         help="MQM ratings file (TSV, `<v>...</v>` spans) giving the gold spans; repeat it as LP=PATH"
                              " for several language pairs (per-pair and pooled results; detector lines name their"
                              " `lp`).") if several_golds else spans_option("gold"))
    for decorate in reversed([gold, spans_options("gold_rater", *_MEASURE_NAMES), _method_options,
                              resamples_option, seed_option, output_options, progress_option]):
        command = decorate(command)
    return command


def _read_gold(path, raters, errors=defaults.SPAN_ERRORS, source_spans=defaults.SPAN_SOURCE_SPANS):
    from ..data.mqm_ratings import read_mqm_ratings
    from ..spans.model import gold_from_ratings

    ratings = read_mqm_ratings(path)
    gold = gold_from_ratings(ratings, raters=raters or None, errors=errors, source_spans=source_spans)
    return ratings, gold


def _exclude(gold, systems):
    """The gold without ``systems`` (each must be one of its systems; a misspelt one gets a suggestion)."""
    from ..spans.model import check_known_systems

    known = list(dict.fromkeys(c[0] for c in gold.cells))
    check_known_systems(systems, known, param="--exclude-system", what="a system of the gold")
    if not systems:
        return gold
    out = gold.restricted([c for c in gold.cells if c[0] not in set(systems)])
    out.excluded_systems = ",".join(systems)
    return out


def detector_argument(value: str) -> tuple[str | None, str]:
    """``NAME=PATH`` -> ``(NAME, PATH)``; a plain path (or one that exists as given) -> ``(None, PATH)``."""
    if "=" in value and not os.path.exists(value):
        name, path = value.split("=", 1)
        if name and os.sep not in name and path:
            return name, path
    return None, value


def _read_detectors(values, gold, offsets="char", end="exclusive"):
    from ..spans.detector_files import read_detector_spans

    names, out = {}, []
    for value in values:
        name, path = detector_argument(value)
        det = read_detector_spans(path, gold.targets, name=name, sources=gold.sources, offsets=offsets, end=end)
        if det.name in names:
            raise ParameterError(f"`--detector` files must have distinct names (name one with NAME=PATH); got "
                                 f"{det.name!r} for {names[det.name]!r} and {path!r}.")
        names[det.name] = path
        out.append(det)
    return out


@group()
def spans():
    """Error-span detectors and binary segment decisions against MQM ratings."""


def _gold_arguments(values) -> dict:
    """``--gold`` values -> ``{lp: path}`` (``{None: path}`` for one file without a language pair)."""
    out = {}
    for value in values:
        lp, path = detector_argument(value)
        if lp is None and len(values) > 1:
            raise ParameterError(f"`--gold` must name its language pair as LP=PATH when several are given; got "
                                 f"{value!r}.")
        if lp in out:
            raise ParameterError(f"`--gold` must name each language pair once; got {lp!r} twice.")
        out[lp] = path
    return out


def _evaluate_pairs(golds, params, detector, compare, correction, correct_baselines, fmt, output):
    from ..spans.model import pool_golds
    from ..spans.pairs import evaluate_spans_by_pair

    built = {}
    for lp, path in golds.items():
        _, gold = _read_gold(path, params["gold_rater"], params["errors"], params["source_spans"])
        built[lp] = gold
    pooled = pool_golds(built)
    detectors = _read_detectors(detector, pooled, params["offsets"], params["end"])
    with progress_bar() as bar:
        result = evaluate_spans_by_pair(built, detectors, measure=params["measure"], averaging=params["averaging"],
                                        severity=params["severity"], matching=params["matching"],
                                        macro=params["macro"], critical=params["critical"], method=params["method"],
                                        n_resamples=params["n_resamples"], confidence_level=params["confidence_level"],
                                        compare=compare, correction=correction, baselines_in_family=correct_baselines,
                                        allow_missing=params["allow_missing"], rng=params["seed"],
                                        progress=bar.callback)
    parts = [(lp, r) for lp, r in result.per_pair.items()] + [("pooled", result.pooled)]

    def table(r):
        out = []
        for lp, one in parts:
            frame = compact(one.to_frame(), "detector", ("precision", "recall", "f1"))
            out.append(compact_table(frame, title=f"{lp}: {spec_title(one)}; {one.n_cells} segments, "
                                                  f"{one.n_gold_spans} gold spans"))
        return [*out, *footer(r, span_notes(result.pooled, correction=correction if compare else "none"))]
    render(result, fmt, None, table, output)


def _evaluate(params, detector, compare, correction, correct_baselines, ceiling, fmt, output, html):
    from ..spans.evaluate import evaluate_spans

    golds = _gold_arguments(params["gold"])
    if len(golds) > 1:
        if html or params["exclude_system"]:
            raise ParameterError("`--html` and `--exclude-system` take one `--gold`; got "
                                 f"{len(golds)} language pairs.")
        _evaluate_pairs(golds, params, detector, compare, correction, correct_baselines, fmt, output)
        return
    params = dict(params, gold=next(iter(golds.values())))
    ratings, gold = _read_gold(params["gold"], params["gold_rater"], params["errors"], params["source_spans"])
    gold = _exclude(gold, params["exclude_system"])  # the flag's own error, with a suggestion
    detectors = _read_detectors(detector, gold, params["offsets"], params["end"])
    gold_raters = tuple(params["gold_rater"]) or None
    fair = bool(ceiling and _has_shared_cells(ratings, gold_raters, params["exclude_system"]))
    with progress_bar() as bar:
        result = evaluate_spans(ratings, detectors, measure=params["measure"],
                                averaging=params["averaging"], severity=params["severity"],
                                matching=params["matching"], macro=params["macro"], critical=params["critical"],
                                errors=params["errors"], source_spans=params["source_spans"], gold_raters=gold_raters,
                                method=params["method"], n_resamples=params["n_resamples"],
                                confidence_level=params["confidence_level"], compare=compare, correction=correction,
                                baselines_in_family=correct_baselines, fair_ceiling=fair, rng=params["seed"],
                                allow_missing=params["allow_missing"], exclude_systems=tuple(params["exclude_system"]),
                                progress=bar.callback)
    notes = span_notes(result, correction=correction if compare else "none")
    if ceiling and not fair:
        why = ("no rater outside --gold-rater shares a segment with them" if gold_raters
               else "one rater per segment")
        notes.append(f"human ceiling: not available ({why})")
    if params["exclude_system"]:
        notes.append(f"systems left out (--exclude-system): {', '.join(params['exclude_system'])} - "
                     f"{result.n_excluded} segment(s) out of the gold, every detector"
                     + (" and the human ceiling's golds" if fair else ""))
    if result.n_missing:
        notes.append(f"{result.n_missing} gold segment(s) not covered by every detector left out (--allow-missing)")
    frame = paper_frame(fmt, compact(result.to_frame(), "detector", ("precision", "recall", "f1")))
    if not html:
        render(result, fmt, frame, span_table(result, notes), output)
        return
    _write_with_page(result, fmt, frame, span_table(result, notes), output, html)


def _write_with_page(result, fmt, frame, table, output, html) -> None:
    """The result (to the terminal or ``output``) and its HTML page; the command's output set commits both
    together (runtime/output_sets: a crash or a signal leaves the old pair or the new one, never a mix)."""
    from ..report.render import render_text
    from ..report.spans_section import spans_page
    from ..runtime.files import write_text_atomic
    from .common import emit, output_width

    page = spans_page(result)  # nothing else is written beside it: the footer says so
    emit(render_text(result, fmt, terminal=table, frame=frame, width=output_width(output)), output)
    write_text_atomic(html, page)


def report_spans(gold_path, detector_values, *, n_resamples, seed, progress=None):
    """The error-span section of ``metaeval report``: the defaults of `spans evaluate`, the detectors and
    the baselines, the fair human ceiling when segments have several raters."""
    from ..spans.evaluate import evaluate_spans

    ratings, gold = _read_gold(gold_path, ())
    detectors = _read_detectors(detector_values, gold)
    fair = _has_shared_cells(ratings)
    return evaluate_spans(ratings if fair else gold, detectors, fair_ceiling=fair,
                          n_resamples=n_resamples or defaults.N_RESAMPLES, rng=seed, progress=progress)


def _has_shared_cells(ratings, gold_raters=None, exclude_systems=()) -> bool:
    """Whether the human ceiling has a rater to score: two raters sharing a cell (without ``gold_raters``),
    or a rater outside ``gold_raters`` sharing a cell with one of them; cells of ``exclude_systems`` aside."""
    excluded = set(exclude_systems)
    cells = {r: {c for c in ratings.spans.get(r, {}) if c[0] not in excluded} for r in ratings.raters}
    if gold_raters:
        chosen = set(gold_raters)
        inside = set().union(*(cells[r] for r in ratings.raters if r in chosen))
        return any(cells[r] & inside for r in ratings.raters if r not in chosen)
    seen: set = set()
    for r in ratings.raters:
        if cells[r] & seen:
            return True
        seen |= cells[r]
    return False


def _params(**kwargs):
    return kwargs


@spans.command()
@lambda command: _common(command, several_golds=True)
@spans_options("detector", "offsets", "end", "exclude_system", "allow_missing", "ceiling", "html")
def evaluate(gold, gold_rater, measure, averaging, macro, matching, severity, critical, errors, source_spans, method,
             confidence_level, n_resamples, seed, format, output, detector, offsets, end, exclude_system,
             allow_missing, ceiling, html):
    """Precision, recall and F1 of span detectors and baselines, with bootstrap intervals."""
    params = _params(gold=gold, gold_rater=gold_rater, measure=measure, averaging=averaging, macro=macro,
                     matching=matching, severity=severity, critical=critical, errors=errors,
                     source_spans=source_spans, method=method, confidence_level=confidence_level,
                     n_resamples=n_resamples, seed=seed, offsets=offsets, end=end, exclude_system=exclude_system,
                     allow_missing=allow_missing)
    _evaluate(params, detector, False, "none", False, ceiling, format, output, html)


@spans.command()
@lambda command: _common(command, several_golds=True)
@spans_options("detector", "offsets", "end", "exclude_system", "allow_missing", "correction", "correct_baselines",
               "ceiling", "html")
def compare(gold, gold_rater, measure, averaging, macro, matching, severity, critical, errors, source_spans, method,
            confidence_level, n_resamples, seed, format, output, detector, offsets, end, exclude_system, allow_missing,
            correction, correct_baselines, ceiling, html):
    """Also test every pair on F1 (paired permutation) and rank into significance clusters."""
    params = _params(gold=gold, gold_rater=gold_rater, measure=measure, averaging=averaging, macro=macro,
                     matching=matching, severity=severity, critical=critical, errors=errors,
                     source_spans=source_spans, method=method, confidence_level=confidence_level,
                     n_resamples=n_resamples, seed=seed, offsets=offsets, end=end, exclude_system=exclude_system,
                     allow_missing=allow_missing)
    _evaluate(params, detector, True, correction, correct_baselines, ceiling, format, output, html)


@spans.command()
@_common
@spans_options("pairwise", "exclude_system")
def agreement(gold, gold_rater, measure, averaging, macro, matching, severity, critical, errors, source_spans, method,
              confidence_level, n_resamples, seed, format, output, pairwise, exclude_system):
    """Human agreement: each rater against the union of the other raters of the same segments."""
    from ..data.mqm_ratings import read_mqm_ratings
    from ..spans.agreement import span_agreement
    from ..spans.measures import MeasureSpec

    ratings = read_mqm_ratings(gold)
    with progress_bar() as bar:
        result = span_agreement(ratings, measure=measure, averaging=averaging, severity=severity, matching=matching,
                                macro=macro, critical=critical, errors=errors, source_spans=source_spans,
                                method=method, n_resamples=n_resamples, confidence_level=confidence_level,
                                pairwise=pairwise, exclude_systems=exclude_system,
                                gold_raters=tuple(gold_rater) or None, rng=seed, progress=bar.callback)
    notes = [f"human ceiling (mean held-out F1): {result.ceiling_f1:.3f}" if not gold_rater else
             f"human ceiling (mean F1 of the raters outside --gold-rater against its union): {result.ceiling_f1:.3f}"]
    spec = MeasureSpec(result.measure, result.averaging, result.severity, result.matching, result.macro,
                       result.critical)
    title = (f"{spec.describe()}: each rater against the others' union" if not gold_rater else
             f"{spec.describe()}: each other rater against the union of {', '.join(gold_rater)}")
    frame = result.to_frame()
    frame["segments"] = frame["n_cells"]
    shown = compact(frame, "rater", ("precision", "recall", "f1"))
    render(result, format, paper_frame(format, shown),
           lambda r: [compact_table(shown, title=title), *footer(r, notes)], output)


@spans.command()
@spans_options("gold", "gold_rater", "errors", "source_spans", "task", "gold_rule", "human_threshold")
@spans_option("detector", help="A span detector (JSON Lines, [NAME=]PATH): error-free = no span; critical = a major"
                               " span.")
@option("scores", help="Metric scores (any score file metaeval reads, joined on system and segment; repeatable).")
@reading_options(aggregation=False)
@option("metric", help="A metric of --scores whose threshold is cross-validated.")
@spans_options("offsets", "end", "exclude_system", "label", "n_folds", "folds_by", "compare")
@_method_options
@resamples_option
@seed_option
@output_options
@progress_option
def binary(gold, gold_rater, errors, source_spans, task, gold_rule, human_threshold, detector, scores, reading, metric,
           offsets, end, exclude_system, label, n_folds, folds_by, compare, method, confidence_level, n_resamples, seed,
           format, output):
    """Binary decisions per segment (error-free / critical): P, R, F1, MCC with intervals and tests."""
    from ..spans.binary import evaluate_binary
    from .source import located, read_files, scores_argument

    ratings, gold_spans = _read_gold(gold, gold_rater, errors, source_spans)
    gold_spans = _exclude(gold_spans, exclude_system)
    ds = ratings.scores
    if exclude_system:
        ds = ds.subset(systems=[s for s in ds.systems if s not in set(exclude_system)])
    files = tuple(scores_argument(a)[1] for a in scores)
    for path in scores:
        with located(scores_argument(path)[1]):
            other = read_files((path,), reading, other_files=files)[0]
        unrated = [s for s in other.systems if s not in ds.systems]
        if unrated:
            shown = ", ".join(map(repr, unrated[:5])) + (f" and {len(unrated) - 5} more" if len(unrated) > 5 else "")
            warnings.warn(f"{scores_argument(path)[1]}: {len(unrated)} system(s) with no gold rating left out: "
                          f"{shown}.", DataWarning, stacklevel=1)
        ds = ds.merge(other.subset(systems=[s for s in other.systems if s in ds.systems]),
                      allow_unmatched=reading.allow_unmatched)
    detectors = _read_detectors(detector, gold_spans, offsets, end)
    with progress_bar() as bar:
        result = evaluate_binary(ds, "mqm", task=task, gold=gold_spans, gold_rule=gold_rule,
                                 human_threshold=human_threshold, detectors=detectors, metrics=metric, labels=label,
                                 n_folds=n_folds, groups=ratings.documents if folds_by == "document" else None,
                                 folds_by=folds_by, method=method, n_resamples=n_resamples,
                                 confidence_level=confidence_level, compare=compare, rng=seed, progress=bar.callback)
    title = (f"{task} detection ({n_folds}-fold cross-validation by {folds_by}): {result.n_positive} of "
             f"{result.n_cells} segments positive "
             f"(gold: {gold_rule if task == 'error-free' else 'score'}, threshold {result.human_threshold:g})")
    notes = [f"thresholds of {name} (one per cross-validation fold, chosen on the other folds): "
             f"{', '.join(f'{t:g}' for t in ts)}" for name, ts in result.thresholds.items()]
    notes.append("baseline:length scores a segment by minus its target length; labelled p-values of the pairwise "
                 "tests are in --format json (pvalue_rows)")
    if exclude_system:
        notes.append(f"systems left out (--exclude-system): {', '.join(exclude_system)}")
    shown = compact(result.to_frame().rename(columns={"predictor": "name"}), "name",
                    ("precision", "recall", "f1", "mcc"), digits=2)
    render(result, format, paper_frame(format, shown),
           lambda r: [compact_table(shown, title=title), *footer(r, notes)], output)
