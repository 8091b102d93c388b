"""`metaeval report`: the full meta-evaluation of one dataset as one HTML page (plus JSON and CSV)."""
from __future__ import annotations

import dataclasses
import shlex
from pathlib import Path

import click

from .. import defaults
from ..data.scoreset import DEFAULT_AGGREGATION
from ..errors import ParameterError
from ..report import terminal
from ..report.analysis_sections import ANALYSES
from ..report.build import PRESETS, build_report, report_paths, write_report
from ..report.escape import console as safe_console
from ..runtime.files import directory_lock
from ..runtime.output_sets import commit_pending
from .common import (
    corpus_options,
    declare,
    option,
    output_width,
    seed_option,
    source_options,
    tie_tolerance_option,
)
from .progress import progress_bar, progress_option
from .source import Source, chosen_metrics, corpus_statistics_for, load_source


def _command_line(source: Source, human, settings, output) -> str:
    """The `metaeval report` call that reproduces this report, every setting spelled out."""
    words = ["metaeval", "report"]
    if source.dataset is not None:
        words += ["--dataset", source.dataset]
        for option_value in source.dataset_option:
            words += ["--dataset-option", option_value]
    for path in source.scores:
        words += ["--scores", path]
    for flag, values in source.reading.given().items():
        for value in values:
            words += [flag, value]
    words += ["--human", human]
    for metric in source.metric:
        words += ["--metric", metric]
    for system in source.system:
        words += ["--system", system]
    for system in source.exclude_system:
        words += ["--exclude-system", system]
    if source.reading.aggregation != DEFAULT_AGGREGATION:
        words += ["--aggregation", source.reading.aggregation]
    for level in settings["levels"]:
        words += ["--level", level]
    if settings["preset"] != "default":
        words.append(f"--{settings['preset']}")
    words += ["--coefficient", settings["coefficient"], "--correction", settings["correction"],
              "--family", settings["family"], "--alpha", f"{settings['alpha']:g}",
              "--n-resamples", str(settings["n_resamples"]), "--n-repetitions", str(settings["repetitions"]),
              "--seed", str(settings["seed"])]
    for metric in settings.get("explicit_focus", ()):
        words += ["--focus-metric", metric]
    for name in settings.get("explicit_analyses", ()):
        words += ["--analysis", name]
    corpus_metrics, candidates, references = settings.get("corpus_texts", ((), None, None))
    for metric in corpus_metrics:
        words += ["--corpus-metric", metric]
    if corpus_metrics:
        words += ["--candidates", candidates, "--references", references]
    mt_scores, mt_protocol = settings.get("mt", ((), None))
    for item in mt_scores:
        words += ["--mt-scores", item]
    if mt_protocol:
        words += ["--mt-protocol", mt_protocol]
    for flag, values in (("--spans-gold", settings.get("spans_gold") or ()),
                         ("--spans-detector", settings.get("spans_detector", ()))):
        for value in ([values] if isinstance(values, str) else values):
            words += [flag, value]
    for path in settings.get("comparisons", ()):
        words += ["--comparisons", path]
    for name in settings.get("judge_human", ()):
        words += ["--judge-human", name]
    words += ["--output", str(output)]
    return " ".join(shlex.quote(str(w)) for w in words)


def _mt_audit(mt_scores, mt_protocol, n_resamples, seed, tie_tolerance):
    """The audit of the MT run of ``--mt-scores`` (None without it), as `metaeval mt audit` computes it."""
    if not mt_scores:
        if mt_protocol:
            raise ParameterError(f"`--mt-protocol` must come with `--mt-scores`; got {mt_protocol!r} alone.")
        return None
    from ..mt.audit import mt_audit
    from ..mt.protocol import load_protocol
    from ..stats.mt.protocol import PROTOCOLS
    from .mt_command import FLAGS, _language_pairs
    from .source import Reading

    audited = None if mt_protocol is None else load_protocol(mt_protocol)
    k = defaults.N_RESAMPLES if n_resamples is None else n_resamples
    data, human = _language_pairs(mt_scores, None, Reading(), k, protocol=audited or PROTOCOLS["mean"])
    return mt_audit(data, None, human, protocol=audited, n_resamples=k, rng=seed, tie_tolerance=tie_tolerance,
                    params={**FLAGS, "metrics": "--metric"})


@click.command()
@source_options
@option("output", type=click.Path(), default="metaeval-report", show_default=True,
        help="A directory (receives report.html) or the page's path ending in .html; results.json,"
             " correlations.csv and comparison.csv are written beside the page.")
@option("level", multiple=True, default=None, show_default=False,
        help=f"Level of the correlation table (repeatable; default: {', '.join(defaults.REPORT_LEVELS)}).")
@option("coefficient", help="Coefficient of the significance matrix, the ordering and the analyses.")
@option("correction", default=defaults.REPORT_CORRECTION, help="Multiple-comparison correction of the significance"
                                                                " matrix.")
@option("family")
@option("alpha", help="Significance level of the matrix and the clusters.")
@declare("quick", dict(is_flag=True, help=f"Fewer resamples ({PRESETS['quick']['n_resamples']}) and repetitions"
                                          f" ({PRESETS['quick']['repetitions']}): a first look in seconds."))
@declare("full", dict(is_flag=True, help=f"More resamples ({PRESETS['full']['n_resamples']}) and repetitions"
                                         f" ({PRESETS['full']['repetitions']}): the numbers to publish."))
@option("n_resamples", default=None, show_default=False,
        help=f"Bootstrap / permutation resamples [default: {defaults.N_RESAMPLES}, or the preset's].")
@option("n_repetitions", default=None,
        help=f"Repetitions of the analyses' simulations [default: {defaults.REPORT_REPETITIONS}, or the preset's].")
@declare("repetitions", dict(type=int, default=None, hidden=True, help="Old spelling of --n-repetitions."))
@declare("focus_metric", dict(multiple=True, help=f"A metric the analyses show (repeatable; default: the"
                                                  f" {defaults.REPORT_FOCUS_METRICS} metrics with the highest"
                                                  " system-level correlation)."))
@option("analysis", multiple=True, type=click.Choice(tuple(ANALYSES) + ("none",)),
        help="An analysis section to include (repeatable; default: all; 'none' for none).")
@corpus_options
@declare("mt_scores", dict(multiple=True, metavar="LP=PATH",
                           help="Also audit an MT protocol run: a score file of one of its language pairs"
                                " (repeatable, as `metaeval mt audit --scores`); the audit (sentinels, measures,"
                                " delta-to-accuracy) becomes a section of the page."))
@declare("mt_protocol", dict(metavar="NAME|FILE.toml",
                             help="With --mt-scores: the protocol audited (default: the audit's grid under the"
                                  " plain mean protocol)."))
@declare("spans_gold", dict(type=click.Path(dir_okay=False),
                            help="MQM ratings with error spans: add the error-span section (docs/spans.md) with the"
                                 " baselines, the --spans-detector detectors and the human ceiling."))
@declare("spans_detector", dict(multiple=True, metavar="[NAME=]PATH",
                                help="A span detector for the error-span section (JSON Lines; repeatable)."))
@option("comparisons", multiple=True,
        help="Also a section of judges and pairwise preferences from this comparison file (repeatable; the"
             " columns of docs/judges.md): a Bradley-Terry ranking and the judge audit.")
@declare("judge_human", dict(multiple=True, help="With --comparisons: the human annotators among its judges"
                                                 " (repeatable; patterns allowed): the ranking is theirs and the"
                                                 " other judges' agreement with them is shown."))
@seed_option
@tie_tolerance_option
@progress_option
def report(source, output, level, coefficient, correction, family, alpha, quick, full, n_resamples, n_repetitions,
           repetitions, focus_metric, analysis, corpus_texts, mt_scores, mt_protocol, spans_gold, spans_detector,
           comparisons, judge_human, seed, tie_tolerance):
    """The meta-evaluation report as one self-contained HTML page.

    The page holds the dataset summary, correlations with BOOT-BOTH intervals, forest plots, the PERM-BOTH
    significance matrix with cluster ranks (a paired BOOT-BOTH bootstrap with --corpus-metric), the
    literature's analyses and every signature; a summary prints to the terminal.
    """
    analyses, focus_metrics = analysis, focus_metric
    repetitions = n_repetitions if n_repetitions is not None else repetitions
    if quick and full:
        raise ParameterError("`--quick` and `--full` must not be given together; got both.")
    if "none" in analyses and len(analyses) > 1:
        raise ParameterError(f"`--analysis none` must be given alone; got {list(analyses)!r}.")
    if spans_detector and not spans_gold:
        raise ParameterError("`--spans-detector` needs `--spans-gold` (the MQM ratings it is scored against); got no "
                             "--spans-gold.")
    if judge_human and not comparisons:
        raise ParameterError("`--judge-human` applies to `--comparisons`; got it without.")
    with directory_lock(report_paths(output)[0]):  # a second run into this directory stops here, at once
        ds, human = load_source(source, n_resamples=n_resamples)
        judged = None
        if comparisons:
            from ..judges import read_comparisons
            from ..judges.reader import CLI_OPTION_NAMES
            from .source import located

            with located(comparisons[0] if len(comparisons) == 1 else "--comparisons"):
                judged = read_comparisons(comparisons[0] if len(comparisons) == 1 else list(comparisons),
                                          option_names=CLI_OPTION_NAMES)
        corpus = corpus_statistics_for(ds, *corpus_texts)
        chosen = chosen_metrics(ds, human, source.metric)
        console = safe_console(width=output_width())
        preset = "quick" if quick else "full" if full else "default"
        wanted = () if analyses == ("none",) else (tuple(analyses) or None)
        audit = _mt_audit(mt_scores, mt_protocol, n_resamples, seed, tie_tolerance)
        with progress_bar() as bar:
            progress = bar.callback
            result = build_report(ds, human, chosen, levels=level or None, coefficient=coefficient,
                                  correction=correction, family=family, alpha=alpha, n_resamples=n_resamples,
                                  seed=seed, preset=preset, repetitions=repetitions,
                                  focus_metrics=focus_metrics or None, analyses=wanted, progress=progress,
                                  command="", corpus_statistics=corpus or None, tie_tolerance=tie_tolerance,
                                  mt_audit=audit, comparisons=judged, judge_humans=judge_human or None)
            settings = dict(result.settings, explicit_focus=focus_metrics, explicit_analyses=analyses,
                            corpus_texts=corpus_texts, mt=(mt_scores, mt_protocol), spans_gold=spans_gold,
                            spans_detector=spans_detector, comparisons=comparisons, judge_human=judge_human)
            spans = None
            if spans_gold:
                from .spans_command import report_spans

                spans = report_spans(spans_gold, spans_detector, n_resamples=result.settings.get("n_resamples"),
                                     seed=seed, progress=progress)
            command = _command_line(source, human, settings, output)
            result = dataclasses.replace(result, command=command, spans=spans)
            paths = write_report(result, Path(output), progress=progress)
        commit_pending()  # under the lock, and before the summary says the report is there
    console.print(terminal.report_summary(result, paths))
    page = report_paths(output)[1].resolve()
    console.print(f"open {page.as_uri()}", style="bold")
