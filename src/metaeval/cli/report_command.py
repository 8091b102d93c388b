"""`metaeval report`: the full meta-evaluation of one dataset (terminal summary + JSON + CSV files)."""
from __future__ import annotations

from pathlib import Path

import click
from rich.console import Console
from rich.progress import Progress

from .. import defaults
from ..report.build import build_report, write_report
from ..report import terminal
from .common import chosen_metrics, load_source, resamples_option, seed_option, source_options


@click.command()
@source_options
@click.option("--output", type=click.Path(file_okay=False), default="metaeval-report", show_default=True,
              help="Directory for results.json, correlations.csv and comparison.csv.")
@click.option("--coefficient", default=defaults.COEFFICIENT, show_default=True,
              help="Coefficient of the significance matrix.")
@resamples_option
@seed_option
def report(dataset, dataset_options, scores, human, metrics, output, coefficient, n_resamples, seed):
    """Correlations with BOOT-BOTH intervals at system and summary level, and the system-level
    PERM-BOTH significance matrix (Holm-corrected) with cluster ranks."""
    ds, human = load_source(dataset, dataset_options, scores, human)
    metrics = chosen_metrics(ds, human, metrics)
    console = Console()
    if not console.is_terminal:
        console = Console(width=110)
    with Progress(console=console, transient=True) as progress:
        result = build_report(ds, human, metrics, coefficient=coefficient, n_resamples=n_resamples,
                              seed=seed, progress=progress)
    console.print(terminal.correlation_table(result.table))
    console.print(terminal.comparison_matrix(result.comparison))
    paths = write_report(result, Path(output))
    console.print("wrote " + ", ".join(str(p) for p in paths))
