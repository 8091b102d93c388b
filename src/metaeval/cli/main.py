"""The `metaeval` command: parses arguments, calls the public API, renders. Exit codes: 0 ok,
1 an internal error (a bug: please report it), 2 a user error (bad option, bad input file)."""
from __future__ import annotations

import io
import sys
import warnings

import click
from rich.console import Console

from .. import defaults
from ..vocabulary import (ALTERNATIVES, CI_METHODS, CORRECTIONS, FAMILIES, LEVEL_CHOICES, METRIC_TESTS,
                          RESAMPLING_METHODS)
from .._version import __version__
from ..correlation.matrix import compare_metrics
from ..errors import MetaevalError, MetaevalWarning
from ..report import formats, terminal
from ..stats.coefficients import COEFFICIENTS
from ..correlation.table import correlation_table
from . import datasets_command, report_command
from . import human_command
from . import score_command
from . import simulate_command, systems_command, verdicts_command
from . import delta_command, gap_command, normality_command, plan_command, stability_command, topk_command
from .common import chosen_metrics, emit, load_source, output_options, resamples_option, seed_option, source_options



def _render(obj, fmt: str, frame) -> str:
    if fmt == "json":
        return formats.to_json(obj)
    if fmt == "csv":
        return formats.to_csv(frame)
    if fmt in formats.PAPER_FORMATS:
        return formats.to_paper(obj, fmt, frame)
    buffer = io.StringIO()
    Console(file=buffer, width=200, force_terminal=False).print(obj)
    return buffer.getvalue()


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="metaeval")
def cli() -> None:
    """Meta-evaluation of automatic evaluation metrics against human judgments."""


@cli.command()
@source_options
@click.option("--level", "levels", multiple=True, type=click.Choice(LEVEL_CHOICES),
              help=f"Level (repeatable; default: {', '.join(defaults.REPORT_LEVELS)}).")
@click.option("--coefficient", "coefficients", multiple=True, type=click.Choice(COEFFICIENTS + ("kendall",)),
              help=f"Coefficient (repeatable; default: {', '.join(defaults.REPORT_COEFFICIENTS)}).")
@click.option("--ci", type=click.Choice(CI_METHODS), default="boot-both", show_default=True,
              help="Confidence interval of every correlation.")
@click.option("--confidence-level", type=float, default=defaults.CONFIDENCE_LEVEL, show_default=True)
@click.option("--full-test-set", is_flag=True,
              help="System level: average each metric over all its inputs, the human over the judged ones.")
@resamples_option
@seed_option
@output_options
def correlate(dataset, dataset_options, scores, human, metrics, levels, coefficients, ci, confidence_level,
              full_test_set, n_resamples, seed, fmt, output):
    """Correlate metrics with the human score, with confidence intervals."""
    ds, human = load_source(dataset, dataset_options, scores, human)
    table = correlation_table(
        ds, human, chosen_metrics(ds, human, metrics),
        levels=levels or defaults.REPORT_LEVELS, coefficients=coefficients or defaults.REPORT_COEFFICIENTS,
        ci=ci, n_resamples=n_resamples, confidence_level=confidence_level, full_test_set=full_test_set,
        rng=seed,
    )
    obj = terminal.correlation_table(table) if fmt == "table" else table
    emit(_render(obj, fmt, table.to_frame()), output)


@cli.command()
@source_options
@click.option("--level", type=click.Choice(LEVEL_CHOICES), default=defaults.LEVEL, show_default=True)
@click.option("--coefficient", type=click.Choice(COEFFICIENTS + ("kendall",)), default=defaults.COEFFICIENT,
              show_default=True)
@click.option("--test", type=click.Choice(METRIC_TESTS), default="permutation", show_default=True)
@click.option("--method", type=click.Choice(RESAMPLING_METHODS), default=defaults.RESAMPLING_METHOD, show_default=True,
              help="Which cells are resampled / swapped together.")
@click.option("--alternative", type=click.Choice(ALTERNATIVES), default=defaults.ALTERNATIVE, show_default=True)
@click.option("--correction", type=click.Choice(CORRECTIONS), default=defaults.CORRECTION, show_default=True)
@click.option("--family", type=click.Choice(FAMILIES), default=defaults.FAMILY, show_default=True,
              help="The p-values corrected together.")
@click.option("--alpha", type=float, default=defaults.ALPHA, show_default=True)
@resamples_option
@seed_option
@output_options
def compare(dataset, dataset_options, scores, human, metrics, level, coefficient, test, method, alternative,
            correction, family, alpha, n_resamples, seed, fmt, output):
    """Test every pair of metrics; print the significance matrix and cluster ranks."""
    ds, human = load_source(dataset, dataset_options, scores, human)
    result = compare_metrics(
        ds, chosen_metrics(ds, human, metrics), human, level=level, coefficient=coefficient, test=test,
        method=method, alternative=alternative, n_resamples=n_resamples, correction=correction,
        family=family, alpha=alpha, rng=seed,
    )
    obj = terminal.comparison_matrix(result) if fmt == "table" else result
    emit(_render(obj, fmt, result.to_frame()), output)


cli.add_command(datasets_command.datasets)
cli.add_command(report_command.report)
cli.add_command(delta_command.delta)
cli.add_command(stability_command.stability)
cli.add_command(topk_command.topk)
cli.add_command(normality_command.normality)
cli.add_command(gap_command.gap)
cli.add_command(plan_command.plan)
cli.add_command(systems_command.systems)
cli.add_command(verdicts_command.verdicts)
cli.add_command(simulate_command.simulate)
cli.add_command(human_command.human)
cli.add_command(score_command.score)


def _show_warnings(caught) -> None:
    seen = set()
    for warning in caught:
        text = str(warning.message)
        if text not in seen:
            seen.add(text)
            click.echo(f"metaeval: warning: {text}", err=True)


def main(argv: list[str] | None = None) -> int:
    """Run the CLI; user errors print one line and exit 2."""
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", MetaevalWarning)
            cli.main(args=argv, prog_name="metaeval", standalone_mode=False)
        _show_warnings(caught)
    except click.exceptions.Abort:
        click.echo("metaeval: aborted", err=True)
        return 1
    except click.ClickException as error:
        error.show()
        return 2
    except MetaevalError as error:
        click.echo(f"metaeval: error: {error}", err=True)
        return 2
    except OSError as error:
        click.echo(f"metaeval: error: {error.filename or ''}: {error.strerror}", err=True)
        return 2
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
