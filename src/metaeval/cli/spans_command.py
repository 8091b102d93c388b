"""`metaeval spans`: error-span detectors and binary segment decisions against MQM ratings."""
from __future__ import annotations

import warnings

import click

from .. import defaults
from ..errors import ParameterError
from .analysis_output import footer, frame_table, output_options, render
from .common import resamples_option, seed_option

_MEASURES = ("char", "exact", "overlap", "partial", "wmt25")


def _gold_options(command):
    command = click.option("--gold-rater", "gold_raters", multiple=True,
                           help="Build the gold from these raters only (repeatable; default every rater).")(command)
    command = click.option("--gold", "gold_path", required=True, type=click.Path(dir_okay=False),
                           help="MQM ratings file (TSV, `<v>...</v>` spans) that gives the gold spans and scores.")(command)
    return command


def _measure_options(command):
    for option in reversed([
        click.option("--measure", type=click.Choice(_MEASURES), default="partial", show_default=True,
                     help="Matching rule (docs/spans.md)."),
        click.option("--averaging", type=click.Choice(("micro", "macro")), default="micro", show_default=True,
                     help="Sum counts over segments (micro) or average per-segment P and R (macro)."),
        click.option("--severity", type=click.Choice(("ignore", "match")), default="ignore", show_default=True,
                     help="'match': a span (or character) counts only with the gold's severity."),
        click.option("--method", type=click.Choice(("both", "systems", "inputs")),
                     default=defaults.RESAMPLING_METHOD, show_default=True,
                     help="Resample systems x segments cells (both), systems, or segments (inputs)."),
        click.option("--confidence-level", type=float, default=defaults.CONFIDENCE_LEVEL, show_default=True,
                     help="Confidence level of the bootstrap intervals."),
    ]):
        command = option(command)
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


@click.group()
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
    return click.option("--html", type=click.Path(dir_okay=False),
                        help="Also write an HTML page with the table and the per-severity P/R figures.")(command)


def _common(command):
    for option in reversed([_gold_options, _measure_options, resamples_option, seed_option, output_options]):
        command = option(command)
    return command


@spans.command()
@_common
@click.option("--detector", multiple=True, type=click.Path(dir_okay=False),
              help="A detector's spans, JSON Lines (docs/spans.md; repeatable).")
@click.option("--ceiling/--no-ceiling", default=True, show_default=True,
              help="Print the human ceiling (held-out rater vs the others) when segments have several raters.")
@_html_option
def evaluate(gold_path, gold_raters, measure, averaging, severity, method, confidence_level, n_resamples, seed,
             fmt, output, detector, ceiling, html):
    """Precision, recall and F1 of span detectors and baselines, with bootstrap intervals."""
    _evaluate(gold_path, gold_raters, detector, measure, averaging, severity, method, confidence_level,
              n_resamples, seed, False, "none", ceiling, fmt, output, html)


@spans.command()
@_common
@click.option("--detector", multiple=True, type=click.Path(dir_okay=False),
              help="A detector's spans, JSON Lines (docs/spans.md; repeatable).")
@click.option("--correction", type=click.Choice(("none", "bonferroni", "holm", "benjamini-hochberg")),
              default=defaults.CORRECTION, show_default=True, help="Correction of the pairwise p-values.")
@click.option("--ceiling/--no-ceiling", default=True, show_default=True,
              help="Print the human ceiling (held-out rater vs the others) when segments have several raters.")
@_html_option
def compare(gold_path, gold_raters, measure, averaging, severity, method, confidence_level, n_resamples, seed,
            fmt, output, detector, correction, ceiling, html):
    """Also test every pair on F1 (paired permutation) and rank into significance clusters."""
    _evaluate(gold_path, gold_raters, detector, measure, averaging, severity, method, confidence_level,
              n_resamples, seed, True, correction, ceiling, fmt, output, html)


@spans.command()
@_common
@click.option("--pairwise/--no-pairwise", default=False, show_default=True,
              help="Also every rater against every other rater on the segments both rated.")
def agreement(gold_path, gold_raters, measure, averaging, severity, method, confidence_level, n_resamples, seed,
              fmt, output, pairwise):
    """Human agreement: each rater against the union of the other raters of the same segments."""
    from ..data.mqm_ratings import read_mqm_ratings
    from ..spans.agreement import span_agreement

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
@click.option("--task", type=click.Choice(("error-free", "critical")), default="error-free", show_default=True,
              help="Positive class: error-free segments, or critical ones (a human score at most the threshold).")
@click.option("--gold-rule", type=click.Choice(("both", "no-span", "score")), default="both", show_default=True,
              help="Error-free gold: no span and score >= threshold (both), no span, or the score alone.")
@click.option("--human-threshold", type=float,
              help="Gold score threshold (default 0 for error-free: MQM 0; -5 for critical: score <= -5).")
@click.option("--detector", multiple=True, type=click.Path(dir_okay=False),
              help="A span detector (JSON Lines): error-free = no span; critical = a major span.")
@click.option("--scores", "score_files", multiple=True, type=click.Path(dir_okay=False),
              help="Metric scores (any score file metaeval reads, joined on system and segment).")
@click.option("--metric", "metrics", multiple=True, help="A metric of --scores whose threshold is cross-validated.")
@click.option("--label", "labels", multiple=True,
              help="A column of --scores holding a detector's own decisions (1 = positive, 0 = negative).")
@click.option("--n-folds", type=int, default=5, show_default=True, help="Cross-validation folds.")
@click.option("--folds-by", type=click.Choice(("segment", "document")), default="segment", show_default=True,
              help="Cross-validation folds of whole segments or of whole documents (the ratings' doc column).")
@click.option("--compare/--no-compare", default=True, show_default=True, help="Paired permutation tests on F1.")
@click.option("--method", type=click.Choice(("both", "systems", "inputs")), default=defaults.RESAMPLING_METHOD,
              show_default=True, help="Resample systems x segments cells (both), systems, or segments (inputs).")
@click.option("--confidence-level", type=float, default=defaults.CONFIDENCE_LEVEL, show_default=True,
              help="Confidence level of the bootstrap intervals.")
@resamples_option
@seed_option
@output_options
def binary(gold_path, gold_raters, task, gold_rule, human_threshold, detector, score_files, metrics, labels, n_folds,
           folds_by,
           compare, method, confidence_level, n_resamples, seed, fmt, output):
    """Binary decisions per segment (error-free / critical): P, R, F1, MCC with intervals and tests."""
    from ..data.readers import read_scores
    from ..spans.binary import evaluate_binary

    ratings, gold = _read_gold(gold_path, gold_raters)
    ds = ratings.scores
    for path in score_files:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            other = read_scores(path)
        ds = ds.merge(other.subset(systems=[s for s in other.systems if s in ds.systems]))
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
