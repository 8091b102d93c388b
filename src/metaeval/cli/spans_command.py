"""`metaeval spans`: error-span detectors and binary segment decisions against MQM ratings."""
from __future__ import annotations

import warnings

import click

from ..errors import DataWarning, ParameterError
from .analysis_output import footer, frame_table, output_options, render
from .common import group, option, options, reading_options, resamples_option, seed_option

_MEASURES = ("char", "exact", "overlap", "partial", "wmt25")


def _gold_options(command):
    return options("gold", "gold_rater")(command)


def _method_options(command):
    for decorator in reversed([
        option("method", help="Resample systems x segments cells (both), systems, or segments (inputs)."),
        option("confidence_level", help="Confidence level of the bootstrap intervals."),
    ]):
        command = decorator(command)
    return command


def _measure_options(command):
    for decorator in reversed([
        option("measure", type=click.Choice(_MEASURES), default="partial", show_default=True,
               help="Matching rule (docs/spans.md)."),
        options("averaging", "severity"),
        _method_options,
    ]):
        command = decorator(command)
    return command


def _read_gold(path, raters):
    from ..data.mqm_ratings import read_mqm_ratings
    from ..spans.model import gold_from_ratings

    ratings = read_mqm_ratings(path)
    gold = gold_from_ratings(ratings, raters=raters or None)
    return ratings, gold


def _read_detectors(paths, gold):
    from ..spans.model import read_detector_spans

    names = []
    out = []
    for path in paths:
        det = read_detector_spans(path, gold.targets)
        if det.name in names:
            raise ParameterError(f"`--detector` files must have distinct names; got {det.name!r} twice.")
        names.append(det.name)
        out.append(det)
    return out


def compact(frame, key: str, measures, digits: int = 3) -> "object":
    """The terminal layout: each measure with its interval in one column ``"0.42 [0.38, 0.47]"``."""
    import pandas as pd

    from ..report.formats import interval, number

    out = pd.DataFrame({key: frame[key]})
    for m in measures:
        out[m] = [f"{number(v, digits)} {interval(lo, hi)}" for v, lo, hi in
                  zip(frame[m], frame[f"{m}_low"], frame[f"{m}_high"])]
    for extra in ("against", "segments", "cluster"):
        if extra in frame:
            out[extra] = [f"rank {v}" for v in frame[extra]] if extra == "cluster" else frame[extra]
    return out


def _span_table(result, notes):
    frame = compact(result.to_frame(), "detector", ("precision", "recall", "f1"))
    columns = None
    title = (f"{result.measure} match, {result.averaging}-averaged, severity {result.severity}; "
             f"{result.n_cells} segments ({result.n_systems} systems x {result.n_segments} segments rated), "
             f"{result.n_gold_spans} gold spans")
    return lambda r: [frame_table(frame, title=title, columns=columns), *footer(r, notes)]


@group()
def spans():
    """Error-span detectors and binary segment decisions against MQM ratings."""


def _evaluate(gold_path, gold_raters, detector, measure, averaging, severity, method, confidence_level,
              n_resamples, seed, compare, correction, ceiling, fmt, output, html=None):
    from ..spans.agreement import span_agreement
    from ..spans.evaluate import evaluate_spans

    ratings, gold = _read_gold(gold_path, gold_raters)
    detectors = _read_detectors(detector, gold)
    result = evaluate_spans(gold, detectors, measure=measure, averaging=averaging, severity=severity, method=method,
                            n_resamples=n_resamples, confidence_level=confidence_level, compare=compare,
                            correction=correction, rng=seed)
    notes = [f"{name}: {n} segment(s) the gold did not rate left out" for name, n in result.n_left_out.items() if n]
    agree = None
    if ceiling and len(ratings.raters) > 1:
        try:
            agree = span_agreement(ratings, measure=measure, averaging=averaging, severity=severity, method=method,
                                   n_resamples=n_resamples, pairwise=False, rng=seed)
            notes.append(f"human ceiling: a held-out rater against the union of the others, mean F1 "
                         f"{agree.ceiling_f1:.3f} over {len(agree.rows)} raters (metaeval spans agreement)")
        except ParameterError:
            agree = None
            notes.append("human ceiling: not available (one rater per segment)")
    if compare and correction != "none":
        notes.append(f"clusters: permutation p-values corrected ({correction}), one family")
    if html:
        from ..report.spans_section import spans_page
        from ..runtime.files import write_text_atomic

        write_text_atomic(html, spans_page(result, agree))
    render(result, fmt, None, _span_table(result, notes), output)


def _html_option(command):
    return option("html", help="Also write an HTML page with the table and the per-severity P/R figures.")(command)


def _common(command):
    for option in reversed([_gold_options, _measure_options, resamples_option, seed_option, output_options]):
        command = option(command)
    return command


@spans.command()
@_common
@options("detector", "ceiling")
@_html_option
def evaluate(gold, gold_rater, measure, averaging, severity, method, confidence_level, n_resamples, seed,
             format, output, detector, ceiling, html):
    """Precision, recall and F1 of span detectors and baselines, with bootstrap intervals."""
    _evaluate(gold, gold_rater, detector, measure, averaging, severity, method, confidence_level,
              n_resamples, seed, False, "none", ceiling, format, output, html)


@spans.command()
@_common
@option("detector")
@option("correction", type=click.Choice(("none", "bonferroni", "holm", "benjamini-hochberg")),
        help="Correction of the pairwise p-values.")
@option("ceiling")
@_html_option
def compare(gold, gold_rater, measure, averaging, severity, method, confidence_level, n_resamples, seed,
            format, output, detector, correction, ceiling, html):
    """Also test every pair on F1 (paired permutation) and rank into significance clusters."""
    _evaluate(gold, gold_rater, detector, measure, averaging, severity, method, confidence_level,
              n_resamples, seed, True, correction, ceiling, format, output, html)


@spans.command()
@_common
@option("pairwise")
def agreement(gold, gold_rater, measure, averaging, severity, method, confidence_level, n_resamples, seed,
              format, output, pairwise):
    """Human agreement: each rater against the union of the other raters of the same segments."""
    from ..data.mqm_ratings import read_mqm_ratings
    from ..spans.agreement import span_agreement

    gold_path, fmt = gold, format
    ratings = read_mqm_ratings(gold_path)
    result = span_agreement(ratings, measure=measure, averaging=averaging, severity=severity, method=method,
                            n_resamples=n_resamples, confidence_level=confidence_level, pairwise=pairwise, rng=seed)
    notes = [f"human ceiling (mean held-out F1): {result.ceiling_f1:.3f}"]
    title = f"{measure} match, {averaging}-averaged, severity {severity}: each rater against the others' union"
    frame = result.to_frame()
    frame["segments"] = frame["n_cells"]
    shown = compact(frame, "rater", ("precision", "recall", "f1"))
    render(result, fmt, None, lambda r: [frame_table(shown, title=title), *footer(r, notes)], output)


@spans.command()
@_gold_options
@option("task", type=click.Choice(("error-free", "critical")), default="error-free", show_default=True,
        help="Positive class: error-free segments, or critical ones (a human score at most the threshold).")
@options("gold_rule", "human_threshold")
@option("detector", help="A span detector (JSON Lines): error-free = no span; critical = a major span.")
@option("scores", help="Metric scores (any score file metaeval reads, joined on system and segment; repeatable).")
@reading_options(aggregation=False)
@option("metric", help="A metric of --scores whose threshold is cross-validated.")
@options("label", "n_folds", "folds_by", "compare")
@_method_options
@resamples_option
@seed_option
@output_options
def binary(gold, gold_rater, task, gold_rule, human_threshold, detector, scores, reading, metric, label, n_folds,
           folds_by, compare, method, confidence_level, n_resamples, seed, format, output):
    """Binary decisions per segment (error-free / critical): P, R, F1, MCC with intervals and tests."""
    from ..spans.binary import evaluate_binary
    from .source import located, read_files, scores_argument

    gold_path, gold_raters, score_files, metrics, labels, fmt = gold, gold_rater, scores, metric, label, format
    ratings, gold = _read_gold(gold_path, gold_raters)
    ds = ratings.scores
    files = tuple(scores_argument(a)[1] for a in score_files)
    for path in score_files:
        with located(scores_argument(path)[1]):
            other = read_files((path,), reading, other_files=files)[0]
        unrated = [s for s in other.systems if s not in ds.systems]
        if unrated:
            shown = ", ".join(map(repr, unrated[:5])) + (f" and {len(unrated) - 5} more" if len(unrated) > 5 else "")
            warnings.warn(f"{scores_argument(path)[1]}: {len(unrated)} system(s) with no gold rating left out: "
                          f"{shown}.", DataWarning, stacklevel=1)
        ds = ds.merge(other.subset(systems=[s for s in other.systems if s in ds.systems]),
                      allow_unmatched=reading.allow_unmatched)
    detectors = _read_detectors(detector, gold)
    result = evaluate_binary(ds, "mqm", task=task, gold=gold, gold_rule=gold_rule, human_threshold=human_threshold,
                             detectors=detectors, metrics=metrics, labels=labels, n_folds=n_folds,
                             groups=ratings.documents if folds_by == "document" else None, method=method,
                             n_resamples=n_resamples, confidence_level=confidence_level, compare=compare, rng=seed)
    title = (f"{task} detection ({n_folds}-fold cross-validation by {folds_by}): {result.n_positive} of "
             f"{result.n_cells} segments positive "
             f"(gold: {gold_rule if task == 'error-free' else 'score'}, threshold {result.human_threshold:g})")
    notes = [f"thresholds of {name} (one per cross-validation fold, chosen on the other folds): "
             f"{', '.join(f'{t:g}' for t in ts)}" for name, ts in result.thresholds.items()]
    notes.append("baseline:length scores a segment by minus its target length; p-values of the pairwise tests "
                 "are in --format json")
    shown = compact(result.to_frame().rename(columns={"predictor": "name"}), "name", ("precision", "recall", "f1", "mcc"),
                    digits=2)
    render(result, fmt, None, lambda r: [frame_table(shown, title=title), *footer(r, notes)], output)
