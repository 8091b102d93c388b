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
from ..vocabulary import COEFFICIENT_CHOICES, CORRECTIONS, FAMILIES, LEVEL_CHOICES
from .common import (
    _SOURCE_KEY,
    chosen_metrics,
    corpus_options,
    corpus_statistics_for,
    load_source,
    output_width,
    seed_option,
    source_options,
    tie_tolerance_option,
)
from .progress import progress_bar, progress_option


def _command_line(dataset, dataset_options, scores, human, metrics, chosen, settings, output) -> str:
    """The `metaeval report` call that reproduces this report, every setting spelled out."""
    words = ["metaeval", "report"]
    if dataset is not None:
        words += ["--dataset", dataset]
        for option in dataset_options:
            words += ["--dataset-option", option]
    for path in ((scores,) if isinstance(scores, str) else scores or ()):
        words += ["--scores", path]
    for role, columns in chosen.get("columns", {}).items():
        for column in columns:
            words += [f"--{role}-column", column]
    for condition in chosen.get("where", ()):
        words += ["--where", condition]
    for layout in chosen.get("layout", ()):
        words += ["--layout", layout]
    words += ["--human", human]
    for metric in metrics:
        words += ["--metric", metric]
    for system in chosen.get("systems", ()):
        words += ["--system", system]
    for system in chosen.get("exclude_systems", ()):
        words += ["--exclude-system", system]
    if chosen.get("aggregation", DEFAULT_AGGREGATION) != DEFAULT_AGGREGATION:
        words += ["--aggregation", chosen["aggregation"]]
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
    words += ["--output", str(output)]
    return " ".join(shlex.quote(str(w)) for w in words)


@click.command()
@source_options
@click.option("--output", type=click.Path(), default="metaeval-report", show_default=True,
              help="A directory (receives report.html) or the page's path ending in .html; results.json,"
                   " correlations.csv and comparison.csv are written beside the page.")
@click.option("--level", "levels", multiple=True, type=click.Choice(LEVEL_CHOICES),
              help=f"Level of the correlation table (repeatable; default: {', '.join(defaults.REPORT_LEVELS)}).")
@click.option("--coefficient", type=click.Choice(COEFFICIENT_CHOICES), default=defaults.COEFFICIENT,
              show_default=True, help="Coefficient of the significance matrix, the ordering and the analyses.")
@click.option("--correction", type=click.Choice(CORRECTIONS), default=defaults.REPORT_CORRECTION, show_default=True,
              help="Multiple-comparison correction of the significance matrix.")
@click.option("--family", type=click.Choice(FAMILIES), default=defaults.FAMILY, show_default=True,
              help="The p-values corrected together: each row metric's comparisons, or the whole matrix.")
@click.option("--alpha", type=float, default=defaults.ALPHA, show_default=True,
              help="Significance level of the matrix and the clusters.")
@click.option("--quick", is_flag=True,
              help=f"Fewer resamples ({PRESETS['quick']['n_resamples']}) and repetitions"
                   f" ({PRESETS['quick']['repetitions']}): a first look in seconds.")
@click.option("--full", is_flag=True,
              help=f"More resamples ({PRESETS['full']['n_resamples']}) and repetitions"
                   f" ({PRESETS['full']['repetitions']}): the numbers to publish.")
@click.option("--n-resamples", type=int, default=None,
              help=f"Bootstrap / permutation resamples [default: {defaults.N_RESAMPLES}, or the preset's].")
@click.option("--n-repetitions", "n_repetitions", type=int, default=None,
              help=f"Repetitions of the analyses' simulations [default: {defaults.REPORT_REPETITIONS},"
                   " or the preset's].")
@click.option("--repetitions", "repetitions", type=int, default=None, hidden=True,
              help="Old spelling of --n-repetitions.")
@click.option("--focus-metric", "focus_metrics", multiple=True,
              help=f"A metric the analyses show (repeatable; default: the {defaults.REPORT_FOCUS_METRICS}"
                   " metrics with the highest system-level correlation).")
@click.option("--analysis", "analyses", multiple=True, type=click.Choice(tuple(ANALYSES) + ("none",)),
              help="An analysis section to include (repeatable; default: all; 'none' for none).")
@corpus_options
@seed_option
@tie_tolerance_option
@progress_option
def report(dataset, dataset_options, scores, human, metrics, output, levels, coefficient, correction, family,
           alpha, quick, full, n_resamples, n_repetitions, repetitions, focus_metrics, analyses, corpus_texts, seed):
    """The meta-evaluation report: one self-contained HTML page with the dataset summary, correlations
    with BOOT-BOTH intervals, forest plots, the PERM-BOTH significance matrix with cluster ranks (a paired
    BOOT-BOTH bootstrap with --corpus-metric), the literature's analyses and every signature; a summary
    prints to the terminal."""
    repetitions = n_repetitions if n_repetitions is not None else repetitions
    if quick and full:
        raise ParameterError("`--quick` and `--full` must not be given together; got both.")
    if "none" in analyses and len(analyses) > 1:
        raise ParameterError(f"`--analysis none` must be given alone; got {list(analyses)!r}.")
    with directory_lock(report_paths(output)[0]):  # a second run into this directory stops here, at once
        ds, human = load_source(dataset, dataset_options, scores, human)
        corpus = corpus_statistics_for(ds, *corpus_texts)
        chosen = chosen_metrics(ds, human, metrics)
        console = safe_console(width=output_width())
        preset = "quick" if quick else "full" if full else "default"
        wanted = () if analyses == ("none",) else (tuple(analyses) or None)
        with progress_bar() as bar:
            progress = bar.callback
            result = build_report(ds, human, chosen, levels=levels or None, coefficient=coefficient,
                                  correction=correction, family=family, alpha=alpha, n_resamples=n_resamples,
                                  seed=seed, preset=preset, repetitions=repetitions,
                                  focus_metrics=focus_metrics or None, analyses=wanted, progress=progress,
                                  command="", corpus_statistics=corpus or None)
            settings = dict(result.settings, explicit_focus=focus_metrics, explicit_analyses=analyses,
                            corpus_texts=corpus_texts)
            context = click.get_current_context()
            chosen_source = context.meta.get(_SOURCE_KEY, {})
            command = _command_line(dataset, dataset_options, scores, human, metrics, chosen_source, settings, output)
            result = dataclasses.replace(result, command=command)
            paths = write_report(result, Path(output), progress=progress)
    console.print(terminal.report_summary(result, paths))
    page = report_paths(output)[1].resolve()
    console.print(f"open {page.as_uri()}", style="bold")
